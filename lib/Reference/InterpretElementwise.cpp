//===- InterpretElementwise.cpp - Reference elementwise ops ---------------===//
//
// Unary ops, binary ops with numpy broadcasting, and select.
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

using namespace fuel;
using namespace fuel::detail;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static double applyUnary(OpKind kind, double v, double lo, double hi,
                         bool tanhGelu) {
  switch (kind) {
  case OpKind::Neg:
    return -v;
  case OpKind::Abs:
    return std::fabs(v);
  case OpKind::Exp:
    return std::exp(v);
  case OpKind::Log:
    return std::log(v);
  case OpKind::Sqrt:
    return std::sqrt(v);
  case OpKind::Rsqrt:
    return 1 / std::sqrt(v);
  case OpKind::Tanh:
    return std::tanh(v);
  case OpKind::Sigmoid:
    return 1 / (1 + std::exp(-v));
  case OpKind::Relu:
    return maxOrNaN(v, 0);
  case OpKind::Gelu:
    if (tanhGelu)
      return 0.5 * v *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case OpKind::Silu:
    return v / (1 + std::exp(-v));
  case OpKind::Erf:
    return std::erf(v);
  case OpKind::Sin:
    return std::sin(v);
  case OpKind::Cos:
    return std::cos(v);
  case OpKind::Recip:
    return 1 / v;
  case OpKind::Floor:
    return std::floor(v);
  case OpKind::Ceil:
    return std::ceil(v);
  case OpKind::Round: // Halves to even (the default rounding mode).
    return std::nearbyint(v);
  case OpKind::Not:
    return v == 0;
  case OpKind::Clamp:
    return std::min(std::max(v, lo), hi);
  default: // Cast: the result's rounding does the work.
    return v;
  }
}

HostTensor Interpreter::unary(NodeId node) {
  OpKind kind = graph.kind(node);
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  double lo = graph.getFloat(node, AttrName::MinValue,
                             -std::numeric_limits<double>::infinity());
  double hi = graph.getFloat(node, AttrName::MaxValue,
                             std::numeric_limits<double>::infinity());
  const Attribute *approx = graph.findAttr(node, AttrName::Approximate);
  bool tanhGelu = approx && graph.stringAttr(*approx) == "tanh";
  if (kind == OpKind::Not && isInteger(in.dtype)) { // Bitwise: ~v in the dtype.
    for (size_t i = 0; i < in.values.size(); ++i)
      out.values[i] = isUnsignedInteger(in.dtype)
                          ? std::ldexp(1.0, 8 * int(dtypeByteSize(in.dtype))) - 1 - in.values[i]
                          : -in.values[i] - 1;
    return out;
  }
  for (size_t i = 0; i < in.values.size(); ++i)
    out.values[i] = applyUnary(kind, in.values[i], lo, hi, tanhGelu);
  return out;
}

static double applyBinary(OpKind kind, double a, double b, bool integer) {
  switch (kind) {
  case OpKind::Add:
    return a + b;
  case OpKind::Sub:
    return a - b;
  case OpKind::Mul:
    return a * b;
  case OpKind::Div:
    // Integer division truncates toward zero (as C and ONNX); x / 0 is 0.
    return integer ? (b == 0 ? 0 : std::trunc(a / b)) : a / b;
  case OpKind::Pow:
    return std::pow(a, b);
  case OpKind::Fmod:
  case OpKind::Mod: {
    // Truncated (C's fmod), then floored for mod; integer x % 0 is 0.
    if (integer && b == 0)
      return 0;
    double r = std::fmod(a, b);
    if (kind == OpKind::Mod && r != 0 && (r < 0) != (b < 0))
      r += b;
    return r;
  }
  case OpKind::Max:
    return maxOrNaN(a, b);
  case OpKind::Min:
    return minOrNaN(a, b);
  case OpKind::Eq:
    return a == b;
  case OpKind::Ne:
    return a != b;
  case OpKind::Lt:
    return a < b;
  case OpKind::Le:
    return a <= b;
  case OpKind::Gt:
    return a > b;
  case OpKind::Ge:
    return a >= b;
  case OpKind::And: // Bitwise on integers (bool is 0 or 1 either way).
    return integer ? double(int64_t(a) & int64_t(b)) : double(a != 0 && b != 0);
  default: // Or
    return integer ? double(int64_t(a) | int64_t(b)) : double(a != 0 || b != 0);
  }
}

HostTensor Interpreter::binary(NodeId node) {
  OpKind kind = graph.kind(node);
  HostTensor out = result(node);
  Extents index;
  if (kind == OpKind::Where) {
    const HostTensor &c = operand(node, 0), &a = operand(node, 1),
                     &b = operand(node, 2);
    for (int64_t i = 0; i < out.numElements(); ++i) {
      unravel(i, out.shape, index);
      out.values[i] = c.values[broadcastOffset(index, c.shape)] != 0
                          ? a.values[broadcastOffset(index, a.shape)]
                          : b.values[broadcastOffset(index, b.shape)];
    }
    return out;
  }
  const HostTensor &a = operand(node, 0), &b = operand(node, 1);
  bool integer = isInteger(a.dtype);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    out.values[i] = applyBinary(kind, a.values[broadcastOffset(index, a.shape)],
                                b.values[broadcastOffset(index, b.shape)],
                                integer);
  }
  return out;
}
