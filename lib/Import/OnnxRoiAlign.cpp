//===- OnnxRoiAlign.cpp - RoiAlign as two batched contractions ------------===//
//
// RoiAlign averages, per output bin, S x S bilinear samples of its region.
// A sample's weight is a row weight times a column weight (the bilinear
// weights, and the test that drops a sample more than one position outside
// the input is a row test times a column test), so a bin's average is
// separable too: per region r a matrix Wy[r] [Ho, H] whose rows are the
// means of S samples' row weights, and Wx[r] [Wo, W]; then
// Y[r] = Wy[r] X[b_r] Wx[r]^T, two batched matmuls over the region's image
// (gathered by its batch index). Row weights are built as in GridSample:
// comparing each tap's index with the axis's positions.
//
// Refused: mode=max (a max over samples does not separate) and
// sampling_ratio=0 (the sample count would depend on the regions' sizes).
// The semantics follow the ONNX reference: sample coordinates below 0 are
// clamped to 0, the last position is repeated past the end, and from
// opset 16 coordinate_transformation_mode=half_pixel (the default) shifts
// the region by half a pixel; output_half_pixel (opset 10's behaviour)
// does not, and makes regions at least one position long.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// The bins' mean row weights over an axis of `size` positions, [R, P, size]:
/// the region starts at `start` and its bins are `bin` long ([R, 1, 1]
/// each); `samples` samples per bin.
ValueRef axisWeights(Composer &k, ValueRef start, ValueRef bin, int64_t bins, int64_t samples,
                     int64_t size) {
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
  ValueRef row = k.op(OpKind::Add, {k.op(OpKind::Where, {k.op(OpKind::Eq, {low, positions}),
                                                         lower, k.c(0)}),
                                    k.op(OpKind::Where, {k.op(OpKind::Eq, {high, positions}),
                                                         upper, k.c(0)})});
  row = k.op(OpKind::Where, {inside, row, k.c(0)});
  ValueRef sum = k.reduce(OpKind::ReduceSum, row, {2}, false);
  return k.op(OpKind::Div, {sum, k.c(static_cast<double>(samples))});
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
  int64_t oh = im.attrInt("output_height", 1), ow = im.attrInt("output_width", 1);
  int64_t samples = im.attrInt("sampling_ratio", 0);
  std::string mode = im.attrString("mode", "avg");
  if (mode != "avg")
    return im.unsupported("mode '" + mode + "' is not supported (only avg separates into "
                          "matrix products)");
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
  ValueRef down = axisWeights(k, top, binLength(top, coordinate(3), oh), oh, samples, h);
  ValueRef across = axisWeights(k, left, binLength(left, coordinate(2), ow), ow, samples, w);
  DType inputType = im.graph.dtype(im.input(0));
  if (k.type != inputType) {
    down = k.cast(down, inputType);
    across = k.cast(across, inputType);
  }
  ValueRef images = k.op(OpKind::Gather, {im.input(0), im.input(2)},
                         [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); }); // [R, C, H, W]
  ValueRef rows = k.op(OpKind::MatMul, {k.unsqueeze(down, {1}), images}); // [R, C, Ho, W]
  ValueRef y = k.mainOp(OpKind::MatMul, {rows, k.unsqueeze(across, {1})},
                        [](Graph &g) { g.addBoolAttr(AttrName::TransposeB, true); });
  return k.finish(y);
}
} // namespace

void onnximport::addRoiAlignHandlers(HandlerTable &table) {
  table.insert({{"RoiAlign", roiAlign}});
}
