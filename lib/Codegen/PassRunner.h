//===- PassRunner.h - Running a lowering pipeline ----------------*- C++ -*-===//
//
// The MLIR-based backends run their pipelines the same way: every
// diagnostic of the run is collected into the error of a failure.
// Included only by the MLIR-based backends.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_PASSRUNNER_H
#define FUEL_LIB_CODEGEN_PASSRUNNER_H

#include "fuel/Support/LogicalResult.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace fuel::codegen {

/// Runs `pm` on `module`; on failure `error` is "lowering kernels to
/// `target` failed: " and the diagnostics.
LogicalResult runPipeline(mlir::PassManager &pm, mlir::ModuleOp module,
                          const std::string &target, std::string &error);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_PASSRUNNER_H
