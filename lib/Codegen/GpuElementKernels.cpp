//===- GpuElementKernels.cpp - One thread per result element on GPUs -------===//
//
// Elementwise groups, and heads whose every result element is computed on
// its own: each thread takes elements of the root (grid-stride), computes
// the head's value there and applies the epilogue nodes.
// - matmul/linear: the dot product over the reduction axis, or the library
//   tiled sgemm (kernels/vulkan) with the epilogue as a second dispatch
//   updating the result in place;
// - conv2d, pooling: the window, flattened into one loop; positions in the
//   padding are read clamped and masked;
// - movement (contiguous, concat, gather, pad, copies): the source element
//   at a computed, clamped position.
// split (several results of other shapes) walks its input instead.
//
//===----------------------------------------------------------------------===//

#include "GpuKernelEmitter.h"

#include "fuel/IR/Window.h"

#include <cmath>

using namespace fuel;
using namespace fuel::codegen;

using Point = GpuKernelEmitter::Point;
using Coords = GpuKernelEmitter::Coords;
using Memo = GpuKernelEmitter::Memo;

namespace {
/// Computes a head's value at a point of its result.
class HeadWriter {
public:
  HeadWriter(GpuKernelEmitter &e, NodeId head)
      : e(e), graph(e.graph), head(head), y{head, 0} {}

  std::string valueAt(const Point &p);

private:
  std::string contraction(const Point &p);
  std::string conv(const Point &p);
  std::string pool(const Point &p);
  std::string concat(const Point &p);
  std::string gather(const Point &p);
  std::string pad(const Point &p);

  std::string cmp(const char *pred, const std::string &a, const std::string &b) {
    return e.s.op(std::string("arith.cmpi ") + pred + ", " + a + ", " + b, "index");
  }
  std::string both(const std::string &a, const std::string &b) {
    return e.s.op("arith.andi " + a + ", " + b, "i1");
  }
  std::string select(const std::string &c, const std::string &a,
                     const std::string &b, const std::string &t) {
    return e.s.op("arith.select " + c + ", " + a + ", " + b, t);
  }
  /// `i` clamped into [0, extent).
  std::string clamp(const std::string &i, const std::string &extent) {
    std::string lo = e.s.op("arith.maxsi " + i + ", " + e.c(0), "index");
    return e.s.op("arith.minsi " + lo + ", " + e.ix("subi", extent, e.c(1)), "index");
  }
  /// Whether `i` lies in [0, extent).
  std::string inRange(const std::string &i, const std::string &extent) {
    return both(cmp("sge", i, e.c(0)), cmp("slt", i, extent));
  }
  /// Operand `v` at `at`, in its compute type.
  std::string read(ValueRef v, Coords at) {
    Memo memo;
    return e.valueAt(v, e.pointOf(v, std::move(at)), memo);
  }

  GpuKernelEmitter &e;
  const Graph &graph;
  NodeId head;
  ValueRef y;
};
} // namespace

std::string HeadWriter::valueAt(const Point &p) {
  switch (graph.kind(head)) {
  case OpKind::MatMul:
  case OpKind::Linear:
    return contraction(p);
  case OpKind::Conv2D:
    return conv(p);
  case OpKind::MaxPool2D:
  case OpKind::AvgPool2D:
    return pool(p);
  case OpKind::Concat:
    return concat(p);
  case OpKind::Gather:
    return gather(p);
  case OpKind::Pad:
    return pad(p);
  case OpKind::Alloc:
    return e.s.constant(0, computeType(graph.dtype(y)));
  default: { // contiguous, copy, move
    ValueRef x = graph.operands(head)[0];
    Memo memo;
    return e.valueAt(x, e.broadcast(x, p), memo);
  }
  }
}

/// The coordinates of contraction operand `v` (of shape `s`, matrix axes
/// `matrix`) for result coordinates `at` with `batch` leading batch axes:
/// batch axes broadcast (numpy rules).
static Coords operandCoords(GpuKernelEmitter &e, ShapeRef s, ShapeRef sy,
                            const Coords &at, size_t batch, Coords matrix) {
  size_t own = s.size() - matrix.size(), lead = batch - own;
  Coords coords;
  for (size_t i = 0; i < own; ++i)
    coords.push_back(s[i] == Dim::fixed(1) && sy[lead + i] != Dim::fixed(1)
                         ? e.c(0)
                         : at[lead + i]);
  coords.insert(coords.end(), matrix.begin(), matrix.end());
  return coords;
}

