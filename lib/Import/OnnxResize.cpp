//===- OnnxResize.cpp - ONNX Resize as gathers and weighted sums ----------===//
//
// Resize interpolates one axis at a time (the ONNX definition is separable):
// for each output position the coordinate transformation gives a source
// coordinate, the mode its taps (nearest: 1, linear: 2, cubic: 4 neighbors,
// edge-clamped) and their weights, all known at import from the static
// shapes and constant scales or sizes. Each tap is a gather of constant
// indices along the axis times a constant weight per position; nearest is a
// single gather (exact, any dtype).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
struct ResizeMode {
  std::string mode, transform, nearest;
  double cubicA = -0.75, extrapolation = 0;
  bool excludeOutside = false;
};

/// Taps of one output position: source indices (edge-clamped) and weights;
/// `outside` when tf_crop_and_resize extrapolates there.
struct Taps {
  std::vector<int64_t> index;
  std::vector<double> weight;
  bool outside = false;
};

/// The source coordinate of output position `x` (the ONNX reference).
double sourceCoordinate(const ResizeMode &m, double x, double scale, int64_t in,
                        double roiStart, double roiEnd) {
  double out = scale * static_cast<double>(in);
  if (m.transform == "align_corners")
    return out == 1 ? 0 : x * static_cast<double>(in - 1) / (out - 1);
  if (m.transform == "asymmetric")
    return x / scale;
  if (m.transform == "tf_crop_and_resize") {
    double span = (roiEnd - roiStart) * static_cast<double>(in - 1);
    return roiStart * static_cast<double>(in - 1) + (out == 1 ? span / 2 : x * span / (out - 1));
  }
  if (m.transform == "pytorch_half_pixel" && out == 1)
    return -0.5;
  return (x + 0.5) / scale - 0.5; // half_pixel and pytorch_half_pixel
}

/// Weights of the taps for fractional position `ratio` in (0, 1].
std::vector<double> tapWeights(const ResizeMode &m, double ratio, bool integral) {
  if (m.mode == "linear")
    return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    double a = m.cubicA, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  bool up = integral || m.nearest == "ceil" ||
            (m.nearest == "round_prefer_floor" && ratio > 0.5) ||
            (m.nearest == "round_prefer_ceil" && ratio >= 0.5);
  return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
}

Taps tapsAt(const ResizeMode &m, int64_t x, double scale, int64_t in, double roiStart,
            double roiEnd) {
  double source = sourceCoordinate(m, static_cast<double>(x), scale, in, roiStart, roiEnd);
  Taps t;
  if (m.transform == "tf_crop_and_resize" &&
      (source < 0 || source > static_cast<double>(in - 1))) {
    t.outside = true;
    source = std::clamp(source, 0.0, static_cast<double>(in - 1));
  }
  double floorOf = std::floor(source);
  bool integral = source == floorOf;
  t.weight = tapWeights(m, integral ? 1 : source - floorOf, integral);
  // The n nearest integers to `source` (ties to the smaller), among the
  // edge-padded positions [-pad, in + pad).
  int64_t n = static_cast<int64_t>(t.weight.size()), pad = (n + 1) / 2;
  std::vector<int64_t> candidates;
  for (int64_t i = static_cast<int64_t>(floorOf) - n; i <= static_cast<int64_t>(floorOf) + n; ++i)
    if (i >= -pad && i < in + pad)
      candidates.push_back(i);
  std::sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
    double da = std::abs(source - static_cast<double>(a));
    double db = std::abs(source - static_cast<double>(b));
    return da != db ? da < db : a < b;
  });
  candidates.resize(std::min<size_t>(candidates.size(), n));
  std::sort(candidates.begin(), candidates.end());
  double kept = 0;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (m.excludeOutside && (candidates[k] < 0 || candidates[k] >= in))
      t.weight[k] = 0;
    kept += t.weight[k];
    t.index.push_back(std::clamp<int64_t>(candidates[k], 0, in - 1));
  }
  if (m.excludeOutside && kept != 0)
    for (double &w : t.weight)
      w /= kept;
  return t;
}

