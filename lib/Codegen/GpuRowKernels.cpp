//===- GpuRowKernels.cpp - Reductions and normalizations on GPUs -----------===//
//
// - reductions and arg reductions: one workgroup per result element; its
//   threads accumulate strided slices of the reduced elements, then a
//   workgroup tree combines them (a fixed order: the same bits every run);
// - softmax and normalizations: one workgroup per row, a workgroup
//   reduction per statistic, then every thread writes its slice of the row.
// Prologue nodes are evaluated where the input is read, epilogue nodes where
// the head's value is produced.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelEmitter.h"

#include <cmath>

using namespace fuel;
using namespace fuel::codegen;

using Point = GpuKernelEmitter::Point;
using Coords = GpuKernelEmitter::Coords;
using Memo = GpuKernelEmitter::Memo;

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

namespace {
/// The walk over a reduction's results, one per workgroup: `kept` are the
/// input coordinates of the current result `outAt`.
struct ResultRows {
  RowSplit rows;
  GpuKernelEmitter::Loop loop;
  Coords outAt, kept;
};
} // namespace

/// Starts the dispatch of reduction `head` over its input `x`.
static ResultRows beginResultRows(GpuKernelEmitter &e, NodeId head, ValueRef x,
                                  const std::vector<bool> &reduced) {
  bool keepDims = e.graph.getBool(head, AttrName::KeepDims, false);
  e.beginDispatch({*e.argOf(e.root()), {}, 1});
  ResultRows r{RowSplit(e, x, reduced), {}, {}, {}};
  Coords outExtents = e.extents({head, 0});
  r.loop = e.beginGroupLoop(e.product(outExtents));
  r.outAt = e.delinearize(r.loop.iv, outExtents);
  for (size_t d = 0, pos = 0; d < reduced.size(); ++d) {
    if (!reduced[d])
      r.kept.push_back(r.outAt[pos]);
    pos += !reduced[d] || keepDims;
  }
  return r;
}

/// Combines fn(x) over the reduced elements of one row: each thread walks a
/// strided slice, then the workgroup combines the partial results.
static std::string reduceRow(GpuKernelEmitter &e, ValueRef x,
                             const RowSplit &rows, const Coords &kept,
                             double init, const std::string &type,
                             const std::function<std::string(const std::string &)> &fn,
                             const GpuKernelEmitter::Combine &combine) {
  GpuKernelEmitter::Loop loop =
      e.beginFor(e.threadId, e.product(rows.reducedExtents),
                 e.c(e.workgroupSize),
                 e.s.constant(init, type), type);
  Memo memo;
  Coords at = rows.merge(kept, e.delinearize(loop.iv, rows.reducedExtents));
  std::string next = combine(loop.carried, fn(e.valueAt(x, e.pointOf(x, at), memo)));
  e.endFor(loop, next);
  return e.workgroupReduce(loop.result, type, combine);
}

LogicalResult codegen::emitGpuReduction(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &) {
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
  DType in = graph.dtype(x);
  std::string ctype = computeType(in);
  ResultRows r = beginResultRows(e, head, x, reduced);
  auto combine = [&](const std::string &acc, const std::string &v) {
    return combineReduction(e.s, kind, in, acc, v, "");
  };
  std::string total =
      reduceRow(e, x, r.rows, r.kept, reductionIdentity(kind, in), ctype,
                [](const std::string &v) { return v; }, combine);
  if (kind == OpKind::ReduceMean) {
    std::string count = e.s.indexToFloat(e.product(r.rows.reducedExtents), ctype);
    total = e.s.op("arith.divf " + total + ", " + count, ctype);
  }
  e.beginIf(e.s.op("arith.cmpi eq, " + e.threadId + ", " + e.c(0), "index"));
  e.storeWithHead(head, total, e.pointOf(y, r.outAt, r.loop.iv));
  e.endIf();
  e.endFor(r.loop);
  return success();
}