std::string HeadWriter::contraction(const Point &p) {
  auto operands = graph.operands(head);
  ValueRef a = operands[0], b = operands[1];
  ShapeRef sa = graph.shape(a), sb = graph.shape(b);
  DType dt = graph.dtype(y);
  std::string t = computeType(dt);
  bool fp = isFloat(dt), isMatMul = graph.kind(head) == OpKind::MatMul;
  bool ta = isMatMul && graph.getBool(head, AttrName::TransposeA, false);
  bool tb = isMatMul && graph.getBool(head, AttrName::TransposeB, false);
  Coords ea = e.extents(a);
  std::string init = e.s.constant(0, t);
  if (!isMatMul && operands.size() == 3)
    init = read(operands[2], {p.at.back()});
  std::string k = ta && sa.size() >= 2 ? ea[ea.size() - 2] : ea.back();
  GpuKernelEmitter::Loop loop = e.beginFor(e.c(0), k, e.c(1), init, t);
  Coords ca, cb;
  if (isMatMul) {
    bool hasM = sa.size() >= 2, hasN = sb.size() >= 2;
    size_t batch = graph.shape(y).size() - hasM - hasN;
    std::string m = hasM ? p.at[batch] : "", n = hasN ? p.at.back() : "";
    ShapeRef sy = graph.shape(y);
    ca = operandCoords(e, sa, sy, p.at, batch,
                       !hasM ? Coords{loop.iv} : ta ? Coords{loop.iv, m} : Coords{m, loop.iv});
    cb = operandCoords(e, sb, sy, p.at, batch,
                       !hasN ? Coords{loop.iv} : tb ? Coords{n, loop.iv} : Coords{loop.iv, n});
  } else { // linear: x[rows..., k] * w[n, k]
    ca.assign(p.at.begin(), p.at.end() - 1);
    ca.push_back(loop.iv);
    cb = {p.at.back(), loop.iv};
  }
  std::string product = e.s.op(std::string(fp ? "arith.mulf " : "arith.muli ") +
                                   e.s.toAccumulator(read(a, ca), graph.dtype(a), t) + ", " +
                                   e.s.toAccumulator(read(b, cb), graph.dtype(b), t),
                               t);
  std::string next = e.s.op(std::string(fp ? "arith.addf " : "arith.addi ") +
                                loop.carried + ", " + product,
                            t);
  e.endFor(loop, next);
  return loop.result;
}

std::string HeadWriter::conv(const Point &p) {
  auto operands = graph.operands(head);
  ValueRef x = operands[0], w = operands[1];
  Window win = windowOf(graph, head);
  int64_t groups = graph.getInt(head, AttrName::Groups, 1);
  Coords ex = e.extents(x), ew = e.extents(w);
  ShapeRef ws = graph.shape(w);
  int64_t cg = ws[1].size(), kh = ws[2].size(), kw = ws[3].size();
  int64_t og = ws[0].size() / groups;
  // 8-bit operands accumulate exactly in the result's i32.
  DType dt = graph.dtype(y);
  std::string t = computeType(dt);
  bool fp = isFloat(dt);
  std::string init = operands.size() == 3 ? read(operands[2], {p.at[1]})
                                          : e.s.constant(0, t);
  // One loop over (input channel of the group, kernel row, kernel column).
  GpuKernelEmitter::Loop loop =
      e.beginFor(e.c(0), e.c(cg * kh * kw), e.c(1), init, t);
  Coords at = e.delinearize(loop.iv, {e.c(cg), e.c(kh), e.c(kw)});
  auto position = [&](const std::string &out, const std::string &window, int d) {
    std::string base = e.ix("subi", e.ix("muli", out, e.c(win.strides[d])),
                            e.c(win.pads[d]));
    return e.ix("addi", base, e.ix("muli", window, e.c(win.dilations[d])));
  };
  std::string iy = position(p.at[2], at[1], 0), ixx = position(p.at[3], at[2], 1);
  std::string inside = both(inRange(iy, ex[2]), inRange(ixx, ex[3]));
  std::string channel = e.ix("addi", e.ix("muli", e.ix("divui", p.at[1], e.c(og)), e.c(cg)),
                             at[0]);
  std::string v = e.s.toAccumulator(
      read(x, {p.at[0], channel, clamp(iy, ex[2]), clamp(ixx, ex[3])}), graph.dtype(x), t);
  v = select(inside, v, e.s.constant(0, t), t);
  std::string wv = e.s.toAccumulator(read(w, {p.at[1], at[0], at[1], at[2]}), graph.dtype(w), t);
  std::string next =
      e.s.op(std::string(fp ? "arith.addf " : "arith.addi ") + loop.carried + ", " +
                 e.s.op(std::string(fp ? "arith.mulf " : "arith.muli ") + v + ", " + wv, t),
             t);
  e.endFor(loop, next);
  return loop.result;
}