/// Resamples axis `axis` of `x` to `out` positions.
ValueRef resizeAxis(Composer &k, ValueRef x, unsigned axis, size_t rank, int64_t in,
                    int64_t out, double scale, const ResizeMode &m, double roiStart,
                    double roiEnd) {
  std::vector<Taps> taps;
  for (int64_t i = 0; i < out; ++i)
    taps.push_back(tapsAt(m, i, scale, in, roiStart, roiEnd));
  auto gather = [&](size_t t) {
    std::vector<int64_t> index;
    for (const Taps &p : taps)
      index.push_back(p.index[t]);
    return k.gather(x, intTensor(index, {static_cast<int64_t>(index.size())}), axis);
  };
  // A per-position factor along the axis: [out, 1, ..., 1].
  auto perPosition = [&](auto value) {
    KnownTensor t{k.type, {out}, {}};
    t.shape.resize(rank - axis, 1);
    for (int64_t i = 0; i < out; ++i)
      appendScalar(t, value(i));
    return k.constant(t);
  };
  bool anyOutside = std::any_of(taps.begin(), taps.end(), [](const Taps &p) { return p.outside; });
  ValueRef y = x;
  if (m.mode == "nearest") {
    // The tap of weight 1, as a single gather.
    for (Taps &p : taps) {
      auto one = std::max_element(p.weight.begin(), p.weight.end());
      p.index = {p.index[one - p.weight.begin()]};
    }
    y = gather(0);
  } else {
    for (size_t t = 0; t < taps[0].index.size(); ++t) {
      ValueRef term = k.op(OpKind::Mul, {gather(t), perPosition([&](int64_t i) {
                                           return taps[i].weight[t];
                                         })});
      y = t == 0 ? term : k.op(OpKind::Add, {y, term});
    }
  }
  if (anyOutside) { // tf_crop_and_resize: the extrapolation value outside.
    ValueRef outside = perPosition([&](int64_t i) { return taps[i].outside ? 1 : 0; });
    ValueRef inside = k.op(OpKind::Eq, {outside, k.c(0)});
    y = k.op(OpKind::Where, {inside, y, k.c(m.extrapolation)});
  }
  return y;
}

