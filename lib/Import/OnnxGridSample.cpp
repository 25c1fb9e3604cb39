//===- OnnxGridSample.cpp - GridSample as a contraction -------------------===//
//
// GridSample reads the input at fractional positions, one per output
// element. Along each axis the interpolation is a few taps (nearest: 1,
// linear: 2, cubic: 4) with weights; comparing each tap's index with the
// axis's positions turns them into one row of weights over the axis, zero
// where a tap falls outside it (which is the zeros padding). The output is
// the input contracted with the outer product of the height and width rows:
// one batched matmul of [N, C, H*W] by [N, H*W, Ho*Wo]. That costs H*W
// multiply-adds per output element, so the importer bounds H*W*Ho*Wo.
//
// The semantics are PyTorch's grid_sample, which ONNX follows: coordinates
// unnormalized per align_corners; border and reflection padding applied to
// the coordinate (linear, nearest) or to each tap's index (cubic); nearest
// rounds halves to even; cubic is Keys' convolution with A = -0.75.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

using namespace fuel;
using namespace fuel::onnximport;

namespace {
enum class Mode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

class AxisSampler {
public:
  AxisSampler(Composer &k, Mode mode, Padding padding, bool alignCorners)
      : k(k), mode(mode), padding(padding), alignCorners(alignCorners) {}

  /// The weights over an axis of `size` positions ([..., size]) of the
  /// normalized coordinates `coord` ([..., 1]).
  ValueRef weights(ValueRef coord, int64_t size) {
    ValueRef u = unnormalize(coord, size);
    std::vector<std::pair<ValueRef, ValueRef>> taps; // Index, weight.
    if (mode == Mode::Nearest) {
      taps.push_back({k.op(OpKind::Round, {pad(u, size)}), k.c(1)});
    } else if (mode == Mode::Linear) {
      ValueRef p = pad(u, size);
      ValueRef first = k.op(OpKind::Floor, {p});
      ValueRef t = k.op(OpKind::Sub, {p, first});
      taps.push_back({first, k.op(OpKind::Sub, {k.c(1), t})});
      taps.push_back({k.op(OpKind::Add, {first, k.c(1)}), t});
    } else {
      ValueRef first = k.op(OpKind::Floor, {u});
      ValueRef t = k.op(OpKind::Sub, {u, first});
      ValueRef rest = k.op(OpKind::Sub, {k.c(1), t});
      ValueRef w[4] = {outerCubic(k.op(OpKind::Add, {t, k.c(1)})), innerCubic(t), innerCubic(rest),
                       outerCubic(k.op(OpKind::Add, {rest, k.c(1)}))};
      for (int i = 0; i < 4; ++i)
        taps.push_back({pad(k.op(OpKind::Add, {first, k.c(i - 1)}), size), w[i]});
    }
    ValueRef positions = k.constant(onnximport::positions(size, 0, k.type));
    ValueRef row;
    for (size_t i = 0; i < taps.size(); ++i) {
      ValueRef hit = k.op(OpKind::Eq, {taps[i].first, positions});
      ValueRef term = k.op(OpKind::Where, {hit, taps[i].second, k.c(0)});
      row = i == 0 ? term : k.op(OpKind::Add, {row, term});
    }
    return row;
  }

private:
  ValueRef unnormalize(ValueRef coord, int64_t size) {
    ValueRef half = k.op(OpKind::Mul, {k.op(OpKind::Add, {coord, k.c(1)}), k.c(0.5)});
    if (alignCorners) // (coord + 1) / 2 * (size - 1)
      return k.op(OpKind::Mul, {half, k.c(static_cast<double>(size - 1))});
    // ((coord + 1) * size - 1) / 2
    return k.op(OpKind::Sub, {k.op(OpKind::Mul, {half, k.c(static_cast<double>(size))}), k.c(0.5)});
  }

  /// A coordinate or index moved inside the axis per the padding mode.
  ValueRef pad(ValueRef v, int64_t size) {
    if (padding == Padding::Zeros)
      return v;
    if (padding == Padding::Reflection)
      v = alignCorners ? reflect(v, 0, 2 * (size - 1)) : reflect(v, -1, 2 * size - 1);
    ValueRef low = k.op(OpKind::Max, {v, k.c(0)});
    return k.op(OpKind::Min, {low, k.c(static_cast<double>(size - 1))});
  }

  /// `v` reflected into [twiceLow / 2, twiceHigh / 2] as often as needed.
  ValueRef reflect(ValueRef v, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return k.op(OpKind::Mul, {v, k.c(0)});
    double low = static_cast<double>(twiceLow) / 2;
    double span = static_cast<double>(twiceHigh - twiceLow) / 2;
    ValueRef distance = k.op(OpKind::Abs, {k.op(OpKind::Sub, {v, k.c(low)})});
    ValueRef extra = k.op(OpKind::Fmod, {distance, k.c(span)});
    ValueRef flips = k.op(OpKind::Floor, {k.op(OpKind::Div, {distance, k.c(span)})});
    ValueRef even = k.op(OpKind::Eq, {k.op(OpKind::Fmod, {flips, k.c(2)}), k.c(0)});
    return k.op(OpKind::Where, {even, k.op(OpKind::Add, {extra, k.c(low)}),
                                k.op(OpKind::Sub, {k.c(span + low), extra})});
  }

