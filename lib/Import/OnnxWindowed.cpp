//===- OnnxWindowed.cpp - ONNX convolution and pooling --------------------===//
//
// Conv, MaxPool, AveragePool (1-D, 2-D and 3-D windows) and the global
// poolings. The IR's windowed ops are 2-D: a 1-D window is a 2-D one of
// height 1 over the input unsqueezed to [N, C, 1, L]; a 3-D pooling is two
// 2-D ones (pool3D), a 3-D convolution one 2-D one per depth tap (conv3D).
// The pooling kernels clip windows to the input and take at most half a
// window of padding; wider pads (which ONNX allows) become an explicit pad
// of the input (the lowest value for max pooling, zeros for averages,
// rescaled by the window's share of real elements when padding is not
// counted).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;

  int64_t stride(size_t axis) const { return strides.empty() ? 1 : strides[axis]; }
  int64_t dilation(size_t axis) const { return dilations.empty() ? 1 : dilations[axis]; }
  int64_t pad(size_t axis, bool end) const {
    return pads.empty() ? 0 : pads[axis + (end ? pads.size() / 2 : 0)];
  }
};

/// Explicit pads for auto_pad=SAME_UPPER/SAME_LOWER: the output extent is
/// ceil(input / stride), the padding split evenly, the odd one at the end
/// (UPPER) or the beginning (LOWER). Needs static spatial extents.
bool samePads(Importer &im, ShapeRef x, Window &w) {
  bool lower = im.attrString("auto_pad", "NOTSET") == "SAME_LOWER";
  size_t spatial = x.size() - 2;
  std::vector<int64_t> begin, end;
  for (size_t i = 0; i < spatial; ++i) {
    if (!x[2 + i].isStatic() || w.kernel.size() != spatial || w.kernel[i] < 1)
      return im.unsupported("auto_pad=SAME needs static spatial extents and kernel");
    int64_t in = x[2 + i].size(), s = w.stride(i);
    int64_t out = (in + s - 1) / s;
    int64_t total =
        std::max<int64_t>((out - 1) * s + (w.kernel[i] - 1) * w.dilation(i) + 1 - in, 0);
    begin.push_back(lower ? total - total / 2 : total / 2);
    end.push_back(total - begin.back());
  }
  begin.insert(begin.end(), end.begin(), end.end());
  w.pads = begin;
  return true;
}

/// The node's window; the kernel of a convolution from its weight's shape.
std::optional<Window> readWindow(Importer &im, OpKind kind, ShapeRef x, ShapeRef weight) {
  Window w{im.attrInts("kernel_shape"), im.attrInts("strides"), im.attrInts("pads"),
           im.attrInts("dilations")};
  // Attributes name one value per spatial axis (pads two); Window::pad and
  // the 3-D and 1-D rewrites index them by axis.
  size_t spatial = x.size() - 2;
  for (auto [name, values, count] :
       {std::tuple{"kernel_shape", &w.kernel, spatial}, std::tuple{"strides", &w.strides, spatial},
        std::tuple{"pads", &w.pads, 2 * spatial}, std::tuple{"dilations", &w.dilations, spatial}})
    if (!values->empty() && values->size() != count) {
      im.unsupported(std::string(name) + " has " + std::to_string(values->size()) +
                     " values; a " + std::to_string(spatial) + "-D window needs " +
                     std::to_string(count));
      return std::nullopt;
    }
  if (kind == OpKind::Conv2D && w.kernel.empty())
    for (size_t i = 2; i < weight.size(); ++i)
      w.kernel.push_back(weight[i].isStatic() ? weight[i].size() : -1);
  std::string autoPad = im.attrString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (!samePads(im, x, w))
      return std::nullopt;
  } else if (autoPad != "NOTSET" && autoPad != "VALID") {
    im.unsupported("auto_pad=" + autoPad + " is not supported");
    return std::nullopt;
  }
  if (kind == OpKind::AvgPool2D && // Opset 19 added them.
      std::any_of(w.dilations.begin(), w.dilations.end(), [](int64_t d) { return d != 1; })) {
    im.unsupported("dilated average pooling is not supported");
    return std::nullopt;
  }
  return w;
}

