//===- X86Kernels.cpp - What the x86-64 target generates ------------------===//

#include "fuel/Codegen/TargetKernels.h"

using namespace fuel;

/// Every kernel op in every dtype.
static uint32_t x86DTypes(OpKind) {
  using enum DType;
  return dtypeMask({F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool});
}

const GeneratedKernels fuel::x86GeneratedKernels = {
    .target = "x86",
    .backend = DeviceKind::CPU,
    .dtypesFor = x86DTypes,
    .parallelReductions = false,
    .predicate = {},
    .efficiency = 0.6,
};
