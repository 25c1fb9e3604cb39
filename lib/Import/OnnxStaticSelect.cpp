//===- OnnxStaticSelect.cpp - Selections known at import ------------------===//
//
// ONNX ops whose output shape depends on an input's values: Compress (the
// condition), ReverseSequence (the lengths) and MaxUnpool (the indices);
// NonZero, Unique and NonMaxSuppression, whose every output does.
// fuelc plans static shapes, so that input must be a constant (an
// initializer, or an input frozen with --freeze); the selection is then
// computed here and imported as a Gather with constant indices, or as the
// constant results themselves.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>

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
/// The constant input 0 of a node whose results are computed here, when
/// it has rank >= 1 and holds at most 2^22 elements; reports otherwise.
const KnownTensor *constantData(Importer &im, const char *what) {
  const KnownTensor *t = constInts(im, 0, what);
  if (!t)
    return nullptr;
  int64_t elements = 1;
  for (int64_t d : t->shape)
    elements = d < 0 || (d > 0 && elements > kMaxSelected / d) ? kMaxSelected + 1 : elements * d;
  if (t->shape.empty() || elements > kMaxSelected ||
      t->bytes.size() != size_t(elements) * dtypeByteSize(t->dtype)) {
    im.unsupported(std::string(what) + " must have rank >= 1 and at most 2^22 elements");
    return nullptr;
  }
  return t;
}

bool nonZero(Importer &im) {
  const KnownTensor *x = constantData(im, "the input");
  if (!x)
    return false;
  std::vector<double> values = x->reals();
  size_t rank = x->shape.size();
  std::vector<int64_t> found; // The positions' flat indices.
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0)
      found.push_back(static_cast<int64_t>(i));
  if (found.empty())
    return im.unsupported("the input has no non-zero element (fuelc has no empty tensors)");
  // [rank, count]: row d holds the positions' indices along axis d.
  std::vector<int64_t> indices(rank * found.size());
  for (size_t j = 0; j < found.size(); ++j)
    for (size_t d = rank, rest = static_cast<size_t>(found[j]); d-- > 0;) {
      indices[d * found.size() + j] = static_cast<int64_t>(rest % x->shape[d]);
      rest /= x->shape[d];
    }
  Composer k(im);
  return k.finish(k.constant(
      intTensor(indices, {static_cast<int64_t>(rank), static_cast<int64_t>(found.size())})));
}

