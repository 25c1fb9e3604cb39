//===- GpuFamilies.cpp - GPU kernels per op family -------------------------===//
//
// - pointwise (elementwise groups, `contiguous`): one thread per element of
//   the root, grid-stride;
// - reductions: one workgroup per result element; its threads accumulate
//   strided slices of the reduced elements, then a workgroup tree combines
//   them (fixed order: the same bits on every run);
// - softmax and normalizations: one workgroup per row, a workgroup
//   reduction per statistic, then every thread writes its slice of the row;
// - matmul/linear: one thread per result element over the reduction axis,
//   or the library kernel (kernels/vulkan) with the epilogue as a second
//   dispatch updating the result in place.
// Epilogue nodes are applied where the head's value is produced.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelEmitter.h"

#include <cmath>

using namespace fuel;
using namespace fuel::codegen;

using Point = GpuKernelEmitter::Point;
using Coords = GpuKernelEmitter::Coords;
using Memo = GpuKernelEmitter::Memo;

static ValueRef rootOf(const KernelSpec &spec) { return {spec.nodes.back(), 0}; }

/// The head's value, rounded to its dtype as if stored, for the epilogue.
static std::string rounded(GpuKernelEmitter &e, const std::string &v, DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return e.s.toCompute(e.s.toStorage(v, t), t);
  return v;
}

/// Writes the results at `p` given the head's value there.
static void storeWithHead(GpuKernelEmitter &e, NodeId head,
                          const std::string &value, const Point &p) {
  Memo memo;
  memo[{head, 0}] = rounded(e, value, e.graph.dtype({head, 0}));
  e.storeResults(p, memo);
}

static Point pointOf(const Graph &graph, ValueRef v, Coords at,
                     std::string linear = "") {
  ShapeRef shape = graph.shape(v);
  return {Shape(shape.begin(), shape.end()), std::move(at), std::move(linear)};
}

LogicalResult codegen::emitGpuPointwise(GpuKernelEmitter &e, std::string &) {
  ValueRef root = rootOf(e.spec);
  e.beginDispatch({*e.argOf(root), {}, GpuKernelEmitter::kWorkgroupSize});
  Coords extents = e.extents(root);
  GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
  Memo memo;
  e.storeResults(pointOf(e.graph, root, e.delinearize(loop.iv, extents), loop.iv),
                 memo);
  e.endFor(loop);
  return success();
}

namespace {
/// Rows of a reduction-like head: `reduced` axes of its input `x` are
/// combined, the others index the rows.
struct RowSplit {
  std::vector<bool> reduced;
  Coords keptExtents, reducedExtents;
  Shape reducedShape;

  RowSplit(GpuKernelEmitter &e, ValueRef x, std::vector<bool> reducedAxes)
      : reduced(std::move(reducedAxes)) {
    Coords all = e.extents(x);
    ShapeRef shape = e.graph.shape(x);
    for (size_t d = 0; d < all.size(); ++d) {
      (reduced[d] ? reducedExtents : keptExtents).push_back(all[d]);
      if (reduced[d])
        reducedShape.push_back(shape[d]);
    }
  }
  /// Input coordinates from kept and reduced ones.
  Coords merge(const Coords &kept, const Coords &red) const {
    Coords out;
    size_t k = 0, r = 0;
    for (bool isReduced : reduced)
      out.push_back(isReduced ? red[r++] : kept[k++]);
    return out;
  }
};
} // namespace

/// Combines fn(x) over the reduced elements of one row: each thread walks a
/// strided slice, then the workgroup combines the partial results.
static std::string reduceRow(GpuKernelEmitter &e, ValueRef x,
                             const RowSplit &rows, const Coords &kept,
                             double init, const std::string &type,
                             const std::function<std::string(const std::string &)> &fn,
                             const GpuKernelEmitter::Combine &combine) {
  GpuKernelEmitter::Loop loop =
      e.beginFor(e.threadId, e.product(rows.reducedExtents),
                 e.c(GpuKernelEmitter::kWorkgroupSize),
                 e.s.constant(init, type), type);
  Memo memo;
  Coords at = rows.merge(kept, e.delinearize(loop.iv, rows.reducedExtents));
  std::string next = combine(loop.carried, fn(e.valueAt(x, pointOf(e.graph, x, at), memo)));
  e.endFor(loop, next);
  return e.workgroupReduce(loop.result, type, combine);
}

