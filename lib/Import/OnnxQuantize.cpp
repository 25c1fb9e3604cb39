//===- OnnxQuantize.cpp - ONNX quantization ops from IR ops ---------------===//
//
// The linear quantization ops by their ONNX definitions:
// - QuantizeLinear: saturate(round(x / scale) + zero_point), rounding halves
//   to even, to the zero point's type (uint8 without one);
// - DequantizeLinear: (x - zero_point) * scale;
// - DynamicQuantizeLinear: uint8 with the scale and zero point that map
//   [min(x, 0), max(x, 0)] onto [0, 255];
// - MatMulInteger / ConvInteger: the product of the zero-point-shifted
//   operands, exact: an 8-bit matmul or convolution with the zero points'
//   terms; a convolution whose weights' zero point is not 0 runs in f64
//   (every sum of 8-bit products is exact there);
// - QLinearMatMul / QLinearConv: those products rescaled by
//   scale_a * scale_b / scale_y and quantized.
// Scales and zero points are scalars or, along `axis`, vectors.
//
// A MatMul or Gemm of two DequantizeLinear outputs (the QDQ form exporters
// write) multiplies the 8-bit values themselves: MatMul of 8-bit operands is
// exact in i32 and has int8 kernels (kernels/x86/igemm.cpp); one float
// scale follows. A Conv of two DequantizeLinear outputs convolves the 8-bit
// values likewise (kernels/x86/iconv.cpp).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include "fuel/IR/Shape.h"

