//===- OnnxStaticSelect.cpp - Selections known at import ------------------===//
//
// ONNX ops whose output shape depends on an input's values: Compress (the
// condition), ReverseSequence (the lengths) and MaxUnpool (the indices).
// fuelc plans static shapes, so that input must be a constant (an
// initializer, or an input frozen with --freeze); the selection is then
// computed here and imported as a Gather with constant indices.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// Gathers along one axis cost an index per output element: bound them.
constexpr int64_t kMaxSelected = int64_t(1) << 22;

/// The product of static extents, or nullopt when one is not static or the
/// product passes kMaxSelected.
std::optional<int64_t> staticCount(ShapeRef shape) {
  int64_t count = 1;
  for (Dim d : shape) {
    if (!d.isStatic() || (d.size() != 0 && count > kMaxSelected / d.size()))
      return std::nullopt;
    count *= d.size();
  }
  return count;
}

bool compress(Importer &im) {
  const KnownTensor *condition = constInts(im, 1, "the condition");
  if (!condition)
    return false;
  ShapeRef x = im.graph.shape(im.input(0));
  Composer k(im);
  ValueRef from = k.x;
  int64_t extent = 0;
  unsigned axis = 0;
  if (im.attr("axis")) {
    std::optional<unsigned> a = normalizeAxis(im.attrInt("axis", 0), x.size());
    if (!a || !x[*a].isStatic())
      return im.unsupported("the axis must exist and have a static extent");
    axis = *a;
    extent = x[axis].size();
  } else { // The flattened input.
    std::optional<int64_t> count = staticCount(x);
    if (!count)
      return im.unsupported("without an axis, the input's extents must be static and hold at "
                            "most 2^22 elements");
    extent = *count;
    from = k.reshape(from, {Dim::fixed(extent)});
  }
  std::vector<double> keep = condition->reals();
  if (condition->shape.size() != 1 || static_cast<int64_t>(keep.size()) > extent)
    return im.unsupported("the condition must be a vector no longer than the axis (" +
                          std::to_string(extent) + ")");
  std::vector<int64_t> picked;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i] != 0)
      picked.push_back(static_cast<int64_t>(i));
  if (picked.empty())
    return im.unsupported("the condition selects nothing (fuelc has no empty tensors)");
  return k.finish(k.gather(from, intTensor(picked, {static_cast<int64_t>(picked.size())}), axis));
}

bool reverseSequence(Importer &im) {
  const KnownTensor *lengths = constInts(im, 1, "the sequence lengths");
  if (!lengths)
    return false;
  ShapeRef x = im.graph.shape(im.input(0));
  std::optional<unsigned> batchAxis = normalizeAxis(im.attrInt("batch_axis", 1), x.size());
  std::optional<unsigned> timeAxis = normalizeAxis(im.attrInt("time_axis", 0), x.size());
  if (x.size() < 2 || !batchAxis || !timeAxis || *batchAxis == *timeAxis || *batchAxis > 1 ||
      *timeAxis > 1)
    return im.unsupported("batch_axis and time_axis must be 0 and 1 (either way)");
  if (!x[*batchAxis].isStatic() || !x[*timeAxis].isStatic())
    return im.unsupported("the batch and time extents must be static");
  int64_t batch = x[*batchAxis].size(), steps = x[*timeAxis].size();
  std::vector<int64_t> length = lengths->ints();
  if (static_cast<int64_t>(length.size()) != batch || batch > 4096)
    return im.unsupported("the lengths must hold one value per batch entry, at most 4096");
  Composer k(im);
  std::vector<ValueRef> parts;
  for (int64_t b = 0; b < batch; ++b) {
    if (length[b] < 0 || length[b] > steps)
      return im.unsupported("sequence length " + std::to_string(length[b]) + " is outside [0, " +
                            std::to_string(steps) + "]");
    // The first length[b] steps reversed, the rest in place.
    std::vector<int64_t> order;
    for (int64_t t = 0; t < steps; ++t)
      order.push_back(t < length[b] ? length[b] - 1 - t : t);
    ValueRef entry = k.slice(k.x, *batchAxis, b, b + 1);
    parts.push_back(k.gather(entry, intTensor(order, {steps}), *timeAxis));
  }
  return k.finish(parts.size() == 1 ? parts[0] : k.op(OpKind::Concat, parts, [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, *batchAxis);
  }));
}

