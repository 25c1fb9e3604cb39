//===- OnnxScatter.cpp - ONNX scatters and GatherND from one-hot masks ----===//
//
// Indexing ops whose indices are tensors, built from IR ops with one-hot
// masks (as GatherElements in OnnxTensorOps.cpp):
// - ScatterElements (and opset 9's Scatter): along the axis, each output
//   position p takes the updates whose index is p, combined by the
//   reduction (none, add, mul, max, min), or keeps the data where none is;
// - ScatterND: the same over the positions of the first k axes, flattened
//   (k = the indices' last extent);
// - GatherND: each index vector selects a slice of the data's flattened
//   leading axes (after `batch_dims` batch axes).
// A mask costs O(positions) per index, fine for the extents these ops see
// in models (boxes, classes, sequence positions); extents must be static.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include "fuel/IR/Shape.h"

#include <numeric>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
std::vector<int64_t> one(int64_t v) { return {v}; }

/// The extents, when static and holding at most 2^22 elements: the import
/// builds constants of positions as long as an axis (or several, flattened).
std::optional<std::vector<int64_t>> staticExtents(ShapeRef shape) {
  std::vector<int64_t> out;
  int64_t count = 1;
  for (Dim d : shape) {
    if (!d.isStatic() || d.size() > (int64_t(1) << 22))
      return std::nullopt;
    count *= std::max<int64_t>(d.size(), 1);
    if (count > (int64_t(1) << 22))
      return std::nullopt;
    out.push_back(d.size());
  }
  return out;
}

int64_t product(const std::vector<int64_t> &v, size_t from = 0, size_t to = SIZE_MAX) {
  to = std::min(to, v.size());
  return std::accumulate(v.begin() + std::min(from, to), v.begin() + to, int64_t(1),
                         std::multiplies<>());
}

class Indexing {
public:
  explicit Indexing(Importer &im) : im(im), k(im) {}

  Importer &im;
  Composer k;

  ValueRef reshape(ValueRef v, const std::vector<int64_t> &extents) {
    std::vector<Dim> dims;
    for (int64_t e : extents)
      dims.push_back(Dim::fixed(e));
    return k.reshape(v, dims);
  }
  ValueRef unsqueeze(ValueRef v, int64_t axis) { return k.unsqueeze(v, {axis}); }
  ValueRef reduce(OpKind kind, ValueRef v, int64_t axis) { return k.reduce(kind, v, {axis}, false); }

  /// The flat positions [Q] that index vectors [Q, depth] (of `indexType`)
  /// address in leading axes of `extents`, negative entries wrapped.
  ValueRef linearIndex(ValueRef indices, const std::vector<int64_t> &extents, DType indexType) {
    std::optional<ValueRef> sum;
    // Row-major strides, multiplied up from the last axis (an extent may be 0).
    std::vector<int64_t> strides(extents.size(), 1);
    for (size_t j = extents.size(); j-- > 1;)
      strides[j - 1] = strides[j] * extents[j];
    for (size_t j = 0; j < extents.size(); ++j) {
      int64_t stride = strides[j];
      ValueRef column = k.op(OpKind::Slice, {indices}, [&](Graph &g) {
        g.addIntsAttr(AttrName::Starts, one(static_cast<int64_t>(j)));
        g.addIntsAttr(AttrName::Ends, one(static_cast<int64_t>(j + 1)));
        g.addIntsAttr(AttrName::Axes, one(-1));
      });
      column = k.wrapNegative(column, extents[j], indexType);
      ValueRef term = k.op(OpKind::Mul, {column, k.c(static_cast<double>(stride), indexType)});
      sum = sum ? k.op(OpKind::Add, {*sum, term}) : term;
    }
    return reduce(OpKind::ReduceSum, *sum, -1); // [Q, 1] -> [Q]
  }

