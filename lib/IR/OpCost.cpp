//===- OpCost.cpp - Arithmetic per element of an op -----------------------===//

#include "fuel/IR/OpCost.h"

using namespace fuel;

double fuel::opsPerElement(OpKind kind) {
  switch (kind) {
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Tanh:
  case OpKind::Sigmoid:
  case OpKind::Erf:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Pow:
  case OpKind::Silu:
    return 20;
  case OpKind::Gelu:
    return 30;
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Div:
  case OpKind::Recip:
  case OpKind::Mod:
  case OpKind::Fmod:
    return 4;
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return 25;
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return 10;
  default:
    return 1;
  }
}
