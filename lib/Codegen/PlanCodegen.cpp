//===- PlanCodegen.cpp - Generating the kernels of a plan -----------------===//

#include "fuel/Codegen/PlanCodegen.h"

#include "fuel/Codegen/PtxCodegen.h"
#include "fuel/Codegen/SpirvCodegen.h"
#include "fuel/Codegen/X86Codegen.h"

#include <algorithm>

using namespace fuel;

/// The kernels of `plan` on devices of `kind`, and the target of the first
/// such device (one target per backend and route).
static std::vector<KernelSpec> kernelsOn(const ExecutionPlan &plan,
                                         DeviceKind kind, const DeviceSpec *&device) {
  std::vector<KernelSpec> out;
  device = nullptr;
  for (const KernelSpec &spec : plan.kernels) {
    const DeviceSpec &d = plan.machine->devices[plan.deviceOf[spec.nodes.back()]];
    if (d.ref.kind != kind)
      continue;
    if (!device)
      device = &d;
    out.push_back(spec);
  }
  return out;
}

static LogicalResult generateX86(const Graph &graph, const ExecutionPlan &plan,
                                 const KernelLibraries &libraries,
                                 bool wantAssembly, RouteCode &code,
                                 std::string &error) {
  const DeviceSpec *device;
  std::vector<KernelSpec> x86 = kernelsOn(plan, DeviceKind::CPU, device);
  if (x86.empty())
    return success();
  if (!x86LevelFeatures(device->target)) {
    error = "device " + formatDevice(device->ref) + " has target '" +
            device->target +
            "', which is not an x86-64 level (x86-64, x86-64-v2, x86-64-v3 or "
            "x86-64-v4)";
    return failure();
  }
  if (failed(emitKernelModule(graph, x86, code.mlir, code.revisions, error)))
    return failure();
  std::vector<std::string> archives;
  if (std::any_of(x86.begin(), x86.end(),
                  [](const KernelSpec &k) { return !k.librarySymbol.empty(); }))
    archives.push_back(libraries.x86Archive);
  X86Output out;
  if (failed(compileX86(code.mlir, x86, X86Target{device->target}, archives,
                        wantAssembly, out, error)))
    return failure();
  code.binaries["x86"] = std::move(out.sharedObject);
  code.assembly = std::move(out.assembly);
  return success();
}

static LogicalResult generateSpirv(const Graph &graph, const ExecutionPlan &plan,
                                   const KernelLibraries &libraries,
                                   RouteCode &code, std::string &error) {
  const DeviceSpec *device;
  std::vector<KernelSpec> kernels = kernelsOn(plan, DeviceKind::Vulkan, device);
  if (kernels.empty())
    return success();
  SpirvOutput out;
  if (failed(compileSpirv(graph, kernels, device->target, device->workgroupSize, libraries.spirvDir,
                          out, error)))
    return failure();
  code.binaries["spirv"] = std::move(out.section);
  code.revisions.insert(out.revisions.begin(), out.revisions.end());
  code.mlir += out.mlir;
  code.spirvModules = std::move(out.modules);
  return success();
}

static LogicalResult generatePtx(const Graph &graph, const ExecutionPlan &plan,
                                 const KernelLibraries &libraries, RouteCode &code,
                                 std::string &error) {
  const DeviceSpec *device;
  std::vector<KernelSpec> kernels = kernelsOn(plan, DeviceKind::CUDA, device);
  if (kernels.empty())
    return success();
  PtxOutput out;
  if (failed(compilePtx(graph, kernels, device->target, device->workgroupSize,
                        libraries.ptxDir, out, error)))
    return failure();
  code.binaries["ptx"] = std::move(out.section);
  code.revisions.insert(out.revisions.begin(), out.revisions.end());
  code.mlir += out.mlir;
  code.ptx = std::move(out.ptx);
  code.ptxUnverified = !out.verified;
  return success();
}

LogicalResult fuel::generateRouteCode(const Graph &graph,
                                      const ExecutionPlan &plan,
                                      const KernelLibraries &libraries,
                                      bool wantAssembly, RouteCode &code,
                                      std::string &error) {
  if (failed(generateX86(graph, plan, libraries, wantAssembly, code, error)) ||
      failed(generateSpirv(graph, plan, libraries, code, error)))
    return failure();
  return generatePtx(graph, plan, libraries, code, error);
}