/// A 1-D window as a 2-D one of height 1.
Window heightOne(const Window &w) {
  auto widen = [](const std::vector<int64_t> &v, int64_t unit) {
    std::vector<int64_t> out;
    if (!v.empty())
      out = {unit, v[0]};
    return out;
  };
  Window out{widen(w.kernel, 1), widen(w.strides, 1), {}, widen(w.dilations, 1)};
  if (!w.pads.empty())
    out.pads = {0, w.pads[0], 0, w.pads.size() > 1 ? w.pads[1] : w.pads[0]};
  return out;
}

bool padsExceedHalfWindow(const Window &w) {
  for (size_t axis = 0; axis < w.kernel.size(); ++axis)
    if (2 * std::max(w.pad(axis, false), w.pad(axis, true)) > w.kernel[axis])
      return true;
  return false;
}

/// For average pooling that does not count padding, after an explicit zero
/// pad: window size / real elements in it, per output position ([OH, OW]).
std::optional<KnownTensor> realShare(ShapeRef x, const Window &w, DType type) {
  std::vector<std::vector<int64_t>> counts(2);
  for (size_t axis = 0; axis < 2; ++axis) {
    if (!x[2 + axis].isStatic() || x[2 + axis].size() > (int64_t(1) << 20))
      return std::nullopt;
    int64_t in = x[2 + axis].size(), k = w.kernel[axis], s = w.stride(axis);
    int64_t padded = in + w.pad(axis, false) + w.pad(axis, true);
    for (int64_t start = -w.pad(axis, false); start + k <= padded - w.pad(axis, false); start += s)
      counts[axis].push_back(std::min(start + k, in) - std::max<int64_t>(start, 0));
  }
  KnownTensor share{
      type, {static_cast<int64_t>(counts[0].size()), static_cast<int64_t>(counts[1].size())}, {}};
  double window = static_cast<double>(w.kernel[0] * w.kernel[1]);
  for (int64_t h : counts[0])
    for (int64_t v : counts[1])
      appendScalar(share, h * v > 0 ? window / static_cast<double>(h * v) : 0);
  return share;
}

ValueRef padded(Composer &k, ValueRef x, const Window &w, double value) {
  std::vector<int64_t> pads{0, 0, w.pad(0, false), w.pad(1, false),
                            0, 0, w.pad(0, true),  w.pad(1, true)};
  return k.op(OpKind::Pad, {x}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Pads, pads);
    g.addStringAttr(AttrName::Mode, "constant");
    g.addFloatAttr(AttrName::Value, value);
  });
}
} // namespace