LogicalResult codegen::emitGpuReduction(GpuKernelEmitter &e, NodeId head,
                                        std::string &) {
  const Graph &graph = e.graph;
  OpKind kind = graph.kind(head);
  ValueRef x = graph.operands(head)[0], y{head, 0};
  size_t rank = graph.shape(x).size();
  std::vector<bool> reduced(rank, true);
  if (const Attribute *a = graph.findAttr(head, AttrName::Axes)) {
    reduced.assign(rank, false);
    for (int64_t axis : graph.intsAttr(*a))
      reduced[*normalizeAxis(axis, rank)] = true;
  }
  bool keepDims = graph.getBool(head, AttrName::KeepDims, false);
  DType in = graph.dtype(x);
  std::string ctype = computeType(in);
  e.beginDispatch({*e.argOf(rootOf(e.spec)), {}, 1});
  RowSplit rows(e, x, reduced);
  Coords outExtents = e.extents(y);
  GpuKernelEmitter::Loop row = e.beginGroupLoop(e.product(outExtents));
  Coords outAt = e.delinearize(row.iv, outExtents), kept;
  for (size_t d = 0, pos = 0; d < rank; ++d) {
    if (!reduced[d])
      kept.push_back(outAt[pos]);
    pos += !reduced[d] || keepDims;
  }
  auto combine = [&](const std::string &acc, const std::string &v) {
    return combineReduction(e.s, kind, in, acc, v, "");
  };
  std::string total =
      reduceRow(e, x, rows, kept, reductionIdentity(kind, in), ctype,
                [](const std::string &v) { return v; }, combine);
  if (kind == OpKind::ReduceMean) {
    std::string count = e.s.indexToFloat(e.product(rows.reducedExtents), ctype);
    total = e.s.op("arith.divf " + total + ", " + count, ctype);
  }
  e.beginIf(e.s.op("arith.cmpi eq, " + e.threadId + ", " + e.c(0), "index"));
  storeWithHead(e, head, total, pointOf(graph, y, outAt, row.iv));
  e.endIf();
  e.endFor(row);
  return success();
}

