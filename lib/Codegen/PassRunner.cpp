//===- PassRunner.cpp - Running a lowering pipeline ------------------------===//

#include "PassRunner.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

using namespace fuel;

LogicalResult codegen::runPipeline(mlir::PassManager &pm, mlir::ModuleOp module,
                                   const std::string &target, DiagnosticEngine &diag) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(module->getContext(),
                                        [&](mlir::Diagnostic &d) {
                                          os << d.str() << "\n";
                                          return mlir::success();
                                        });
  if (mlir::failed(pm.run(module))) {
    diag.error({}, "lowering kernels to " + target + " failed: " + diagnostics);
    return failure();
  }
  return success();
}