namespace {
/// The IR's 2-D op over rank-4 operands with window `w`; pooling pads wider
/// than half the window become an explicit pad, as do a convolution's pads
/// with `convPadValue`.
ValueRef windowed2D(Composer &k, OpKind kind, std::vector<ValueRef> operands, Window w,
                    std::optional<double> convPadValue) {
  Importer &im = k.im;
  if (kind == OpKind::Conv2D && convPadValue && w.kernel.size() == 2 &&
      std::any_of(w.pads.begin(), w.pads.end(), [](int64_t p) { return p != 0; })) {
    operands[0] = padded(k, operands[0], w, *convPadValue);
    w.pads.clear();
  }
  bool ceilMode = im.attrInt("ceil_mode", 0) != 0;
  bool countPad = im.attrInt("count_include_pad", 0) != 0;
  std::optional<KnownTensor> share;
  if (kind != OpKind::Conv2D && w.kernel.size() == 2 && padsExceedHalfWindow(w)) {
    DType type = im.graph.dtype(operands[0]);
    if (ceilMode) {
      im.unsupported("pads wider than half the window are not supported with ceil_mode");
      k.markFailed();
      return operands[0];
    }
    if (kind == OpKind::AvgPool2D && !countPad) {
      share = realShare(im.graph.shape(operands[0]), w, type);
      if (!share) {
        im.unsupported("pads wider than half the window need static spatial extents");
        k.markFailed();
        return operands[0];
      }
    }
    // The lowest value of the type (finite: attributes are JSON numbers).
    double lowest = isFloat(type)       ? -std::numeric_limits<float>::max()
                    : type == DType::U8 ? 0
                    : type == DType::I8 ? -128
                                        : -2147483648.0;
    operands[0] = padded(k, operands[0], w, kind == OpKind::MaxPool2D ? lowest : 0);
    w.pads.clear();
  }
  ValueRef y = k.mainOp(kind, operands, [&](Graph &g) {
    if (kind != OpKind::Conv2D)
      g.addIntsAttr(AttrName::Kernel, w.kernel);
    if (!w.strides.empty())
      g.addIntsAttr(AttrName::Strides, w.strides);
    if (!w.pads.empty())
      g.addIntsAttr(AttrName::Pads, w.pads);
    if (!w.dilations.empty() && kind != OpKind::AvgPool2D)
      g.addIntsAttr(AttrName::Dilations, w.dilations);
    if (kind == OpKind::Conv2D)
      g.addIntAttr(AttrName::Groups, im.attrInt("group", 1));
    else
      g.addBoolAttr(AttrName::CeilMode, ceilMode);
    if (kind == OpKind::AvgPool2D)
      g.addBoolAttr(AttrName::CountIncludePad, countPad);
  });
  return share ? k.op(OpKind::Mul, {y, k.constant(*share)}) : y;
}

/// The axes `first` and `first + 1` of a 3-D window's attribute, as a 2-D
/// one (`unitSecond`: the second axis a unit one instead).
std::vector<int64_t> twoAxes(const std::vector<int64_t> &v, size_t first, bool unitSecond,
                             int64_t unit) {
  if (v.empty())
    return v;
  return {v[first], unitSecond ? unit : v[first + 1]};
}

/// A 3-D pooling as two 2-D ones: it is separable (a max of maxes; an
/// average of averages, the counts of real or padded elements being
/// products of per-axis counts). The (H, W) window runs over
/// [N, C*D, H, W], then the D one, as a (D, 1) window, over
/// [N, C, D, Ho*Wo].
ValueRef pool3D(Composer &k, OpKind kind, ValueRef input, const Window &w) {
  ShapeRef x = k.im.graph.shape(input);
  if (!std::all_of(x.begin() + 1, x.end(), [](Dim d) { return d.isStatic(); }) ||
      w.kernel.size() != 3 || (!w.pads.empty() && w.pads.size() != 6)) {
    k.im.unsupported("3-D pooling needs static channel and spatial extents and a 3-D window");
    k.markFailed();
    return input;
  }
  Dim n = x[0];
  int64_t c = x[1].size(), d = x[2].size(), h = x[3].size(), wd = x[4].size();
  auto pads = [&](size_t axis, bool unitSecond) {
    if (w.pads.empty())
      return std::vector<int64_t>();
    return std::vector<int64_t>{w.pads[axis], unitSecond ? 0 : w.pads[axis + 1], w.pads[axis + 3],
                                unitSecond ? 0 : w.pads[axis + 4]};
  };
  Window planes{twoAxes(w.kernel, 1, false, 1), twoAxes(w.strides, 1, false, 1), pads(1, false),
                twoAxes(w.dilations, 1, false, 1)};
  Window depth{twoAxes(w.kernel, 0, true, 1), twoAxes(w.strides, 0, true, 1), pads(0, true),
               twoAxes(w.dilations, 0, true, 1)};
  ValueRef y = k.reshape(input, {n, Dim::fixed(c * d), Dim::fixed(h), Dim::fixed(wd)});
  y = windowed2D(k, kind, {y}, planes, std::nullopt);
  if (k.failed())
    return input;
  ShapeRef pooled = k.im.graph.shape(y);
  Dim oh = pooled[2], ow = pooled[3];
  y = k.reshape(y, {n, Dim::fixed(c), Dim::fixed(d), Dim::fixed(oh.size() * ow.size())});
  y = windowed2D(k, kind, {y}, depth, std::nullopt);
  if (k.failed())
    return input;
  Dim od = k.im.graph.shape(y)[2];
  return k.reshape(y, {n, Dim::fixed(c), od, oh, ow});
}

/// A 3-D convolution as a sum of 2-D ones, one per tap t of the depth
/// window: the output depth od reads input plane od * stride + t * dilation
/// of the depth-padded input. Those planes (a strided slice) are folded
/// into the batch, [N * OD, C, H, W], and convolved with the weights' depth
/// slice t; the bias joins the first tap's convolution.
ValueRef conv3D(Composer &k, std::vector<ValueRef> operands, const Window &w) {
  // Copies: adding nodes may move the graph's shape storage.
  const Graph &g = k.im.graph;
  std::vector<Dim> x(g.shape(operands[0]).begin(), g.shape(operands[0]).end());
  std::vector<Dim> weight(g.shape(operands[1]).begin(), g.shape(operands[1]).end());
  if (!isFullyStatic(x) || !isFullyStatic(weight) || w.kernel.size() != 3 ||
      (!w.pads.empty() && w.pads.size() != 6)) {
    k.im.unsupported("3-D convolution needs static extents and a 3-D window");
    k.markFailed();
    return operands[0];
  }
  int64_t n = x[0].size(), c = x[1].size(), d = x[2].size(), h = x[3].size(), wd = x[4].size();
  int64_t taps = w.kernel[0], step = w.stride(0), dilation = w.dilation(0);
  int64_t before = w.pad(0, false), after = w.pad(0, true);
  int64_t od = (d + before + after - dilation * (taps - 1) - 1) / step + 1;
  if (od < 1 || taps < 1) {
    k.im.unsupported("the depth window is longer than the padded input");
    k.markFailed();
    return operands[0];
  }
  ValueRef input = operands[0];
  if (before || after)
    input = k.op(OpKind::Pad, {input}, [&](Graph &graph) {
      graph.addIntsAttr(AttrName::Pads,
                        std::vector<int64_t>{0, 0, before, 0, 0, 0, 0, after, 0, 0});
      graph.addStringAttr(AttrName::Mode, "constant");
      graph.addFloatAttr(AttrName::Value, 0);
    });
  std::vector<int64_t> planePads;
  if (!w.pads.empty())
    planePads = {w.pads[1], w.pads[2], w.pads[4], w.pads[5]};
  Window planes{twoAxes(w.kernel, 1, false, 1), twoAxes(w.strides, 1, false, 1), planePads,
                twoAxes(w.dilations, 1, false, 1)};
  ValueRef sum;
  for (int64_t t = 0; t < taps; ++t) {
    int64_t first = t * dilation;
    ValueRef sliced = k.op(OpKind::Slice, {input}, [&](Graph &graph) {
      graph.addIntsAttr(AttrName::Starts, std::vector<int64_t>{first});
      graph.addIntsAttr(AttrName::Ends, std::vector<int64_t>{first + (od - 1) * step + 1});
      graph.addIntsAttr(AttrName::Axes, std::vector<int64_t>{2});
      graph.addIntsAttr(AttrName::Steps, std::vector<int64_t>{step});
    });
    ValueRef folded =
        k.reshape(k.transpose(sliced, {0, 2, 1, 3, 4}),
                  {Dim::fixed(n * od), Dim::fixed(c), Dim::fixed(h), Dim::fixed(wd)});
    ValueRef tapWeights = k.reshape(k.slice(operands[1], 2, t, t + 1),
                                    {weight[0], weight[1], weight[3], weight[4]});
    std::vector<ValueRef> tapOperands{folded, tapWeights};
    if (t == 0 && operands.size() > 2)
      tapOperands.push_back(operands[2]);
    ValueRef y = windowed2D(k, OpKind::Conv2D, tapOperands, planes, std::nullopt);
    if (k.failed())
      return operands[0];
    sum = t == 0 ? y : k.op(OpKind::Add, {sum, y});
  }
  ShapeRef y = g.shape(sum); // [N * OD, M, OH, OW]
  std::vector<Dim> unfolded{Dim::fixed(n), Dim::fixed(od), y[1], y[2], y[3]};
  return k.transpose(k.reshape(sum, unfolded), {0, 2, 1, 3, 4});
}
} // namespace

