//===- OnnxTensorOps.cpp - ONNX indexing and tensor ops from IR ops -------===//
//
// ONNX ops without an IR op of their own that select, accumulate or build
// tensors, each built from IR ops:
// - GatherElements: a one-hot mask of the indices against the axis's
//   positions selects from the data (moved so that axis is last) and a sum
//   over it keeps the one selected element (exact: the rest are zeros);
// - CumSum: a product with a triangular 0/1 matrix along the axis;
// - OneHot: the indices compared with the positions along the new axis;
// - Tile: the input concatenated with itself along each repeated axis;
// - EyeLike and the Hann, Hamming and Blackman windows: constants;
// - DepthToSpace / SpaceToDepth: reshapes around a transpose;
// - TopK: ranks by pairwise comparison, then one-hot selection.
// The first two cost O(extent) per element along the axis, fine for the
// class and sequence extents exporters use them with.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// The permutation moving axis `axis` of a rank-`rank` tensor last.
std::vector<int64_t> axisLast(size_t rank, unsigned axis) {
  std::vector<int64_t> perm;
  for (size_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(static_cast<int64_t>(d));
  perm.push_back(axis);
  return perm;
}

std::vector<int64_t> inverse(const std::vector<int64_t> &perm) {
  std::vector<int64_t> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    out[perm[i]] = static_cast<int64_t>(i);
  return out;
}

bool gatherElements(Importer &im) {
  ShapeRef data = im.graph.shape(im.input(0)), index = im.graph.shape(im.input(1));
  size_t rank = data.size();
  std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", 0), rank);
  if (!axis || index.size() != rank || !data[*axis].isStatic())
    return im.unsupported("the indices must have the data's rank and the axis a static extent");
  int64_t n = data[*axis].size();
  // Data cut to the indices' extents off the axis (they may be smaller).
  std::vector<int64_t> starts, ends, axes;
  for (size_t d = 0; d < rank; ++d)
    if (d != *axis && data[d] != index[d]) {
      if (!index[d].isStatic() || !data[d].isStatic() || index[d].size() > data[d].size())
        return im.unsupported("the indices' extents must be static and within the data's");
      starts.push_back(0);
      ends.push_back(index[d].size());
      axes.push_back(static_cast<int64_t>(d));
    }
  DType indexType = im.graph.dtype(im.input(1));
  Composer k(im);
  ValueRef x = k.x;
  if (!axes.empty())
    x = k.op(OpKind::Slice, {x}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, starts);
      g.addIntsAttr(AttrName::Ends, ends);
      g.addIntsAttr(AttrName::Axes, axes);
    });
  // data[..., k] beside index[..., i, ...]: the axis moved last, a unit
  // axis where it was.
  x = k.op(OpKind::Transpose, {x}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Perm, axisLast(rank, *axis));
  });
  x = k.op(OpKind::Unsqueeze, {x}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{static_cast<int64_t>(*axis)});
  });
  ValueRef i = k.wrapNegative(im.input(1), n, indexType);
  ValueRef mask = k.op(OpKind::Eq, {k.op(OpKind::Unsqueeze, {i}, [&](Graph &g) {
                                      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{-1});
                                    }),
                                    k.constant(positions(n, 0, indexType))});
  ValueRef picked = k.op(OpKind::Where, {mask, x, k.c(0)});
  return k.finish(k.op(OpKind::ReduceSum, {picked}, [](Graph &g) {
    g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{-1});
  }));
}

