//===- InferShapeOps.cpp - Views, concat, split, gather and pad -----------===//
//
// View ops (reshape, transpose, broadcast_to, expand, slice, squeeze,
// unsqueeze) only change shape and layout metadata; the movement ops produce
// new tensors. Symbolic extents are carried through wherever the result is
// still provable (e.g. reshape [B, 4, 8] -> [B, 32]) and rejected where it
// would need arithmetic on symbols.
//
//===----------------------------------------------------------------------===//

#include "InferenceContext.h"

#include <algorithm>
#include <map>

using namespace fuel;

static ShapeRef dimsAttrOf(InferenceContext &ctx, AttrName name) {
  return ctx.graph.dimsAttr(*ctx.attr(name));
}

/// The static product of a shape plus a multiset of its symbols.
struct Volume {
  int64_t product = 1;
  std::map<uint32_t, int> symbols;
  bool overflow = false;
};

/// The element count of `shape` as a factor times free symbols (derived
/// symbols expanded), so `[T, 4*B, 32]` and `[T, B, 128]` compare equal.
static Volume volumeOf(const SymbolTable &table, ShapeRef shape) {
  Volume v;
  for (Dim d : shape) {
    if (d.isInferred())
      continue;
    SymbolProduct p = table.expand(d);
    for (uint32_t s : p.symbols)
      ++v.symbols[s];
    if (p.factor != 0 && v.product > kMaxElements / p.factor)
      v.overflow = true;
    else
      v.product *= p.factor;
  }
  return v;
}

static LogicalResult inferReshape(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  Shape target(dimsAttrOf(ctx, AttrName::ShapeAttr).begin(),
               dimsAttrOf(ctx, AttrName::ShapeAttr).end());
  size_t numInferred = std::count_if(target.begin(), target.end(),
                                     [](Dim d) { return d.isInferred(); });
  if (numInferred > 1)
    return ctx.attrError(AttrName::ShapeAttr,
                         "'shape' may contain -1 at most once");
  const SymbolTable &table = ctx.graph.symbols();
  Volume from = volumeOf(table, in), to = volumeOf(table, target);
  if (from.overflow || to.overflow)
    return ctx.attrError(AttrName::ShapeAttr, "element count overflows");
  auto mismatch = [&] {
    return ctx.attrError(AttrName::ShapeAttr,
                         "cannot reshape " + ctx.fmt(in) + " to " +
                             ctx.fmt(target) +
                             ": element counts differ");
  };
  // Symbols of the target must be a sub-multiset of the input's.
  std::map<uint32_t, int> leftover = from.symbols;
  for (auto [sym, n] : to.symbols) {
    if (leftover[sym] < n)
      return mismatch();
    leftover[sym] -= n;
    if (leftover[sym] == 0)
      leftover.erase(sym);
  }
  if (numInferred == 0) {
    if (!leftover.empty() || from.product != to.product)
      return mismatch();
  } else {
    auto inferredAt = std::find_if(target.begin(), target.end(),
                                   [](Dim d) { return d.isInferred(); });
    if (to.product == 0 || from.product % to.product != 0)
      return mismatch();
    int64_t quotient = from.product / to.product;
    if (leftover.empty()) {
      *inferredAt = Dim::fixed(quotient);
    } else if (leftover.size() == 1 && leftover.begin()->second == 1 &&
               quotient == 1) {
      *inferredAt = Dim::symbol(leftover.begin()->first);
    } else {
      // Inference does not create symbols: the graph names the product.
      std::vector<std::string> factors;
      for (auto [sym, n] : leftover)
        factors.insert(factors.end(), n, std::string(table.name(sym)));
      std::sort(factors.begin(), factors.end());
      std::string product = quotient == 1 ? "" : std::to_string(quotient);
      for (const std::string &f : factors)
        product += (product.empty() ? "" : "*") + f;
      return ctx.attrError(AttrName::ShapeAttr,
                           "cannot infer the -1 extent of " + ctx.fmt(target) +
                               " from " + ctx.fmt(in) + ": it is the product '" +
                               product + "'; write that instead of -1");
    }
  }
  ctx.results.push_back({ctx.dtype(0), std::move(target)});
  return success();
}

