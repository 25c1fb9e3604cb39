//===- PtxKernels.cpp - What the PTX (CUDA) target generates --------------===//

#include "fuel/Codegen/TargetKernels.h"

using namespace fuel;

/// The GPU emitter's ops in every dtype but the 16-bit and unsigned
/// 32/64-bit integers (not yet run on a GPU).
static uint32_t ptxDTypes(OpKind op) {
  using enum DType;
  if (!gpuEmitterGenerates(op))
    return 0;
  return dtypeMask({F32, F16, BF16, F64, I8, I32, I64, U8, Bool});
}

const GeneratedKernels fuel::ptxGeneratedKernels = {
    .target = "ptx",
    .backend = DeviceKind::CUDA,
    .dtypesFor = ptxDTypes,
    .parallelReductions = true,
    .predicate = {},
    .efficiency = 0.6,
};