  /// Scatters `updates` [Q, C] into `data` [P, C] with `reduction`: update
  /// (q, c) goes to row rows[q, c] ([Q, C]) or rows[q, 0] ([Q, 1]).
  std::optional<ValueRef> scatterRows(ValueRef data, ValueRef rows, ValueRef updates, int64_t p,
                                      DType indexType, const std::string &reduction) {
    DType type = im.graph.dtype(data);
    // [Q, 1, C] rows against [P, 1] positions.
    ValueRef mask = k.op(OpKind::Eq, {unsqueeze(rows, 1), k.constant(positions(p, 1, indexType))});
    ValueRef hits = reduce(OpKind::ReduceSum, k.cast(mask, DType::I32), 0); // [P, C]
    ValueRef hit = k.op(OpKind::Gt, {hits, k.c(0, DType::I32)});
    double identity = 0;
    OpKind combine = OpKind::ReduceSum;
    if (reduction == "mul") {
      identity = 1, combine = OpKind::ReduceProd;
    } else if (reduction == "max") {
      identity = -3.4e38, combine = OpKind::ReduceMax;
    } else if (reduction == "min") {
      identity = 3.4e38, combine = OpKind::ReduceMin;
    } else if (reduction != "none" && reduction != "add") {
      im.unsupported("reduction '" + reduction + "' is not supported");
      return std::nullopt;
    }
    // [Q, P, C] mask against [Q, 1, C] updates, combined over Q.
    ValueRef picked = k.op(OpKind::Where, {mask, unsqueeze(updates, 1), k.c(identity, type)});
    ValueRef combined = reduce(combine, picked, 0);
    if (reduction == "add")
      combined = k.op(OpKind::Add, {data, combined});
    else if (reduction == "mul")
      combined = k.op(OpKind::Mul, {data, combined});
    else if (reduction == "max")
      combined = k.op(OpKind::Max, {data, combined});
    else if (reduction == "min")
      combined = k.op(OpKind::Min, {data, combined});
    return k.op(OpKind::Where, {hit, combined, data});
  }
};

bool scatterND(Importer &im) {
  std::optional<std::vector<int64_t>> data = staticExtents(im.graph.shape(im.input(0))),
                                      index = staticExtents(im.graph.shape(im.input(1)));
  if (!data || !index || index->empty() || index->back() < 1 ||
      static_cast<size_t>(index->back()) > data->size())
    return im.unsupported("the data and indices need static extents (at most 2^22 elements) and the "
                          "indices' last "
                          "extent must be within the data's rank");
  size_t depth = static_cast<size_t>(index->back());
  int64_t q = product(*index, 0, index->size() - 1), p = product(*data, 0, depth),
          r = product(*data, depth);
  Indexing x(im);
  DType indexType = im.graph.dtype(im.input(1));
  ValueRef rows =
      x.linearIndex(x.reshape(im.input(1), {q, static_cast<int64_t>(depth)}),
                    std::vector<int64_t>(data->begin(), data->begin() + depth), indexType);
  std::optional<ValueRef> out = x.scatterRows(x.reshape(im.input(0), {p, r}), x.unsqueeze(rows, 1),
                                              x.reshape(im.input(2), {q, r}), p, indexType,
                                              im.attrString("reduction", "none"));
  return out && x.k.finish(x.reshape(*out, *data));
}

