//===- InferElementwise.cpp - Unary, binary and select ops ----------------===//
//
// Elementwise ops keep their operands' dtype (comparisons yield bool, cast its
// `to`) and broadcast numpy-style. There is no implicit dtype promotion: the
// graph must cast explicitly, so a mixed-dtype add is an error.
//
//===----------------------------------------------------------------------===//

#include "InferenceContext.h"

using namespace fuel;

static bool isBool(DType t) { return t == DType::Bool; }
static bool isBoolOrInteger(DType t) { return isBool(t) || isInteger(t); }

static LogicalResult inferUnary(InferenceContext &ctx) {
  OpKind kind = ctx.kind();
  DType dtype = ctx.dtype(0);
  switch (kind) {
  case OpKind::Not: // Logical on bool, bitwise on integers.
    if (failed(ctx.requireDType(0, isBoolOrInteger, "bool or integer")))
      return failure();
    break;
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Relu:
    if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
      return failure();
    break;
  case OpKind::Cast:
    dtype = ctx.graph.dtypeAttr(*ctx.attr(AttrName::To));
    break;
  case OpKind::Clamp: {
    if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
      return failure();
    const Attribute *lo = ctx.attr(AttrName::MinValue);
    const Attribute *hi = ctx.attr(AttrName::MaxValue);
    if (!lo && !hi)
      return ctx.error("needs at least one of 'min' and 'max'");
    if (lo && hi && ctx.graph.floatAttr(*lo) > ctx.graph.floatAttr(*hi))
      return ctx.attrError(AttrName::MinValue, "'min' is greater than 'max'");
    break;
  }
  case OpKind::Gelu: {
    if (const Attribute *a = ctx.attr(AttrName::Approximate)) {
      std::string_view mode = ctx.graph.stringAttr(*a);
      if (mode != "none" && mode != "tanh")
        return ctx.attrError(AttrName::Approximate,
                             "'approximate' must be \"none\" or \"tanh\", got \"" +
                                 std::string(mode) + "\"");
    }
    [[fallthrough]];
  }
  default: // Transcendental and reciprocal ops are defined on floats only.
    if (failed(ctx.requireDType(0, isFloat, "a float type")))
      return failure();
  }
  ShapeRef s = ctx.shape(0);
  ctx.results.push_back({dtype, Shape(s.begin(), s.end())});
  return success();
}

static bool isComparison(OpKind k) {
  return k == OpKind::Eq || k == OpKind::Ne || k == OpKind::Lt ||
         k == OpKind::Le || k == OpKind::Gt || k == OpKind::Ge;
}

/// Broadcasts operands [first, numOperands) together.
static std::optional<Shape> broadcastOperands(InferenceContext &ctx,
                                              unsigned first) {
  Shape result(ctx.shape(first).begin(), ctx.shape(first).end());
  for (unsigned i = first + 1; i < ctx.numOperands(); ++i) {
    size_t badAxis = 0;
    std::optional<Shape> next = broadcastShapes(result, ctx.shape(i), &badAxis);
    if (!next) {
      (void)ctx.error("cannot broadcast " + ctx.fmt(result) + " with " +
                      ctx.fmt(ctx.shape(i)) + " (operand " +
                      std::to_string(i) + "): extents differ at result axis " +
                      std::to_string(badAxis));
      return std::nullopt;
    }
    result = std::move(*next);
  }
  return result;
}

static LogicalResult inferBinary(InferenceContext &ctx) {
  OpKind kind = ctx.kind();
  if (kind == OpKind::Where) {
    if (failed(ctx.requireDType(0, isBool, "bool")) ||
        failed(ctx.requireSameDType(1)))
      return failure();
    std::optional<Shape> shape = broadcastOperands(ctx, 0);
    if (!shape)
      return failure();
    ctx.results.push_back({ctx.dtype(1), std::move(*shape)});
    return success();
  }
  if (failed(ctx.requireSameDType()))
    return failure();
  DType dtype = ctx.dtype(0);
  if (kind == OpKind::And || kind == OpKind::Or) { // Bitwise on integers.
    if (failed(ctx.requireDType(0, isBoolOrInteger, "bool or integer")))
      return failure();
  } else if (kind != OpKind::Eq && kind != OpKind::Ne) {
    if (failed(ctx.requireDType(0, isNumeric, "numeric (not bool)")))
      return failure();
  }
  std::optional<Shape> shape = broadcastOperands(ctx, 0);
  if (!shape)
    return failure();
  ctx.results.push_back(
      {isComparison(kind) ? DType::Bool : dtype, std::move(*shape)});
  return success();
}

LogicalResult fuel::inferElementwise(InferenceContext &ctx) {
  return opFamily(ctx.kind()) == OpFamily::Unary ? inferUnary(ctx)
                                                 : inferBinary(ctx);
}