bool cumSum(Importer &im) {
  std::optional<double> axisInput = constScalar(im, 1, "the axis");
  if (!axisInput)
    return false;
  ShapeRef shape = im.graph.shape(im.input(0));
  size_t rank = shape.size();
  std::optional<unsigned> axis =
      normalizeAxis(static_cast<int64_t>(std::clamp(*axisInput, -1e9, 1e9)), rank);
  if (!axis || !shape[*axis].isStatic())
    return im.unsupported("the axis must exist and have a static extent");
  int64_t n = shape[*axis].size();
  if (n > 1024) // The triangle is n x n.
    return im.unsupported("CumSum over more than 1024 positions is not supported");
  bool exclusive = im.attrInt("exclusive", 0) != 0, reverse = im.attrInt("reverse", 0) != 0;
  Composer k(im);
  if (!isFloat(k.type) && k.type != DType::I32 && k.type != DType::I64)
    return im.unsupported("the input must be a float, int32 or int64 tensor");
  // y[i] = sum over j of x[j] * M[j][i]: j up to i (from i when reversed),
  // i itself excluded when exclusive.
  KnownTensor triangle{k.type, {n, n}, {}};
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      bool in = reverse ? j >= i : j <= i;
      appendScalar(triangle, in && !(exclusive && i == j) ? 1 : 0);
    }
  std::vector<int64_t> perm = axisLast(rank, *axis);
  bool moved = *axis + 1 != rank;
  ValueRef x = k.x;
  if (moved)
    x = k.op(OpKind::Transpose, {x}, [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); });
  ValueRef y = k.op(OpKind::MatMul, {x, k.constant(triangle)});
  if (moved)
    y = k.op(OpKind::Transpose, {y}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Perm, inverse(perm));
    });
  return k.finish(y);
}

bool tile(Importer &im) {
  const KnownTensor *repeats = constInts(im, 1, "the repeats");
  if (!repeats)
    return false;
  std::vector<int64_t> r = repeats->ints();
  if (r.size() != im.graph.shape(im.input(0)).size())
    return im.unsupported("the repeats must have one count per axis");
  Composer k(im);
  ValueRef y = k.x;
  for (size_t d = 0; d < r.size(); ++d) {
    if (r[d] < 0 || r[d] > 64)
      return im.unsupported("a repeat count must be in [0, 64]");
    if (r[d] == 1)
      continue;
    if (r[d] == 0) { // An empty axis: the first zero elements.
      y = k.op(OpKind::Slice, {y}, [&](Graph &g) {
        g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{0});
        g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{0});
        g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{static_cast<int64_t>(d)});
      });
      continue;
    }
    y = k.op(OpKind::Concat, std::vector<ValueRef>(r[d], y),
             [&](Graph &g) { g.addIntAttr(AttrName::Axis, static_cast<int64_t>(d)); });
  }
  return k.finish(y);
}

/// `on` where the index (cast to int64, negative ones from the end) equals
/// the position along the new axis, else `off` (values = [off, on]).
bool oneHot(Importer &im) {
  std::optional<double> depth = constScalar(im, 1, "the depth");
  if (!depth)
    return false;
  double n = *depth;
  if (!(n >= 1 && n <= static_cast<double>(kMaxBuiltElements)))
    return im.unsupported("the depth must be in [1, 2^22]");
  int64_t classes = static_cast<int64_t>(n);
  size_t rank = im.graph.shape(im.input(0)).size() + 1;
  std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", -1), rank);
  if (!axis)
    return im.unsupported("axis " + std::to_string(im.attrInt("axis", -1)) + " is out of range");
  Composer k(im);
  ValueRef index = k.type == DType::I64 ? k.x : k.cast(k.x, DType::I64);
  index = k.wrapNegative(index, classes, DType::I64);
  index = k.op(OpKind::Unsqueeze, {index}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{static_cast<int64_t>(*axis)});
  });
  ValueRef classPositions = k.constant(positions(classes, rank - *axis - 1, DType::I64));
  ValueRef mask = k.op(OpKind::Eq, {index, classPositions});
  auto value = [&](int64_t i) {
    return k.op(OpKind::Gather, {im.input(2), k.c(static_cast<double>(i), DType::I64)},
                [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); });
  };
  return k.finish(k.op(OpKind::Where, {mask, value(1), value(0)}));
}

