//===- EmitReductions.cpp - Reductions, arg reductions, normalizations ----===//
//
// Reductions are linalg.generic ops with reduction iterators accumulating in
// the compute type (f32 for half precision, in a scratch buffer) and
// initialised with the reduction's identity. Softmax and the normalizations
// are three generics sharing per-row statistics in scratch memory: the
// statistics reduce over the normalized axes, the last generic is parallel.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>

using namespace fuel;
using namespace fuel::codegen;

static std::string dimName(size_t d) { return "d" + std::to_string(d); }

/// Reductions may be reassociated, so LLVM vectorizes them (the order is
/// still fixed at compile time: results are the same on every run).
static const char *const kReassoc = " fastmath<reassoc,contract>";

/// The identity map of a rank-`rank` domain restricted to `keep`.
static std::string projectedMap(unsigned rank, const std::vector<bool> &keep) {
  std::vector<std::string> results;
  for (unsigned d = 0; d < rank; ++d)
    if (keep[d])
      results.push_back(dimName(d));
  return affineMap(rank, results);
}

static std::string identityMap(unsigned rank) {
  return projectedMap(rank, std::vector<bool>(rank, true));
}

/// Extents of `shape` where `keep` is set.
static std::vector<Extent> keptExtents(const std::vector<Extent> &shape,
                                       const std::vector<bool> &keep) {
  std::vector<Extent> out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (keep[d])
      out.push_back(shape[d]);
  return out;
}

double codegen::lowestValue(DType t) {
  switch (t) {
  case DType::I8:
    return -128;
  case DType::I16:
    return -32768;
  case DType::I32:
    return std::numeric_limits<int32_t>::min();
  case DType::I64:
    return -9.3e18; // Saturates to INT64_MIN.
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return 0;
  default:
    return -INFINITY;
  }
}

double codegen::highestValue(DType t) {
  switch (t) {
  case DType::I8:
    return 127;
  case DType::I16:
    return 32767;
  case DType::I32:
    return std::numeric_limits<int32_t>::max();
  case DType::I64:
    return 9.3e18;
  case DType::U8:
    return 255;
  case DType::U16:
    return 65535;
  case DType::U32:
    return 4294967295.0;
  case DType::U64:
    return -1; // All ones.
  default:
    return INFINITY;
  }
}

double codegen::reductionIdentity(OpKind kind, DType t) {
  switch (kind) {
  case OpKind::ReduceProd:
    return 1;
  case OpKind::ReduceMax:
    return lowestValue(t);
  case OpKind::ReduceMin:
    return highestValue(t);
  default:
    return 0;
  }
}

std::string codegen::combineReduction(KernelEmitter &e, OpKind kind, DType in,
                                      const std::string &acc,
                                      const std::string &v,
                                      const std::string &fastmath) {
  bool fp = isFloat(in), u = isUnsignedInteger(in);
  std::string ctype = computeType(in);
  auto bin = [&](const char *f, const char *i) {
    return e.op(std::string(fp ? f : i) + " " + acc + ", " + v +
                    (fp ? fastmath : ""),
                ctype);
  };
  switch (kind) {
  case OpKind::ReduceProd:
    return bin("arith.mulf", "arith.muli");
  case OpKind::ReduceMax: // A NaN is the result (numpy, ONNX).
    return bin("arith.maximumf", u ? "arith.maxui" : "arith.maxsi");
  case OpKind::ReduceMin:
    return bin("arith.minimumf", u ? "arith.minui" : "arith.minsi");
  default:
    return bin("arith.addf", "arith.addi");
  }
}