ValueRef onnximport::convolve3D(Composer &k, std::vector<ValueRef> operands,
                                std::vector<int64_t> dilations) {
  ShapeRef weight = k.im.graph.shape(operands[1]);
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < weight.size(); ++i)
    kernel.push_back(weight[i].isStatic() ? weight[i].size() : -1);
  return conv3D(k, std::move(operands), Window{kernel, {}, {}, std::move(dilations)});
}

ValueRef onnximport::addWindowed(Composer &k, OpKind kind, std::vector<ValueRef> operands,
                                 std::optional<double> convPadValue) {
  Importer &im = k.im;
  ValueRef input = operands[0];
  auto fail = [&](const std::string &why) {
    if (!why.empty())
      im.unsupported(why);
    k.markFailed();
    return input;
  };
  ShapeRef x = im.graph.shape(input);
  size_t rank = x.size();
  bool pool = kind != OpKind::Conv2D;
  if (rank != 3 && rank != 4 && rank != 5)
    return fail("only 1-D, 2-D and 3-D windows (rank-3 to rank-5 input) are supported");
  if (kind == OpKind::MaxPool2D && im.outputUsed(1) && rank != 4)
    return fail("the Indices output is supported for 2-D pooling");
  ShapeRef weight = kind == OpKind::Conv2D ? im.graph.shape(operands[1]) : ShapeRef();
  std::optional<Window> read = readWindow(im, kind, x, weight);
  if (!read)
    return fail("");
  if (rank == 5)
    return pool ? pool3D(k, kind, input, *read) : conv3D(k, operands, *read);
  if (rank == 4)
    return windowed2D(k, kind, operands, *read, convPadValue);
  // A 1-D window over [N, C, 1, L].
  auto unsqueezeHeight = [&](ValueRef v, OpKind op) {
    return k.op(op, {v}, [](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{2}); });
  };
  operands[0] = unsqueezeHeight(operands[0], OpKind::Unsqueeze);
  if (kind == OpKind::Conv2D)
    operands[1] = unsqueezeHeight(operands[1], OpKind::Unsqueeze);
  return unsqueezeHeight(windowed2D(k, kind, operands, heightOne(*read), convPadValue),
                         OpKind::Squeeze);
}