std::string HeadWriter::pool(const Point &p) {
  ValueRef x = graph.operands(head)[0];
  Window win = windowOf(graph, head);
  Coords ex = e.extents(x);
  DType dt = graph.dtype(x);
  std::string t = computeType(dt);
  bool isMax = graph.kind(head) == OpKind::MaxPool2D;
  bool includePad = graph.getBool(head, AttrName::CountIncludePad, false);
  auto window = [&](const std::string &iv, Coords &at, std::string &iy,
                    std::string &ixx) {
    at = e.delinearize(iv, {e.c(win.kernel[0]), e.c(win.kernel[1])});
    auto position = [&](const std::string &out, const std::string &k, int d) {
      std::string base = e.ix("subi", e.ix("muli", out, e.c(win.strides[d])),
                              e.c(win.pads[d]));
      return e.ix("addi", base, e.ix("muli", k, e.c(win.dilations[d])));
    };
    iy = position(p.at[2], at[0], 0);
    ixx = position(p.at[3], at[1], 1);
  };
  std::string size = e.c(win.kernel[0] * win.kernel[1]);
  std::string init = e.s.constant(isMax ? reductionIdentity(OpKind::ReduceMax, dt) : 0, t);
  GpuKernelEmitter::Loop loop = e.beginFor(e.c(0), size, e.c(1), init, t);
  Coords at;
  std::string iy, ixx;
  window(loop.iv, at, iy, ixx);
  std::string inside = both(inRange(iy, ex[2]), inRange(ixx, ex[3]));
  std::string v = read(x, {p.at[0], p.at[1], clamp(iy, ex[2]), clamp(ixx, ex[3])});
  std::string next;
  if (isMax) {
    next = select(inside, combineReduction(e.s, OpKind::ReduceMax, dt, loop.carried, v, ""),
                  loop.carried, t);
  } else {
    v = select(inside, v, e.s.constant(0, t), t);
    next = e.s.op("arith.addf " + loop.carried + ", " + v, t);
  }
  e.endFor(loop, next);
  if (isMax)
    return loop.result;
  // The average divides by the positions inside the image (and its
  // padding, with count_include_pad).
  GpuKernelEmitter::Loop count =
      e.beginFor(e.c(0), size, e.c(1), e.s.constant(0, t), t);
  window(count.iv, at, iy, ixx);
  std::string counted =
      includePad
          ? both(both(cmp("sge", iy, e.c(-win.pads[0])),
                      cmp("slt", iy, e.ix("addi", ex[2], e.c(win.pads[2])))),
                 both(cmp("sge", ixx, e.c(-win.pads[1])),
                      cmp("slt", ixx, e.ix("addi", ex[3], e.c(win.pads[3])))))
          : both(inRange(iy, ex[2]), inRange(ixx, ex[3]));
  std::string one = select(counted, e.s.constant(1, t), e.s.constant(0, t), t);
  e.endFor(count, e.s.op("arith.addf " + count.carried + ", " + one, t));
  return e.s.op("arith.divf " + loop.result + ", " + count.result, t);
}

std::string HeadWriter::concat(const Point &p) {
  unsigned axis = *normalizeAxis(graph.getInt(head, AttrName::Axis, 0),
                                 graph.shape(y).size());
  std::string t = computeType(graph.dtype(y));
  std::string offset = e.c(0), value;
  // Every part is read at a clamped position; the one holding the
  // coordinate wins.
  for (ValueRef part : graph.operands(head)) {
    std::string extent = e.extents(part)[axis];
    Coords at = p.at;
    std::string local = e.ix("subi", p.at[axis], offset);
    at[axis] = clamp(local, extent);
    std::string v = read(part, at);
    value = value.empty() ? v : select(cmp("sge", local, e.c(0)), v, value, t);
    offset = e.ix("addi", offset, extent);
  }
  return value;
}

std::string HeadWriter::gather(const Point &p) {
  ValueRef data = graph.operands(head)[0], indices = graph.operands(head)[1];
  unsigned axis = *normalizeAxis(graph.getInt(head, AttrName::Axis, 0),
                                 graph.shape(data).size());
  size_t indexRank = graph.shape(indices).size();
  std::string extent = e.extents(data)[axis];
  Coords at(p.at.begin() + axis, p.at.begin() + axis + indexRank);
  std::string raw = read(indices, at);
  std::string i = e.s.op("arith.index_cast " + raw + " : " +
                             computeType(graph.dtype(indices)) + " to index",
                         "");
  // Negative indices count from the end; others are clamped (the reference
  // rejects out-of-range indices).
  i = select(cmp("slt", i, e.c(0)), e.ix("addi", i, extent), i, "index");
  Coords src(p.at.begin(), p.at.begin() + axis);
  src.push_back(clamp(i, extent));
  src.insert(src.end(), p.at.begin() + axis + indexRank, p.at.end());
  return read(data, src);
}