std::string codegen::argBeats(KernelEmitter &e, DType in, bool isMax,
                             const std::string &v, const std::string &best) {
  std::string t = computeType(in);
  if (!isFloat(in)) {
    const char *pred =
        isUnsignedInteger(in) ? (isMax ? "ugt" : "ult") : (isMax ? "sgt" : "slt");
    return e.op(std::string("arith.cmpi ") + pred + ", " + v + ", " + best, t);
  }
  // Unordered-or-greater takes a NaN `v`; an ordered `best` keeps a NaN.
  std::string beats = e.op(std::string("arith.cmpf ") + (isMax ? "ugt" : "ult") + ", " +
                               v + ", " + best,
                           t);
  std::string ordered = e.op("arith.cmpf ord, " + best + ", " + best, t);
  return e.op("arith.andi " + beats + ", " + ordered, "i1");
}

/// The first axis of the run of reduced axes that ends the shape, or the
/// rank when the last axis is kept.
static unsigned reducedSuffixStart(const std::vector<bool> &reduced) {
  unsigned from = static_cast<unsigned>(reduced.size());
  while (from > 0 && reduced[from - 1])
    --from;
  return from;
}

/// The reduction's input `x` read with its reduced axes as one, where they
/// are the last two or more, nothing before them is reduced, and they are
/// one run of memory: `x` is a contiguous argument, or the prologue's
/// computation on contiguous arguments of x's shape. (A 56x56 window is
/// otherwise a 56-trip inner loop, which LLVM unrolls whole and then
/// vectorizes across rows with gathers: a 144x56x56 mean took 0.14 ms,
/// 0.019 ms collapsed.)
static std::optional<GenericOperand> collapsedSuffix(KernelEmitter &e, ValueRef x,
                                                     const std::vector<bool> &reduced) {
  unsigned rank = static_cast<unsigned>(reduced.size()), from = reducedSuffixStart(reduced);
  if (rank - from < 2 || std::count(reduced.begin(), reduced.begin() + from, true))
    return std::nullopt;
  const Graph &graph = e.graph;
  std::vector<ValueRef> args = e.hasArg(x) ? std::vector<ValueRef>{x} : e.prologueInputs();
  for (ValueRef arg : args) {
    ShapeRef shape = graph.shape(arg), whole = graph.shape(x);
    if (!e.isContiguousArg(arg) ||
        !std::equal(shape.begin(), shape.end(), whole.begin(), whole.end()))
      return std::nullopt;
  }
  std::string map = identityMap(from + 1);
  GenericOperand read = e.operand(x, map);
  std::vector<GenericOperand *> reads{&read};
  if (!e.hasArg(x)) {
    reads.clear();
    for (GenericOperand &part : read.parts)
      reads.push_back(&part);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::tie(reads[i]->value, reads[i]->type) = e.collapseArg(args[i], from);
    reads[i]->map = map;
  }
  return read;
}