bool eyeLike(Importer &im) {
  ShapeRef shape = im.graph.shape(im.input(0));
  if (shape.size() != 2 || !shape[0].isStatic() || !shape[1].isStatic())
    return im.unsupported("the input must be 2-D with static extents");
  DType type = im.graph.dtype(im.input(0));
  if (const onnx::AttributeProto *a = im.attr("dtype")) {
    std::optional<DType> t = dtypeOfOnnx(a->i());
    if (!t)
      return im.unsupported("dtype " + std::to_string(a->i()) + " is not supported");
    type = *t;
  }
  int64_t rows = shape[0].size(), cols = shape[1].size(), diagonal = im.attrInt("k", 0);
  if (rows > kMaxBuiltElements / std::max<int64_t>(cols, 1))
    return im.unsupported("the identity matrix would have more than 2^22 elements");
  KnownTensor eye{type, {rows, cols}, {}};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      appendScalar(eye, j - i == diagonal ? 1 : 0);
  im.bind(0, im.addConstant(eye, ""));
  return true;
}

/// Hann, Hamming and Blackman windows of a constant length: the constant
/// sum over j of a_j cos(2 pi j n / N), N the length (periodic) or one less.
bool window(Importer &im, std::vector<double> coefficients) {
  const KnownTensor *size = constInts(im, 0, "the window length");
  if (!size)
    return false;
  std::vector<int64_t> n = size->ints();
  if (n.size() != 1 || n[0] < 0 || n[0] > kMaxBuiltElements)
    return im.unsupported("the window length must be one integer in [0, 2^22]");
  std::optional<DType> type = dtypeOfOnnx(im.attrInt("output_datatype", 1));
  if (!type || !isFloat(*type))
    return im.unsupported("output_datatype must be a float type fuelc has");
  double period = static_cast<double>(im.attrInt("periodic", 1) ? n[0] : n[0] - 1);
  KnownTensor w{*type, {n[0]}, {}};
  w.bytes.reserve(static_cast<size_t>(n[0]) * dtypeByteSize(*type));
  for (int64_t i = 0; i < n[0]; ++i) {
    double v = 0;
    for (size_t j = 0; j < coefficients.size(); ++j)
      v += coefficients[j] * std::cos(2 * M_PI * static_cast<double>(j * i) / period);
    appendScalar(w, v);
  }
  im.bindConstant(std::move(w));
  return true;
}

/// TopK by ranks: along the axis (moved last), element i's rank is the
/// count of elements that come before it (larger, or equal at a smaller
/// index; smaller for largest=0), and output r gathers the element of rank
/// r by a one-hot mask. O(n^2) per row: the extents of classes and boxes.
bool topK(Importer &im) {
  std::optional<double> kInput = constScalar(im, 1, "K");
  if (!kInput)
    return false;
  ShapeRef shape = im.graph.shape(im.input(0));
  size_t rank = shape.size();
  std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", -1), rank);
  if (!axis || !shape[*axis].isStatic())
    return im.unsupported("the axis must be in range with a static extent");
  int64_t n = shape[*axis].size();
  if (n > 4096) // The ranks compare every pair.
    return im.unsupported("TopK over " + std::to_string(n) +
                          " elements (more than 4096) needs a sort kernel, not implemented yet");
  if (!(*kInput >= 0 && *kInput <= static_cast<double>(n))) {
    std::ostringstream text;
    text << "K = " << *kInput << " is outside [0, " << n << "]";
    return im.unsupported(text.str());
  }
  int64_t count = static_cast<int64_t>(*kInput);
  bool largest = im.attrInt("largest", 1) != 0;
  Composer k(im);
  std::vector<int64_t> perm = axisLast(rank, *axis);
  auto unsqueeze = [&](ValueRef v, int64_t at) {
    return k.op(OpKind::Unsqueeze, {v},
                [&](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{at}); });
  };
  auto sum = [&](ValueRef v, int64_t at) {
    return k.op(OpKind::ReduceSum, {v}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{at});
      g.addBoolAttr(AttrName::KeepDims, false);
    });
  };
  ValueRef x = k.op(OpKind::Transpose, {k.x}, [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); });
  ValueRef self = unsqueeze(x, -1), other = unsqueeze(x, -2); // [..., n, 1], [..., 1, n]
  KnownTensor earlier{DType::Bool, {n, n}, {}}; // other's index j < self's index i
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      earlier.bytes += static_cast<char>(j < i);
  ValueRef ahead = k.op(OpKind::Or, {k.op(largest ? OpKind::Gt : OpKind::Lt, {other, self}),
                                     k.op(OpKind::And, {k.op(OpKind::Eq, {other, self}),
                                                        k.constant(earlier)})});
  ValueRef ranks = sum(k.cast(ahead, DType::I64), -1);                   // [..., n]
  ValueRef chosen = k.op(OpKind::Eq, {unsqueeze(ranks, -1),              // [..., n, K]
                                      k.constant(positions(count, 0, DType::I64))});
  ValueRef values = sum(k.op(OpKind::Where, {chosen, self, k.c(0)}), -2);
  ValueRef indices = sum(k.op(OpKind::Where, {chosen, k.constant(positions(n, 1, DType::I64)),
                                              k.c(0, DType::I64)}),
                         -2);
  auto back = [&](ValueRef v) {
    return k.op(OpKind::Transpose, {v},
                [&](Graph &g) { g.addIntsAttr(AttrName::Perm, inverse(perm)); });
  };
  return k.finish(back(values), 0) && (!im.outputUsed(1) || k.finish(back(indices), 1));
}