namespace {
/// MaxPool's Indices output for the pooled `y` of the rank-4 `x`: each
/// window's first position holding the maximum, as a flat index into x
/// (row-major, or column-major per plane with storage_order=1). Each window
/// tap is a strided slice of x padded with the lowest value; walked from
/// the last tap to the first, a tap equal to the maximum takes the index.
ValueRef maxPoolIndices(Composer &k, ValueRef x, ValueRef y) {
  Importer &im = k.im;
  ShapeRef in = im.graph.shape(x), out = im.graph.shape(y);
  std::optional<Window> read = readWindow(im, OpKind::MaxPool2D, in, ShapeRef());
  std::optional<int64_t> count = staticElementCount(in);
  if (!read || read->kernel.size() != 2 || !count || *count > (int64_t(1) << 24) ||
      !isFloat(im.graph.dtype(x))) {
    if (read)
      im.unsupported("the Indices output needs a float input with static extents (at most "
                     "2^24 elements) and a 2-D window");
    k.markFailed();
    return x;
  }
  Window w = *read;
  int64_t n = in[0].size(), c = in[1].size(), h = in[2].size(), wd = in[3].size();
  int64_t oh = out[2].size(), ow = out[3].size();
  bool columnMajor = im.attrInt("storage_order", 0) != 0;
  // Pads at the end reach the last window's taps (ceil_mode may need more).
  std::vector<int64_t> pads{0, 0, w.pad(0, false), w.pad(1, false), 0, 0, 0, 0};
  int64_t extent[2] = {h, wd}, outs[2] = {oh, ow};
  for (size_t a = 0; a < 2; ++a) {
    int64_t reach = (outs[a] - 1) * w.stride(a) + (w.kernel[a] - 1) * w.dilation(a) + 1;
    pads[6 + a] = std::max<int64_t>(reach - w.pad(a, false) - extent[a], 0);
  }
  ValueRef padded = k.op(OpKind::Pad, {x}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Pads, pads);
    g.addFloatAttr(AttrName::Value, -std::numeric_limits<float>::max());
  });
  ValueRef index;
  for (int64_t tap = w.kernel[0] * w.kernel[1]; tap-- > 0;) {
    int64_t r0 = tap / w.kernel[1] * w.dilation(0), c0 = tap % w.kernel[1] * w.dilation(1);
    std::vector<int64_t> at;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t row = i * w.stride(0) - w.pad(0, false) + r0;
        int64_t col = j * w.stride(1) - w.pad(1, false) + c0;
        at.push_back(columnMajor ? col * h + row : row * wd + col);
      }
    ValueRef position = k.constant(intTensor(at, {oh, ow}));
    if (tap + 1 == w.kernel[0] * w.kernel[1]) { // The last tap: the default.
      index = position;
      continue;
    }
    ValueRef v = k.op(OpKind::Slice, {padded}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{r0, c0});
      g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{r0 + (oh - 1) * w.stride(0) + 1,
                                                         c0 + (ow - 1) * w.stride(1) + 1});
      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{2, 3});
      g.addIntsAttr(AttrName::Steps, std::vector<int64_t>{w.stride(0), w.stride(1)});
    });
    index = k.op(OpKind::Where, {k.op(OpKind::Eq, {v, y}), position, index});
  }
  std::vector<int64_t> planes; // (n * C + c) * H * W per plane.
  for (int64_t p = 0; p < n * c; ++p)
    planes.push_back(p * h * wd);
  return k.op(OpKind::Add, {index, k.constant(intTensor(planes, {n, c, 1, 1}))});
}