LogicalResult codegen::emitReduction(KernelEmitter &e, NodeId node, DiagnosticEngine &) {
  const Graph &graph = e.graph;
  OpKind kind = graph.kind(node);
  ValueRef x = graph.operands(node)[0], y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(x).size());
  std::vector<bool> reduced(rank, true);
  bool isArg = kind == OpKind::ArgMax || kind == OpKind::ArgMin;
  if (isArg) {
    reduced.assign(rank, false);
    reduced[*normalizeAxis(graph.getInt(node, AttrName::Axis, 0), rank)] = true;
  } else if (const Attribute *a = graph.findAttr(node, AttrName::Axes)) {
    reduced.assign(rank, false);
    for (int64_t axis : graph.intsAttr(*a))
      reduced[*normalizeAxis(axis, rank)] = true;
  }
  bool keepDims = graph.getBool(node, AttrName::KeepDims, false);
  std::vector<std::string> outResults;
  for (unsigned d = 0; d < rank; ++d)
    if (!reduced[d])
      outResults.push_back(dimName(d));
    else if (keepDims)
      outResults.push_back("0");
  std::string outMap = affineMap(rank, outResults);
  DType in = graph.dtype(x);
  std::string ctype = computeType(in);
  std::vector<Extent> outShape = e.extents(y);

  if (isArg) {
    std::string bestType;
    std::string best = e.scratch(outShape, ctype, bestType);
    bool isMax = kind == OpKind::ArgMax;
    e.fill(best, bestType, ctype,
           scalarLiteral(isMax ? lowestValue(in) : highestValue(in), ctype));
    e.fill(e.argName(y), e.argType(y), "i64", "0");
    unsigned axis = 0;
    while (!reduced[axis])
      ++axis;
    e.generic(rank, reduced, {e.operand(x, identityMap(rank))},
              {{best, bestType, outMap, ctype}, e.operand(y, outMap)},
              [&](const std::vector<std::string> &a) {
                std::string v = e.toCompute(a[0], in);
                std::string better = argBeats(e, in, isMax, v, a[1]);
                std::string i = e.op("linalg.index " + std::to_string(axis), "index");
                std::string i64 = e.op("arith.index_cast " + i + " : index to i64", "");
                return std::vector<std::string>{
                    e.op("arith.select " + better + ", " + v + ", " + a[1], ctype),
                    e.op("arith.select " + better + ", " + i64 + ", " + a[2], "i64")};
              });
    return success();
  }

  // Accumulate in the compute type; half precision needs a wide scratch.
  bool wide = ctype != storageType(in);
  std::string acc = e.argName(y), accType = e.argType(y);
  if (wide)
    acc = e.scratch(outShape, ctype, accType);
  e.fill(acc, accType, ctype, scalarLiteral(reductionIdentity(kind, in), ctype));
  unsigned domain = rank;
  std::vector<bool> domainReduced = reduced;
  GenericOperand input = e.operand(x, identityMap(rank));
  if (std::optional<GenericOperand> collapsed = collapsedSuffix(e, x, reduced)) {
    input = *collapsed;
    domain = reducedSuffixStart(reduced) + 1;
    domainReduced.assign(domain, false);
    domainReduced.back() = true;
    // The kept axes are the domain's first; a kept unit axis for each
    // reduced one.
    std::vector<std::string> results;
    for (unsigned d = 0; d + 1 < domain; ++d)
      results.push_back(dimName(d));
    if (keepDims)
      results.resize(rank, "0");
    outMap = affineMap(domain, results);
  }
  e.generic(domain, domainReduced, {input}, {{acc, accType, outMap, ctype}},
            [&](const std::vector<std::string> &a) {
              return std::vector<std::string>{combineReduction(
                  e, kind, in, a[1], e.toCompute(a[0], in), kReassoc)};
            });
  if (!wide && kind != OpKind::ReduceMean)
    return success();
  // Finalize: the mean's division and the narrowing store.
  std::string scale;
  if (kind == OpKind::ReduceMean) {
    std::vector<Extent> inShape = e.extents(x);
    std::string count = e.indexToFloat(
        e.extentProduct(keptExtents(inShape, reduced), 0,
                        std::count(reduced.begin(), reduced.end(), true)),
        ctype);
    scale = e.op("arith.divf " + e.constant(1, ctype) + ", " + count, ctype);
  }
  unsigned outRank = static_cast<unsigned>(outShape.size());
  std::vector<GenericOperand> ins;
  if (wide)
    ins.push_back({acc, accType, identityMap(outRank), ctype});
  e.generic(outRank, std::vector<bool>(outRank, false), ins,
            {e.operand(y, identityMap(outRank))},
            [&](const std::vector<std::string> &a) {
              std::string v = a[0]; // The accumulator (wide) or the result.
              if (!scale.empty())
                v = e.op("arith.mulf " + v + ", " + scale, ctype);
              return std::vector<std::string>{e.toStorage(v, in)};
            });
  return success();
}

/// Replaces each statistic of `stat` (a buffer of `rank` axes, one per row)
/// with `g` of it, once per row: what is per row is not left in the
/// per-element generics, where LLVM's reassociation turns a multiplication
/// by a reciprocal back into a division per element.
static void updateStat(KernelEmitter &e, unsigned rank, const std::string &stat,
                       const std::string &type, const std::string &elemType,
                       const std::function<std::string(const std::string &)> &g) {
  e.generic(rank, std::vector<bool>(rank, false), {}, {{stat, type, identityMap(rank), elemType}},
            [&](const std::vector<std::string> &a) { return std::vector<std::string>{g(a[0])}; });
}

