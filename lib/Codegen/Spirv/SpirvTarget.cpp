//===- SpirvTarget.cpp - The SPIR-V (Vulkan) code generation target -------===//

#include "SpirvCodegen.h"

#include "fuel/Codegen/PlanCodegen.h"

using namespace fuel;

static LogicalResult generateSpirv(const CodegenInput &in, TargetCode &out, RouteCode &code,
                                   DiagnosticEngine &diag) {
  SpirvOutput spirv;
  if (failed(compileSpirv(in.graph, in.kernels, in.device.target, in.device.workgroupSize,
                          in.libraries.spirvDir, spirv, diag)))
    return failure();
  out.section = std::move(spirv.section);
  out.revisions = std::move(spirv.revisions);
  code.mlir["spirv"] = std::move(spirv.mlir);
  code.spirvModules = std::move(spirv.modules);
  return success();
}

const CodegenTarget fuel::spirvCodegenTarget = {spirvGeneratedKernels, generateSpirv};