static LogicalResult inferTranspose(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  size_t rank = in.size();
  std::vector<int64_t> reversed(rank);
  for (size_t i = 0; i < rank; ++i)
    reversed[i] = static_cast<int64_t>(rank - 1 - i);
  std::vector<int64_t> perm = ctx.intsAttr(AttrName::Perm, reversed);
  if (perm.size() != rank)
    return ctx.attrError(AttrName::Perm,
                         "'perm' has " + std::to_string(perm.size()) +
                             " entries, the operand has rank " +
                             std::to_string(rank));
  auto axes = ctx.axes(AttrName::Perm, perm, rank);
  if (!axes)
    return failure();
  Shape out;
  for (unsigned a : *axes)
    out.push_back(in[a]);
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult checkTargetDims(InferenceContext &ctx, ShapeRef target) {
  for (Dim d : target)
    if (d.isInferred())
      return ctx.attrError(AttrName::ShapeAttr,
                           "-1 is only allowed in a reshape target");
  return success();
}

static LogicalResult inferBroadcastTo(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  ShapeRef target = dimsAttrOf(ctx, AttrName::ShapeAttr);
  if (failed(checkTargetDims(ctx, target)))
    return failure();
  bool ok = target.size() >= in.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    Dim d = in[in.size() - 1 - i];
    ok = d == Dim::fixed(1) || d == target[target.size() - 1 - i];
  }
  if (!ok)
    return ctx.attrError(AttrName::ShapeAttr, "cannot broadcast " +
                                                  ctx.fmt(in) + " to " +
                                                  ctx.fmt(target));
  ctx.results.push_back({ctx.dtype(0), Shape(target.begin(), target.end())});
  return success();
}

static LogicalResult inferExpand(InferenceContext &ctx) {
  ShapeRef target = dimsAttrOf(ctx, AttrName::ShapeAttr);
  if (failed(checkTargetDims(ctx, target)))
    return failure();
  std::optional<Shape> out = broadcastShapes(ctx.shape(0), target);
  if (!out)
    return ctx.attrError(AttrName::ShapeAttr,
                         "cannot expand " + ctx.fmt(ctx.shape(0)) + " with " +
                             ctx.fmt(target));
  ctx.results.push_back({ctx.dtype(0), std::move(*out)});
  return success();
}

/// Extent of `start:end:step` over `dim` with numpy clamping.
static int64_t sliceLength(int64_t dim, int64_t start, int64_t end,
                           int64_t step) {
  auto clampIndex = [&](int64_t i, int64_t lo, int64_t hi) {
    if (i < 0)
      i = i < -dim ? lo : i + dim;
    return std::clamp(i, lo, hi);
  };
  if (step > 0) {
    int64_t s = clampIndex(start, 0, dim), e = clampIndex(end, 0, dim);
    return e > s ? (e - s + step - 1) / step : 0;
  }
  int64_t s = clampIndex(start, -1, dim - 1), e = clampIndex(end, -1, dim - 1);
  return s > e ? (s - e + (-step) - 1) / (-step) : 0;
}