  /// Keys' cubic for |x| <= 1: ((A + 2) x - (A + 3)) x^2 + 1.
  ValueRef innerCubic(ValueRef x) {
    ValueRef a = k.op(OpKind::Sub, {k.op(OpKind::Mul, {x, k.c(kA + 2)}), k.c(kA + 3)});
    return k.op(OpKind::Add, {k.op(OpKind::Mul, {k.op(OpKind::Mul, {a, x}), x}), k.c(1)});
  }
  /// Keys' cubic for 1 < |x| < 2: ((A x - 5A) x + 8A) x - 4A.
  ValueRef outerCubic(ValueRef x) {
    ValueRef a = k.op(OpKind::Sub, {k.op(OpKind::Mul, {x, k.c(kA)}), k.c(5 * kA)});
    ValueRef b = k.op(OpKind::Add, {k.op(OpKind::Mul, {a, x}), k.c(8 * kA)});
    return k.op(OpKind::Sub, {k.op(OpKind::Mul, {b, x}), k.c(4 * kA)});
  }

  static constexpr double kA = -0.75;
  Composer &k;
  Mode mode;
  Padding padding;
  bool alignCorners;
};

bool gridSample(Importer &im) {
  ShapeRef x = im.graph.shape(im.input(0)), grid = im.graph.shape(im.input(1));
  if (x.size() != 4 || grid.size() != 4 || grid[3] != Dim::fixed(2) || x[0] != grid[0])
    return im.unsupported("only 2-D sampling is supported: the input [N, C, H, W] and the grid "
                          "[N, Ho, Wo, 2]");
  for (Dim d : {x[2], x[3], grid[1], grid[2]})
    if (!d.isStatic())
      return im.unsupported("the input's and the grid's spatial extents must be static");
  int64_t h = x[2].size(), w = x[3].size(), oh = grid[1].size(), ow = grid[2].size();
  Dim n = x[0], channels = x[1]; // Copied: adding nodes moves the shapes.
  // Each output element reads every input position of its channel.
  if (h * w > (int64_t(1) << 24) / std::max<int64_t>(oh * ow, 1))
    return im.unsupported("H * W * Ho * Wo must be at most 2^24");
  std::string modeName = im.attrString("mode", "bilinear");
  std::string paddingName = im.attrString("padding_mode", "zeros");
  Mode mode;
  if (modeName == "nearest")
    mode = Mode::Nearest;
  else if (modeName == "bilinear" || modeName == "linear") // "linear" from opset 20.
    mode = Mode::Linear;
  else if (modeName == "bicubic" || modeName == "cubic")
    mode = Mode::Cubic;
  else
    return im.unsupported("mode '" + modeName + "' is not one of nearest, linear, cubic");
  Padding padding;
  if (paddingName == "zeros")
    padding = Padding::Zeros;
  else if (paddingName == "border")
    padding = Padding::Border;
  else if (paddingName == "reflection")
    padding = Padding::Reflection;
  else
    return im.unsupported("padding_mode '" + paddingName +
                          "' is not one of zeros, border, "
                          "reflection");
  DType inputType = im.graph.dtype(im.input(0));
  if (!isFloat(inputType) || !isFloat(im.graph.dtype(im.input(1))))
    return im.unsupported("the input and the grid must be float tensors");

  Composer k(im);
  k.type = im.graph.dtype(im.input(1)); // The weights' constants.
  AxisSampler sampler(k, mode, padding, im.attrInt("align_corners", 0) != 0);
  ValueRef g = im.input(1);
  ValueRef across = sampler.weights(k.slice(g, 3, 0, 1), w); // [N, Ho, Wo, W]
  ValueRef down = sampler.weights(k.slice(g, 3, 1, 2), h);   // [N, Ho, Wo, H]
  ValueRef weights = k.op(OpKind::Mul, {k.unsqueeze(down, {4}), k.unsqueeze(across, {3})});
  weights = k.reshape(weights, {n, Dim::fixed(oh * ow), Dim::fixed(h * w)});
  if (k.type != inputType)
    weights = k.cast(weights, inputType);
  ValueRef flat = k.reshape(k.x, {n, channels, Dim::fixed(h * w)});
  ValueRef y = k.mainOp(OpKind::MatMul, {flat, weights},
                        [](Graph &gr) { gr.addBoolAttr(AttrName::TransposeB, true); });
  return k.finish(k.reshape(y, {n, channels, Dim::fixed(oh), Dim::fixed(ow)}));
}
} // namespace

void onnximport::addGridSampleHandlers(HandlerTable &table) {
  table.insert({{"GridSample", gridSample}});
}
