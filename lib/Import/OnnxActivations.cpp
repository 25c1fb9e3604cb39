//===- OnnxActivations.cpp - ONNX elementwise functions from IR ops -------===//
//
// ONNX elementwise functions without an IR op of their own, each built from
// IR ops by its definition in the ONNX operator docs (the formula is beside
// each handler). They fuse like any elementwise chain, so the composition
// costs no memory traffic.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <cmath>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// max(x, alpha * x) for 0 <= alpha <= 1.
bool leakyRelu(Importer &im) {
  double alpha = im.attrFloat("alpha", 0.01f);
  if (alpha < 0 || alpha > 1)
    return im.unsupported("alpha outside [0, 1] is not supported");
  DType t = im.graph.dtype(im.input(0));
  std::optional<NodeId> scaled = im.add(
      OpKind::Mul, {im.input(0), im.addConstant(scalar(alpha, t), ".alpha")}, {}, ".scaled");
  if (!scaled)
    return false;
  return emit(im, OpKind::Max, {im.input(0), {*scaled, 0}});
}


/// alpha * (exp(x) - 1) where x <= 0, else x.
ValueRef expLinear(Composer &k, ValueRef x, double alpha) {
  ValueRef expm1 = k.op(OpKind::Sub, {k.op(OpKind::Exp, {x}), k.c(1)});
  ValueRef negative = k.op(OpKind::Mul, {k.c(alpha), expm1});
  return k.op(OpKind::Where, {k.op(OpKind::Gt, {x, k.c(0)}), x, negative});
}

bool elu(Importer &im) {
  Composer k(im);
  return k.floatInput() && k.finish(expLinear(k, k.x, im.attrFloat("alpha", 1)));
}

bool selu(Importer &im) {
  Composer k(im);
  double alpha = im.attrFloat("alpha", 1.67326319217681884765625f);
  double gamma = im.attrFloat("gamma", 1.05070102214813232421875f);
  return k.floatInput() &&
         k.finish(k.op(OpKind::Mul, {k.c(gamma), expLinear(k, k.x, alpha)}));
}

bool celu(Importer &im) { // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  Composer k(im);
  double alpha = im.attrFloat("alpha", 1);
  if (!k.floatInput())
    return false;
  ValueRef scaled = k.op(OpKind::Div, {k.x, k.c(alpha)});
  ValueRef expm1 = k.op(OpKind::Sub, {k.op(OpKind::Exp, {scaled}), k.c(1)});
  ValueRef e = k.op(OpKind::Mul, {k.c(alpha), expm1});
  return k.finish(k.op(OpKind::Add, {k.op(OpKind::Relu, {k.x}), k.op(OpKind::Min, {k.c(0), e})}));
}

/// clamp(alpha * x + beta, 0, 1)
ValueRef hardSigmoidOf(Composer &k, ValueRef x, double alpha, double beta) {
  ValueRef linear = k.op(OpKind::Add, {k.op(OpKind::Mul, {k.c(alpha), x}), k.c(beta)});
  return k.op(OpKind::Clamp, {linear}, [](Graph &g) {
    g.addFloatAttr(AttrName::MinValue, 0);
    g.addFloatAttr(AttrName::MaxValue, 1);
  });
}

bool hardSigmoid(Importer &im) {
  Composer k(im);
  return k.floatInput() && k.finish(hardSigmoidOf(k, k.x, im.attrFloat("alpha", 0.2f),
                                                  im.attrFloat("beta", 0.5f)));
}

bool hardSwish(Importer &im) {
  Composer k(im);
  return k.floatInput() &&
         k.finish(k.op(OpKind::Mul, {k.x, hardSigmoidOf(k, k.x, 1.0 / 6, 0.5)}));
}

/// log(exp(x) + 1)
ValueRef softplusOf(Composer &k, ValueRef x) {
  return k.op(OpKind::Log, {k.op(OpKind::Add, {k.op(OpKind::Exp, {x}), k.c(1)})});
}

bool softplus(Importer &im) {
  Composer k(im);
  return k.floatInput() && k.finish(softplusOf(k, k.x));
}

bool mish(Importer &im) { // x * tanh(softplus(x))
  Composer k(im);
  return k.floatInput() &&
         k.finish(k.op(OpKind::Mul, {k.x, k.op(OpKind::Tanh, {softplusOf(k, k.x)})}));
}

bool gelu(Importer &im) { // Opset 20.
  std::string approximate = im.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return im.unsupported("approximate='" + approximate + "' is not 'none' or 'tanh'");
  return direct(im, OpKind::Gelu, [&](Graph &g) {
    if (approximate == "tanh")
      g.addStringAttr(AttrName::Approximate, "tanh");
  });
}

bool softsign(Importer &im) { // x / (1 + |x|)
  Composer k(im);
  return k.floatInput() &&
         k.finish(k.op(OpKind::Div, {k.x, k.op(OpKind::Add, {k.c(1), k.op(OpKind::Abs, {k.x})})}));
}