/// Resize the node's input 0 by `m`, to the scales of input `scalesInput`
/// or the sizes of input 3.
bool resizeBy(Importer &im, const ResizeMode &m, size_t scalesInput) {
  static const char *kModes[] = {"nearest", "linear", "cubic"};
  static const char *kTransforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_crop_and_resize"};
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  auto known = [](const auto &list, const std::string &v) {
    return std::find(std::begin(list), std::end(list), v) != std::end(list);
  };
  if (!known(kModes, m.mode) || !known(kTransforms, m.transform) || !known(kNearest, m.nearest))
    return im.unsupported("mode '" + m.mode + "', coordinate_transformation_mode '" +
                          m.transform + "' or nearest_mode '" + m.nearest + "' is not supported");
  // Axes kept whole may be symbolic (a batch); resized ones are static.
  ShapeRef shape = im.graph.shape(im.input(0));
  std::vector<Dim> in(shape.begin(), shape.end()), out;
  size_t rank = in.size();
  std::vector<double> scales, roi;
  // Opset 18: the sizes or scales may be given for `axes` only.
  std::vector<unsigned> axes;
  for (int64_t a : im.attrInts("axes")) {
    std::optional<unsigned> axis = normalizeAxis(a, rank);
    if (!axis)
      return im.unsupported("axis " + std::to_string(a) + " is out of range");
    axes.push_back(*axis);
  }
  if (axes.empty())
    for (unsigned d = 0; d < rank; ++d)
      axes.push_back(d);
  std::string policy = im.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return im.unsupported("keep_aspect_ratio_policy '" + policy + "' is not supported");
  if (im.hasInput(3)) { // sizes, possibly computed from a symbolic batch
    std::optional<std::vector<Dim>> sizes = im.shapeInput(3, "the sizes");
    if (!sizes)
      return false;
    if (sizes->size() != axes.size())
      return im.unsupported("the sizes must have one extent per resized axis");
    out = in;
    for (size_t i = 0; i < axes.size(); ++i)
      out[axes[i]] = (*sizes)[i];
    for (size_t d = 0; d < rank; ++d) {
      bool scaled = out[d] != in[d] && in[d].isStatic() && out[d].isStatic() && in[d].size();
      scales.push_back(scaled ? static_cast<double>(out[d].size()) /
                                    static_cast<double>(in[d].size())
                              : 1);
    }
    if (policy != "stretch") { // One scale for every listed axis (numpy's rounding).
      double scale = policy == "not_larger" ? INFINITY : 0;
      for (unsigned a : axes) {
        if (!in[a].isStatic() || !out[a].isStatic())
          return im.unsupported("keep_aspect_ratio_policy needs static extents");
        scale = policy == "not_larger" ? std::min(scale, scales[a]) : std::max(scale, scales[a]);
      }
      for (unsigned a : axes) {
        scales[a] = scale;
        out[a] = Dim::fixed(static_cast<int64_t>(
            std::nearbyint(scale * static_cast<double>(in[a].size()))));
      }
    }
  } else if (im.hasInput(scalesInput)) {
    const KnownTensor *s = constInts(im, scalesInput, "the scales");
    if (!s)
      return false;
    std::vector<double> listed = s->reals();
    if (listed.size() != axes.size())
      return im.unsupported("the scales must have one factor per resized axis");
    scales.assign(rank, 1);
    for (size_t i = 0; i < axes.size(); ++i)
      scales[axes[i]] = listed[i];
    for (size_t d = 0; d < rank; ++d) {
      if (!(scales[d] > 0))
        return im.unsupported("the scales must be positive");
      if (scales[d] == 1 || !in[d].isStatic()) {
        out.push_back(in[d]);
        continue;
      }
      double extent = scales[d] * static_cast<double>(in[d].size());
      if (!(extent <= double(int64_t(1) << 16)))
        return im.unsupported("a scaled extent is out of range");
      out.push_back(Dim::fixed(static_cast<int64_t>(extent)));
    }
  } else {
    return im.unsupported("either the scales or the sizes are required");
  }
  if (m.transform == "tf_crop_and_resize") {
    const KnownTensor *r = constInts(im, 1, "the roi");
    if (!r)
      return false;
    roi = r->reals();
    if (roi.size() != 2 * rank)
      return im.unsupported("the roi must have a start and an end per axis");
  }
  if (im.attrInt("antialias", 0) && m.mode != "nearest" &&
      std::any_of(scales.begin(), scales.end(), [](double f) { return f < 1; }))
    return im.unsupported("antialias=1 when downsampling is not supported");
  if (m.mode != "nearest" && !isFloat(im.graph.dtype(im.input(0))))
    return im.unsupported("linear and cubic modes need a float input");
  Composer k(im);
  ValueRef y = k.x;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == in[d] && m.transform != "tf_crop_and_resize")
      continue; // Every transformation maps position i to i.
    if (!in[d].isStatic() || !out[d].isStatic())
      return im.unsupported("resized axes must have static extents");
    int64_t from = in[d].size(), to = out[d].size();
    if (to < 1 || to > (int64_t(1) << 16))
      return im.unsupported("output extent " + std::to_string(to) + " is out of range");
    if (from == 0)
      return im.unsupported("cannot resize an empty axis");
    y = resizeAxis(k, y, static_cast<unsigned>(d), rank, from, to, scales[d], m,
                   roi.empty() ? 0 : roi[d], roi.empty() ? 1 : roi[rank + d]);
  }
  return k.finish(y);
}

bool resize(Importer &im) {
  return resizeBy(im,
                  {im.attrString("mode", "nearest"),
                   im.attrString("coordinate_transformation_mode", "half_pixel"),
                   im.attrString("nearest_mode", "round_prefer_floor"),
                   im.attrFloat("cubic_coeff_a", -0.75f), im.attrFloat("extrapolation_value", 0),
                   im.attrInt("exclude_outside", 0) != 0},
                  2);
}

/// Upsample (opsets 9-10, Resize's predecessor): scales as input 1, output
/// position i read from input position i / scale (rounded down: nearest).
bool upsample(Importer &im) {
  return resizeBy(im, {im.attrString("mode", "nearest"), "asymmetric", "floor", -0.75f, 0, false},
                  1);
}
} // namespace

void onnximport::addResizeHandlers(HandlerTable &table) {
  table.insert({{"Resize", resize}, {"Upsample", upsample}});
}
