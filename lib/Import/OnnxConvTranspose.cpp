//===- OnnxConvTranspose.cpp - ConvTranspose as a convolution -------------===//
//
// A transposed convolution is the convolution of the input spread out by
// its stride (stride - 1 zeros between elements) and padded by the kernel's
// reach minus the pads (cropped where that is negative, output_padding
// added at the end), with the kernel flipped spatially and its input and
// output channels swapped (per group). The spreading is a reshape to
// [N, C, H, 1, W, 1], a zero pad to [N, C, H, s, W, s] and a reshape back;
// the weights are transformed at import, so they must be constants. A 1-D
// one runs as a 2-D one of height 1; a 3-D one spreads and pads three axes
// and runs as a 3-D convolution (OnnxWindowed.cpp).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// A per-axis attribute (`dflt` when absent); a 1-D convolution's gets a
/// unit leading axis (`unit`, before each half of the pads).
std::vector<int64_t> axisAttr(Importer &im, const char *name, std::vector<int64_t> dflt, bool oneD,
                            int64_t unit) {
  std::vector<int64_t> v = im.attrInts(name);
  if (v.empty())
    return dflt;
  if (!oneD)
    return v;
  if (v.size() == 2 && std::string_view(name) == "pads")
    return {unit, v[0], unit, v[1]};
  return v.size() == 1 ? std::vector<int64_t>{unit, v[0]} : std::vector<int64_t>{};
}

/// W [C, M/g, k...] -> W' [M, C/g, k...], flipped along every spatial axis
/// (which reverses the flattened spatial order).
KnownTensor transposedKernel(const KnownTensor &w, int64_t groups) {
  int64_t c = w.shape[0], mg = w.shape[1], cg = c / groups, width = dtypeByteSize(w.dtype);
  int64_t taps = 1;
  for (size_t i = 2; i < w.shape.size(); ++i)
    taps *= w.shape[i];
  std::vector<int64_t> shape = w.shape;
  shape[0] = mg * groups;
  shape[1] = cg;
  KnownTensor out{w.dtype, shape, std::string(w.bytes.size(), '\0')};
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t m = 0; m < mg; ++m)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t t = 0; t < taps; ++t) {
          int64_t from = ((g * cg + ci) * mg + m) * taps + (taps - 1 - t);
          int64_t to = ((g * mg + m) * cg + ci) * taps + t;
          std::memcpy(&out.bytes[to * width], &w.bytes[from * width], width);
        }
  return out;
}