namespace {
/// What a softmax's generics read and write: its input and result over a
/// domain of `rank` axes whose one `reduced` axis is the softmax axis, and
/// two statistics over the other axes (`statMap`), the row maxima and sums.
struct SoftmaxOperands {
  unsigned rank;
  std::vector<bool> reduced;
  GenericOperand in, out;
  std::string statMap;
  std::string max = {}, maxType = {}, sum = {}, sumType = {}; // Set after.
};
} // namespace

/// The softmax (or log-softmax) of `o.in` into `o.out`: the row maxima,
/// then the sums of exponentials, then the result.
static void emitSoftmaxGenerics(KernelEmitter &e, bool log, DType dt, const SoftmaxOperands &o) {
  std::string t = computeType(dt);
  auto f = [&](const std::string &op, const std::string &a, const std::string &b) {
    return e.op("arith." + op + " " + a + ", " + b + kReassoc, t);
  };
  unsigned rank = o.rank, statRank = rank - 1;
  std::vector<bool> parallel(rank, false);
  GenericOperand maxIn{o.max, o.maxType, o.statMap, t}, sumIn{o.sum, o.sumType, o.statMap, t};
  e.fill(o.max, o.maxType, t, scalarLiteral(-INFINITY, t));
  e.generic(rank, o.reduced, {o.in}, {maxIn}, [&](const std::vector<std::string> &a) {
    return std::vector<std::string>{f("maximumf", a[1], e.toCompute(a[0], dt))};
  });
  e.fill(o.sum, o.sumType, t, scalarLiteral(0, t));
  auto updateSums = [&](const std::function<std::string(const std::string &)> &g) {
    updateStat(e, statRank, o.sum, o.sumType, t, g);
  };
  auto exponential = [&](const std::vector<std::string> &a) {
    return e.op("math.exp " + f("subf", e.toCompute(a[0], dt), a[1]), t);
  };
  if (log) {
    e.generic(rank, o.reduced, {o.in, maxIn}, {sumIn}, [&](const std::vector<std::string> &a) {
      return std::vector<std::string>{f("addf", a[2], exponential(a))};
    });
    updateSums([&](const std::string &s) { return e.op("math.log " + s, t); });
    e.generic(rank, parallel, {o.in, maxIn, sumIn}, {o.out},
              [&](const std::vector<std::string> &a) {
                std::string d = f("subf", e.toCompute(a[0], dt), a[1]);
                return std::vector<std::string>{e.toStorage(f("subf", d, a[2]), dt)};
              });
    return;
  }
  // Each exponential is computed once and stored in the result as the sum
  // adds it; the result is then scaled by the sum's reciprocal (computing
  // the exponentials again and dividing each by the sum, a [64,128,128]
  // softmax took 0.75 ms; this way 0.63).
  e.generic(rank, o.reduced, {o.in, maxIn}, {sumIn, o.out}, [&](const std::vector<std::string> &a) {
    std::string x = exponential(a);
    return std::vector<std::string>{f("addf", a[2], x), e.toStorage(x, dt)};
  });
  updateSums([&](const std::string &s) { return f("divf", e.constant(1, t), s); });
  e.generic(rank, parallel, {sumIn}, {o.out}, [&](const std::vector<std::string> &a) {
    return std::vector<std::string>{e.toStorage(f("mulf", e.toCompute(a[1], dt), a[0]), dt)};
  });
}

/// Bytes of a block of rows that a softmax over the last axis of contiguous
/// memory computes at a time: the block's input and result stay in L1
/// through the three passes, where the whole tensor's went to L3 and back
/// three times (12 heads of 512 x 512 scores: 2.5 ms against ONNX
/// Runtime's row at a time 1.15).
constexpr int64_t kSoftmaxBlockBytes = 16 << 10;

