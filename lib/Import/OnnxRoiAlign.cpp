//===- OnnxRoiAlign.cpp - RoiAlign as batched contractions ----------------===//
//
// RoiAlign pools, per output bin, S x S bilinear samples of its region. A
// sample's four taps each weigh a row weight times a column weight (and the
// test that drops a sample more than one position outside the input is a
// row test times a column test), so the taps of all samples are
// contractions of the region's image (gathered by its batch index) with
// per-region tap matrices: Ty[r] [Ho*S, H], one row per sample holding its
// low or its high tap's weight, and Tx[r] [Wo*S, W]. Tap matrices are built
// as in GridSample: comparing each tap's index with the axis's positions.
// - mode=avg: a bin's average is separable; the means of its samples' taps
//   (Wy[r] [Ho, H], Wx[r] [Wo, W]) give Y[r] = Wy[r] X[b_r] Wx[r]^T.
// - mode=max: as the ONNX reference, the maximum over a bin's samples of
//   the largest of their four weighted taps (a sample outside contributes
//   0): the four products Ty_a[r] X[b_r] Tx_b[r]^T (a, b in low, high), their
//   maximum, then the maximum over each bin's S x S samples.
//
// Refused: sampling_ratio=0 (the sample count would depend on the regions'
// sizes). The semantics follow the ONNX reference: sample coordinates below
// 0 are clamped to 0, the last position is repeated past the end, and from
// opset 16 coordinate_transformation_mode=half_pixel (the default) shifts
// the region by half a pixel; output_half_pixel (opset 10's behaviour)
// does not, and makes regions at least one position long.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// The low and the high tap of every sample over an axis of `size`
/// positions, [R, P, S, size] each: a sample's row holds its tap's weight at
/// the tap's position (0 for a sample outside). The region starts at
/// `start` and its bins are `bin` long ([R, 1, 1] each); `samples` samples
/// per bin.
std::pair<ValueRef, ValueRef> axisTaps(Composer &k, ValueRef start, ValueRef bin, int64_t bins,
                                       int64_t samples, int64_t size) {
  KnownTensor offsets{k.type, {1, bins, samples}, {}}; // Sample i of bin p.
  for (int64_t p = 0; p < bins; ++p)
    for (int64_t i = 0; i < samples; ++i)
      appendScalar(offsets, static_cast<double>(p) +
                                (static_cast<double>(i) + 0.5) / static_cast<double>(samples));
  ValueRef at = k.op(OpKind::Add, {start, k.op(OpKind::Mul, {k.constant(offsets), bin})});
  at = k.unsqueeze(at, {3}); // [R, P, S, 1] against the positions [size].
  ValueRef inside = k.op(OpKind::And, {k.op(OpKind::Ge, {at, k.c(-1)}),
                                       k.op(OpKind::Le, {at, k.c(static_cast<double>(size))})});
  ValueRef clamped = k.op(OpKind::Max, {at, k.c(0)});
  ValueRef low = k.op(OpKind::Floor, {clamped});
  ValueRef atEnd = k.op(OpKind::Ge, {low, k.c(static_cast<double>(size - 1))});
  ValueRef last = k.c(static_cast<double>(size - 1));
  low = k.op(OpKind::Where, {atEnd, last, low});
  clamped = k.op(OpKind::Where, {atEnd, last, clamped});
  ValueRef high = k.op(OpKind::Min, {k.op(OpKind::Add, {low, k.c(1)}), last});
  ValueRef upper = k.op(OpKind::Sub, {clamped, low}); // The high tap's weight.
  ValueRef lower = k.op(OpKind::Sub, {k.c(1), upper});
  ValueRef positions = k.constant(onnximport::positions(size, 0, k.type));
  auto tap = [&](ValueRef index, ValueRef weight) {
    ValueRef hit = k.op(OpKind::And, {inside, k.op(OpKind::Eq, {index, positions})});
    return k.op(OpKind::Where, {hit, weight, k.c(0)});
  };
  return {tap(low, lower), tap(high, upper)};
}

