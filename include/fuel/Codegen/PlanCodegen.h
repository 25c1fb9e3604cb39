//===- PlanCodegen.h - Generating the kernels of a plan ---------*- C++ -*-===//
//
// Hands each kernel of a planned route to the code generator of its
// device's backend. Backends without a code generator yet leave their
// kernels out; the runtime then refuses such a route at load (fail-fast),
// naming the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_CODEGEN_PLANCODEGEN_H
#define FUEL_CODEGEN_PLANCODEGEN_H

#include "fuel/Planner/Planner.h"

#include <map>
#include <string>
#include <vector>

namespace fuel {

struct RouteCode {
  /// Kernel binaries by backend name (`x86`: an ELF shared object).
  std::map<std::string, std::string> binaries;
  /// The MLIR module and the assembly of the x86 kernels (for --emit).
  std::string mlir, assembly;
  /// Kernels whose backend has no code generator yet.
  std::vector<std::string> missing;
};

/// `x86KernelLibrary` is the archive of library kernels (kernels/x86) that
/// generated kernels may call.
LogicalResult generateRouteCode(const Graph &graph, const ExecutionPlan &plan,
                                const std::string &x86KernelLibrary,
                                bool wantAssembly, RouteCode &code,
                                std::string &error);

} // namespace fuel

#endif // FUEL_CODEGEN_PLANCODEGEN_H