/// DepthToSpace and SpaceToDepth: a reshape exposing the block axes, a
/// transpose moving them, and a reshape merging them.
bool rearrangeBlocks(Importer &im, bool toSpace) {
  ShapeRef shape = im.graph.shape(im.input(0));
  int64_t b = im.attrInt("blocksize", 0);
  if (shape.size() != 4 || b < 1 ||
      !std::all_of(shape.begin() + 1, shape.end(), [](Dim d) { return d.isStatic(); }))
    return im.unsupported("the input must be N x C x H x W with static C, H, W; blocksize >= 1");
  Dim n = shape[0];
  int64_t c = shape[1].size(), h = shape[2].size(), w = shape[3].size();
  if (toSpace ? c % (b * b) : h % b || w % b)
    return im.unsupported("the blocksize must divide " +
                          std::string(toSpace ? "the channels by its square" : "H and W"));
  auto dims = [](Dim first, std::initializer_list<int64_t> rest) {
    std::vector<Dim> out{first};
    for (int64_t d : rest)
      out.push_back(Dim::fixed(d));
    return out;
  };
  std::vector<Dim> blocks, merged;
  std::vector<int64_t> perm;
  if (!toSpace) {
    blocks = dims(n, {c, h / b, b, w / b, b});
    perm = {0, 3, 5, 1, 2, 4};
    merged = dims(n, {c * b * b, h / b, w / b});
  } else if (im.attrString("mode", "DCR") == "CRD") {
    blocks = dims(n, {c / (b * b), b, b, h, w});
    perm = {0, 1, 4, 2, 5, 3};
    merged = dims(n, {c / (b * b), h * b, w * b});
  } else {
    blocks = dims(n, {b, b, c / (b * b), h, w});
    perm = {0, 3, 4, 1, 5, 2};
    merged = dims(n, {c / (b * b), h * b, w * b});
  }
  Composer k(im);
  auto reshape = [&](ValueRef v, const std::vector<Dim> &to) {
    return k.op(OpKind::Reshape, {v}, [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, to); });
  };
  ValueRef moved = k.op(OpKind::Transpose, {reshape(k.x, blocks)},
                        [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); });
  return k.finish(reshape(moved, merged));
}
} // namespace

void onnximport::addTensorHandlers(HandlerTable &table) {
  table.insert({{"GatherElements", gatherElements},
                {"CumSum", cumSum},
                {"Tile", tile},
                {"OneHot", oneHot},
                {"EyeLike", eyeLike},
                {"TopK", topK},
                {"DepthToSpace", [](Importer &im) { return rearrangeBlocks(im, true); }},
                {"SpaceToDepth", [](Importer &im) { return rearrangeBlocks(im, false); }},
                {"HannWindow", [](Importer &im) { return window(im, {0.5, -0.5}); }},
                {"HammingWindow", [](Importer &im) { return window(im, {25.0 / 46, -21.0 / 46}); }},
                {"BlackmanWindow", [](Importer &im) { return window(im, {0.42, -0.5, 0.08}); }}});
}