bool convTranspose(Importer &im) {
  ShapeRef given = im.graph.shape(im.input(0));
  Shape x(given.begin(), given.end());
  const KnownTensor *weights = constInts(im, 1, "the weights");
  if (!weights)
    return false;
  // A 1-D convolution runs as a 2-D one of height 1.
  bool oneD = x.size() == 3 && weights->shape.size() == 3;
  KnownTensor w = *weights;
  if (oneD) {
    x.insert(x.begin() + 2, Dim::fixed(1));
    w.shape.insert(w.shape.begin() + 2, 1);
  }
  if ((x.size() != 4 && x.size() != 5) || w.shape.size() != x.size() ||
      !std::all_of(x.begin() + 2, x.end(), [](Dim d) { return d.isStatic(); }))
    return im.unsupported("only 1-D, 2-D and 3-D convolutions (input and weights of one rank, "
                          "3 to 5, static spatial extents) are supported");
  size_t spatial = x.size() - 2;
  int64_t groups = im.attrInt("group", 1);
  if (groups < 1 || w.shape[0] % groups != 0)
    return im.unsupported("the weights' channels do not divide into the groups");
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  std::vector<int64_t> strides = axisAttr(im, "strides", ones, oneD, 1),
                       dilations = axisAttr(im, "dilations", ones, oneD, 1),
                       outputPadding = axisAttr(im, "output_padding", zeros, oneD, 0),
                       pads = axisAttr(im, "pads", std::vector<int64_t>(2 * spatial, 0), oneD, 0),
                       outputShape = axisAttr(im, "output_shape", {}, oneD, 1);
  std::string autoPad = im.attrString("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial ||
      outputPadding.size() != spatial || pads.size() != 2 * spatial ||
      (!outputShape.empty() && outputShape.size() != spatial))
    return im.unsupported("strides, dilations, output_padding, pads or output_shape do not "
                          "have one entry per spatial axis");
  std::vector<int64_t> in;
  for (size_t a = 0; a < spatial; ++a)
    in.push_back(x[2 + a].size());
  for (size_t a = 0; a < spatial; ++a) {
    // Bounds keep every extent below computed far from overflow.
    constexpr int64_t kLimit = int64_t(1) << 20;
    if (strides[a] < 1 || dilations[a] < 1 || outputPadding[a] < 0 || strides[a] > kLimit ||
        dilations[a] > kLimit || outputPadding[a] > kLimit || kernel[a] > kLimit ||
        in[a] > kLimit || std::abs(pads[a]) > kLimit || std::abs(pads[a + spatial]) > kLimit ||
        (!outputShape.empty() && (outputShape[a] < 0 || outputShape[a] > kLimit)))
      return im.unsupported("strides and dilations must be in [1, 2^20], output_padding, "
                            "pads, output_shape and extents within 2^20");
    int64_t reach = (kernel[a] - 1) * dilations[a] + 1;
    int64_t full = strides[a] * (in[a] - 1) + outputPadding[a] + reach;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outputShape.empty() || same) {
      int64_t target = outputShape.empty() ? in[a] * strides[a] : outputShape[a];
      // A larger target grows the end (as output_padding does: the ONNX
      // tests expect that), a smaller one is cropped evenly.
      int64_t total = full - target;
      int64_t half = total / 2;
      pads[a] = total < 0 ? 0 : autoPad == "SAME_UPPER" ? half : total - half;
      pads[a + spatial] = total - pads[a];
    }
  }
  Composer k(im);
  ValueRef y = oneD ? k.unsqueeze(k.x, {2}) : k.x;
  Dim n = x[0], c = x[1];
  // Spread: [N, C, H, 1, W, 1] padded to [N, C, H, s, W, s], then merged.
  if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; })) {
    std::vector<Dim> unit{n, c}, merged{n, c};
    std::vector<int64_t> spread(2 * (2 + 2 * spatial), 0);
    for (size_t a = 0; a < spatial; ++a) {
      unit.insert(unit.end(), {Dim::fixed(in[a]), Dim::fixed(1)});
      merged.push_back(Dim::fixed(in[a] * strides[a]));
      spread[2 + 2 * spatial + 2 + 2 * a + 1] = strides[a] - 1; // After axis 2 + 2a + 1.
    }
    y = k.reshape(y, unit);
    y = k.op(OpKind::Pad, {y}, [&](Graph &g) { g.addIntsAttr(AttrName::Pads, spread); });
    y = k.reshape(y, merged);
  }
  // Borders: the kernel's reach minus the pads; the spread's trailing zeros
  // are dropped and output_padding added at the end. Negative is a crop.
  std::vector<int64_t> before(spatial), after(spatial);
  std::vector<int64_t> grow(2 * (2 + spatial), 0);
  for (size_t a = 0; a < spatial; ++a) {
    int64_t reach = (kernel[a] - 1) * dilations[a] + 1;
    before[a] = reach - 1 - pads[a];
    after[a] = reach - 1 - pads[a + spatial] + outputPadding[a] - (strides[a] - 1);
    grow[2 + a] = std::max<int64_t>(before[a], 0);
    grow[2 + spatial + 2 + a] = std::max<int64_t>(after[a], 0);
  }
  if (std::any_of(grow.begin(), grow.end(), [](int64_t v) { return v > 0; }))
    y = k.op(OpKind::Pad, {y}, [&](Graph &g) { g.addIntsAttr(AttrName::Pads, grow); });
  std::vector<int64_t> starts, ends, axes;
  for (size_t a = 0; a < spatial; ++a)
    if (before[a] < 0 || after[a] < 0) {
      int64_t extent =
          in[a] * strides[a] + std::max<int64_t>(before[a], 0) + std::max<int64_t>(after[a], 0);
      starts.push_back(std::max<int64_t>(-before[a], 0));
      ends.push_back(extent - std::max<int64_t>(-after[a], 0));
      axes.push_back(static_cast<int64_t>(2 + a));
    }
  if (!axes.empty())
    y = k.op(OpKind::Slice, {y}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, starts);
      g.addIntsAttr(AttrName::Ends, ends);
      g.addIntsAttr(AttrName::Axes, axes);
    });
  std::vector<ValueRef> operands{y, k.constant(transposedKernel(w, groups))};
  if (im.hasInput(2))
    operands.push_back(im.input(2));
  if (spatial == 3)
    return k.finish(convolve3D(k, operands, dilations));
  y = k.mainOp(OpKind::Conv2D, operands, [&](Graph &g) {
    g.addIntsAttr(AttrName::Dilations, dilations);
    g.addIntAttr(AttrName::Groups, groups);
  });
  return k.finish(
      oneD ? k.op(OpKind::Squeeze, {y},
                  [](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{2}); })
           : y);
}
} // namespace

void onnximport::addConvTransposeHandlers(HandlerTable &table) {
  table.insert({{"ConvTranspose", convTranspose}});
}
