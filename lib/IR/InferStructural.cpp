//===- InferStructural.cpp - Sources and explicit residency ops -----------===//
//
// Inputs and constants carry declared types (set at import). copy/move keep
// their operand's type and name the device the result resides on; alloc
// creates a resident buffer; write_slice writes `src` into `dest` at an offset
// along one axis that may be a symbol bound at run time (a KV-cache append).
//
//===----------------------------------------------------------------------===//

#include "InferenceContext.h"

using namespace fuel;

static LogicalResult inferSource(InferenceContext &ctx) {
  if (!ctx.graph.hasType({ctx.node, 0}))
    return ctx.error("has no declared type");
  if (ctx.kind() == OpKind::Constant && !ctx.graph.constantData(ctx.node))
    return ctx.error("has no data");
  ctx.results.push_back(ctx.graph.type({ctx.node, 0}));
  return success();
}

static LogicalResult inferWriteSlice(InferenceContext &ctx) {
  if (failed(ctx.requireSameDType()))
    return failure();
  ShapeRef dest = ctx.shape(0), src = ctx.shape(1);
  if (dest.size() != src.size())
    return ctx.operandError(1, "rank mismatch: " + ctx.operandDesc(1) +
                                   " vs destination " + ctx.operandDesc(0));
  if (dest.empty())
    return ctx.operandError(0, "cannot write a slice of a scalar");
  auto axis =
      ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, 0), dest.size());
  if (!axis)
    return failure();
  for (size_t d = 0; d < dest.size(); ++d)
    if (d != *axis && dest[d] != src[d])
      return ctx.operandError(1, "extent mismatch on axis " +
                                     std::to_string(d) + ": " +
                                     ctx.operandDesc(1) + " vs destination " +
                                     ctx.operandDesc(0));
  Dim offset = ctx.graph.dimsAttr(*ctx.attr(AttrName::Offset))[0];
  if (offset.isInferred())
    return ctx.attrError(AttrName::Offset,
                         "'offset' must be an extent or a symbol");
  Dim srcExtent = src[*axis], destExtent = dest[*axis];
  if (srcExtent.isStatic() && destExtent.isStatic()) {
    int64_t start = offset.isStatic() ? offset.size() : 0;
    if (start + srcExtent.size() > destExtent.size())
      return ctx.error("slice of extent " + ctx.fmt(srcExtent) +
                       " at offset " + ctx.fmt(offset) +
                       " overruns destination extent " + ctx.fmt(destExtent) +
                       " on axis " + std::to_string(*axis));
  }
  ShapeRef s = ctx.shape(0);
  ctx.results.push_back({ctx.dtype(0), Shape(s.begin(), s.end())});
  return success();
}

LogicalResult fuel::inferStructural(InferenceContext &ctx) {
  switch (ctx.kind()) {
  case OpKind::Input:
  case OpKind::Constant:
    return inferSource(ctx);
  case OpKind::Copy:
  case OpKind::Move: {
    ShapeRef s = ctx.shape(0);
    ctx.results.push_back({ctx.dtype(0), Shape(s.begin(), s.end())});
    return success();
  }
  case OpKind::Alloc: {
    ShapeRef s = ctx.graph.dimsAttr(*ctx.attr(AttrName::ShapeAttr));
    for (Dim d : s)
      if (d.isInferred())
        return ctx.attrError(AttrName::ShapeAttr,
                             "-1 is only allowed in a reshape target");
    ctx.results.push_back({ctx.graph.dtypeAttr(*ctx.attr(AttrName::DTypeAttr)),
                           Shape(s.begin(), s.end())});
    return success();
  }
  default:
    return inferWriteSlice(ctx);
  }
}
