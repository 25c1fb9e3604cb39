//===- TargetKernels.cpp - What each code generation target generates -----===//

#include "fuel/Codegen/TargetKernels.h"

using namespace fuel;

std::span<const GeneratedKernels *const> fuel::targetKernels() {
  static constexpr const GeneratedKernels *kTargets[] = {
#define FUEL_CODEGEN_TARGET(Name) &Name##GeneratedKernels,
#include "fuel/Codegen/Targets.def"
  };
  return kTargets;
}

CapsuleRegistry fuel::builtinCapsules() {
  CapsuleRegistry registry;
  for (const GeneratedKernels *kernels : targetKernels())
    registry.addGenerated(*kernels);
  return registry;
}

bool fuel::gpuEmitterGenerates(OpKind kind) {
  if (isElementwiseOp(kind))
    return true;
  switch (kind) {
  case OpKind::MatMul:
  case OpKind::Linear:
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::ArgMax:
  case OpKind::ArgMin:
  case OpKind::Conv2D:
  case OpKind::MaxPool2D:
  case OpKind::AvgPool2D:
  case OpKind::Contiguous:
  case OpKind::Concat:
  case OpKind::Split:
  case OpKind::Gather:
  case OpKind::Pad:
  case OpKind::Copy:
  case OpKind::Move:
  case OpKind::Alloc:
    return true;
  default: // write_slice reads symbol values, which GPU kernels do not take.
    return false;
  }
}