LogicalResult codegen::emitGpuNormalization(GpuKernelEmitter &e, NodeId head,
                                            std::string &) {
  const Graph &graph = e.graph;
  OpKind kind = graph.kind(head);
  ValueRef x = graph.operands(head)[0], y{head, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(x).size());
  unsigned axis = *normalizeAxis(graph.getInt(head, AttrName::Axis, -1), rank);
  bool isSoftmax = kind == OpKind::Softmax || kind == OpKind::LogSoftmax;
  std::vector<bool> reduced(rank);
  std::vector<unsigned> reducedAxes;
  for (unsigned d = 0; d < rank; ++d) {
    reduced[d] = isSoftmax ? d == axis : d >= axis;
    if (reduced[d])
      reducedAxes.push_back(d);
  }
  DType dt = graph.dtype(x);
  std::string t = computeType(dt);
  e.beginDispatch({*e.argOf(rootOf(e.spec)), reducedAxes, 1});
  RowSplit rows(e, x, reduced);
  GpuKernelEmitter::Loop row = e.beginGroupLoop(e.product(rows.keptExtents));
  Coords kept = e.delinearize(row.iv, rows.keptExtents);
  auto f = [&](const char *op, const std::string &a, const std::string &b) {
    return e.s.op(std::string("arith.") + op + " " + a + ", " + b, t);
  };
  auto add = [&](const std::string &a, const std::string &b) {
    return f("addf", a, b);
  };
  auto identity = [](const std::string &v) { return v; };
  // Row statistics: the max and sum of exponentials, or the mean and the
  // inverse standard deviation (rms_norm: of the uncentered values).
  bool rms = kind == OpKind::RmsNorm;
  std::string mx, sum, logSum, mean, inv;
  auto centered = [&](const std::string &v) {
    return mean.empty() ? v : f("subf", v, mean);
  };
  if (isSoftmax) {
    mx = reduceRow(e, x, rows, kept, -INFINITY, t, identity,
                   [&](const std::string &a, const std::string &b) {
                     return combineReduction(e.s, OpKind::ReduceMax, dt, a, b, "");
                   });
    sum = reduceRow(
        e, x, rows, kept, 0, t,
        [&](const std::string &v) { return e.s.op("math.exp " + f("subf", v, mx), t); },
        add);
    if (kind == OpKind::LogSoftmax)
      logSum = e.s.op("math.log " + sum, t);
  } else {
    std::string count = e.s.indexToFloat(e.product(rows.reducedExtents), t);
    if (!rms)
      mean = f("divf", reduceRow(e, x, rows, kept, 0, t, identity, add), count);
    std::string squares = reduceRow(
        e, x, rows, kept, 0, t,
        [&](const std::string &v) {
          std::string c = centered(v);
          return f("mulf", c, c);
        },
        add);
    double eps = graph.getFloat(head, AttrName::Eps, 1e-5);
    std::string var = f("divf", squares, count);
    inv = f("divf", e.s.constant(1, t),
            e.s.op("math.sqrt " + f("addf", var, e.s.constant(eps, t)), t));
  }
  // Every thread writes its slice of the row.
  GpuKernelEmitter::Loop elems =
      e.beginFor(e.threadId, e.product(rows.reducedExtents),
                 e.c(GpuKernelEmitter::kWorkgroupSize));
  Coords red = e.delinearize(elems.iv, rows.reducedExtents);
  Coords at = rows.merge(kept, red);
  Memo memo;
  std::string v = e.valueAt(x, pointOf(graph, x, at), memo), r;
  if (isSoftmax) {
    std::string d = f("subf", v, mx);
    r = logSum.empty() ? f("divf", e.s.op("math.exp " + d, t), sum)
                       : f("subf", d, logSum);
  } else {
    r = f("mulf", centered(v), inv);
    Point normalized{rows.reducedShape, red, ""};
    auto affine = graph.operands(head).subspan(1);
    for (size_t i = 0; i < affine.size(); ++i)
      r = f(i == 0 ? "mulf" : "addf", r,
            e.valueAt(affine[i], e.broadcast(affine[i], normalized), memo));
  }
  memo[y] = rounded(e, r, graph.dtype(y));
  e.storeResults(pointOf(graph, y, at), memo);
  e.endFor(elems);
  e.endFor(row);
  return success();
}

/// The point of contraction operand `v` (matrix axes `rows`, `cols`) for
/// result coordinates `at` with `batch` leading batch axes: batch axes
/// broadcast, the rest from the result's matrix coordinates.
static Point operandPoint(GpuKernelEmitter &e, ValueRef v, ValueRef y,
                          const Coords &at, size_t batch, Coords matrix) {
  ShapeRef s = e.graph.shape(v), sy = e.graph.shape(y);
  size_t own = s.size() - matrix.size(), lead = batch - own;
  Coords coords;
  for (size_t i = 0; i < own; ++i)
    coords.push_back(s[i] == Dim::fixed(1) && sy[lead + i] != Dim::fixed(1)
                         ? e.c(0)
                         : at[lead + i]);
  coords.insert(coords.end(), matrix.begin(), matrix.end());
  return pointOf(e.graph, v, coords);
}

