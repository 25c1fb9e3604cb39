//===- PlanCodegen.cpp - Generating the kernels of a plan -----------------===//

#include "fuel/Codegen/PlanCodegen.h"

#include "fuel/Codegen/X86Codegen.h"

#include <algorithm>

using namespace fuel;

LogicalResult fuel::generateRouteCode(const Graph &graph,
                                      const ExecutionPlan &plan,
                                      const std::string &x86KernelLibrary,
                                      bool wantAssembly, RouteCode &code,
                                      std::string &error) {
  std::vector<KernelSpec> x86;
  std::optional<X86Target> target;
  for (const KernelSpec &spec : plan.kernels) {
    unsigned device = plan.deviceOf[spec.nodes.back()];
    const DeviceSpec &d = plan.machine->devices[device];
    if (d.ref.kind != DeviceKind::CPU) {
      code.missing.push_back(spec.symbol + " (" + formatDevice(d.ref) + ")");
      continue;
    }
    if (!target) {
      if (x86LevelFeatures(d.target))
        target = X86Target{d.target};
      if (!target) {
        error = "device " + formatDevice(d.ref) + " has target '" + d.target +
                "', which is not an x86-64 level (x86-64, x86-64-v2, "
                "x86-64-v3 or x86-64-v4)";
        return failure();
      }
    }
    x86.push_back(spec);
  }
  if (x86.empty())
    return success();
  if (failed(emitKernelModule(graph, x86, code.mlir, error)))
    return failure();
  std::vector<std::string> libraries;
  if (std::any_of(x86.begin(), x86.end(),
                  [](const KernelSpec &k) { return !k.librarySymbol.empty(); }))
    libraries.push_back(x86KernelLibrary);
  X86Output out;
  if (failed(compileX86(code.mlir, x86, *target, libraries, wantAssembly, out,
                        error)))
    return failure();
  code.binaries["x86"] = std::move(out.sharedObject);
  code.assembly = std::move(out.assembly);
  return success();
}