bool sign(Importer &im) { // (x > 0) - (x < 0), in x's dtype
  Composer k(im);
  return k.finish(k.op(OpKind::Sub, {k.cast(k.op(OpKind::Gt, {k.x, k.c(0)}), k.type),
                                     k.cast(k.op(OpKind::Lt, {k.x, k.c(0)}), k.type)}));
}

bool thresholdedRelu(Importer &im) { // x where x > alpha, else 0
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef keep = k.op(OpKind::Gt, {k.x, k.c(im.attrFloat("alpha", 1))});
  return k.finish(k.op(OpKind::Where, {keep, k.x, k.c(0)}));
}

bool prelu(Importer &im) { // slope * x where x < 0, else x
  Composer k(im);
  ValueRef scaled = k.op(OpKind::Mul, {im.input(1), k.x});
  return k.finish(k.op(OpKind::Where, {k.op(OpKind::Lt, {k.x, k.c(0)}), scaled, k.x}));
}

bool shrink(Importer &im) { // x + bias below -lambd, x - bias above lambd, else 0
  Composer k(im);
  double lambd = im.attrFloat("lambd", 0.5f), bias = im.attrFloat("bias", 0);
  ValueRef above = k.op(OpKind::Where, {k.op(OpKind::Gt, {k.x, k.c(lambd)}),
                                        k.op(OpKind::Sub, {k.x, k.c(bias)}), k.c(0)});
  return k.finish(k.op(OpKind::Where, {k.op(OpKind::Lt, {k.x, k.c(-lambd)}),
                                       k.op(OpKind::Add, {k.x, k.c(bias)}), above}));
}

/// Xor and BitwiseXor (18): and, or and not are bitwise on integers.
bool xorOp(Importer &im) { // (a or b) and not (a and b)
  Composer k(im);
  ValueRef a = im.input(0), b = im.input(1);
  ValueRef both = k.op(OpKind::And, {a, b});
  return k.finish(k.op(OpKind::And, {k.op(OpKind::Or, {a, b}), k.op(OpKind::Not, {both})}));
}

bool mean(Importer &im) { // the sum of the inputs divided by their count
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef sum = im.input(0);
  for (size_t i = 1; i < im.numInputs(); ++i)
    sum = k.op(OpKind::Add, {sum, im.input(i)});
  return k.finish(k.op(OpKind::Div, {sum, k.c(static_cast<double>(im.numInputs()))}));
}

bool tan(Importer &im) { // sin(x) / cos(x)
  Composer k(im);
  return k.floatInput() &&
         k.finish(k.op(OpKind::Div, {k.op(OpKind::Sin, {k.x}), k.op(OpKind::Cos, {k.x})}));
}

/// (exp(x) - exp(-x)) / 2 for Sinh, (exp(x) + exp(-x)) / 2 for Cosh.
bool hyperbolic(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef up = k.op(OpKind::Exp, {k.x}), down = k.op(OpKind::Exp, {k.op(OpKind::Neg, {k.x})});
  OpKind combine = im.current().op_type() == "Sinh" ? OpKind::Sub : OpKind::Add;
  return k.finish(k.op(OpKind::Mul, {k.c(0.5), k.op(combine, {up, down})}));
}

/// log(x + sqrt(x * x + 1)) for Asinh, log(x + sqrt(x * x - 1)) for Acosh.
bool inverseHyperbolic(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  OpKind combine = im.current().op_type() == "Asinh" ? OpKind::Add : OpKind::Sub;
  ValueRef root = k.op(OpKind::Sqrt, {k.op(combine, {k.op(OpKind::Mul, {k.x, k.x}), k.c(1)})});
  return k.finish(k.op(OpKind::Log, {k.op(OpKind::Add, {k.x, root})}));
}

bool atanh(Importer &im) { // log((1 + x) / (1 - x)) / 2
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef ratio = k.op(OpKind::Div, {k.op(OpKind::Add, {k.c(1), k.x}),
                                      k.op(OpKind::Sub, {k.c(1), k.x})});
  return k.finish(k.op(OpKind::Mul, {k.c(0.5), k.op(OpKind::Log, {ratio})}));
}

/// atan(x) by Cephes' atanf: |x| reduced to [0, tan(pi/8)] (about 0.414)
/// by atan(a) = pi/2 - atan(1/a) above tan(3pi/8) and pi/4 + atan((a-1) /
/// (a+1)) above tan(pi/8), then an odd polynomial; about 1 ulp in f32.
ValueRef atanOf(Composer &k, ValueRef x) {
  ValueRef a = k.op(OpKind::Abs, {x});
  ValueRef big = k.op(OpKind::Gt, {a, k.c(2.414213562373095)});
  ValueRef mid = k.op(OpKind::Gt, {a, k.c(0.4142135623730950)});
  ValueRef inverted = k.op(OpKind::Neg, {k.op(OpKind::Recip, {a})});
  ValueRef shifted =
      k.op(OpKind::Div, {k.op(OpKind::Sub, {a, k.c(1)}), k.op(OpKind::Add, {a, k.c(1)})});
  ValueRef r = k.op(OpKind::Where, {big, inverted, k.op(OpKind::Where, {mid, shifted, a})});
  ValueRef base = k.op(OpKind::Where, {big, k.c(M_PI / 2),
                                       k.op(OpKind::Where, {mid, k.c(M_PI / 4), k.c(0)})});
  ValueRef z = k.op(OpKind::Mul, {r, r});
  ValueRef p = k.c(8.05374449538e-2);
  for (double c : {-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1})
    p = k.op(OpKind::Add, {k.op(OpKind::Mul, {p, z}), k.c(c)});
  ValueRef odd = k.op(OpKind::Add, {k.op(OpKind::Mul, {k.op(OpKind::Mul, {p, z}), r}), r});
  ValueRef magnitude = k.op(OpKind::Add, {base, odd});
  return k.op(OpKind::Where,
              {k.op(OpKind::Lt, {x, k.c(0)}), k.op(OpKind::Neg, {magnitude}), magnitude});
}

