//===- X86Codegen.h - Kernels as native x86-64 code --------------*- C++ -*-===//
//
// The x86-64 backend: the kernels of a plan (KernelSpec.h) are emitted as
// MLIR (linalg/arith/math on memrefs), lowered in-process with the MLIR pass
// manager, optimized and vectorized by LLVM at -O3 for the target CPU level,
// and linked with the plan's library kernels into one shared object that the
// runtime loads without any compiler.
//
// This header is MLIR-free on purpose: the target's registration
// (X86Target.cpp) includes it, the backend's one translation unit includes
// MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_X86_X86CODEGEN_H
#define FUEL_LIB_CODEGEN_X86_X86CODEGEN_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"
#include "fuel/Transforms/KernelSpec.h"

#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

/// The CPU kernels are compiled for: an x86-64 level (`x86-64-v3`) and
/// extensions (see x86TargetFeatures in Planner/Machine.h for what the
/// runtime checks).
struct X86Target {
  std::string cpu;      // The level: "x86-64-v4".
  std::string features; // Its extensions in LLVM's spelling: "+avxvnni,+avx512vnni".
};

/// The MLIR module of `kernels` (what `fuelc plan --emit=mlir` prints), and
/// each kernel's revision by symbol: "sha256:<hex>" of its generated code.
LogicalResult emitKernelModule(const Graph &graph, const std::vector<KernelSpec> &kernels,
                               std::string &module, std::map<std::string, std::string> &revisions,
                               DiagnosticEngine &diag);

struct X86Output {
  /// ELF shared object with one exported entry point per kernel.
  std::string sharedObject;
  /// The optimized assembly, when requested.
  std::string assembly;
};

/// Compiles `module` (from emitKernelModule) for `target` and links it with
/// `libraryObjects` (paths of position-independent object files of library
/// kernels). Deterministic: the same inputs give the same bytes.
LogicalResult compileX86(const std::string &module, const std::vector<KernelSpec> &kernels,
                         const X86Target &target, const std::vector<std::string> &libraryObjects,
                         bool wantAssembly, X86Output &out, DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_LIB_CODEGEN_X86_X86CODEGEN_H
