//===- SpirvKernels.cpp - What the SPIR-V (Vulkan) target generates -------===//

#include "fuel/Codegen/TargetKernels.h"

using namespace fuel;

/// SPIR-V has no bf16, and GLSL.std.450 has exp, log, sin and cos only for
/// 16- and 32-bit floats. The 8/16-bit and 64-bit types need device
/// features (8/16-bit storage, shaderInt8/Float16/Int64/Float64) that the
/// runtime checks at load; the 16-bit and unsigned 32/64-bit integers have
/// no GPU kernels yet.
static uint32_t spirvDTypes(OpKind op) {
  using enum DType;
  if (!gpuEmitterGenerates(op))
    return 0;
  if (isTranscendentalOp(op))
    return dtypeMask({F32, F16, I8, I32, I64, U8, Bool});
  return dtypeMask({F32, F16, F64, I8, I32, I64, U8, Bool});
}

const GeneratedKernels fuel::spirvGeneratedKernels = {
    .target = "spirv",
    .backend = DeviceKind::Vulkan,
    .dtypesFor = spirvDTypes,
    .parallelReductions = false,
    // 32-bit indexing.
    .predicate = {8, (int64_t(1) << 31) - 1},
    .efficiency = 0.4,
};