static LogicalResult emitSoftmax(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef x = graph.operands(node)[0], y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(x).size());
  unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, -1), rank);
  bool log = graph.kind(node) == OpKind::LogSoftmax;
  DType dt = graph.dtype(x);
  std::string t = computeType(dt), elem = storageType(dt);
  std::vector<Extent> shape = e.extents(x);
  if (rank < 2 || axis + 1 != rank || !e.hasArg(x) || !e.mergesLeadingAxes(x, rank - 1) ||
      !e.hasArg(y) || !e.mergesLeadingAxes(y, rank - 1)) {
    std::vector<bool> keep(rank, true), reduced(rank, false);
    keep[axis] = false, reduced[axis] = true;
    SoftmaxOperands o{rank, reduced, e.operand(x, identityMap(rank)),
                      e.operand(y, identityMap(rank)), projectedMap(rank, keep)};
    o.max = e.scratch(keptExtents(shape, keep), t, o.maxType);
    o.sum = e.scratch(keptExtents(shape, keep), t, o.sumType);
    emitSoftmaxGenerics(e, log, dt, o);
    return success();
  }
  // Rows of the collapsed [rows, length] input, a block at a time.
  auto [rowsOfX, rowsOfXType] = e.collapseArg(x, 0, rank - 1);
  auto [rowsOfY, rowsOfYType] = e.collapseArg(y, 0, rank - 1);
  const Extent &length = shape.back();
  int64_t block =
      length.isStatic() ? std::max<int64_t>(1, kSoftmaxBlockBytes / (4 * length.size)) : 16;
  std::string rows = e.op("memref.dim " + rowsOfX + ", " + e.index(0) + " : " + rowsOfXType, "");
  std::string lengthText = length.isStatic() ? std::to_string(length.size) : length.ssa;
  std::string lengthType = length.isStatic() ? lengthText : "?";
  SoftmaxOperands o{2,
                    {false, true},
                    {"", "", identityMap(2), elem},
                    {"", "", identityMap(2), elem},
                    affineMap(2, {dimName(0)})};
  std::string maxBlockType, sumBlockType;
  std::string maxBlock = e.scratch({Extent{block, ""}}, t, maxBlockType);
  std::string sumBlock = e.scratch({Extent{block, ""}}, t, sumBlockType);
  std::string iv = e.fresh();
  e.body() << "    scf.for " << iv << " = " << e.index(0) << " to " << rows << " step "
           << e.index(block) << " {\n";
  std::string count = e.op("affine.min affine_map<(d0)[s0] -> (" + std::to_string(block) +
                               ", s0 - d0)>(" + iv + ")[" + rows + "]",
                           "");
  std::string blockType =
      "memref<?x" + lengthType + "x" + elem + ", strided<[" + lengthType + ", 1], offset: ?>>";
  auto rowsAt = [&](const std::string &matrix, const std::string &type) {
    return e.op("memref.subview " + matrix + "[" + iv + ", 0] [" + count + ", " + lengthText +
                    "] [1, 1] : " + type + " to " + blockType,
                "");
  };
  o.in.value = rowsAt(rowsOfX, rowsOfXType), o.in.type = blockType;
  o.out.value = rowsAt(rowsOfY, rowsOfYType), o.out.type = blockType;
  o.maxType = o.sumType = "memref<?x" + t + ", strided<[1]>>";
  o.max = e.op("memref.subview " + maxBlock + "[0] [" + count + "] [1] : " + maxBlockType + " to " +
                   o.maxType,
               "");
  o.sum = e.op("memref.subview " + sumBlock + "[0] [" + count + "] [1] : " + sumBlockType + " to " +
                   o.sumType,
               "");
  emitSoftmaxGenerics(e, log, dt, o);
  e.body() << "    }\n";
  return success();
}

