//===- PassRunner.h - Running a lowering pipeline ----------------*- C++ -*-===//
//
// The MLIR-based backends run their pipelines the same way: every MLIR
// diagnostic of a failed run goes into one fuel diagnostic.
// Included only by the MLIR-based backends.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_PASSRUNNER_H
#define FUEL_LIB_CODEGEN_PASSRUNNER_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace fuel::codegen {

/// Runs `pm` on `module`; on failure reports "lowering kernels to `target`
/// failed: " and MLIR's diagnostics.
LogicalResult runPipeline(mlir::PassManager &pm, mlir::ModuleOp module, const std::string &target,
                          DiagnosticEngine &diag);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_PASSRUNNER_H
