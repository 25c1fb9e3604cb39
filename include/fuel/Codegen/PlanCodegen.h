//===- PlanCodegen.h - Generating the kernels of a plan ---------*- C++ -*-===//
//
// Hands each kernel of a planned route to the code generator of its
// device's backend: x86-64 for CPUs, SPIR-V for Vulkan devices. Backends
// without a code generator yet (CUDA) leave their kernels out; the runtime
// then refuses such a route at load (fail-fast), naming the kernel.
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
};

struct RouteCode {
  /// Kernel sections by backend name (`x86`: an ELF shared object,
  /// `spirv`: the fuel.spirv-kernels section).
  std::map<std::string, std::string> binaries;
  /// The MLIR of the x86 kernels then of the GPU kernels, and the assembly
  /// of the x86 kernels (for --emit).
  std::string mlir, assembly;
  /// SPIR-V binaries by file name (for --emit=spirv-dir).
  std::map<std::string, std::string> spirvModules;
  /// Kernels whose backend has no code generator yet.
  std::vector<std::string> missing;
};

LogicalResult generateRouteCode(const Graph &graph, const ExecutionPlan &plan,
                                const KernelLibraries &libraries,
                                bool wantAssembly, RouteCode &code,
                                std::string &error);

} // namespace fuel

#endif // FUEL_CODEGEN_PLANCODEGEN_H
