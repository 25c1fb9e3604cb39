//===- OnnxQuantize.cpp - ONNX quantization ops from IR ops ---------------===//
//
// The linear quantization ops by their ONNX definitions:
// - QuantizeLinear: saturate(round(x / scale) + zero_point), rounding halves
//   to even, to the zero point's type (uint8 without one);
// - DequantizeLinear: (x - zero_point) * scale;
// - DynamicQuantizeLinear: uint8 with the scale and zero point that map
//   [min(x, 0), max(x, 0)] onto [0, 255];
// - MatMulInteger / ConvInteger: the product of the zero-point-shifted
//   operands, exact: int32 matmuls, and convolutions in f64 (every sum of
//   8-bit products is exact there; fuelc has no integer convolution yet);
// - QLinearMatMul / QLinearConv: those products rescaled by
//   scale_a * scale_b / scale_y and quantized.
// Scales and zero points are scalars or, along `axis`, vectors.
//
// These run as dequantized arithmetic: int8 kernels for QDQ patterns are
// still to come (docs/conformance.md).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include "fuel/IR/Shape.h"

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// A scale or zero point (rank 0 or 1) shaped to broadcast against a
/// rank-`rank` tensor along `axis` ([C] -> [C, 1, ..., 1]).
ValueRef alongAxis(Composer &k, ValueRef v, size_t rank, unsigned axis) {
  ShapeRef s = k.im.graph.shape(v);
  if (s.size() != 1 || axis + 1 == rank)
    return v;
  std::vector<Dim> dims(rank - axis, Dim::fixed(1));
  dims[0] = s[0];
  return k.op(OpKind::Reshape, {v}, [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, dims); });
}

/// `v` (a float tensor) rounded, shifted by `zeroPoint` (nullopt: 0) and
/// saturated to `to`'s range, in `to`.
ValueRef saturate(Composer &k, ValueRef v, std::optional<ValueRef> zeroPoint, DType to) {
  DType t = k.im.graph.dtype(v);
  v = k.op(OpKind::Round, {v});
  if (zeroPoint)
    v = k.op(OpKind::Add, {v, k.cast(*zeroPoint, t)});
  bool isSigned = to == DType::I8;
  v = k.op(OpKind::Clamp, {v}, [&](Graph &g) {
    g.addFloatAttr(AttrName::MinValue, isSigned ? -128 : 0);
    g.addFloatAttr(AttrName::MaxValue, isSigned ? 127 : 255);
  });
  return k.cast(v, to);
}

bool quantizedType(Importer &im, DType t) {
  return t == DType::U8 || t == DType::I8 ||
         im.unsupported("only uint8 and int8 quantized tensors are supported, not " +
                        std::string(dtypeName(t)));
}

/// The axis of per-axis scales (opset 13) when input `scale` is a vector
/// (0 when it is a scalar), normalized; reports when out of range.
std::optional<unsigned> quantAxis(Importer &im, size_t rank, size_t scale) {
  if (im.graph.shape(im.input(scale)).empty())
    return 0;
  std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", 1), rank);
  if (!axis)
    im.unsupported("axis " + std::to_string(im.attrInt("axis", 1)) + " is out of range");
  return axis;
}

bool quantizeLinear(Importer &im) {
  Composer k(im);
  size_t rank = im.graph.shape(k.x).size();
  std::optional<unsigned> axis = quantAxis(im, rank, 1);
  DType to = im.hasInput(2) ? im.graph.dtype(im.input(2)) : DType::U8;
  if (!axis || !k.floatInput() || !quantizedType(im, to))
    return false;
  ValueRef scale = alongAxis(k, im.input(1), rank, *axis);
  std::optional<ValueRef> zeroPoint;
  if (im.hasInput(2))
    zeroPoint = alongAxis(k, im.input(2), rank, *axis);
  return k.finish(saturate(k, k.op(OpKind::Div, {k.x, scale}), zeroPoint, to));
}

/// (v - zeroPoint) in `t`, zeroPoint absent when `zeroInput` is not given.
ValueRef shifted(Composer &k, ValueRef v, size_t zeroInput, DType t, size_t rank, unsigned axis) {
  v = k.cast(v, t);
  if (!k.im.hasInput(zeroInput))
    return v;
  return k.op(OpKind::Sub, {v, alongAxis(k, k.cast(k.im.input(zeroInput), t), rank, axis)});
}

bool dequantizeLinear(Importer &im) {
  Composer k(im);
  size_t rank = im.graph.shape(k.x).size();
  std::optional<unsigned> axis = quantAxis(im, rank, 1);
  if (!axis)
    return false;
  DType t = im.graph.dtype(im.input(1));
  ValueRef centered = shifted(k, k.x, 2, t, rank, *axis);
  return k.finish(k.op(OpKind::Mul, {centered, alongAxis(k, im.input(1), rank, *axis)}));
}

