//===- OnnxNormalizations.cpp - ONNX normalizations from IR ops -----------===//
//
// Layer normalization is an IR op; the others are built from it or from
// reductions by their ONNX definitions:
// - BatchNormalization: inference folds constant statistics into a scale and
//   shift per channel; training mode normalizes by the batch's statistics
//   (over every axis but 1, biased variance) and outputs the running
//   statistics, input * momentum + batch * (1 - momentum);
// - GroupNormalization and InstanceNormalization: a layer norm over each
//   group of channels (one channel per group for instance norm);
// - MeanVarianceNormalization: (x - mean) / (stddev + 1e-9) over `axes`;
// - LRN: x / (bias + alpha / size * sum of squares over `size` neighboring
//   channels)^beta, the sum as slices of the zero-padded squares.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <cmath>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// Mean over `axes` of `v`, kept as unit axes.
ValueRef meanOver(Composer &k, ValueRef v, const std::vector<int64_t> &axes) {
  return k.op(OpKind::ReduceMean, {v}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Axes, axes);
    g.addBoolAttr(AttrName::KeepDims, true);
  });
}

/// Training mode: the batch's statistics normalize, the running ones are
/// outputs 1 and 2.
bool batchNormTraining(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  ShapeRef shape = im.graph.shape(k.x);
  size_t rank = shape.size();
  if (rank < 2)
    return im.unsupported("the input must have a channel axis (axis 1)");
  std::vector<Dim> channel(rank - 1, Dim::fixed(1)), flat{shape[1]};
  channel[0] = shape[1];
  std::vector<int64_t> axes{0};
  for (size_t d = 2; d < rank; ++d)
    axes.push_back(static_cast<int64_t>(d));
  auto reshape = [&](ValueRef v, const std::vector<Dim> &dims) {
    return k.op(OpKind::Reshape, {v}, [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, dims); });
  };
  double eps = im.attrFloat("epsilon", 1e-5f), momentum = im.attrFloat("momentum", 0.9f);
  ValueRef mean = meanOver(k, k.x, axes);
  ValueRef centered = k.op(OpKind::Sub, {k.x, mean});
  ValueRef var = meanOver(k, k.op(OpKind::Mul, {centered, centered}), axes);
  ValueRef inv = k.op(OpKind::Rsqrt, {k.op(OpKind::Add, {var, k.c(eps)})});
  ValueRef scale = k.op(OpKind::Mul, {inv, reshape(im.input(1), channel)});
  ValueRef y =
      k.op(OpKind::Add, {k.op(OpKind::Mul, {centered, scale}), reshape(im.input(2), channel)});
  auto running = [&](size_t input, ValueRef batch) {
    ValueRef kept = k.op(OpKind::Mul, {im.input(input), k.c(momentum)});
    ValueRef added = k.op(OpKind::Mul, {reshape(batch, flat), k.c(1 - momentum)});
    return k.op(OpKind::Add, {kept, added});
  };
  ValueRef runningMean = running(3, mean), runningVar = running(4, var);
  return k.finish(y, 0) && (!im.outputUsed(1) || k.finish(runningMean, 1)) &&
         (!im.outputUsed(2) || k.finish(runningVar, 2));
}