std::string HeadWriter::pad(const Point &p) {
  ValueRef x = graph.operands(head)[0];
  std::span<const int64_t> pads = graph.intsAttr(*graph.findAttr(head, AttrName::Pads));
  std::string mode = "constant";
  if (const Attribute *a = graph.findAttr(head, AttrName::Mode))
    mode = graph.stringAttr(*a);
  Coords ex = e.extents(x), src;
  std::string inside = e.s.constant(1, "i1");
  for (size_t d = 0; d < ex.size(); ++d) {
    std::string q = e.ix("subi", p.at[d], e.c(pads[d]));
    std::string lo = cmp("sge", q, e.c(0)), hi = cmp("slt", q, ex[d]);
    inside = both(inside, both(lo, hi));
    if (mode == "reflect") { // -q before the start, 2(n-1)-q past the end.
      std::string twice = e.ix("muli", e.ix("subi", ex[d], e.c(1)), e.c(2));
      q = select(lo, q, e.ix("subi", e.c(0), q), "index");
      q = select(hi, q, e.ix("subi", twice, q), "index");
    }
    src.push_back(clamp(q, ex[d]));
  }
  std::string v = read(x, src);
  if (mode != "constant")
    return v;
  std::string t = computeType(graph.dtype(x));
  return select(inside, v, e.s.constant(graph.getFloat(head, AttrName::Value, 0), t), t);
}

/// The library sgemm writing the head's value into the root's buffer, and
/// the epilogue (if any) as a second dispatch updating it in place.
static void emitLibraryContraction(GpuKernelEmitter &e, NodeId head) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(head);
  unsigned rootArg = *e.argOf(e.root());
  bool isMatMul = graph.kind(head) == OpKind::MatMul;
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
  // The library kernels' fixed workgroup: 256 threads.
  e.addLibraryDispatch(bound, {rootArg, {}, 64 * 64}, constants, 256);
  if (e.spec.nodes.size() == 1)
    return;
  e.beginDispatch({rootArg, {}, e.workgroupSize});
  Coords extents = e.extents(e.root());
  GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
  Point p = e.pointOf(e.root(), e.delinearize(loop.iv, extents), loop.iv);
  Memo memo;
  memo[{head, 0}] = e.load(e.root(), p);
  e.storeResults(p, memo);
  e.endFor(loop);
}

LogicalResult codegen::emitGpuPerElement(GpuKernelEmitter &e, std::optional<NodeId> head,
                                         DiagnosticEngine &diag) {
  if (head && !e.spec.librarySymbol.empty() && *head == e.spec.nodes.front()) {
    emitLibraryContraction(e, *head);
    return success();
  }
  if (head && opFamily(e.graph.kind(*head)) == OpFamily::Linalg &&
      e.graph.dtype(e.graph.operands(*head)[0]) == DType::Bool) {
    diag.error(nodeLocation(e.graph.name(*head)),
               "bool " + std::string(opName(e.graph.kind(*head))) + " has no GPU kernel");
    return failure();
  }
  ValueRef root = e.root();
  e.beginDispatch({*e.argOf(root), {}, e.workgroupSize});
  Coords extents = e.extents(root);
  GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
  Point p = e.pointOf(root, e.delinearize(loop.iv, extents), loop.iv);
  if (head) {
    HeadWriter writer(e, *head);
    e.storeWithHead(*head, writer.valueAt(e.pointOf({*head, 0}, p.at, p.linear)), p);
  } else {
    Memo memo;
    e.storeResults(p, memo);
  }
  e.endFor(loop);
  return success();
}

LogicalResult codegen::emitGpuSplit(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &) {
  const Graph &graph = e.graph;
  ValueRef x = graph.operands(head)[0];
  unsigned axis = *normalizeAxis(graph.getInt(head, AttrName::Axis, 0),
                                 graph.shape(x).size());
  e.beginDispatch({*e.argOf(x), {}, e.workgroupSize});
  Coords extents = e.extents(x);
  GpuKernelEmitter::Loop loop = e.beginThreadLoop(e.product(extents));
  Coords at = e.delinearize(loop.iv, extents);
  std::string v = e.load(x, e.pointOf(x, at, loop.iv));
  std::string offset = e.c(0);
  for (uint32_t r = 0; r < graph.numResults(head); ++r) {
    ValueRef part{head, r};
    std::string extent = e.extents(part)[axis];
    std::optional<unsigned> arg = e.argOf(part);
    if (arg) { // Parts nobody reads have no buffer.
      std::string local = e.ix("subi", at[axis], offset);
      std::string mine = e.s.op("arith.andi " +
                                    e.s.op("arith.cmpi sge, " + local + ", " + e.c(0), "index") +
                                    ", " + e.s.op("arith.cmpi slt, " + local + ", " + extent, "index"),
                                "i1");
      e.beginIf(mine);
      Coords partAt = at;
      partAt[axis] = local;
      e.store(part, e.pointOf(part, partAt), v);
      e.endIf();
    }
    offset = e.ix("addi", offset, extent);
  }
  e.endFor(loop);
  return success();
}