bool atan(Importer &im) {
  Composer k(im);
  return k.floatInput() && k.finish(atanOf(k, k.x));
}

bool asin(Importer &im) { // atan(x / sqrt((1 - x)(1 + x)))
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef cosine = k.op(OpKind::Sqrt, {k.op(OpKind::Mul, {k.op(OpKind::Sub, {k.c(1), k.x}),
                                                           k.op(OpKind::Add, {k.c(1), k.x})})});
  return k.finish(atanOf(k, k.op(OpKind::Div, {k.x, cosine})));
}

bool acos(Importer &im) { // 2 atan(sqrt((1 - x) / (1 + x)))
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef ratio =
      k.op(OpKind::Div, {k.op(OpKind::Sub, {k.c(1), k.x}), k.op(OpKind::Add, {k.c(1), k.x})});
  return k.finish(k.op(OpKind::Mul, {k.c(2), atanOf(k, k.op(OpKind::Sqrt, {ratio}))}));
}

/// x << y as x * 2^y and x >> y as x / 2^y (unsigned: both wrap and round
/// down as shifts do), 0 where y >= the width.
bool bitShift(Importer &im) {
  Composer k(im);
  if (!isUnsignedInteger(k.type))
    return im.unsupported("BitShift is defined on unsigned integers");
  std::string direction = im.attrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return im.unsupported("direction must be LEFT or RIGHT, not '" + direction + "'");
  ValueRef y = im.input(1);
  ValueRef factor = k.op(OpKind::Pow, {k.c(2), y});
  ValueRef shifted = direction == "LEFT"
                         ? k.op(OpKind::Mul, {k.x, factor})
                         : k.op(OpKind::Div, {k.x, k.op(OpKind::Max, {factor, k.c(1)})});
  ValueRef tooFar = k.op(OpKind::Ge, {y, k.c(8.0 * dtypeByteSize(k.type))});
  return k.finish(k.op(OpKind::Where, {tooFar, k.c(0), shifted}));
}

bool isNan(Importer &im) { // x != x
  Composer k(im);
  return k.floatInput() && k.finish(k.op(OpKind::Ne, {k.x, k.x}));
}

/// x == +inf (with detect_positive) or x == -inf (with detect_negative).
bool isInf(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  bool positive = im.attrInt("detect_positive", 1) != 0;
  bool negative = im.attrInt("detect_negative", 1) != 0;
  ValueRef pos = k.op(OpKind::Eq, {k.x, k.c(INFINITY)});
  ValueRef neg = k.op(OpKind::Eq, {k.x, k.c(-INFINITY)});
  if (positive && negative)
    return k.finish(k.op(OpKind::Or, {pos, neg}));
  if (positive || negative)
    return k.finish(positive ? pos : neg);
  return k.finish(k.op(OpKind::And, {pos, neg})); // Neither: all false.
}
} // namespace

void onnximport::addActivationHandlers(HandlerTable &table) {
  table.insert({
      {"LeakyRelu", leakyRelu},
      {"Elu", elu},
      {"Selu", selu},
      {"Celu", celu},
      {"HardSigmoid", hardSigmoid},
      {"HardSwish", hardSwish},
      {"Softplus", softplus},
      {"Mish", mish},
      {"Gelu", gelu},
      {"Softsign", softsign},
      {"Sign", sign},
      {"ThresholdedRelu", thresholdedRelu},
      {"PRelu", prelu},
      {"Shrink", shrink},
      {"Xor", xorOp},
      {"BitwiseXor", xorOp},
      {"BitwiseAnd", [](Importer &im) { return direct(im, OpKind::And); }},
      {"BitwiseOr", [](Importer &im) { return direct(im, OpKind::Or); }},
      {"BitwiseNot", [](Importer &im) { return direct(im, OpKind::Not); }},
      {"Mean", mean},
      {"Tan", tan},
      {"Sinh", hyperbolic},
      {"Cosh", hyperbolic},
      {"Asinh", inverseHyperbolic},
      {"Acosh", inverseHyperbolic},
      {"Atanh", atanh},
      {"Atan", atan},
      {"BitShift", bitShift},
      {"Asin", asin},
      {"Acos", acos},
      {"IsNaN", isNan},
      {"IsInf", isInf},
  });
}
