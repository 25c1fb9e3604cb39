//===- PlanCodegen.cpp - Generating the kernels of a plan -----------------===//

#include "fuel/Codegen/PlanCodegen.h"

#include "fuel/Codegen/PtxCodegen.h"
#include "fuel/Codegen/SpirvCodegen.h"
#include "fuel/Codegen/X86Codegen.h"

#include <algorithm>

using namespace fuel;

static LogicalResult generateX86(const Graph &graph, const std::vector<KernelSpec> &kernels,
                                 const DeviceSpec &device,
                                 const KernelLibraries &libraries, bool wantAssembly,
                                 TargetCode &out, RouteCode &code, std::string &error) {
  if (!x86LevelFeatures(device.target)) {
    error = "device " + formatDevice(device.ref) + " has target '" + device.target +
            "', which is not an x86-64 level (x86-64, x86-64-v2, x86-64-v3 or "
            "x86-64-v4)";
    return failure();
  }
  std::string &mlir = code.mlir["x86"];
  if (failed(emitKernelModule(graph, kernels, mlir, out.revisions, error)))
    return failure();
  std::vector<std::string> archives;
  if (std::any_of(kernels.begin(), kernels.end(),
                  [](const KernelSpec &k) { return !k.librarySymbol.empty(); }))
    archives.push_back(libraries.x86Archive);
  X86Output x86;
  if (failed(compileX86(mlir, kernels, X86Target{device.target}, archives, wantAssembly,
                        x86, error)))
    return failure();
  out.section = std::move(x86.sharedObject);
  code.assembly = std::move(x86.assembly);
  return success();
}

static LogicalResult generateSpirv(const Graph &graph,
                                   const std::vector<KernelSpec> &kernels,
                                   const DeviceSpec &device,
                                   const KernelLibraries &libraries, bool,
                                   TargetCode &out, RouteCode &code, std::string &error) {
  SpirvOutput spirv;
  if (failed(compileSpirv(graph, kernels, device.target, device.workgroupSize,
                          libraries.spirvDir, spirv, error)))
    return failure();
  out.section = std::move(spirv.section);
  out.revisions = std::move(spirv.revisions);
  code.mlir["spirv"] = std::move(spirv.mlir);
  code.spirvModules = std::move(spirv.modules);
  return success();
}

static LogicalResult generatePtx(const Graph &graph, const std::vector<KernelSpec> &kernels,
                                 const DeviceSpec &device,
                                 const KernelLibraries &libraries, bool,
                                 TargetCode &out, RouteCode &code, std::string &error) {
  PtxOutput ptx;
  if (failed(compilePtx(graph, kernels, device.target, device.workgroupSize,
                        libraries.ptxDir, ptx, error)))
    return failure();
  out.section = std::move(ptx.section);
  out.revisions = std::move(ptx.revisions);
  code.mlir["ptx"] = std::move(ptx.mlir);
  code.ptx = std::move(ptx.ptx);
  code.ptxUnverified = !ptx.verified;
  return success();
}

static constexpr CodegenTarget kTargets[] = {
    {"x86", DeviceKind::CPU, generateX86},
    {"spirv", DeviceKind::Vulkan, generateSpirv},
    {"ptx", DeviceKind::CUDA, generatePtx},
};

std::span<const CodegenTarget> fuel::codegenTargets() { return kTargets; }

LogicalResult fuel::generateTargetCode(const CodegenTarget &target, const Graph &graph,
                                       PlannedRoute &route,
                                       const KernelLibraries &libraries,
                                       bool wantAssembly, RouteCode &code,
                                       std::string &error) {
  const ExecutionPlan &plan = route.plan;
  // The kernels on devices of the target's kind; the first such device's
  // target (one per backend and route) is what they are compiled for.
  std::vector<KernelSpec> kernels;
  const DeviceSpec *device = nullptr;
  for (const KernelSpec &spec : plan.kernels) {
    unsigned d = plan.deviceOf[spec.nodes.back()];
    if (plan.machine->devices[d].ref.kind != target.deviceKind)
      continue;
    if (!device)
      device = &plan.machine->devices[d];
    route.kernelTargets[d] = std::string(target.name);
    kernels.push_back(spec);
  }
  if (kernels.empty())
    return success();
  TargetCode out;
  if (failed(target.generate(graph, kernels, *device, libraries, wantAssembly, out, code,
                             error)))
    return failure();
  route.kernelBinaries[std::string(target.name)] = std::move(out.section);
  route.kernelRevisions.insert(out.revisions.begin(), out.revisions.end());
  return success();
}

LogicalResult fuel::generateRouteCode(const Graph &graph, PlannedRoute &route,
                                      const KernelLibraries &libraries,
                                      bool wantAssembly, RouteCode &code,
                                      std::string &error) {
  for (const CodegenTarget &target : codegenTargets())
    if (failed(generateTargetCode(target, graph, route, libraries, wantAssembly, code,
                                  error)))
      return failure();
  return success();
}
