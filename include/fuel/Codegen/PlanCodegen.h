//===- PlanCodegen.h - Generating the kernels of a plan ---------*- C++ -*-===//
//
// A code generation target compiles the kernels placed on devices of one
// kind into one artifact section: x86-64 for CPUs, SPIR-V for Vulkan
// devices, PTX for CUDA devices. Targets are listed once, in Targets.def;
// the compiler pipeline runs one pass per target (`codegen-x86`, ...), the
// artifact names the section after it (`kernels.x86`) and the planner
// gets its capsules (TargetKernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_CODEGEN_PLANCODEGEN_H
#define FUEL_CODEGEN_PLANCODEGEN_H

#include "fuel/Codegen/TargetKernels.h"
#include "fuel/Planner/Planner.h"

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

/// Where the library kernels (kernels/) were built.
struct KernelLibraries {
  /// The archive of x86 library kernels generated kernels may call.
  std::string x86Archive;
  /// The directory of the Vulkan library kernels' SPIR-V (`<symbol>.spv`).
  std::string spirvDir;
  /// The directory of the CUDA library kernels' PTX (`<symbol>.ptx`).
  std::string ptxDir;
};

/// What code generation shows besides the artifact's sections (for --emit
/// and --print-after).
struct RouteCode {
  /// The MLIR of the kernels, by target.
  std::map<std::string, std::string> mlir;
  /// The assembly of the x86 kernels (when asked for).
  std::string assembly;
  /// SPIR-V binaries by file name (for --spirv-dir), and the PTX (for
  /// --emit=ptx), which no ptxas checked when `ptxUnverified`.
  std::map<std::string, std::string> spirvModules;
  std::string ptx;
  bool ptxUnverified = false;
};

/// One target's output for a route.
struct TargetCode {
  /// The artifact section's bytes (an ELF shared object for x86, the
  /// fuel.spirv-kernels or fuel.ptx-kernels JSON).
  std::string section;
  /// Each kernel's revision by symbol: "sha256:<hex>" of its generated code.
  std::map<std::string, std::string> revisions;
};

/// The input of a target's code generation: the kernels of a route placed
/// on devices of the target's kind, and the first such device (whose
/// target they are compiled for).
struct CodegenInput {
  const Graph &graph;
  const std::vector<KernelSpec> &kernels;
  const DeviceSpec &device;
  const KernelLibraries &libraries;
  bool wantAssembly = false;
};

/// A code generation target: the folder lib/Codegen/<Target>/ and one line
/// in Targets.def. Everything else (its pass, artifact section, capsules,
/// the devices it compiles for) follows from this description.
struct CodegenTarget {
  /// Its name (`x86`: the pass `codegen-x86` and the section
  /// `kernels.x86`), device kind and generated capsules.
  const GeneratedKernels &kernels;
  /// Compiles the kernels into the target's section.
  LogicalResult (*generate)(const CodegenInput &in, TargetCode &out, RouteCode &code,
                            DiagnosticEngine &diag);

  std::string_view name() const { return kernels.target; }
  DeviceKind deviceKind() const { return kernels.backend; }
};

#define FUEL_CODEGEN_TARGET(Name) extern const CodegenTarget Name##CodegenTarget;
#include "fuel/Codegen/Targets.def"

/// Every code generation target, in the order their passes run.
std::span<const CodegenTarget *const> codegenTargets();

/// Generates `route`'s kernels for `target`, if any is placed on its
/// devices: the section goes to route.kernelBinaries, revisions to
/// route.kernelRevisions, and each device's target to route.kernelTargets.
LogicalResult generateTargetCode(const CodegenTarget &target, const Graph &graph,
                                 PlannedRoute &route, const KernelLibraries &libraries,
                                 bool wantAssembly, RouteCode &code, DiagnosticEngine &diag);

/// generateTargetCode for every target.
LogicalResult generateRouteCode(const Graph &graph, PlannedRoute &route,
                                const KernelLibraries &libraries, bool wantAssembly,
                                RouteCode &code, DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_CODEGEN_PLANCODEGEN_H