LogicalResult codegen::emitGpuContraction(GpuKernelEmitter &e, NodeId head,
                                          std::string &error) {
  const Graph &graph = e.graph;
  ValueRef root = rootOf(e.spec), y{head, 0};
  unsigned rootArg = *e.argOf(root);
  auto operands = graph.operands(head);
  bool library = !e.spec.librarySymbol.empty();
  bool isMatMul = graph.kind(head) == OpKind::MatMul;
  if (library) {
    // The library kernel writes the head's value into the root's buffer;
    // an epilogue dispatch then updates it in place.
    // Bindings A, B, bias (the result stands in without one), result.
    std::vector<unsigned> bound{*e.argOf(operands[0]), *e.argOf(operands[1]),
                                operands.size() == 3 ? *e.argOf(operands[2]) : rootArg,
                                rootArg};
    int32_t flags = isMatMul ? (graph.getBool(head, AttrName::TransposeA, false) ? 1 : 0) |
                                   (graph.getBool(head, AttrName::TransposeB, false) ? 2 : 0)
                             : 2 | (operands.size() == 3 ? 4 : 0);
    std::vector<int32_t> constants{flags};
    for (unsigned a : bound)
      constants.push_back(static_cast<int32_t>(graph.shape(e.spec.args[a].value).size()));
    // One workgroup per 64x64 tile of the result.
    e.addLibraryDispatch(bound, {rootArg, {}, 64 * 64}, constants,
                         GpuKernelEmitter::kWorkgroupSize);
    if (e.spec.nodes.size() == 1)
      return success();
    e.beginDispatch({rootArg, {}, GpuKernelEmitter::kWorkgroupSize});
    Coords extents = e.extents(root);
    GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
    Point p = pointOf(graph, root, e.delinearize(loop.iv, extents), loop.iv);
    Memo memo;
    memo[y] = e.load(root, p);
    e.storeResults(p, memo);
    e.endFor(loop);
    return success();
  }
  DType dt = graph.dtype(operands[0]);
  std::string t = computeType(dt);
  bool fp = isFloat(dt);
  if (dt == DType::Bool) {
    error = "bool contractions have no GPU kernel";
    return failure();
  }
  e.beginDispatch({rootArg, {}, GpuKernelEmitter::kWorkgroupSize});
  Coords extents = e.extents(y);
  GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
  Coords at = e.delinearize(loop.iv, extents);
  ValueRef a = operands[0], b = operands[1];
  ShapeRef sa = graph.shape(a), sb = graph.shape(b);
  Coords ea = e.extents(a);
  std::string init = e.s.constant(0, t);
  if (!isMatMul && operands.size() == 3) {
    Memo memo;
    init = e.valueAt(operands[2], pointOf(graph, operands[2], {at.back()}), memo);
  }
  std::string k = isMatMul && sa.size() >= 2 &&
                          graph.getBool(head, AttrName::TransposeA, false)
                      ? ea[ea.size() - 2]
                      : ea.back();
  GpuKernelEmitter::Loop kl = e.beginFor(e.c(0), k, e.c(1), init, t);
  Point pa, pb;
  if (isMatMul) {
    bool hasM = sa.size() >= 2, hasN = sb.size() >= 2;
    size_t batch = graph.shape(y).size() - hasM - hasN;
    std::string m = hasM ? at[batch] : "", n = hasN ? at.back() : "";
    bool ta = graph.getBool(head, AttrName::TransposeA, false);
    bool tb = graph.getBool(head, AttrName::TransposeB, false);
    pa = operandPoint(e, a, y, at, batch,
                      !hasM ? Coords{kl.iv} : ta ? Coords{kl.iv, m} : Coords{m, kl.iv});
    pb = operandPoint(e, b, y, at, batch,
                      !hasN ? Coords{kl.iv} : tb ? Coords{n, kl.iv} : Coords{kl.iv, n});
  } else { // linear: x[rows..., k] * w[n, k]
    Coords xAt(at.begin(), at.end() - 1);
    xAt.push_back(kl.iv);
    pa = pointOf(graph, a, xAt);
    pb = pointOf(graph, b, {at.back(), kl.iv});
  }
  Memo memo;
  std::string va = e.valueAt(a, pa, memo), vb = e.valueAt(b, pb, memo);
  std::string prod = e.s.op(std::string(fp ? "arith.mulf " : "arith.muli ") + va + ", " + vb, t);
  std::string next = e.s.op(std::string(fp ? "arith.addf " : "arith.addi ") + kl.carried + ", " + prod, t);
  e.endFor(kl, next);
  storeWithHead(e, head, kl.result, pointOf(graph, y, at, loop.iv));
  e.endFor(loop);
  return success();
}
