//===- EmitContractions.cpp - matmul and linear ---------------------------===//
//
// Contractions are one linalg.generic with a reduction axis. The domain
// orders axes so that the innermost loop after lowering walks contiguous
// memory: matmul iterates (batch..., m, k, n), so the inner loop is an AXPY
// over a row of b and of the result; linear iterates (rows..., n, k), a dot
// product over rows of x and w that LLVM vectorizes as a reassociable
// reduction. Large f32 contractions are better served by the library sgemm
// capsule (kernels/x86); these are the generic path for every dtype.
//
//===----------------------------------------------------------------------===//

#include "Accumulator.h"

#include "fuel/Transforms/Attention.h"

#include <algorithm>
#include <optional>

using namespace fuel;
using namespace fuel::codegen;

static std::string d(unsigned i) { return "d" + std::to_string(i); }

/// The multiply-accumulate of one contraction step in type `t`.
static std::string multiplyAdd(KernelEmitter &e, const std::string &a,
                               const std::string &b, const std::string &acc,
                               const std::string &t) {
  bool fp = t[0] == 'f';
  std::string fm = fp ? " fastmath<reassoc,contract>" : "";
  std::string p = e.op(std::string(fp ? "arith.mulf " : "arith.muli ") + a +
                           ", " + b + fm,
                       t);
  return e.op(std::string(fp ? "arith.addf " : "arith.addi ") + acc + ", " +
                  p + fm,
              t);
}

/// Element `v` of operand `x` in the accumulator's type.
static std::string widen(KernelEmitter &e, const std::string &v, ValueRef x,
                         const Accumulator &acc) {
  DType t = e.graph.dtype(x);
  return e.toAccumulator(e.toCompute(v, t), t, acc.elemType);
}

/// acc(yMap) += a(aMap) * b(bMap) over a domain of `rank` axes whose axis
/// `k` is the reduction; then the accumulator is written back to `y`.
static LogicalResult contract(KernelEmitter &e, unsigned rank, unsigned k,
                              ValueRef a, const std::vector<std::string> &aMap,
                              ValueRef b, const std::vector<std::string> &bMap,
                              const Accumulator &acc,
                              const std::vector<std::string> &yMap, ValueRef y) {
  std::vector<bool> reduction(rank, false);
  reduction[k] = true;
  e.generic(rank, reduction,
            {e.operand(a, affineMap(rank, aMap)), e.operand(b, affineMap(rank, bMap))},
            {acc.operand(affineMap(rank, yMap))}, [&](const std::vector<std::string> &v) {
              return std::vector<std::string>{multiplyAdd(
                  e, widen(e, v[0], a, acc), widen(e, v[1], b, acc), v[2], acc.elemType)};
            });
  finishAccumulation(e, acc, y);
  return success();
}

static LogicalResult emitMatMul(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef a = graph.operands(node)[0], b = graph.operands(node)[1], y{node, 0};
  bool transA = graph.getBool(node, AttrName::TransposeA, false);
  bool transB = graph.getBool(node, AttrName::TransposeB, false);
  ShapeRef sa = graph.shape(a), sb = graph.shape(b), sy = graph.shape(y);
  bool hasM = sa.size() >= 2, hasN = sb.size() >= 2;
  unsigned batch = static_cast<unsigned>(sy.size()) - hasM - hasN;
  // Domain: batch..., [m], k, [n].
  unsigned m = batch, k = batch + hasM, n = k + 1;
  unsigned rank = k + 1 + hasN;
  auto batchDims = [&](ShapeRef s, size_t matrixRank) {
    std::vector<std::string> out;
    size_t own = s.size() - matrixRank, lead = batch - own;
    for (size_t i = 0; i < own; ++i)
      out.push_back(s[i] == Dim::fixed(1) && sy[lead + i] != Dim::fixed(1)
                        ? "0"
                        : d(static_cast<unsigned>(lead + i)));
    return out;
  };
  std::vector<std::string> aMap = batchDims(sa, hasM ? 2 : 1);
  if (!hasM)
    aMap.push_back(d(k));
  else if (transA)
    aMap.insert(aMap.end(), {d(k), d(m)});
  else
    aMap.insert(aMap.end(), {d(m), d(k)});
  std::vector<std::string> bMap = batchDims(sb, hasN ? 2 : 1);
  if (!hasN)
    bMap.push_back(d(k));
  else if (transB)
    bMap.insert(bMap.end(), {d(n), d(k)});
  else
    bMap.insert(bMap.end(), {d(k), d(n)});
  std::vector<std::string> yMap;
  for (unsigned i = 0; i < batch; ++i)
    yMap.push_back(d(i));
  if (hasM)
    yMap.push_back(d(m));
  if (hasN)
    yMap.push_back(d(n));
  return contract(e, rank, k, a, aMap, b, bMap, beginAccumulation(e, y, 0), yMap, y);
}