#include <cstring>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// A scale or zero point (rank 0 or 1) shaped to broadcast against a
/// rank-`rank` tensor along `axis` ([C] -> [C, 1, ..., 1]).
ValueRef alongAxis(Composer &k, ValueRef v, size_t rank, unsigned axis) {
  ShapeRef s = k.im.graph.shape(v);
  if (s.size() != 1 || axis + 1 >= rank)
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
/// (0 when it is a scalar), normalized; reports when out of range or when
/// the zero point (input scale + 1) is not shaped like the scale.
std::optional<unsigned> quantAxis(Importer &im, size_t rank, size_t scale) {
  // Both inputs first: reading one may add nodes, which moves the shapes.
  ValueRef scaleValue = im.input(scale);
  std::optional<ValueRef> zeroValue;
  if (im.hasInput(scale + 1))
    zeroValue = im.input(scale + 1);
  ShapeRef scaleShape = im.graph.shape(scaleValue);
  if (zeroValue) {
    ShapeRef zeroShape = im.graph.shape(*zeroValue);
    if (!std::equal(zeroShape.begin(), zeroShape.end(), scaleShape.begin(), scaleShape.end())) {
      const SymbolTable &symbols = im.graph.symbols();
      im.unsupported("the zero point " + formatShape(zeroShape, symbols) +
                     " is not shaped like the scale " + formatShape(scaleShape, symbols));
      return std::nullopt;
    }
  }
  if (scaleShape.empty())
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

/// The readers a dequantization stays deferred for: products, and
/// transposes on the way to one (PyTorch writes a linear layer's weights
/// as DequantizeLinear, Transpose, MatMul).
constexpr std::string_view kDeferringReaders[] = {"MatMul", "Gemm", "Transpose", "Conv"};

/// (v - zeroPoint) in `t`, zeroPoint absent when `zeroInput` is not given.
ValueRef shifted(Composer &k, ValueRef v, size_t zeroInput, DType t, size_t rank, unsigned axis) {
  v = k.cast(v, t);
  if (!k.im.hasInput(zeroInput))
    return v;
  return k.op(OpKind::Sub, {v, alongAxis(k, k.cast(k.im.input(zeroInput), t), rank, axis)});
}

bool dequantizeLinear(Importer &im) {
  size_t rank = im.graph.shape(im.input(0)).size();
  std::optional<unsigned> axis = quantAxis(im, rank, 1);
  if (!axis)
    return false;
  Dequantized d{im.input(0), im.input(1), std::nullopt, *axis, std::nullopt};
  if (im.hasInput(2))
    d.zeroPoint = im.input(2);
  // Kept 8-bit for readers that may multiply in integers.
  DType q = im.graph.dtype(d.quantized);
  if ((q == DType::U8 || q == DType::I8) && im.onlyReadBy(0, kDeferringReaders)) {
    im.bindDequantized(std::move(d));
    return true;
  }
  im.bind(0, dequantize(im, d, ""));
  return true;
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

/// The bytes of constant `v` when they hold its `elements` values of
/// `bytesEach` bytes; nullopt when `v` is not such a constant.
std::optional<std::string_view> constantBytes(const Graph &g, ValueRef v, int64_t elements,
                                              size_t bytesEach) {
  const ConstantData *data = g.constantData(v.node);
  if (!data || data->bytes().size() != static_cast<size_t>(elements) * bytesEach)
    return std::nullopt;
  return data->bytes();
}

/// Whether `v` is a constant of zeros (a zero point that shifts nothing).
bool isZeroConstant(const Graph &graph, ValueRef v) {
  const ConstantData *data = graph.constantData(v.node);
  if (!data)
    return false;
  std::string_view bytes = data->bytes();
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

/// The column sums of `b` (an 8-bit matrix, transposed when `transB`) as
/// an i32 constant ([1, N] with `keepDims`, else [N]), when b is a
/// constant or a transposed view of one; nullopt otherwise.
std::optional<ValueRef> constantColumnSums(Composer &k, ValueRef b, bool transB, bool keepDims) {
  const Graph &g = k.im.graph;
  if (g.shape(b).size() != 2)
    return std::nullopt;
  bool flip = transB;
  if (g.kind(b.node) == OpKind::Transpose) {
    const Attribute *perm = g.findAttr(b.node, AttrName::Perm);
    flip ^= !perm || g.intsAttr(*perm)[0] == 1; // Of a matrix: swapped or not.
    b = g.operands(b.node)[0];
  }
  const ConstantData *data = g.constantData(b.node);
  int64_t rows = g.shape(b)[0].size(), cols = g.shape(b)[1].size();
  if (!data || data->bytes().size() != static_cast<size_t>(rows * cols))
    return std::nullopt;
  // The stored matrix is [rows, cols]; the sums run over K, its rows unless
  // flipped.
  std::string_view bytes = data->bytes();
  bool isSigned = g.dtype(b) == DType::I8;
  std::vector<int64_t> sums(flip ? rows : cols, 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      auto byte = static_cast<uint8_t>(bytes[r * cols + c]);
      sums[flip ? r : c] += isSigned ? int64_t(int8_t(byte)) : int64_t(byte);
    }
  std::vector<int64_t> shape{static_cast<int64_t>(sums.size())};
  if (keepDims)
    shape.insert(shape.begin(), 1);
  return k.constant(intTensor(sums, shape, DType::I32));
}

/// (a - aZero) @ (b - bZero) in i32, exact, for 8-bit `a` and `b` (b
/// transposed when `transB`, then rank 2): the operands' own product, which
/// the int8 kernels compute, less the zero points' terms
///   aZero * colsum(b) + bZero * rowsum(a - aZero).
/// aZero is a scalar or per row of a matrix a; bZero a scalar or per column.
ValueRef integerProduct(Composer &k, ValueRef a, ValueRef b, std::optional<ValueRef> aZero,
                        std::optional<ValueRef> bZero, bool transB) {
  const Graph &g = k.im.graph;
  if (aZero && isZeroConstant(g, *aZero))
    aZero.reset();
  if (bZero && isZeroConstant(g, *bZero))
    bZero.reset();
  size_t rankA = g.shape(a).size(), rankB = g.shape(b).size();
  ValueRef y = k.op(OpKind::MatMul, {a, b},
                    [&](Graph &graph) { graph.addBoolAttr(AttrName::TransposeB, transB); });
  auto asInt = [&](ValueRef v) { return k.cast(v, DType::I32); };
  std::optional<ValueRef> aShift;
  if (aZero) {
    aShift = alongAxis(k, asInt(*aZero), rankA, rankA >= 2 ? static_cast<unsigned>(rankA - 2) : 0);
    // Sums over K: the result keeps b's column axis, and a's row axis only
    // when a is a matrix. Constant weights are summed here, once.
    bool keepDims = !transB && rankA >= 2 && rankB >= 2;
    std::optional<ValueRef> colSum = constantColumnSums(k, b, transB, keepDims);
    if (!colSum) {
      int64_t kAxis = transB ? -1 : static_cast<int64_t>(rankB) - 2;
      colSum = k.reduce(OpKind::ReduceSum, asInt(b), {rankB == 1 ? 0 : kAxis}, keepDims);
    }
    y = k.op(OpKind::Sub, {y, k.op(OpKind::Mul, {*aShift, *colSum})});
  }
  if (bZero) {
    ValueRef centered = asInt(a);
    if (aShift)
      centered = k.op(OpKind::Sub, {centered, *aShift});
    ValueRef rowSum = k.reduce(OpKind::ReduceSum, centered, {-1}, rankB >= 2);
    y = k.op(OpKind::Sub, {y, k.op(OpKind::Mul, {rowSum, asInt(*bZero)})});
  }
  return y;
}

/// MatMulInteger's product of inputs `a` and `b` with the zero points at
/// inputs `aZero` and `bZero` (absent: 0).
ValueRef integerProduct(Composer &k, size_t a, size_t b, size_t aZero, size_t bZero) {
  Importer &im = k.im;
  auto optional = [&](size_t i) {
    return im.hasInput(i) ? std::optional<ValueRef>(im.input(i)) : std::nullopt;
  };
  return integerProduct(k, im.input(a), im.input(b), optional(aZero), optional(bZero), false);
}

/// The one value of `v` when it is an 8-bit constant of one element.
std::optional<int64_t> constantByte(const Graph &g, ValueRef v) {
  const ConstantData *data = g.constantData(v.node);
  DType t = g.dtype(v);
  if (!data || data->bytes().size() != 1 || (t != DType::U8 && t != DType::I8))
    return std::nullopt;
  auto byte = static_cast<uint8_t>(data->bytes()[0]);
  return t == DType::I8 ? int64_t(int8_t(byte)) : int64_t(byte);
}

/// conv(x - xZero, w) in i32, exact, for 8-bit x and w, with the node's
/// window: the bytes' own convolution, which the int8 kernels compute, less
/// xZero * sum(w[o]) per output channel. The image is padded with xZero
/// first, so that a window reading padding reads shifted zeros. nullopt
/// when w's extents are not static, xZero is given and not a constant of
/// one value or, when it is not 0, w is not a constant.
std::optional<ValueRef> integerConvolution(Composer &k, ValueRef x, ValueRef w,
                                           std::optional<ValueRef> xZero) {
  const Graph &g = k.im.graph;
  std::optional<int64_t> shift = xZero ? constantByte(g, *xZero) : 0;
  if (!shift)
    return std::nullopt;
  ShapeRef ws = g.shape(w);
  if (!std::all_of(ws.begin(), ws.end(), [](Dim d) { return d.isStatic(); }))
    return std::nullopt;
  int64_t outputs = ws[0].size(), taps = ws[1].size() * ws[2].size() * ws[3].size();
  std::optional<std::string_view> bytes;
  if (*shift != 0 && !(bytes = constantBytes(g, w, outputs * taps, 1)))
    return std::nullopt;
  ValueRef y = addWindowed(k, OpKind::Conv2D, {x, w}, *shift);
  if (*shift == 0)
    return y;
  bool isSigned = g.dtype(w) == DType::I8;
  std::vector<int64_t> term(outputs, 0);
  for (int64_t o = 0; o < outputs; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      auto byte = static_cast<uint8_t>((*bytes)[o * taps + t]);
      term[o] += isSigned ? int64_t(int8_t(byte)) : int64_t(byte);
    }
    term[o] *= *shift;
  }
  return k.op(OpKind::Sub, {y, k.constant(intTensor(term, {outputs, 1, 1}, DType::I32))});
}

/// The convolution of (x - x_zero) by (w - w_zero) with the node's window
/// attributes: in i32 when integerConvolution can (w's zero point absent or
/// 0), else in f64 (w's zero point per output channel), cast to i32.
ValueRef integerConv(Composer &k, size_t x, size_t w, size_t xZero, size_t wZero) {
  Importer &im = k.im;
  if (!im.hasInput(wZero) || isZeroConstant(im.graph, im.input(wZero))) {
    std::optional<ValueRef> zero;
    if (im.hasInput(xZero))
      zero = im.input(xZero);
    if (std::optional<ValueRef> y = integerConvolution(k, im.input(x), im.input(w), zero))
      return *y;
  }
  ValueRef input = shifted(k, im.input(x), xZero, DType::F64, 4, 1);
  ValueRef weight = shifted(k, im.input(w), wZero, DType::F64, 4, 0);
  return k.cast(addWindowed(k, OpKind::Conv2D, {input, weight}), DType::I32);
}

bool integerInputs(Importer &im, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs)
    if (!quantizedType(im, im.graph.dtype(im.input(i))))
      return false;
  return true;
}

/// Whether image `x` and weights `w` are 4-D, as integerConv needs.
bool planarConv(Importer &im, size_t x, size_t w) {
  return (im.graph.shape(im.input(x)).size() == 4 && im.graph.shape(im.input(w)).size() == 4) ||
         im.unsupported("only 2-D integer convolutions are supported (x [N, C, H, W], w [M, C, "
                        "kH, kW])");
}

bool matMulInteger(Importer &im) {
  Composer k(im);
  return integerInputs(im, {0, 1}) && k.finish(integerProduct(k, 0, 1, 2, 3));
}

bool convInteger(Importer &im) {
  Composer k(im);
  if (!integerInputs(im, {0, 1}) || !planarConv(im, 0, 1))
    return false;
  return k.finish(integerConv(k, 0, 1, 2, 3));
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
  if (!integerInputs(im, {0, 3}) || !planarConv(im, 0, 3))
    return false;
  ValueRef product = integerConv(k, 0, 3, 2, 5);
  if (im.hasInput(8)) // int32 bias in units of x_scale * w_scale.
    product = k.op(OpKind::Add, {product, alongAxis(k, im.input(8), 4, 1)});
  return requantize(k, product, 1, 4, 6, 7, 1);
}

/// DequantizeLinear of constants (a layer's weights) computed at import,
/// so that a plan dequantizes them once, not on every run; nullopt when an
/// input is not a constant or the scale not f32.
std::optional<ValueRef> foldedDequantize(Composer &k, const Dequantized &d) {
  const Graph &g = k.im.graph;
  ShapeRef shape = g.shape(d.quantized);
  int64_t elements = 1, inner = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].isSymbolic())
      return std::nullopt;
    elements *= shape[i].size();
    if (i > d.axis)
      inner *= shape[i].size();
  }
  int64_t channels = g.shape(d.scale).empty() ? 1 : g.shape(d.scale)[0].size();
  bool isSigned = g.dtype(d.quantized) == DType::I8;
  std::optional<std::string_view> values = constantBytes(g, d.quantized, elements, 1);
  std::optional<std::string_view> scales = constantBytes(g, d.scale, channels, sizeof(float));
  std::optional<std::string_view> zeros;
  if (d.zeroPoint)
    zeros = constantBytes(g, *d.zeroPoint, channels, 1);
  if (!values || !scales || (d.zeroPoint && !zeros) || g.dtype(d.scale) != DType::F32 ||
      (d.zeroPoint && g.dtype(*d.zeroPoint) != g.dtype(d.quantized)))
    return std::nullopt;
  auto byteValue = [&](std::string_view bytes, int64_t i) {
    auto byte = static_cast<uint8_t>(bytes[i]);
    return isSigned ? int32_t(int8_t(byte)) : int32_t(byte);
  };
  KnownTensor t{DType::F32, {}, {}};
  for (const Dim &dim : shape)
    t.shape.push_back(dim.size());
  t.bytes.resize(elements * sizeof(float));
  for (int64_t i = 0; i < elements; ++i) {
    int64_t c = channels == 1 ? 0 : i / inner % channels;
    float scale;
    std::memcpy(&scale, scales->data() + c * sizeof(float), sizeof scale);
    float value = float(byteValue(*values, i) - (zeros ? byteValue(*zeros, c) : 0)) * scale;
    std::memcpy(t.bytes.data() + i * sizeof(float), &value, sizeof value);
  }
  return k.constant(t);
}
} // namespace

