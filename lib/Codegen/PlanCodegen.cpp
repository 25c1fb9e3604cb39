//===- PlanCodegen.cpp - Generating the kernels of a plan -----------------===//

#include "fuel/Codegen/PlanCodegen.h"

using namespace fuel;

std::span<const CodegenTarget *const> fuel::codegenTargets() {
  static constexpr const CodegenTarget *kTargets[] = {
#define FUEL_CODEGEN_TARGET(Name) &Name##CodegenTarget,
#include "fuel/Codegen/Targets.def"
  };
  return kTargets;
}

LogicalResult fuel::generateTargetCode(const CodegenTarget &target, const Graph &graph,
                                       PlannedRoute &route, const KernelLibraries &libraries,
                                       bool wantAssembly, RouteCode &code, DiagnosticEngine &diag) {
  const ExecutionPlan &plan = route.plan;
  // The kernels on devices of the target's kind; the first such device's
  // target (one per backend and route) is what they are compiled for.
  std::vector<KernelSpec> kernels;
  const DeviceSpec *device = nullptr;
  for (const KernelSpec &spec : plan.kernels) {
    unsigned d = plan.deviceOf[spec.nodes.back()];
    if (plan.machine->devices[d].ref.kind != target.deviceKind())
      continue;
    if (!device)
      device = &plan.machine->devices[d];
    route.kernelTargets[d] = std::string(target.name());
    kernels.push_back(spec);
  }
  if (kernels.empty())
    return success();
  TargetCode out;
  if (failed(target.generate({graph, kernels, *device, libraries, wantAssembly}, out, code, diag)))
    return failure();
  route.kernelBinaries[std::string(target.name())] = std::move(out.section);
  route.kernelRevisions.insert(out.revisions.begin(), out.revisions.end());
  return success();
}

LogicalResult fuel::generateRouteCode(const Graph &graph, PlannedRoute &route,
                                      const KernelLibraries &libraries, bool wantAssembly,
                                      RouteCode &code, DiagnosticEngine &diag) {
  for (const CodegenTarget *target : codegenTargets())
    if (failed(generateTargetCode(*target, graph, route, libraries, wantAssembly, code, diag)))
      return failure();
  return success();
}