bool batchNorm(Importer &im) {
  if (im.attrInt("training_mode", 0) || im.outputUsed(1) || im.outputUsed(2))
    return batchNormTraining(im);
  const KnownTensor *scale = im.constantInput(1), *bias = im.constantInput(2),
                    *mean = im.constantInput(3), *var = im.constantInput(4);
  double eps = im.attrFloat("epsilon", 1e-5f);
  if (!scale || !bias || !mean || !var) {
    // Statistics computed at run time: (x - mean) * scale / sqrt(var + eps)
    // + bias, each per channel (axis 1, reshaped to broadcast).
    ShapeRef shape = im.graph.shape(im.input(0));
    if (shape.size() < 2)
      return im.unsupported("the input must have a channel axis (axis 1)");
    std::vector<Dim> channel{shape[1]};
    channel.resize(shape.size() - 1, Dim::fixed(1));
    Composer k(im);
    auto perChannel = [&](size_t i) {
      return k.op(OpKind::Reshape, {im.input(i)},
                  [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, channel); });
    };
    ValueRef inv = k.op(OpKind::Rsqrt, {k.op(OpKind::Add, {perChannel(4), k.c(eps)})});
    ValueRef centered = k.op(OpKind::Sub, {k.x, perChannel(3)});
    ValueRef scaled = k.op(OpKind::Mul, {centered, k.op(OpKind::Mul, {inv, perChannel(1)})});
    return k.finish(k.op(OpKind::Add, {scaled, perChannel(2)}));
  }
  DType t = im.graph.dtype(im.input(0));
  size_t rank = im.graph.shape(im.input(0)).size();
  std::vector<double> s = scale->reals(), b = bias->reals(), m = mean->reals(), v = var->reals();
  if (b.size() != s.size() || m.size() != s.size() || v.size() != s.size())
    return im.unsupported("scale, B, mean and var must have one value per channel");
  // y = x * k + (b - m * k), k = s / sqrt(v + eps), per channel (axis 1).
  KnownTensor k{t, {static_cast<int64_t>(s.size())}, {}}, c = k;
  std::vector<int64_t> channelShape{static_cast<int64_t>(s.size())};
  for (size_t d = 2; d < rank; ++d)
    channelShape.push_back(1);
  k.shape = c.shape = channelShape;
  for (size_t i = 0; i < s.size(); ++i) {
    double ki = s[i] / std::sqrt(v[i] + eps), ci = b[i] - m[i] * ki;
    appendScalar(k, ki);
    appendScalar(c, ci);
  }
  std::optional<NodeId> mul =
      im.add(OpKind::Mul, {im.input(0), im.addConstant(k, ".scale")}, {}, ".scaled");
  if (!mul)
    return false;
  std::optional<NodeId> add = im.add(OpKind::Add, {{*mul, 0}, im.addConstant(c, ".shift")});
  if (add)
    im.bind(0, {*add, 0});
  return add.has_value();
}

/// The optional Mean and InvStdDev outputs: statistics over the normalized
/// axes, kept as unit axes.
bool layerNormStatistics(Importer &im, int64_t axis, float eps) {
  ValueRef x = im.input(0);
  size_t rank = im.graph.shape(x).size();
  std::vector<int64_t> axes;
  for (size_t d = axis < 0 ? axis + rank : axis; d < rank; ++d)
    axes.push_back(static_cast<int64_t>(d));
  auto mean = [&](ValueRef v, const std::string &suffix) {
    return im.add(
        OpKind::ReduceMean, {v},
        [&](Graph &g) {
          g.addIntsAttr(AttrName::Axes, axes);
          g.addBoolAttr(AttrName::KeepDims, true);
        },
        suffix);
  };
  std::optional<NodeId> mu = mean(x, ".mean");
  std::optional<NodeId> centered =
      mu ? im.add(OpKind::Sub, {x, {*mu, 0}}, {}, ".centered") : std::nullopt;
  std::optional<NodeId> square =
      centered ? im.add(OpKind::Mul, {{*centered, 0}, {*centered, 0}}, {}, ".square")
               : std::nullopt;
  std::optional<NodeId> var = square ? mean({*square, 0}, ".var") : std::nullopt;
  std::optional<NodeId> shifted =
      var ? im.add(OpKind::Add, {{*var, 0}, im.addConstant(scalar(eps, im.graph.dtype(x)), ".eps")},
                   {}, ".shifted")
          : std::nullopt;
  std::optional<NodeId> inv =
      shifted ? im.add(OpKind::Rsqrt, {{*shifted, 0}}, {}, ".invstd") : std::nullopt;
  if (!inv)
    return false;
  im.bind(1, {*mu, 0});
  im.bind(2, {*inv, 0});
  return true;
}

bool layerNorm(Importer &im) {
  int64_t axis = im.attrInt("axis", -1);
  float eps = im.attrFloat("epsilon", 1e-5f);
  if ((im.outputUsed(1) || im.outputUsed(2)) && !layerNormStatistics(im, axis, eps))
    return false;
  return direct(im, OpKind::LayerNorm, [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, axis);
    g.addFloatAttr(AttrName::Eps, eps);
  });
}