bool dynamicQuantizeLinear(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  std::vector<int64_t> all(im.graph.shape(k.x).size());
  for (size_t d = 0; d < all.size(); ++d)
    all[d] = static_cast<int64_t>(d);
  auto reduce = [&](OpKind kind) {
    return k.op(kind, {k.x}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Axes, all);
      g.addBoolAttr(AttrName::KeepDims, false);
    });
  };
  ValueRef hi = k.op(OpKind::Max, {reduce(OpKind::ReduceMax), k.c(0)});
  ValueRef lo = k.op(OpKind::Min, {reduce(OpKind::ReduceMin), k.c(0)});
  ValueRef scale = k.op(OpKind::Div, {k.op(OpKind::Sub, {hi, lo}), k.c(255)});
  ValueRef zeroPoint =
      saturate(k, k.op(OpKind::Div, {k.op(OpKind::Neg, {lo}), scale}), std::nullopt, DType::U8);
  ValueRef y = saturate(k, k.op(OpKind::Div, {k.x, scale}), zeroPoint, DType::U8);
  return k.finish(y, 0) && k.finish(scale, 1) && k.finish(zeroPoint, 2);
}

/// MatMulInteger(a, b, a_zero?, b_zero?) at inputs `a`, `b`, `aZero`,
/// `bZero`: a's zero point is per row (axis 0 of a matrix), b's per column.
ValueRef integerProduct(Composer &k, size_t a, size_t b, size_t aZero, size_t bZero) {
  Importer &im = k.im;
  size_t rankA = im.graph.shape(im.input(a)).size(), rankB = im.graph.shape(im.input(b)).size();
  ValueRef lhs = shifted(k, im.input(a), aZero, DType::I32, rankA,
                         rankA >= 2 ? static_cast<unsigned>(rankA - 2) : 0);
  ValueRef rhs =
      shifted(k, im.input(b), bZero, DType::I32, rankB, static_cast<unsigned>(rankB - 1));
  return k.op(OpKind::MatMul, {lhs, rhs});
}

/// The convolution of (x - x_zero) by (w - w_zero) in f64 (w's zero point
/// per output channel), with the node's window attributes.
ValueRef integerConv(Composer &k, size_t x, size_t w, size_t xZero, size_t wZero) {
  Importer &im = k.im;
  ValueRef input = shifted(k, im.input(x), xZero, DType::F64, 4, 1);
  ValueRef weight = shifted(k, im.input(w), wZero, DType::F64, 4, 0);
  return addWindowed(k, OpKind::Conv2D, {input, weight});
}

bool integerInputs(Importer &im, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!quantizedType(im, im.graph.dtype(im.input(i))))
      return false;
  return true;
}

bool matMulInteger(Importer &im) {
  Composer k(im);
  return integerInputs(im, {0, 1}) && k.finish(integerProduct(k, 0, 1, 2, 3));
}

bool convInteger(Importer &im) {
  Composer k(im);
  if (!integerInputs(im, {0, 1}))
    return false;
  return k.finish(k.cast(integerConv(k, 0, 1, 2, 3), DType::I32));
}

/// `product` (integers, in any type) * scale_a * scale_b / scale_y,
/// quantized with y's zero point; `bAxis` is the axis of `product` that
/// b's per-channel scale runs along.
bool requantize(Composer &k, ValueRef product, size_t aScale, size_t bScale, size_t yScale,
                size_t yZero, unsigned bAxis) {
  Importer &im = k.im;
  DType to = im.graph.dtype(im.input(yZero));
  if (!quantizedType(im, to))
    return false;
  size_t rank = im.graph.shape(product).size();
  DType t = im.graph.dtype(im.input(aScale));
  ValueRef perB = alongAxis(k, im.input(bScale), rank, bAxis);
  ValueRef multiplier =
      k.op(OpKind::Div, {k.op(OpKind::Mul, {im.input(aScale), perB}), im.input(yScale)});
  ValueRef scaled = k.op(OpKind::Mul, {k.cast(product, t), multiplier});
  return k.finish(saturate(k, scaled, im.input(yZero), to));
}

bool qlinearMatMul(Importer &im) { // a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero
  Composer k(im);
  if (!integerInputs(im, {0, 3}))
    return false;
  ValueRef product = integerProduct(k, 0, 3, 2, 5);
  size_t rank = im.graph.shape(product).size();
  return requantize(k, product, 1, 4, 6, 7, static_cast<unsigned>(rank - 1));
}

bool qlinearConv(Importer &im) { // x, x_scale, x_zero, w, w_scale, w_zero,
                                 // y_scale, y_zero, B?
  Composer k(im);
  if (!integerInputs(im, {0, 3}))
    return false;
  ValueRef product = integerConv(k, 0, 3, 2, 5);
  if (im.hasInput(8)) { // int32 bias in units of x_scale * w_scale.
    ValueRef bias = alongAxis(k, k.cast(im.input(8), DType::F64), 4, 1);
    product = k.op(OpKind::Add, {product, bias});
  }
  return requantize(k, product, 1, 4, 6, 7, 1);
}
} // namespace

void onnximport::addQuantizeHandlers(HandlerTable &table) {
  table.insert({{"QuantizeLinear", quantizeLinear},
                {"DequantizeLinear", dequantizeLinear},
                {"DynamicQuantizeLinear", dynamicQuantizeLinear},
                {"MatMulInteger", matMulInteger},
                {"ConvInteger", convInteger},
                {"QLinearMatMul", qlinearMatMul},
                {"QLinearConv", qlinearConv}});
}
