//===- InferReduction.cpp - Reductions and normalizations -----------------===//

#include "InferenceContext.h"

#include <algorithm>

using namespace fuel;

/// Shape after reducing `axes` (all marked true) with or without keepdims.
static Shape reducedShape(ShapeRef in, const std::vector<bool> &reduced,
                          bool keepDims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i])
      out.push_back(in[i]);
    else if (keepDims)
      out.push_back(Dim::fixed(1));
  }
  return out;
}

static LogicalResult inferReduce(InferenceContext &ctx) {
  if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
    return failure();
  if (ctx.kind() == OpKind::ReduceMean &&
      failed(ctx.requireDType(0, isFloat, "a float type")))
    return failure();
  size_t rank = ctx.rank(0);
  std::vector<bool> reduced(rank, true); // No 'axes': reduce everything.
  if (const Attribute *a = ctx.attr(AttrName::Axes)) {
    auto axes = ctx.axes(AttrName::Axes, ctx.graph.intsAttr(*a), rank);
    if (!axes)
      return failure();
    reduced.assign(rank, false);
    for (unsigned axis : *axes)
      reduced[axis] = true;
  }
  ctx.results.push_back(
      {ctx.dtype(0), reducedShape(ctx.shape(0), reduced,
                                  ctx.boolAttr(AttrName::KeepDims, false))});
  return success();
}

static LogicalResult inferArgReduce(InferenceContext &ctx) {
  if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
    return failure();
  size_t rank = ctx.rank(0);
  if (rank == 0)
    return ctx.operandError(0, "operand 0 must have rank >= 1, got a scalar");
  auto axis = ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, 0), rank);
  if (!axis)
    return failure();
  std::vector<bool> reduced(rank, false);
  reduced[*axis] = true;
  ctx.results.push_back(
      {DType::I64, reducedShape(ctx.shape(0), reduced,
                                ctx.boolAttr(AttrName::KeepDims, false))});
  return success();
}

static LogicalResult inferSoftmax(InferenceContext &ctx) {
  if (failed(ctx.requireDType(0, isFloat, "a float type")))
    return failure();
  if (ctx.rank(0) == 0)
    return ctx.operandError(0, "operand 0 must have rank >= 1, got a scalar");
  if (!ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, -1), ctx.rank(0)))
    return failure();
  ShapeRef s = ctx.shape(0);
  ctx.results.push_back({ctx.dtype(0), Shape(s.begin(), s.end())});
  return success();
}

/// layer_norm(x, scale?, bias?) and rms_norm(x, scale?) normalize over the
/// trailing axes from `axis`; scale and bias have exactly that shape.
static LogicalResult inferNorm(InferenceContext &ctx) {
  if (failed(ctx.requireDType(0, isFloat, "a float type")) ||
      failed(ctx.requireSameDType()))
    return failure();
  if (ctx.rank(0) == 0)
    return ctx.operandError(0, "operand 0 must have rank >= 1, got a scalar");
  auto axis =
      ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, -1), ctx.rank(0));
  if (!axis)
    return failure();
  double eps = ctx.floatAttr(AttrName::Eps, 1e-5);
  if (!(eps > 0))
    return ctx.attrError(AttrName::Eps, "'eps' must be positive");
  ShapeRef x = ctx.shape(0);
  ShapeRef normalized = x.subspan(*axis);
  for (unsigned i = 1; i < ctx.numOperands(); ++i) {
    ShapeRef p = ctx.shape(i);
    if (!std::equal(p.begin(), p.end(), normalized.begin(), normalized.end()))
      return ctx.operandError(
          i, std::string(i == 1 ? "scale" : "bias") + " must have shape " +
                 ctx.fmt(normalized) + " (the normalized axes), got " +
                 ctx.fmt(p));
  }
  ctx.results.push_back({ctx.dtype(0), Shape(x.begin(), x.end())});
  return success();
}

LogicalResult fuel::inferReduction(InferenceContext &ctx) {
  switch (ctx.kind()) {
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    return inferArgReduce(ctx);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return inferSoftmax(ctx);
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return inferNorm(ctx);
  default:
    return inferReduce(ctx);
  }
}