LogicalResult codegen::emitGpuArgReduction(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &) {
  const Graph &graph = e.graph;
  bool isMax = graph.kind(head) == OpKind::ArgMax;
  ValueRef x = graph.operands(head)[0], y{head, 0};
  size_t rank = graph.shape(x).size();
  unsigned axis = *normalizeAxis(graph.getInt(head, AttrName::Axis, 0), rank);
  std::vector<bool> reduced(rank, false);
  reduced[axis] = true;
  DType in = graph.dtype(x);
  std::string t = computeType(in);
  bool fp = isFloat(in);
  ResultRows r = beginResultRows(e, head, x, reduced);
  auto beats = [&](const std::string &a, const std::string &b) {
    return argBeats(e.s, in, isMax, a, b);
  };
  auto select = [&](const std::string &c, const std::string &a,
                    const std::string &b, const std::string &type) {
    return e.s.op("arith.select " + c + ", " + a + ", " + b, type);
  };
  // Each thread scans its strided slice in order.
  // Positions in i32: index-typed memory has no SPIR-V form.
  std::string best = e.privateVariable(t), at = e.privateVariable("i32");
  e.storeVariable(best, t, e.s.constant(reductionIdentity(isMax ? OpKind::ReduceMax
                                                                 : OpKind::ReduceMin,
                                                           in),
                                         t));
  e.storeVariable(at, "i32", e.s.constant(0, "i32"));
  GpuKernelEmitter::Loop scan =
      e.beginFor(e.threadId, e.product(r.rows.reducedExtents),
                 e.c(e.workgroupSize));
  Memo memo;
  Coords full = r.rows.merge(r.kept, {scan.iv});
  std::string v = e.valueAt(x, e.pointOf(x, full), memo);
  std::string current = e.loadVariable(best, t), index = e.loadVariable(at, "i32");
  std::string better = beats(v, current);
  std::string position = e.s.op("arith.index_cast " + scan.iv + " : index to i32", "");
  e.storeVariable(best, t, select(better, v, current, t));
  e.storeVariable(at, "i32", select(better, position, index, "i32"));
  e.endFor(scan);
  // Across threads: the better value, or on a tie the lower index.
  std::vector<std::string> winner = e.workgroupReduce(
      {e.loadVariable(best, t), e.loadVariable(at, "i32")},
      {t, "i32"},
      [&](const std::vector<std::string> &a, const std::vector<std::string> &b) {
        // Equal values, or two NaN.
        std::string tie = e.s.op(std::string(fp ? "arith.cmpf oeq, " : "arith.cmpi eq, ") +
                                     b[0] + ", " + a[0],
                                 t);
        if (fp)
          tie = e.s.op("arith.ori " + tie + ", " +
                           e.s.op("arith.andi " + e.s.op("arith.cmpf uno, " + a[0] + ", " + a[0], t) +
                                      ", " + e.s.op("arith.cmpf uno, " + b[0] + ", " + b[0], t),
                                  "i1"),
                       "i1");
        std::string lower = e.s.op("arith.cmpi slt, " + b[1] + ", " + a[1], "i32");
        std::string takeB = e.s.op(
            "arith.ori " + beats(b[0], a[0]) + ", " +
                e.s.op("arith.andi " + tie + ", " + lower, "i1"),
            "i1");
        return std::vector<std::string>{select(takeB, b[0], a[0], t),
                                        select(takeB, b[1], a[1], "i32")};
      });
  e.beginIf(e.s.op("arith.cmpi eq, " + e.threadId + ", " + e.c(0), "index"));
  std::string index64 = e.s.op("arith.extsi " + winner[1] + " : i32 to i64", "");
  e.storeWithHead(head, index64, e.pointOf(y, r.outAt, r.loop.iv));
  e.endIf();
  e.endFor(r.loop);
  return success();
}

LogicalResult codegen::emitGpuNormalization(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &) {
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
  e.beginDispatch({*e.argOf(e.root()), reducedAxes, 1});
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
                 e.c(e.workgroupSize));
  Coords red = e.delinearize(elems.iv, rows.reducedExtents);
  Coords at = rows.merge(kept, red);
  Memo memo;
  std::string v = e.valueAt(x, e.pointOf(x, at), memo), r;
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
  memo[y] = e.rounded(r, graph.dtype(y));
  e.storeResults(e.pointOf(y, at), memo);
  e.endFor(elems);
  e.endFor(row);
  return success();
}