/// MaxUnpool's output extents before output_shape: the pooling's input's
/// (the indices count positions in those).
std::optional<std::vector<int64_t>> unpooledShape(Importer &im, ShapeRef x) {
  size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel = im.attrInts("kernel_shape"), strides = im.attrInts("strides"),
                       pads = im.attrInts("pads");
  auto outOfRange = [](const std::vector<int64_t> &v) {
    return std::any_of(v.begin(), v.end(), [](int64_t e) { return e < 0 || e > (1 << 20); });
  };
  if (kernel.size() != spatial || (!strides.empty() && strides.size() != spatial) ||
      (!pads.empty() && pads.size() != 2 * spatial) || outOfRange(kernel) || outOfRange(strides) ||
      outOfRange(pads)) {
    im.unsupported("kernel_shape, strides and pads must have one entry per spatial axis, each "
                   "in [0, 2^20]");
    return std::nullopt;
  }
  std::vector<int64_t> out{x[0].size(), x[1].size()};
  for (size_t i = 0; i < spatial; ++i)
    out.push_back((x[2 + i].size() - 1) * (strides.empty() ? 1 : strides[i]) + kernel[i] -
                  (pads.empty() ? 0 : pads[i] + pads[i + spatial]));
  return out;
}

/// The zeros output_shape adds at the end of each axis, as ONNX's
/// reference does; nullopt (after reporting) when it would crop.
std::optional<std::vector<int64_t>> growthTo(Importer &im, const std::vector<int64_t> &shape) {
  std::vector<int64_t> grow(2 * shape.size(), 0);
  if (!im.hasInput(2))
    return grow;
  const KnownTensor *given = constInts(im, 2, "output_shape");
  if (!given)
    return std::nullopt;
  std::vector<int64_t> target = given->ints();
  bool fits = target.size() == shape.size();
  for (size_t i = 0; fits && i < shape.size(); ++i) {
    fits = target[i] >= shape[i] && target[i] - shape[i] <= (1 << 20);
    if (fits)
      grow[shape.size() + i] = target[i] - shape[i];
  }
  if (!fits) {
    im.unsupported("output_shape must have the input's rank and, per axis, be at least the "
                   "unpooled extent and at most 2^20 more");
    return std::nullopt;
  }
  return grow;
}

bool maxUnpool(Importer &im) {
  const KnownTensor *indices = constInts(im, 1, "the indices");
  if (!indices)
    return false;
  ShapeRef x = im.graph.shape(im.input(0));
  std::optional<int64_t> inCount = staticCount(x);
  if (x.size() < 3 || !inCount)
    return im.unsupported("the input must have static extents, rank >= 3, and at most 2^22 "
                          "elements");
  std::optional<std::vector<int64_t>> shape = unpooledShape(im, x);
  std::optional<std::vector<int64_t>> grow = shape ? growthTo(im, *shape) : std::nullopt;
  if (!grow)
    return false;
  int64_t outCount = 1;
  for (int64_t d : *shape) {
    if (d < 1 || outCount > kMaxSelected / d)
      return im.unsupported("the output's extents must be positive and hold at most 2^22 "
                            "elements");
    outCount *= d;
  }
  std::vector<int64_t> at = indices->ints();
  if (static_cast<int64_t>(at.size()) != *inCount)
    return im.unsupported("the indices must have the input's shape");
  // Each output position reads the input element unpooled there, or the
  // zero appended after the input (the last writer wins, as in ONNX's
  // reference).
  std::vector<int64_t> source(outCount, *inCount);
  for (int64_t i = 0; i < *inCount; ++i) {
    if (at[i] < 0 || at[i] >= outCount)
      return im.unsupported("index " + std::to_string(at[i]) + " is outside the output's " +
                            std::to_string(outCount) + " elements");
    source[at[i]] = i;
  }
  Composer k(im);
  ValueRef flat = k.reshape(k.x, {Dim::fixed(*inCount)});
  KnownTensor zero = scalar(0, k.type);
  zero.shape = {1};
  ValueRef padded = k.op(OpKind::Concat, {flat, k.constant(zero)},
                         [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); });
  ValueRef y = k.gather(padded, intTensor(source, {outCount}), 0);
  std::vector<Dim> dims;
  for (int64_t d : *shape)
    dims.push_back(Dim::fixed(d));
  y = k.reshape(y, dims);
  if (std::any_of(grow->begin(), grow->end(), [](int64_t v) { return v > 0; }))
    y = k.op(OpKind::Pad, {y}, [&](Graph &g) { g.addIntsAttr(AttrName::Pads, *grow); });
  return k.finish(y);
}
} // namespace

void onnximport::addStaticSelectHandlers(HandlerTable &table) {
  table.insert(
      {{"Compress", compress}, {"ReverseSequence", reverseSequence}, {"MaxUnpool", maxUnpool}});
}
