//===- Pipeline.h - fuelc's compiler as one pipeline of named passes -*- C++ -*-===//
//
// `fuelc plan` is this list of passes, run in order over one Compilation:
//   import       read the model (fuel.graph JSON or ONNX); the reader
//                verifies every node and infers its types
//   materialize  `contiguous` before reshapes no strides can express
//   place        per route: candidates, fusion groups, placement, copies,
//                schedule, kernel formation and memory plan (one pass: a
//                memory cap re-places, re-forms and re-plans them together;
//                --time-passes shows each phase)
//   codegen-T    per route, one pass per code generation target
//                (codegenTargets(): codegen-x86, codegen-spirv, codegen-ptx)
//   lower        per route, the program the runtime executes
//   serialize    the .fplan artifact's bytes
// Each pass can be printed before or after it runs and the pipeline can
// stop after any of them; `fuelc plan --print-after=place`,
// `--stop-after=lower`, `--time-passes`.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_COMPILER_PIPELINE_H
#define FUEL_COMPILER_PIPELINE_H

#include "fuel/Codegen/PlanCodegen.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Planner/Planner.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fuel {

/// Reads a fuel.graph JSON file or (by its `.onnx` extension) an ONNX model,
/// importing the ONNX inputs named in `freeze` (NAME=FILE.npy) as constants.
std::optional<GraphFile> importModel(const std::string &path,
                                     const std::vector<std::string> &freeze,
                                     DiagnosticEngine &diag);

/// Everything one compilation reads and what its passes produce.
struct Compilation {
  // Inputs.
  std::string modelPath;
  std::vector<std::string> freeze;
  const Machine *machine = nullptr;
  const CapsuleRegistry *registry = nullptr;
  ExecutionConfig config;
  /// The devices of each route, in order of preference; `explicitRoutes`
  /// when the user listed them (--route), so failures name the route.
  std::vector<std::vector<DeviceRef>> routeDevices;
  bool explicitRoutes = false;
  KernelLibraries libraries;
  bool wantAssembly = false;
  std::string compilerVersion;
  // Results, filled by the passes in order.
  std::optional<GraphFile> file;
  std::vector<PlannedRoute> routes;
  std::vector<RouteCode> code;
  std::string artifact;
};

struct Pass {
  std::string name;
  std::string summary;
  std::function<LogicalResult(Compilation &, DiagnosticEngine &)> run;
  /// What --print-before/--print-after show of the compilation at this pass.
  std::function<std::string(const Compilation &)> print;
};

/// The passes of `fuelc plan`, in order.
const std::vector<Pass> &compilerPasses();
const Pass *findPass(std::string_view name);

struct PipelineOptions {
  std::vector<std::string> printBefore, printAfter;
  /// Runs the passes up to and including this one (empty: all).
  std::string stopAfter;
  /// Where printed passes go, each behind a `// --- after PASS ---` line.
  std::function<void(const std::string &)> print;
};

struct PassTiming {
  std::string name;
  double seconds = 0;
};

/// Runs the pipeline; `timings` gets each pass run (and, indented, the
/// planner's phases of each route).
LogicalResult runPipeline(Compilation &compilation, const PipelineOptions &options,
                          DiagnosticEngine &diag, std::vector<PassTiming> &timings);

/// An LLVM-style table of `timings` (`--time-passes`).
std::string formatPassTimings(const std::vector<PassTiming> &timings);

} // namespace fuel

#endif // FUEL_COMPILER_PIPELINE_H