static LogicalResult emitLinear(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(node);
  ValueRef x = operands[0], w = operands[1], y{node, 0};
  unsigned rows = static_cast<unsigned>(graph.shape(x).size()) - 1;
  // Domain: rows..., n, k.
  unsigned n = rows, k = rows + 1, rank = rows + 2;
  std::vector<std::string> xMap, yMap;
  for (unsigned i = 0; i < rows; ++i)
    xMap.push_back(d(i)), yMap.push_back(d(i));
  xMap.push_back(d(k));
  yMap.push_back(d(n));
  std::optional<ValueRef> bias;
  if (operands.size() == 3)
    bias = operands[2];
  return contract(e, rank, k, x, xMap, w, {d(n), d(k)},
                  beginAccumulation(e, y, 0, bias, rows), yMap, y);
}

namespace {
/// What the library sgemm applies as it writes its result: a bias over the
/// result's last axis, then ReLU.
struct GemmEpilogue {
  std::optional<ValueRef> bias;
  bool relu = false;
};
} // namespace

/// A call to the library sgemm (kernels/x86/gemm.cpp) or, for 8-bit
/// operands, igemm (igemm.cpp), which read the operands' descriptors
/// through unranked memrefs.
static LogicalResult emitLibraryCall(KernelEmitter &e, NodeId node, GemmEpilogue epilogue) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(node);
  ValueRef y{node, 0};
  // Flags: transpose a, transpose b, accumulate into the result, b never
  // changes (a constant, or a view of one: the library keeps it packed).
  // For 8-bit operands (kernels/x86/igemm.cpp), which are unsigned; for
  // f32, the epilogue's bias and ReLU.
  int64_t flags = isConstant(graph, operands[1]) ? 8 : 0;
  bool integer = graph.dtype(y) == DType::I32;
  if (graph.kind(node) == OpKind::MatMul) {
    flags |= graph.getBool(node, AttrName::TransposeA, false) ? 1 : 0;
    flags |= graph.getBool(node, AttrName::TransposeB, false) ? 2 : 0;
    flags |= graph.dtype(operands[0]) == DType::U8 ? 16 : 0;
    flags |= graph.dtype(operands[1]) == DType::U8 ? 32 : 0;
  } else { // linear: x * w^T (+ bias)
    flags |= 2;
    if (operands.size() == 3)
      epilogue.bias = operands[2];
  }
  std::vector<std::string> args{unranked(e, operands[0]), unranked(e, operands[1]), unranked(e, y)};
  if (!integer) {
    flags |= (epilogue.bias ? 16 : 0) | (epilogue.relu ? 64 : 0);
    // Without a bias the result is passed, never read.
    args.push_back(epilogue.bias ? unranked(e, *epilogue.bias) : args[2]);
  }
  callLibrary(e, args, i64Constants(e, {flags}));
  return success();
}

