//===- InferLinalg.cpp - Contractions, convolution and pooling ------------===//

#include "InferenceContext.h"

using namespace fuel;

static bool isByteInteger(DType t) { return t == DType::U8 || t == DType::I8; }

static LogicalResult inferMatMul(InferenceContext &ctx) {
  // 8-bit integer operands, in any mix of signedness, give their exact
  // product in i32 (ONNX MatMulInteger without zero points).
  bool bytes = isByteInteger(ctx.dtype(0)) && isByteInteger(ctx.dtype(1));
  if ((!bytes && failed(ctx.requireSameDType())) ||
      failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
    return failure();
  bool transA = ctx.boolAttr(AttrName::TransposeA, false);
  bool transB = ctx.boolAttr(AttrName::TransposeB, false);
  Shape a(ctx.shape(0).begin(), ctx.shape(0).end());
  Shape b(ctx.shape(1).begin(), ctx.shape(1).end());
  for (unsigned i = 0; i < 2; ++i)
    if (ctx.rank(i) == 0)
      return ctx.operandError(i, "operand " + std::to_string(i) +
                                     " must have rank >= 1, got a scalar");
  if (transA && a.size() < 2)
    return ctx.attrError(AttrName::TransposeA,
                         "'transpose_a' needs operand 0 of rank >= 2");
  if (transB && b.size() < 2)
    return ctx.attrError(AttrName::TransposeB,
                         "'transpose_b' needs operand 1 of rank >= 2");
  // numpy: a vector is a row on the left and a column on the right; the
  // added unit axis is dropped from the result.
  bool vecA = a.size() == 1, vecB = b.size() == 1;
  if (vecA)
    a.insert(a.begin(), Dim::fixed(1));
  if (vecB)
    b.push_back(Dim::fixed(1));
  if (transA)
    std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (transB)
    std::swap(b[b.size() - 1], b[b.size() - 2]);
  Dim m = a[a.size() - 2], k = a.back();
  Dim kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    return ctx.error("contraction extents differ: " + ctx.operandDesc(0) +
                     " has K = " + ctx.fmt(k) + ", " + ctx.operandDesc(1) +
                     " has K = " + ctx.fmt(kb));
  ShapeRef batchA(a.data(), a.size() - 2), batchB(b.data(), b.size() - 2);
  std::optional<Shape> batch = broadcastShapes(batchA, batchB);
  if (!batch)
    return ctx.error("batch dimensions " + ctx.fmt(batchA) + " and " +
                     ctx.fmt(batchB) + " do not broadcast");
  Shape result = std::move(*batch);
  if (!vecA)
    result.push_back(m);
  if (!vecB)
    result.push_back(n);
  ctx.results.push_back({bytes ? DType::I32 : ctx.dtype(0), std::move(result)});
  return success();
}

/// linear(x[..., K], w[N, K], bias[N]?) = x @ w^T + bias (PyTorch layout).
static LogicalResult inferLinear(InferenceContext &ctx) {
  if (failed(ctx.requireSameDType()) ||
      failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
    return failure();
  if (ctx.rank(0) == 0)
    return ctx.operandError(0, "operand 0 must have rank >= 1, got a scalar");
  if (failed(ctx.requireRank(1, 2)))
    return failure();
  Dim k = ctx.shape(0).back(), n = ctx.shape(1)[0];
  if (ctx.shape(1)[1] != k)
    return ctx.error("weight " + ctx.fmt(ctx.shape(1)) +
                     " must be [N, K] with K = " + ctx.fmt(k) +
                     " (the last extent of operand 0)");
  if (ctx.numOperands() == 3 &&
      (ctx.rank(2) != 1 || ctx.shape(2)[0] != n))
    return ctx.operandError(2, "bias must be [" + ctx.fmt(n) + "], got " + ctx.fmt(ctx.shape(2)));
  Shape result(ctx.shape(0).begin(), ctx.shape(0).end());
  result.back() = n;
  ctx.results.push_back({ctx.dtype(0), std::move(result)});
  return success();
}

namespace {
/// The 2-D window parameters shared by convolution and pooling.
struct Window2D {
  int64_t kernel[2];
  int64_t strides[2] = {1, 1};
  int64_t pads[4] = {0, 0, 0, 0}; // top, left, bottom, right
  int64_t dilations[2] = {1, 1};
  bool ceilMode = false;
};
} // namespace

static LogicalResult readPositiveInts(InferenceContext &ctx, AttrName name,
                                      size_t count, int64_t *out,
                                      int64_t minValue) {
  const Attribute *a = ctx.attr(name);
  if (!a)
    return success();
  std::span<const int64_t> v = ctx.graph.intsAttr(*a);
  if (v.size() != count)
    return ctx.attrError(name, "'" + std::string(attrName(name)) + "' needs " +
                                   std::to_string(count) + " values, got " +
                                   std::to_string(v.size()));
  for (size_t i = 0; i < count; ++i) {
    if (v[i] < minValue || v[i] > (int64_t(1) << 32))
      return ctx.attrError(name, "'" + std::string(attrName(name)) +
                                     "' value " + std::to_string(v[i]) +
                                     " is out of range");
    out[i] = v[i];
  }
  return success();
}

/// Output extent of one spatial axis.
static std::optional<int64_t> windowExtent(InferenceContext &ctx,
                                           const Window2D &w, unsigned axis,
                                           Dim input) {
  if (!input.isStatic()) {
    (void)ctx.error("spatial extent " + ctx.fmt(input) +
                    " must be static for a 2-D window");
    return std::nullopt;
  }
  int64_t padded = input.size() + w.pads[axis] + w.pads[axis + 2];
  int64_t span = w.dilations[axis] * (w.kernel[axis] - 1) + 1;
  if (padded < span) {
    (void)ctx.error("window of extent " + std::to_string(span) +
                    " does not fit the padded input extent " +
                    std::to_string(padded) + " on spatial axis " +
                    std::to_string(axis));
    return std::nullopt;
  }
  int64_t stride = w.strides[axis];
  int64_t steps = padded - span;
  return (w.ceilMode ? (steps + stride - 1) / stride : steps / stride) + 1;
}

static LogicalResult readWindow(InferenceContext &ctx, Window2D &w) {
  w.kernel[0] = w.kernel[1] = 1;
  if (failed(readPositiveInts(ctx, AttrName::Kernel, 2, w.kernel, 1)) ||
      failed(readPositiveInts(ctx, AttrName::Strides, 2, w.strides, 1)) ||
      failed(readPositiveInts(ctx, AttrName::Pads, 4, w.pads, 0)) ||
      failed(readPositiveInts(ctx, AttrName::Dilations, 2, w.dilations, 1)))
    return failure();
  w.ceilMode = ctx.boolAttr(AttrName::CeilMode, false);
  return success();
}

static LogicalResult inferConv2D(InferenceContext &ctx) {
  // 8-bit integer image and weights, in any mix of signedness, give their
  // exact convolution in i32 (ONNX ConvInteger without zero points).
  bool bytes = isByteInteger(ctx.dtype(0)) && isByteInteger(ctx.dtype(1));
  if (bytes && ctx.numOperands() == 3)
    return ctx.operandError(2, "an 8-bit convolution takes no bias (add it to the i32 result)");
  if ((!bytes && (failed(ctx.requireSameDType()) ||
                  failed(ctx.requireDType(0, isFloat, "a float type or 8-bit integers")))) ||
      failed(ctx.requireRank(0, 4)) || failed(ctx.requireRank(1, 4)))
    return failure();
  ShapeRef x = ctx.shape(0), w = ctx.shape(1);
  int64_t groups = ctx.intAttr(AttrName::Groups, 1);
  if (groups < 1)
    return ctx.attrError(AttrName::Groups, "'groups' must be >= 1");
  for (unsigned i = 0; i < 4; ++i)
    if (!w[i].isStatic())
      return ctx.operandError(1, "weight extents must be static, got " +
                                     ctx.fmt(w));
  if (!x[1].isStatic())
    return ctx.operandError(0, "channel extent must be static, got " +
                                   ctx.fmt(x));
  if (x[1].size() % groups != 0 || w[0].size() % groups != 0)
    return ctx.attrError(AttrName::Groups,
                         "'groups' = " + std::to_string(groups) +
                             " must divide the input channels (" +
                             std::to_string(x[1].size()) +
                             ") and output channels (" +
                             std::to_string(w[0].size()) + ")");
  if (w[1].size() * groups != x[1].size())
    return ctx.error("weight " + ctx.fmt(w) + " expects " +
                     std::to_string(w[1].size() * groups) +
                     " input channels, input " + ctx.fmt(x) + " has " +
                     std::to_string(x[1].size()));
  if (ctx.numOperands() == 3 &&
      (ctx.rank(2) != 1 || ctx.shape(2)[0] != w[0]))
    return ctx.operandError(2, "bias must be [" + std::to_string(w[0].size()) +
                                   "], got " + ctx.fmt(ctx.shape(2)));
  Window2D win;
  if (failed(readWindow(ctx, win)))
    return failure();
  win.kernel[0] = w[2].size();
  win.kernel[1] = w[3].size();
  std::optional<int64_t> h = windowExtent(ctx, win, 0, x[2]);
  if (!h)
    return failure();
  std::optional<int64_t> wd = windowExtent(ctx, win, 1, x[3]);
  if (!wd)
    return failure();
  ctx.results.push_back(
      {bytes ? DType::I32 : ctx.dtype(0), {x[0], w[0], Dim::fixed(*h), Dim::fixed(*wd)}});
  return success();
}

static LogicalResult inferPool2D(InferenceContext &ctx) {
  if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")) ||
      failed(ctx.requireRank(0, 4)))
    return failure();
  if (ctx.kind() == OpKind::AvgPool2D &&
      failed(ctx.requireDType(0, isFloat, "a float type")))
    return failure();
  Window2D win;
  if (failed(readWindow(ctx, win)))
    return failure();
  for (unsigned axis = 0; axis < 2; ++axis)
    if (2 * std::max(win.pads[axis], win.pads[axis + 2]) > win.kernel[axis])
      return ctx.attrError(AttrName::Pads,
                           "padding must be at most half the kernel extent");
  ShapeRef x = ctx.shape(0);
  std::optional<int64_t> h = windowExtent(ctx, win, 0, x[2]);
  if (!h)
    return failure();
  std::optional<int64_t> w = windowExtent(ctx, win, 1, x[3]);
  if (!w)
    return failure();
  ctx.results.push_back(
      {ctx.dtype(0), {x[0], x[1], Dim::fixed(*h), Dim::fixed(*w)}});
  return success();
}

LogicalResult fuel::inferLinalg(InferenceContext &ctx) {
  switch (ctx.kind()) {
  case OpKind::MatMul:
    return inferMatMul(ctx);
  case OpKind::Linear:
    return inferLinear(ctx);
  case OpKind::Conv2D:
    return inferConv2D(ctx);
  default:
    return inferPool2D(ctx);
  }
}