ValueRef onnximport::dequantize(Importer &im, const Dequantized &d, const std::string &tag) {
  Composer k(im, d.quantized, tag);
  if (std::optional<ValueRef> folded = foldedDequantize(k, d))
    return *folded;
  size_t rank = im.graph.shape(d.quantized).size();
  DType t = im.graph.dtype(d.scale);
  ValueRef centered = k.cast(d.quantized, t);
  if (d.zeroPoint)
    centered = k.op(OpKind::Sub, {centered, alongAxis(k, k.cast(*d.zeroPoint, t), rank, d.axis)});
  return k.op(OpKind::Mul, {centered, alongAxis(k, d.scale, rank, d.axis)});
}

bool onnximport::deferTranspose(Importer &im, const std::vector<int64_t> &perm) {
  const Dequantized *d = im.dequantizedInput(0);
  if (!d || !im.onlyReadBy(0, kDeferringReaders))
    return false;
  Composer k(im, d->quantized, "");
  Dequantized moved = *d;
  moved.quantized = k.op(OpKind::Transpose, {d->quantized}, [&](Graph &g) {
    if (!perm.empty())
      g.addIntsAttr(AttrName::Perm, perm);
  });
  if (k.failed())
    return true; // Reported: perm does not fit the input.
  // The scale's axis goes where the permutation puts it.
  size_t rank = im.graph.shape(d->quantized).size();
  for (size_t i = 0; i < rank; ++i)
    if ((perm.empty() ? rank - 1 - i : static_cast<size_t>(perm[i])) == d->axis)
      moved.axis = static_cast<unsigned>(i);
  im.bindDequantized(std::move(moved));
  return true;
}