bool windowed(Importer &im, OpKind kind) {
  Composer k(im);
  std::vector<ValueRef> operands;
  for (size_t i = 0; i < im.numInputs(); ++i)
    if (im.hasInput(i))
      operands.push_back(im.input(i));
  ValueRef y = addWindowed(k, kind, operands);
  if (kind == OpKind::MaxPool2D && im.outputUsed(1) && !k.failed())
    k.finish(maxPoolIndices(k, operands[0], y), 1);
  return k.finish(y);
}

bool globalPool(Importer &im, OpKind kind) {
  size_t rank = im.graph.shape(im.input(0)).size();
  std::vector<int64_t> axes;
  for (size_t d = 2; d < rank; ++d)
    axes.push_back(static_cast<int64_t>(d));
  return direct(im, kind, [&](Graph &g) {
    g.addIntsAttr(AttrName::Axes, axes);
    g.addBoolAttr(AttrName::KeepDims, true);
  });
}
} // namespace

void onnximport::addWindowedHandlers(HandlerTable &table) {
  table.insert({
      {"Conv",
       [](Importer &im) {
         if (std::optional<ValueRef> y = quantizedConv(im)) {
           im.bind(0, *y);
           return true;
         }
         return windowed(im, OpKind::Conv2D);
       }},
      {"MaxPool", [](Importer &im) { return windowed(im, OpKind::MaxPool2D); }},
      {"AveragePool", [](Importer &im) { return windowed(im, OpKind::AvgPool2D); }},
      {"GlobalAveragePool", [](Importer &im) { return globalPool(im, OpKind::ReduceMean); }},
      {"GlobalMaxPool", [](Importer &im) { return globalPool(im, OpKind::ReduceMax); }},
  });
}