/// Unique over the slices of `x` along `axis` (each slice's elements in
/// order, compared as `T`), as numpy.unique: the slices sorted or in the
/// order they first occur.
template <class T>
bool uniqueSlices(Importer &im, const KnownTensor &x, const std::vector<T> &values, size_t axis,
                  bool sorted) {
  int64_t outer = 1, extent = x.shape[axis], inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  auto element = [&](int64_t slice, int64_t j) { // Element j of a slice, (outer, inner) order.
    return values[(j / inner * extent + slice) * inner + j % inner];
  };
  int64_t size = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < size; ++j)
      if (element(a, j) != element(b, j))
        return element(a, j) < element(b, j);
    return false;
  };
  // The slices in sorted order (stable: a value's first slice comes first),
  // then runs of equal ones.
  std::vector<int64_t> order(extent);
  for (int64_t i = 0; i < extent; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> first, counts, inverse(extent);
  for (int64_t i = 0; i < extent; ++i) {
    if (i == 0 || less(order[i - 1], order[i])) {
      first.push_back(order[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[i]] = static_cast<int64_t>(first.size()) - 1;
  }
  auto unique = static_cast<int64_t>(first.size());
  std::vector<int64_t> rank(unique); // Of each sorted unique slice in the output.
  for (int64_t u = 0; u < unique; ++u)
    rank[u] = u;
  if (!sorted) { // In the order of first occurrence.
    std::vector<int64_t> byFirst = rank;
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    for (int64_t u = 0; u < unique; ++u)
      rank[byFirst[u]] = u;
    std::vector<int64_t> firstOut(unique), countsOut(unique);
    for (int64_t u = 0; u < unique; ++u) {
      firstOut[rank[u]] = first[u];
      countsOut[rank[u]] = counts[u];
    }
    first = std::move(firstOut);
    counts = std::move(countsOut);
    for (int64_t &v : inverse)
      v = rank[v];
  }
  KnownTensor y{x.dtype, x.shape, {}};
  y.shape[axis] = unique;
  size_t width = dtypeByteSize(x.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < unique; ++u)
      y.bytes.append(x.bytes, ((o * extent + first[u]) * inner) * width, inner * width);
  Composer k(im);
  return k.finish(k.constant(y), 0) && k.finish(k.constant(intTensor(first, {unique})), 1) &&
         k.finish(k.constant(intTensor(inverse, {extent})), 2) &&
         k.finish(k.constant(intTensor(counts, {unique})), 3);
}

bool unique(Importer &im) {
  const KnownTensor *x = constantData(im, "the input");
  if (!x)
    return false;
  bool sorted = im.attrInt("sorted", 1) != 0;
  KnownTensor flat = *x;
  size_t axis = 0;
  if (im.attr("axis")) {
    std::optional<unsigned> a = normalizeAxis(im.attrInt("axis", 0), x->shape.size());
    if (!a)
      return im.unsupported("axis " + std::to_string(im.attrInt("axis", 0)) + " is out of range");
    axis = *a;
  } else {
    flat.shape = {static_cast<int64_t>(x->bytes.size() / dtypeByteSize(x->dtype))};
  }
  if (flat.shape[axis] == 0)
    return im.unsupported("the input is empty (fuelc has no empty tensors)");
  if (isFloat(x->dtype))
    return uniqueSlices(im, flat, x->reals(), axis, sorted);
  return uniqueSlices(im, flat, x->ints(), axis, sorted);
}

/// One box of NonMaxSuppression as its corners, ordered.
struct Box {
  double y0, x0, y1, x1;
  double area() const { return (y1 - y0) * (x1 - x0); }
};

Box boxAt(const std::vector<double> &boxes, size_t i, bool centered) {
  const double *b = &boxes[4 * i];
  if (centered) // x_center, y_center, width, height.
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

/// Whether `a` and `b` overlap by more than `threshold` (intersection over
/// union); boxes without area overlap nothing.
bool overlaps(const Box &a, const Box &b, double threshold) {
  if (a.area() <= 0 || b.area() <= 0)
    return false;
  double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  if (h <= 0 || w <= 0)
    return false;
  double intersection = h * w;
  return intersection / (a.area() + b.area() - intersection) > threshold;
}

bool nonMaxSuppression(Importer &im) {
  const KnownTensor *boxes = constInts(im, 0, "the boxes");
  const KnownTensor *scores = boxes ? constInts(im, 1, "the scores") : nullptr;
  if (!scores)
    return false;
  auto optionalScalar = [&](size_t i, const char *what, double absent) {
    return im.hasInput(i) ? constScalar(im, i, what) : std::optional<double>(absent);
  };
  std::optional<double> limit = optionalScalar(2, "max_output_boxes_per_class", 0);
  std::optional<double> iou = limit ? optionalScalar(3, "iou_threshold", 0) : std::nullopt;
  std::optional<double> minScore =
      iou ? optionalScalar(4, "score_threshold", -HUGE_VAL) : std::nullopt;
  if (!minScore)
    return false;
  const std::vector<int64_t> &bs = boxes->shape, &ss = scores->shape;
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    return im.unsupported("the boxes must be [B, N, 4] and the scores [B, C, N]");
  int64_t batches = bs[0], classes = ss[1], count = bs[1];
  // At most `count` boxes per class are kept (none for a NaN limit).
  int64_t kept = *limit >= double(count) ? count : *limit > 0 ? static_cast<int64_t>(*limit) : 0;
  // Each box is compared with at most `kept` selected ones.
  if (batches * classes * count > kMaxSelected ||
      batches * classes * count * std::max<int64_t>(kept, 1) > (int64_t(1) << 28))
    return im.unsupported("B * C * N must be at most 2^22, and B * C * N * "
                          "max_output_boxes_per_class at most 2^28");
  bool centered = im.attrInt("center_point_box", 0) != 0;
  std::vector<double> corners = boxes->reals(), score = scores->reals();
  if (corners.size() != size_t(batches * count * 4) ||
      score.size() != size_t(batches * classes * count))
    return im.unsupported("the boxes and scores must hold as many values as their shapes say");
  std::vector<int64_t> selected; // Rows of (batch, class, box).
  std::vector<int64_t> order(count);
  std::vector<Box> chosen;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const double *s = &score[(b * classes + c) * count];
      order.clear();
      for (int64_t i = 0; i < count; ++i)
        if (s[i] > *minScore)
          order.push_back(i);
      // Highest score first, the lower index among equal ones.
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      chosen.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(chosen.size()) == kept)
          break;
        Box box = boxAt(corners, static_cast<size_t>(b * count + i), centered);
        if (std::none_of(chosen.begin(), chosen.end(),
                         [&](const Box &other) { return overlaps(box, other, *iou); })) {
          chosen.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
  if (selected.empty())
    return im.unsupported("no box is selected (fuelc has no empty tensors)");
  Composer k(im);
  return k.finish(k.constant(intTensor(selected, {static_cast<int64_t>(selected.size() / 3), 3})));
}
} // namespace

void onnximport::addStaticSelectHandlers(HandlerTable &table) {
  table.insert({{"Compress", compress},
                {"ReverseSequence", reverseSequence},
                {"MaxUnpool", maxUnpool},
                {"NonZero", nonZero},
                {"Unique", unique},
                {"NonMaxSuppression", nonMaxSuppression}});
}