/// The epilogue equal to the kernel's elementwise tail, if there is one:
/// add(product, bias) with a contiguous bias over the product's last axis
/// (its other axes 1), then at most a ReLU.
static std::optional<GemmEpilogue> matchEpilogue(const KernelEmitter &e) {
  const Graph &graph = e.graph;
  const std::vector<NodeId> &nodes = e.spec.nodes;
  NodeId head = nodes.front();
  ValueRef value{head, 0};
  if (nodes.size() < 2 || graph.kind(nodes[1]) != OpKind::Add ||
      (graph.kind(head) == OpKind::Linear && graph.operands(head).size() == 3))
    return std::nullopt;
  auto operands = graph.operands(nodes[1]);
  ValueRef bias = operands[0] == value ? operands[1] : operands[0];
  ShapeRef shape = graph.shape(bias), result = graph.shape(value);
  bool overColumns = !shape.empty() && shape.back() == result.back() &&
                     std::all_of(shape.begin(), shape.end() - 1,
                                 [](const Dim &d) { return d.isStatic() && d.size() == 1; });
  if (operands[0] == operands[1] || (operands[0] != value && operands[1] != value) ||
      !e.hasArg(bias) || !e.isContiguousArg(bias) || graph.dtype(bias) != DType::F32 ||
      !overColumns || !std::ranges::equal(graph.shape({nodes[1], 0}), result))
    return std::nullopt;
  GemmEpilogue epilogue{bias, false};
  size_t i = 2;
  if (i < nodes.size() && graph.kind(nodes[i]) == OpKind::Relu &&
      graph.operands(nodes[i])[0] == ValueRef{nodes[1], 0}) {
    epilogue.relu = true;
    ++i;
  }
  if (i != nodes.size())
    return std::nullopt;
  return epilogue;
}

bool codegen::emitMatMulWithEpilogue(KernelEmitter &e) {
  NodeId head = e.spec.nodes.front();
  OpKind kind = e.graph.kind(head);
  if (e.spec.librarySymbol.empty() || (kind != OpKind::MatMul && kind != OpKind::Linear) ||
      e.graph.dtype({head, 0}) != DType::F32)
    return false;
  std::optional<GemmEpilogue> epilogue = matchEpilogue(e);
  if (!epilogue)
    return false;
  e.alias({head, 0}, {e.spec.nodes.back(), 0});
  return succeeded(emitLibraryCall(e, head, *epilogue));
}

LogicalResult codegen::emitAttention(KernelEmitter &e) {
  const Graph &graph = e.graph;
  AttentionChain chain = *attentionOfKernel(graph, e.spec.nodes);
  auto transposed = [&](NodeId product, AttrName attr) {
    return graph.getBool(product, attr, false);
  };
  // Flags (kernels/x86/attention.cpp): Q, K, V transposed; the scale
  // divides or multiplies; a mask is added.
  int64_t flags = (transposed(chain.scores, AttrName::TransposeA) ? 1 : 0) |
                  (transposed(chain.scores, AttrName::TransposeB) ? 2 : 0) |
                  (transposed(chain.weighted, AttrName::TransposeB) ? 4 : 0) |
                  (chain.scale ? (chain.scaleDivides ? 8 : 16) : 0) | (chain.mask ? 32 : 0);
  std::string q = unranked(e, chain.q);
  // Absent operands are passed as Q, never read.
  callLibrary(e,
              {q, unranked(e, chain.k), unranked(e, chain.v),
               chain.scale ? unranked(e, chain.scaleValue) : q,
               chain.mask ? unranked(e, chain.maskValue) : q, unranked(e, {chain.weighted, 0})},
              i64Constants(e, {flags}));
  return success();
}

LogicalResult codegen::emitContraction(KernelEmitter &e, NodeId node, DiagnosticEngine &) {
  if (!e.spec.librarySymbol.empty() && node == e.spec.nodes.front())
    return emitLibraryCall(e, node, GemmEpilogue{});
  return e.graph.kind(node) == OpKind::MatMul ? emitMatMul(e, node)
                                              : emitLinear(e, node);
}