static LogicalResult inferSlice(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  std::vector<int64_t> starts = ctx.intsAttr(AttrName::Starts);
  std::vector<int64_t> ends = ctx.intsAttr(AttrName::Ends);
  std::vector<int64_t> defaultAxes(starts.size());
  for (size_t i = 0; i < starts.size(); ++i)
    defaultAxes[i] = static_cast<int64_t>(i);
  std::vector<int64_t> axisList = ctx.intsAttr(AttrName::Axes, defaultAxes);
  std::vector<int64_t> steps =
      ctx.intsAttr(AttrName::Steps, std::vector<int64_t>(starts.size(), 1));
  if (ends.size() != starts.size() || axisList.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.error("'starts', 'ends', 'axes' and 'steps' must have the "
                     "same length");
  auto axes = ctx.axes(AttrName::Axes, axisList, in.size());
  if (!axes)
    return failure();
  Shape out(in.begin(), in.end());
  for (size_t i = 0; i < axes->size(); ++i) {
    unsigned a = (*axes)[i];
    if (steps[i] == 0)
      return ctx.attrError(AttrName::Steps, "'steps' must not be 0");
    if (in[a].isStatic()) {
      out[a] = Dim::fixed(sliceLength(in[a].size(), starts[i], ends[i],
                                      steps[i]));
      continue;
    }
    // A symbolic extent can only be kept whole.
    if (starts[i] != 0 || steps[i] != 1 || ends[i] < (int64_t(1) << 31))
      return ctx.error("cannot slice symbolic extent " + ctx.fmt(in[a]) +
                       " on axis " + std::to_string(a) +
                       " (only the whole extent, 0:huge:1, is supported)");
  }
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult inferSqueeze(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  std::vector<bool> drop(in.size(), false);
  if (const Attribute *a = ctx.attr(AttrName::Axes)) {
    auto axes = ctx.axes(AttrName::Axes, ctx.graph.intsAttr(*a), in.size());
    if (!axes)
      return failure();
    for (unsigned axis : *axes) {
      if (in[axis] != Dim::fixed(1))
        return ctx.attrError(AttrName::Axes,
                             "cannot squeeze axis " + std::to_string(axis) +
                                 " of extent " + ctx.fmt(in[axis]));
      drop[axis] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i] == Dim::fixed(1);
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      out.push_back(in[i]);
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult inferUnsqueeze(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  std::vector<int64_t> axisList = ctx.intsAttr(AttrName::Axes);
  size_t outRank = in.size() + axisList.size();
  auto axes = ctx.axes(AttrName::Axes, axisList, outRank);
  if (!axes)
    return failure();
  std::vector<bool> inserted(outRank, false);
  for (unsigned a : *axes)
    inserted[a] = true;
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? Dim::fixed(1) : in[next++]);
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult inferConcat(InferenceContext &ctx) {
  if (failed(ctx.requireSameDType()))
    return failure();
  size_t rank = ctx.rank(0);
  if (rank == 0)
    return ctx.operandError(0, "cannot concatenate scalars");
  auto axis = ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, 0), rank);
  if (!axis)
    return failure();
  Shape out(ctx.shape(0).begin(), ctx.shape(0).end());
  int64_t total = 0;
  for (unsigned i = 0; i < ctx.numOperands(); ++i) {
    ShapeRef s = ctx.shape(i);
    if (s.size() != rank)
      return ctx.operandError(i, "rank mismatch: " + ctx.operandDesc(i) +
                                     " vs operand 0 of rank " +
                                     std::to_string(rank));
    for (size_t d = 0; d < rank; ++d)
      if (d != *axis && s[d] != out[d])
        return ctx.operandError(i, "extent mismatch on axis " +
                                       std::to_string(d) + ": " +
                                       ctx.operandDesc(i) + " vs " +
                                       ctx.operandDesc(0));
    if (!s[*axis].isStatic()) {
      if (ctx.numOperands() == 1)
        break;
      return ctx.operandError(i, "cannot concatenate along symbolic extent " +
                                     ctx.fmt(s[*axis]));
    }
    total += s[*axis].size();
  }
  if (out[*axis].isStatic())
    out[*axis] = Dim::fixed(total);
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult inferSplit(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  if (in.empty())
    return ctx.operandError(0, "cannot split a scalar");
  auto axis =
      ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, 0), in.size());
  if (!axis)
    return failure();
  const Attribute *sizesAttr = ctx.attr(AttrName::Sizes);
  const Attribute *numAttr = ctx.attr(AttrName::Num);
  if (!sizesAttr == !numAttr)
    return ctx.error("needs exactly one of 'sizes' and 'num'");
  Dim extent = in[*axis];
  if (!extent.isStatic())
    return ctx.error("cannot split symbolic extent " + ctx.fmt(extent));
  std::vector<int64_t> sizes;
  if (numAttr) {
    int64_t num = ctx.graph.intAttr(*numAttr);
    if (num < 1 || num > 65535 || extent.size() % num != 0)
      return ctx.attrError(AttrName::Num, "'num' = " + std::to_string(num) +
                                              " does not divide extent " +
                                              ctx.fmt(extent) + " evenly");
    sizes.assign(num, extent.size() / num);
  } else {
    std::span<const int64_t> v = ctx.graph.intsAttr(*sizesAttr);
    sizes.assign(v.begin(), v.end());
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0 || s > extent.size())
        return ctx.attrError(AttrName::Sizes,
                             "split size " + std::to_string(s) +
                                 " is out of range");
      sum += s;
    }
    if (sizes.empty() || sum != extent.size())
      return ctx.attrError(AttrName::Sizes,
                           "'sizes' add up to " + std::to_string(sum) +
                               ", the extent is " + ctx.fmt(extent));
  }
  for (int64_t s : sizes) {
    Shape part(in.begin(), in.end());
    part[*axis] = Dim::fixed(s);
    ctx.results.push_back({ctx.dtype(0), std::move(part)});
  }
  return success();
}