LogicalResult codegen::emitNormalization(KernelEmitter &e, NodeId node, DiagnosticEngine &) {
  const Graph &graph = e.graph;
  OpKind kind = graph.kind(node);
  ValueRef x = graph.operands(node)[0], y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(x).size());
  unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, -1), rank);
  DType dt = graph.dtype(x);
  std::string t = computeType(dt);
  std::vector<Extent> shape = e.extents(x);
  if (kind == OpKind::Softmax || kind == OpKind::LogSoftmax)
    return emitSoftmax(e, node);
  // Statistics keep the axes before the normalized ones.
  std::vector<bool> keep(rank, true), reduced(rank, false);
  for (unsigned d = axis; d < rank; ++d)
    keep[d] = false, reduced[d] = true;
  std::string statMap = projectedMap(rank, keep), id = identityMap(rank);
  auto stat = [&](double init, std::string &type) {
    std::string s = e.scratch(keptExtents(shape, keep), t, type);
    e.fill(s, type, t, scalarLiteral(init, t));
    return s;
  };
  auto f = [&](const std::string &op, const std::string &a, const std::string &b) {
    return e.op("arith." + op + " " + a + ", " + b + kReassoc, t);
  };
  unsigned statRank = static_cast<unsigned>(std::count(keep.begin(), keep.end(), true));
  GenericOperand in = e.operand(x, id);
  bool rms = kind == OpKind::RmsNorm;
  std::string invCount = f(
      "divf", e.constant(1, t),
      e.indexToFloat(e.extentProduct(shape, axis, rank), t));
  // Per row: the mean (unless RMS), then 1 / sqrt(variance + eps).
  std::string meanType, invType;
  std::string mean;
  if (!rms) {
    mean = stat(0, meanType);
    e.generic(rank, reduced, {in}, {{mean, meanType, statMap, t}},
              [&](const std::vector<std::string> &a) {
                return std::vector<std::string>{
                    f("addf", a[1], e.toCompute(a[0], dt))};
              });
    updateStat(e, statRank, mean, meanType, t,
               [&](const std::string &s) { return f("mulf", s, invCount); });
  }
  auto centered = [&](const std::vector<std::string> &a) {
    std::string v = e.toCompute(a[0], dt);
    return rms ? v : f("subf", v, a[1]);
  };
  std::vector<GenericOperand> ins{in};
  if (!rms)
    ins.push_back({mean, meanType, statMap, t});
  std::string inv = stat(0, invType);
  e.generic(rank, reduced, ins, {{inv, invType, statMap, t}},
            [&](const std::vector<std::string> &a) {
              std::string c = centered(a);
              return std::vector<std::string>{
                  f("addf", a.back(), f("mulf", c, c))};
            });
  double eps = graph.getFloat(node, AttrName::Eps, 1e-5);
  updateStat(e, statRank, inv, invType, t, [&](const std::string &s) {
    std::string var = f("mulf", s, invCount);
    return f("divf", e.constant(1, t),
             e.op("math.sqrt " + f("addf", var, e.constant(eps, t)), t));
  });
  ins.push_back({inv, invType, statMap, t});
  std::vector<bool> normalized(rank);
  for (unsigned d = 0; d < rank; ++d)
    normalized[d] = d >= axis;
  std::vector<ValueRef> affine(graph.operands(node).begin() + 1,
                               graph.operands(node).end());
  for (ValueRef v : affine)
    ins.push_back(e.operand(v, projectedMap(rank, normalized)));
  e.generic(rank, std::vector<bool>(rank, false), ins, {e.operand(y, id)},
            [&](const std::vector<std::string> &a) {
              size_t next = rms ? 2 : 3;
              std::string r = f("mulf", centered(a), a[next - 1]);
              for (size_t i = 0; i < affine.size(); ++i)
                r = f(i == 0 ? "mulf" : "addf", r,
                      e.toCompute(a[next + i], graph.dtype(affine[i])));
              return std::vector<std::string>{e.toStorage(r, dt)};
            });
  return success();
}
