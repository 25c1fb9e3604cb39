//===- PtxTarget.cpp - The PTX (CUDA) code generation target --------------===//

#include "PtxCodegen.h"

#include "fuel/Codegen/PlanCodegen.h"

using namespace fuel;

static LogicalResult generatePtx(const CodegenInput &in, TargetCode &out, RouteCode &code,
                                 DiagnosticEngine &diag) {
  PtxOutput ptx;
  if (failed(compilePtx(in.graph, in.kernels, in.device.target, in.device.workgroupSize,
                        in.libraries.ptxDir, ptx, diag)))
    return failure();
  out.section = std::move(ptx.section);
  out.revisions = std::move(ptx.revisions);
  code.mlir["ptx"] = std::move(ptx.mlir);
  code.ptx = std::move(ptx.ptx);
  code.ptxUnverified = !ptx.verified;
  return success();
}

const CodegenTarget fuel::ptxCodegenTarget = {ptxGeneratedKernels, generatePtx};