static bool isIndexType(DType t) { return t == DType::I32 || t == DType::I64; }

static LogicalResult inferGather(InferenceContext &ctx) {
  if (failed(ctx.requireDType(1, isIndexType, "i32 or i64")))
    return failure();
  ShapeRef data = ctx.shape(0), indices = ctx.shape(1);
  if (data.empty())
    return ctx.operandError(0, "cannot gather from a scalar");
  auto axis =
      ctx.axis(AttrName::Axis, ctx.intAttr(AttrName::Axis, 0), data.size());
  if (!axis)
    return failure();
  Shape out(data.begin(), data.begin() + *axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + *axis + 1, data.end());
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

static LogicalResult inferPad(InferenceContext &ctx) {
  ShapeRef in = ctx.shape(0);
  std::vector<int64_t> pads = ctx.intsAttr(AttrName::Pads);
  if (pads.size() != 2 * in.size())
    return ctx.attrError(AttrName::Pads,
                         "'pads' needs 2 * rank = " +
                             std::to_string(2 * in.size()) +
                             " values (all begins, then all ends), got " +
                             std::to_string(pads.size()));
  std::string_view mode = "constant";
  if (const Attribute *a = ctx.attr(AttrName::Mode))
    mode = ctx.graph.stringAttr(*a);
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return ctx.attrError(AttrName::Mode,
                         "'mode' must be \"constant\", \"reflect\" or "
                         "\"edge\", got \"" +
                             std::string(mode) + "\"");
  if (mode != "constant" && ctx.attr(AttrName::Value))
    return ctx.attrError(AttrName::Value,
                         "'value' only applies to mode \"constant\"");
  Shape out(in.begin(), in.end());
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t lo = pads[i], hi = pads[i + in.size()];
    if (lo < 0 || hi < 0 || lo > kMaxElements || hi > kMaxElements)
      return ctx.attrError(AttrName::Pads, "'pads' must be non-negative");
    if (lo == 0 && hi == 0)
      continue;
    if (!in[i].isStatic())
      return ctx.error("cannot pad symbolic extent " + ctx.fmt(in[i]));
    if (mode == "reflect" && (lo >= in[i].size() || hi >= in[i].size()))
      return ctx.attrError(AttrName::Pads,
                           "reflect padding must be smaller than the extent " +
                               ctx.fmt(in[i]) + " on axis " +
                               std::to_string(i));
    if (mode == "edge" && in[i].size() == 0)
      return ctx.attrError(AttrName::Pads, "cannot edge-pad an empty axis");
    out[i] = Dim::fixed(in[i].size() + lo + hi);
  }
  ctx.results.push_back({ctx.dtype(0), std::move(out)});
  return success();
}

LogicalResult fuel::inferShapeOp(InferenceContext &ctx) {
  switch (ctx.kind()) {
  case OpKind::Reshape:
    return inferReshape(ctx);
  case OpKind::Transpose:
    return inferTranspose(ctx);
  case OpKind::BroadcastTo:
    return inferBroadcastTo(ctx);
  case OpKind::Expand:
    return inferExpand(ctx);
  case OpKind::Slice:
    return inferSlice(ctx);
  case OpKind::Squeeze:
    return inferSqueeze(ctx);
  case OpKind::Unsqueeze:
    return inferUnsqueeze(ctx);
  case OpKind::Concat:
    return inferConcat(ctx);
  case OpKind::Split:
    return inferSplit(ctx);
  case OpKind::Gather:
    return inferGather(ctx);
  case OpKind::Contiguous: {
    ShapeRef s = ctx.shape(0);
    ctx.results.push_back({ctx.dtype(0), Shape(s.begin(), s.end())});
    return success();
  }
  default:
    return inferPad(ctx);
  }
}