/// Normalizes each of `groups` groups of channels of each image over its
/// channels and positions, then scales and shifts by inputs 1 and 2: per
/// group ([groups]) or per channel ([C]).
bool normalizeGroups(Importer &im, int64_t groups, bool scalePerGroup) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  // A copy: adding nodes moves the graph's shapes.
  ShapeRef graphShape = im.graph.shape(k.x);
  std::vector<Dim> shape(graphShape.begin(), graphShape.end());
  if (shape.size() < 2 || !shape[1].isStatic())
    return im.unsupported("the input must have a static channel axis (N x C x ...)");
  int64_t channels = shape[1].size(), perGroup = 1;
  if (groups <= 0 || channels % groups)
    return im.unsupported("num_groups (" + std::to_string(groups) + ") must divide the " +
                          std::to_string(channels) + " channels");
  for (size_t d = 1; d < shape.size(); ++d) {
    if (!shape[d].isStatic())
      return im.unsupported("the channel and spatial extents must be static");
    perGroup *= shape[d].size();
  }
  perGroup /= groups;
  float eps = im.attrFloat("epsilon", 1e-5f);
  auto reshape = [&](ValueRef v, std::vector<Dim> dims) {
    return k.op(OpKind::Reshape, {v}, [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, dims); });
  };
  ValueRef grouped = reshape(k.x, {shape[0], Dim::fixed(groups), Dim::fixed(perGroup)});
  ValueRef normalized = k.op(OpKind::LayerNorm, {grouped}, [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, 2);
    g.addFloatAttr(AttrName::Eps, eps);
  });
  ValueRef y = reshape(normalized, shape);
  // Scale and bias as [C, 1, ...] against [N, C, ...].
  std::vector<Dim> perChannel(shape.size() - 1, Dim::fixed(1));
  perChannel[0] = Dim::fixed(channels);
  auto channelwise = [&](size_t input) {
    ValueRef v = im.input(input);
    if (scalePerGroup) { // [G] -> [G, C/G] -> [C]
      v = reshape(v, {Dim::fixed(groups), Dim::fixed(1)});
      std::vector<Dim> repeated{Dim::fixed(groups), Dim::fixed(channels / groups)};
      v = k.op(OpKind::Expand, {v},
               [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, repeated); });
    }
    return reshape(v, perChannel);
  };
  y = k.op(OpKind::Mul, {y, channelwise(1)});
  return k.finish(k.op(OpKind::Add, {y, channelwise(2)}));
}

/// Opset 18 scales each of `num_groups` groups, opset 21 each channel.
bool groupNorm(Importer &im) {
  return normalizeGroups(im, im.attrInt("num_groups", 0), im.opset < 21);
}

/// Each channel of each image normalized over its positions.
bool instanceNorm(Importer &im) {
  ShapeRef shape = im.graph.shape(im.input(0));
  if (shape.size() < 3 || !shape[1].isStatic())
    return im.unsupported("the input must be N x C x D1 x ... with a static C");
  return normalizeGroups(im, shape[1].size(), false);
}

bool meanVarianceNorm(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  std::vector<int64_t> axes = im.attrInts("axes");
  if (axes.empty())
    axes = {0, 2, 3};
  ValueRef centered = k.op(OpKind::Sub, {k.x, meanOver(k, k.x, axes)});
  ValueRef var = meanOver(k, k.op(OpKind::Mul, {centered, centered}), axes);
  ValueRef stddev = k.op(OpKind::Add, {k.op(OpKind::Sqrt, {var}), k.c(1e-9)});
  return k.finish(k.op(OpKind::Div, {centered, stddev}));
}

bool lrn(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  ShapeRef shape = im.graph.shape(k.x);
  int64_t size = im.attrInt("size", 0);
  if (shape.size() < 3 || !shape[1].isStatic() || size < 1 || size > 1024)
    return im.unsupported("the input must be N x C x D1 x ... with a static C, size in [1, 1024]");
  size_t rank = shape.size();
  int64_t channels = shape[1].size(), before = (size - 1) / 2, after = size - 1 - before;
  double alpha = im.attrFloat("alpha", 1e-4f), beta = im.attrFloat("beta", 0.75f),
         bias = im.attrFloat("bias", 1);
  std::vector<int64_t> pads(2 * rank, 0);
  pads[1] = before;
  pads[rank + 1] = after;
  ValueRef squares = k.op(OpKind::Pad, {k.op(OpKind::Mul, {k.x, k.x})}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Pads, pads);
    g.addStringAttr(AttrName::Mode, "constant");
    g.addFloatAttr(AttrName::Value, 0);
  });
  std::optional<ValueRef> sum;
  for (int64_t i = 0; i < size; ++i) {
    ValueRef window = k.op(OpKind::Slice, {squares}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{i});
      g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{i + channels});
      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{1});
    });
    sum = sum ? k.op(OpKind::Add, {*sum, window}) : window;
  }
  ValueRef base = k.op(OpKind::Add, {k.op(OpKind::Mul, {*sum, k.c(alpha / size)}), k.c(bias)});
  return k.finish(k.op(OpKind::Div, {k.x, k.op(OpKind::Pow, {base, k.c(beta)})}));
}
} // namespace

void onnximport::addNormalizationHandlers(HandlerTable &table) {
  table.insert({{"BatchNormalization", batchNorm},
                {"LayerNormalization", layerNorm},
                {"GroupNormalization", groupNorm},
                {"InstanceNormalization", instanceNorm},
                {"MeanVarianceNormalization", meanVarianceNorm},
                {"LRN", lrn}});
}
