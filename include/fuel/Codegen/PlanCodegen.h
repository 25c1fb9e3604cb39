//===- PlanCodegen.h - Generating the kernels of a plan ---------*- C++ -*-===//
//
// Hands each kernel of a planned route to the code generator of its
// device's backend: x86-64 for CPUs, SPIR-V for Vulkan devices, PTX for
// CUDA devices.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_CODEGEN_PLANCODEGEN_H
#define FUEL_CODEGEN_PLANCODEGEN_H

#include "fuel/Planner/Planner.h"

#include <map>
#include <string>
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

struct RouteCode {
  /// Kernel sections by backend name (`x86`: an ELF shared object,
  /// `spirv`: the fuel.spirv-kernels section, `ptx`: fuel.ptx-kernels).
  std::map<std::string, std::string> binaries;
  /// The MLIR of the x86 kernels then of the GPU kernels, and the assembly
  /// of the x86 kernels (for --emit).
  std::string mlir, assembly;
  /// SPIR-V binaries by file name (for --spirv-dir), and the PTX (for
  /// --emit=ptx), which no ptxas checked when `ptxUnverified`.
  std::map<std::string, std::string> spirvModules;
  std::string ptx;
  bool ptxUnverified = false;
  /// Each kernel's revision by symbol: "sha256:<hex>" of its generated code.
  std::map<std::string, std::string> revisions;
};

LogicalResult generateRouteCode(const Graph &graph, const ExecutionPlan &plan,
                                const KernelLibraries &libraries,
                                bool wantAssembly, RouteCode &code,
                                std::string &error);

} // namespace fuel

#endif // FUEL_CODEGEN_PLANCODEGEN_H