/// ScatterElements: positions along `axis` are the rows; the other axes
/// (the indices' extents, at most the data's) are the columns.
bool scatterElements(Importer &im) {
  std::optional<std::vector<int64_t>> data = staticExtents(im.graph.shape(im.input(0))),
                                      index = staticExtents(im.graph.shape(im.input(1)));
  size_t rank = data ? data->size() : 0;
  std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", 0), rank);
  if (!data || !index || index->size() != rank || !axis)
    return im.unsupported("the data and indices need static extents (at most 2^22 elements) and one rank");
  for (size_t d = 0; d < rank; ++d)
    if (d != *axis && (*index)[d] != (*data)[d])
      return im.unsupported("the indices must span the data off the axis");
  // The axis first: [n, rest] rows of data, [m * rest] updates by row.
  std::vector<int64_t> perm{static_cast<int64_t>(*axis)};
  for (size_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(static_cast<int64_t>(d));
  Indexing x(im);
  auto axisFirst = [&](ValueRef v) {
    return x.k.op(OpKind::Transpose, {v}, [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); });
  };
  int64_t n = (*data)[*axis], m = (*index)[*axis];
  if (n == 0)
    return im.unsupported("the data is empty along the axis (fuelc has no empty tensors)");
  int64_t rest = product(*data) / n;
  DType indexType = im.graph.dtype(im.input(1));
  ValueRef rows = x.k.wrapNegative(x.reshape(axisFirst(im.input(1)), {m, rest}), n, indexType);
  std::optional<ValueRef> out = x.scatterRows(x.reshape(axisFirst(im.input(0)), {n, rest}), rows,
                                              x.reshape(axisFirst(im.input(2)), {m, rest}), n,
                                              indexType, im.attrString("reduction", "none"));
  if (!out)
    return false;
  std::vector<int64_t> moved{n};
  for (size_t d = 0; d < rank; ++d)
    if (d != *axis)
      moved.push_back((*data)[d]);
  std::vector<int64_t> back(rank);
  for (size_t i = 0; i < rank; ++i)
    back[perm[i]] = static_cast<int64_t>(i);
  ValueRef y = x.k.op(OpKind::Transpose, {x.reshape(*out, moved)},
                      [&](Graph &g) { g.addIntsAttr(AttrName::Perm, back); });
  return x.k.finish(y);
}

bool gatherND(Importer &im) {
  std::optional<std::vector<int64_t>> data = staticExtents(im.graph.shape(im.input(0))),
                                      index = staticExtents(im.graph.shape(im.input(1)));
  int64_t batchDims = im.attrInt("batch_dims", 0);
  if (!data || !index || index->empty() || batchDims < 0 ||
      static_cast<size_t>(batchDims) >= index->size() ||
      static_cast<size_t>(batchDims + index->back()) > data->size() || index->back() < 1)
    return im.unsupported("the data and indices need static extents (at most 2^22 elements), the "
                          "indices' last "
                          "extent within the data's rank after batch_dims");
  size_t b = static_cast<size_t>(batchDims), depth = static_cast<size_t>(index->back());
  for (size_t d = 0; d < b; ++d)
    if ((*index)[d] != (*data)[d])
      return im.unsupported("the batch axes of data and indices must match");
  int64_t batch = product(*data, 0, b), perBatch = product(*index, b, index->size() - 1);
  int64_t p = product(*data, b, b + depth), r = product(*data, b + depth);
  Indexing x(im);
  DType indexType = im.graph.dtype(im.input(1));
  ValueRef rows =
      x.linearIndex(x.reshape(im.input(1), {batch * perBatch, static_cast<int64_t>(depth)}),
                    std::vector<int64_t>(data->begin() + b, data->begin() + b + depth), indexType);
  if (batch > 1) { // Row of batch i: offset by i * p.
    KnownTensor offsets{indexType, {batch, perBatch}, {}};
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < perBatch; ++j)
        appendScalar(offsets, static_cast<double>(i * p));
    rows = x.k.op(OpKind::Add, {rows, x.reshape(x.k.constant(offsets), {batch * perBatch})});
  }
  ValueRef table = x.reshape(im.input(0), {batch * p, r});
  ValueRef mask =
      x.k.op(OpKind::Eq, {x.unsqueeze(rows, 1), x.k.constant(positions(batch * p, 0, indexType))});
  ValueRef picked = x.k.op(OpKind::Where, {x.unsqueeze(mask, 2), x.unsqueeze(table, 0),
                                           x.k.c(0, im.graph.dtype(im.input(0)))});
  ValueRef rowsOut = x.reduce(OpKind::ReduceSum, picked, 1); // [Q, R]
  std::vector<int64_t> shape(index->begin(), index->end() - 1);
  shape.insert(shape.end(), data->begin() + b + depth, data->end());
  return x.k.finish(x.reshape(rowsOut, shape));
}
} // namespace

void onnximport::addScatterHandlers(HandlerTable &table) {
  table.insert({{"ScatterND", scatterND},
                {"ScatterElements", scatterElements},
                {"Scatter", scatterElements},
                {"GatherND", gatherND}});
}