bool roiAlign(Importer &im) {
  ShapeRef x = im.graph.shape(im.input(0)), rois = im.graph.shape(im.input(1));
  if (x.size() != 4 || rois.size() != 2 || rois[1] != Dim::fixed(4) ||
      im.graph.shape(im.input(2)).size() != 1)
    return im.unsupported("the input must be [N, C, H, W], the rois [R, 4] and the batch "
                          "indices [R]");
  if (!x[2].isStatic() || !x[3].isStatic())
    return im.unsupported("the input's spatial extents must be static");
  if (!isFloat(im.graph.dtype(im.input(0))) || !isFloat(im.graph.dtype(im.input(1))))
    return im.unsupported("the input and the rois must be float tensors");
  int64_t h = x[2].size(), w = x[3].size();
  Dim regions = rois[0], channels = x[1]; // The shapes' storage moves as ops are added.
  int64_t oh = im.attrInt("output_height", 1), ow = im.attrInt("output_width", 1);
  int64_t samples = im.attrInt("sampling_ratio", 0);
  std::string mode = im.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return im.unsupported("mode '" + mode + "' is not one of avg, max");
  if (samples < 1 || samples > 64)
    return im.unsupported("sampling_ratio must be in [1, 64] (0, an adaptive count, depends "
                          "on the regions' sizes)");
  if (oh < 1 || ow < 1 || oh > 4096 || ow > 4096)
    return im.unsupported("output_height and output_width must be in [1, 4096]");
  std::string transform =
      im.attrString("coordinate_transformation_mode", im.opset >= 16 ? "half_pixel"
                                                                     : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return im.unsupported("coordinate_transformation_mode '" + transform + "' is not one of "
                          "half_pixel, output_half_pixel");
  bool halfPixel = transform == "half_pixel";

  Composer k(im);
  k.type = im.graph.dtype(im.input(1)); // The weights' constants.
  double scale = im.attrFloat("spatial_scale", 1.0f);
  // Coordinate `column` of every region, scaled and shifted: [R, 1, 1].
  auto coordinate = [&](int64_t column) {
    ValueRef c = k.op(OpKind::Mul, {k.slice(im.input(1), 1, column, column + 1), k.c(scale)});
    if (halfPixel)
      c = k.op(OpKind::Sub, {c, k.c(0.5)});
    return k.unsqueeze(c, {2});
  };
  auto binLength = [&](ValueRef start, ValueRef end, int64_t bins) {
    ValueRef length = k.op(OpKind::Sub, {end, start});
    if (!halfPixel)
      length = k.op(OpKind::Max, {length, k.c(1)});
    return k.op(OpKind::Div, {length, k.c(static_cast<double>(bins))});
  };
  ValueRef left = coordinate(0), top = coordinate(1);
  auto [downLow, downHigh] = axisTaps(k, top, binLength(top, coordinate(3), oh), oh, samples, h);
  auto [acrossLow, acrossHigh] =
      axisTaps(k, left, binLength(left, coordinate(2), ow), ow, samples, w);
  DType inputType = im.graph.dtype(im.input(0));
  // Taps as the contractions take them: [R, 1, P, size] (a bin's mean) or
  // [R, 1, P*S, size] (each sample), in the input's type.
  auto operand = [&](ValueRef taps, int64_t bins, int64_t size) {
    if (mode == "avg")
      taps = k.op(OpKind::Div, {k.reduce(OpKind::ReduceSum, taps, {2}, false),
                                k.c(static_cast<double>(samples))});
    else
      taps = k.reshape(taps, {regions, Dim::fixed(bins * samples), Dim::fixed(size)});
    if (k.type != inputType)
      taps = k.cast(taps, inputType);
    return k.unsqueeze(taps, {1});
  };
  ValueRef images = k.op(OpKind::Gather, {im.input(0), im.input(2)},
                         [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); }); // [R, C, H, W]
  auto contract = [&](ValueRef down, ValueRef across, bool main) {
    ValueRef rows = k.op(OpKind::MatMul, {down, images}); // [R, C, rows, W]
    auto transposeB = [](Graph &g) { g.addBoolAttr(AttrName::TransposeB, true); };
    return main ? k.mainOp(OpKind::MatMul, {rows, across}, transposeB)
                : k.op(OpKind::MatMul, {rows, across}, transposeB);
  };
  if (mode == "avg") {
    ValueRef down = k.op(OpKind::Add, {downLow, downHigh});
    ValueRef across = k.op(OpKind::Add, {acrossLow, acrossHigh});
    return k.finish(contract(operand(down, oh, h), operand(across, ow, w), true));
  }
  ValueRef downs[2] = {operand(downLow, oh, h), operand(downHigh, oh, h)};
  ValueRef acrosses[2] = {operand(acrossLow, ow, w), operand(acrossHigh, ow, w)};
  ValueRef taps = contract(downs[0], acrosses[0], false); // [R, C, Ho*S, Wo*S]
  for (int corner = 1; corner < 4; ++corner)
    taps = k.op(OpKind::Max, {taps, contract(downs[corner / 2], acrosses[corner % 2], false)});
  ValueRef bySample = k.reshape(taps, {regions, channels, Dim::fixed(oh), Dim::fixed(samples),
                                       Dim::fixed(ow), Dim::fixed(samples)});
  return k.finish(k.mainOp(OpKind::ReduceMax, {bySample}, [](Graph &g) {
    g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{3, 5});
    g.addBoolAttr(AttrName::KeepDims, false);
  }));
}
} // namespace

void onnximport::addRoiAlignHandlers(HandlerTable &table) {
  table.insert({{"RoiAlign", roiAlign}});
}