std::optional<ValueRef> onnximport::quantizedProduct(Importer &im, bool transB) {
  const Dequantized *a = im.dequantizedInput(0), *b = im.dequantizedInput(1);
  if (!a || !b)
    return std::nullopt;
  const Graph &g = im.graph;
  size_t rankB = g.shape(b->quantized).size();
  auto perTensor = [&](const Dequantized &d) { return g.shape(d.scale).empty(); };
  // b's scale may vary along its column axis, which is the result's last.
  unsigned columnAxis = transB ? 0 : static_cast<unsigned>(rankB - 1);
  bool bPerColumn = rankB == 2 && b->axis == columnAxis;
  if (!perTensor(*a) || (!perTensor(*b) && !bPerColumn))
    return std::nullopt;
  Composer k(im, a->quantized, ".int");
  ValueRef product =
      integerProduct(k, a->quantized, b->quantized, a->zeroPoint, b->zeroPoint, transB);
  ValueRef scale = k.op(OpKind::Mul, {a->scale, b->scale});
  return k.op(OpKind::Mul, {k.cast(product, g.dtype(a->scale)), scale});
}

std::optional<ValueRef> onnximport::quantizedConv(Importer &im) {
  const Dequantized *x = im.dequantizedInput(0), *w = im.dequantizedInput(1);
  if (!x || !w)
    return std::nullopt;
  const Graph &g = im.graph;
  bool perChannelWeights = g.shape(w->scale).size() == 1 && w->axis == 0;
  if (g.shape(x->quantized).size() != 4 || g.shape(w->quantized).size() != 4 ||
      !g.shape(x->scale).empty() || (!g.shape(w->scale).empty() && !perChannelWeights) ||
      (w->zeroPoint && !isZeroConstant(g, *w->zeroPoint)))
    return std::nullopt;
  Composer k(im, x->quantized, ".int");
  std::optional<ValueRef> product = integerConvolution(k, x->quantized, w->quantized, x->zeroPoint);
  if (!product)
    return std::nullopt;
  ValueRef scale = k.op(OpKind::Mul, {x->scale, alongAxis(k, w->scale, 4, 1)});
  ValueRef y = k.op(OpKind::Mul, {k.cast(*product, g.dtype(x->scale)), scale});
  if (im.hasInput(2))
    y = k.op(OpKind::Add, {y, alongAxis(k, im.input(2), 4, 1)});
  return y;
}

void onnximport::addQuantizeHandlers(HandlerTable &table) {
  table.insert({{"QuantizeLinear", quantizeLinear},
                {"DequantizeLinear", dequantizeLinear},
                {"DynamicQuantizeLinear", dynamicQuantizeLinear},
                {"MatMulInteger", matMulInteger},
                {"ConvInteger", convInteger},
                {"QLinearMatMul", qlinearMatMul},
                {"QLinearConv", qlinearConv}});
}
