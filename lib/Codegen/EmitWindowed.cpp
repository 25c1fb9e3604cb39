//===- EmitWindowed.cpp - conv2d and pooling ------------------------------===//
//
// Windowed ops iterate the output positions and the window (and, for conv,
// the input channels of a group). Padding makes the input access
// non-affine, so the region computes the input position from linalg.index,
// loads it from the captured input memref at a clamped index and masks the
// value where the position is in the padding.
//
//===----------------------------------------------------------------------===//

#include "Accumulator.h"

#include "fuel/IR/Window.h"
#include "fuel/Transforms/ConvEpilogue.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace fuel;
using namespace fuel::codegen;

namespace {
/// Index arithmetic on `index` values inside a region.
class IndexMath {
public:
  explicit IndexMath(KernelEmitter &e) : e(e) {}
  std::string at(unsigned dim) {
    return e.op("linalg.index " + std::to_string(dim), "index");
  }
  std::string c(int64_t v) { return e.index(v); }
  std::string add(const std::string &a, const std::string &b) {
    return e.op("arith.addi " + a + ", " + b, "index");
  }
  std::string mul(const std::string &a, int64_t b) {
    return b == 1 ? a : e.op("arith.muli " + a + ", " + c(b), "index");
  }
  std::string cmp(const char *pred, const std::string &a, const std::string &b) {
    return e.op(std::string("arith.cmpi ") + pred + ", " + a + ", " + b, "index");
  }
  std::string both(const std::string &a, const std::string &b) {
    return e.op("arith.andi " + a + ", " + b, "i1");
  }
  std::string select(const std::string &cond, const std::string &a,
                     const std::string &b, const std::string &t) {
    return e.op("arith.select " + cond + ", " + a + ", " + b, t);
  }
  /// Input position `out * stride - padBefore + win * dilation`.
  std::string position(unsigned outDim, unsigned winDim, int64_t stride,
                       int64_t padBefore, int64_t dilation) {
    return add(add(mul(at(outDim), stride), c(-padBefore)),
               mul(at(winDim), dilation));
  }
  /// Whether `p` lies in [lo, hi).
  std::string within(const std::string &p, int64_t lo, int64_t hi) {
    return both(cmp("sge", p, c(lo)), cmp("slt", p, c(hi)));
  }

private:
  KernelEmitter &e;
};
} // namespace

/// Loads x[n, c, y, x] with (y, x) clamped into the image; `inside` masks.
static std::string loadMasked(KernelEmitter &e, IndexMath &m, ValueRef x,
                              const std::string &n, const std::string &c,
                              const std::string &y, const std::string &xx,
                              const std::string &inside, const std::string &fill,
                              const std::string &t) {
  std::string y0 = m.select(inside, y, m.c(0), "index");
  std::string x0 = m.select(inside, xx, m.c(0), "index");
  std::string v = e.op("memref.load " + e.argName(x) + "[" + n + ", " + c +
                           ", " + y0 + ", " + x0 + "]",
                       e.argType(x));
  return m.select(inside, e.toCompute(v, e.graph.dtype(x)), fill, t);
}

static LogicalResult emitConv(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(node);
  ValueRef x = operands[0], w = operands[1], y{node, 0};
  Window win = windowOf(graph, node);
  int64_t groups = graph.getInt(node, AttrName::Groups, 1);
  ShapeRef xs = graph.shape(x), ws = graph.shape(w);
  int64_t H = xs[2].size(), W = xs[3].size();
  int64_t O = ws[0].size(), Cg = ws[1].size(), Og = O / groups;
  std::optional<ValueRef> bias;
  if (operands.size() == 3)
    bias = operands[2];
  Accumulator acc = beginAccumulation(e, y, 0, bias, 1);
  // Domain: n, o, oh, ow, c, kh, kw.
  const unsigned rank = 7;
  std::vector<bool> reduction{false, false, false, false, true, true, true};
  std::string t = acc.elemType;
  e.generic(rank, reduction,
            {e.operand(w, "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>")},
            {acc.operand("affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>")},
            [&](const std::vector<std::string> &a) {
              IndexMath m(e);
              std::string iy = m.position(2, 5, win.strides[0], win.pads[0], win.dilations[0]);
              std::string ix = m.position(3, 6, win.strides[1], win.pads[1], win.dilations[1]);
              std::string inside = m.both(m.within(iy, 0, H), m.within(ix, 0, W));
              std::string group = e.op("arith.divui " + m.at(1) + ", " + m.c(Og), "index");
              std::string c = m.add(m.mul(group, Cg), m.at(4));
              // 8-bit operands accumulate exactly in the result's i32.
              bool fp = t[0] == 'f';
              std::string xt = fp ? t : storageType(graph.dtype(x));
              std::string v = e.toAccumulator(
                  loadMasked(e, m, x, m.at(0), c, iy, ix, inside, e.constant(0, xt), xt),
                  graph.dtype(x), t);
              std::string wv =
                  e.toAccumulator(e.toCompute(a[0], graph.dtype(w)), graph.dtype(w), t);
              std::string fm = fp ? " fastmath<reassoc,contract>" : "";
              std::string p =
                  e.op(std::string(fp ? "arith.mulf " : "arith.muli ") + v + ", " + wv + fm, t);
              return std::vector<std::string>{
                  e.op(std::string(fp ? "arith.addf " : "arith.addi ") + a[1] + ", " + p + fm, t)};
            });
  finishAccumulation(e, acc, y);
  return success();
}

/// An `index` value for extent `x`.
static std::string extentValue(KernelEmitter &e, const Extent &x) {
  return x.isStatic() ? e.index(x.size) : x.ssa;
}

namespace {
/// Nested scf.for loops written as MLIR text, closed together.
class LoopNest {
public:
  explicit LoopNest(KernelEmitter &e) : e(e) {}
  /// Opens a loop over [lo, hi) and returns its induction variable.
  std::string open(const std::string &lo, const std::string &hi) {
    std::string iv = e.fresh();
    e.body() << "    scf.for " << iv << " = " << lo << " to " << hi << " step " << e.index(1)
             << " {\n";
    ++depth;
    return iv;
  }
  /// Closes the innermost `count` loops.
  void close(unsigned count) {
    for (; count > 0 && depth > 0; --count, --depth)
      e.body() << "    }\n";
  }

private:
  KernelEmitter &e;
  unsigned depth = 0;
};
} // namespace

/// Max pooling over one image plane at a time, with no masks: the plane is
/// copied into a scratch plane padded with the lowest value, so that with
/// equal strides s every tap (kh, kw) reads element s * q + shift(kh, kw)
/// for output q = oh * Wp + ow, where Wp is the padded width. Each tap is
/// then one long loop at a constant stride over the whole plane, which
/// LLVM vectorizes; the columns q with ow >= OW are computed and dropped.
/// Row by row, short rows (7 or 14 columns deep in a CNN) left the vectors
/// mostly empty, and the masked generic form is not vectorized at all.
static LogicalResult emitMaxPool(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef x = graph.operands(node)[0], y{node, 0};
  Window win = windowOf(graph, node);
  DType dt = graph.dtype(x);
  std::string t = computeType(dt);
  int64_t H = graph.shape(x)[2].size(), W = graph.shape(x)[3].size();
  int64_t OH = graph.shape(y)[2].size(), OW = graph.shape(y)[3].size();
  int64_t s = win.strides[0], dh = win.dilations[0], dw = win.dilations[1];
  // The padded image the windows reach, split into s x s stride phases:
  // phase plane (a, b) holds the pixels (s * py + a, s * px + b), so tap
  // (i, j) of output (oh, ow) is pixel (oh + i * dh / s, ow + j * dw / s)
  // of phase (i * dh % s, j * dw % s), and every tap is one contiguous run
  // over q = oh * Wq + ow (a flat q over the padded image would step over
  // the rows a stride skips: half its positions wasted at stride 2).
  int64_t Hp = std::max(H + win.pads[0] + win.pads[2], (OH - 1) * s + (win.kernel[0] - 1) * dh + 1);
  int64_t Wp = std::max(W + win.pads[1] + win.pads[3], (OW - 1) * s + (win.kernel[1] - 1) * dw + 1);
  int64_t Hq = (Hp + s - 1) / s, Wq = (Wp + s - 1) / s, phase = Hq * Wq;
  int64_t Q = (OH - 1) * Wq + OW; // Output positions up to the last one.
  std::string planeType, outType;
  std::string plane = e.scratch({{s * s * phase, ""}}, t, planeType);
  std::string out = e.scratch({{Q, ""}}, t, outType);
  std::string lowest = scalarLiteral(lowestValue(dt), t);
  e.fill(plane, planeType, t, lowest); // The border, never written again.
  std::vector<Extent> extents = e.extents(y);
  IndexMath m(e);
  LoopNest loops(e);
  std::string zero = e.index(0);
  std::string n = loops.open(zero, extentValue(e, extents[0]));
  std::string c = loops.open(zero, extentValue(e, extents[1]));
  // Copy the image into the phases: phase (a, b) takes rows py with
  // s * py + a - padTop inside the image, columns likewise.
  auto inside = [&](int64_t offset, int64_t extent, int64_t planeExtent) {
    int64_t lo = offset >= 0 ? 0 : (-offset + s - 1) / s;
    int64_t hi = std::min(planeExtent, (extent - 1 - offset) / s + 1);
    return std::pair{lo, std::max(lo, hi)};
  };
  for (int64_t pa = 0; pa < s; ++pa)
    for (int64_t pb = 0; pb < s; ++pb) {
      auto [y0, y1] = inside(pa - win.pads[0], H, Hq);
      auto [x0, x1] = inside(pb - win.pads[1], W, Wq);
      std::string py = loops.open(e.index(y0), e.index(y1));
      std::string px = loops.open(e.index(x0), e.index(x1));
      std::string iy = m.add(m.mul(py, s), m.c(pa - win.pads[0]));
      std::string ix = m.add(m.mul(px, s), m.c(pb - win.pads[1]));
      std::string v =
          e.op("memref.load " + e.argName(x) + "[" + n + ", " + c + ", " + iy + ", " + ix + "]",
               e.argType(x));
      std::string at = m.add(m.add(m.mul(py, Wq), px), m.c((pa * s + pb) * phase));
      std::string value = e.toCompute(v, dt);
      e.body() << "      memref.store " << value << ", " << plane << "[" << at
               << "] : " << planeType << "\n";
      loops.close(2);
    }
  // Every tap over every output position.
  e.fill(out, outType, t, lowest);
  std::string kh = loops.open(zero, e.index(win.kernel[0]));
  std::string kw = loops.open(zero, e.index(win.kernel[1]));
  auto phaseOf = [&](const std::string &k, int64_t dilation, std::string &step) {
    std::string reach = m.mul(k, dilation);
    step = e.op("arith.divui " + reach + ", " + m.c(s), "index");
    return e.op("arith.remui " + reach + ", " + m.c(s), "index");
  };
  std::string rowStep, columnStep;
  std::string pa = phaseOf(kh, dh, rowStep), pb = phaseOf(kw, dw, columnStep);
  std::string shift =
      m.add(m.add(m.mul(m.add(m.mul(pa, s), pb), phase), m.mul(rowStep, Wq)), columnStep);
  std::string q = loops.open(zero, e.index(Q));
  std::string a = e.op("memref.load " + out + "[" + q + "] : " + outType, "");
  std::string b = e.op("memref.load " + plane + "[" + m.add(q, shift) + "] : " + planeType, "");
  std::string best = combineReduction(e, OpKind::ReduceMax, dt, a, b, ""); // NaN kept.
  e.body() << "      memref.store " << best << ", " << out << "[" << q << "] : " << outType << "\n";
  loops.close(3);
  // Copy the output plane out.
  std::string oh = loops.open(zero, e.index(OH)), ow = loops.open(zero, e.index(OW));
  std::string r =
      e.op("memref.load " + out + "[" + m.add(m.mul(oh, Wq), ow) + "] : " + outType, "");
  std::string result = e.toStorage(r, dt);
  e.body() << "      memref.store " << result << ", " << e.argName(y) << "[" << n << ", " << c
           << ", " << oh << ", " << ow << "] : " << e.argType(y) << "\n";
  loops.close(4);
  return success();
}

static LogicalResult emitPool(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef x = graph.operands(node)[0], y{node, 0};
  Window win = windowOf(graph, node);
  ShapeRef xs = graph.shape(x);
  int64_t H = xs[2].size(), W = xs[3].size();
  bool isMax = graph.kind(node) == OpKind::MaxPool2D;
  bool includePad = graph.getBool(node, AttrName::CountIncludePad, false);
  DType dt = graph.dtype(x);
  double lowest = lowestValue(dt);
  Accumulator acc = beginAccumulation(e, y, isMax ? lowest : 0);
  std::string t = acc.elemType;
  // Domain: n, c, oh, ow, kh, kw.
  const unsigned rank = 6;
  std::vector<bool> reduction{false, false, false, false, true, true};
  std::string outMap = "affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>";
  std::vector<GenericOperand> outs{acc.operand(outMap)};
  std::string count, countType;
  if (!isMax) {
    count = e.scratch(e.extents(y), t, countType);
    e.fill(count, countType, t, scalarLiteral(0, t));
    outs.push_back({count, countType, outMap, t});
  }
  // The window's extents reach the loop nest through a (never read) operand
  // indexed by the window axes, as linalg's pooling ops do.
  std::string windowType;
  std::string window = e.scratch({{win.kernel[0], ""}, {win.kernel[1], ""}},
                                 "i8", windowType);
  GenericOperand windowIn{window, windowType,
                          "affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>", "i8"};
  e.generic(rank, reduction, {windowIn}, outs, [&](const std::vector<std::string> &b) {
    std::vector<std::string> a(b.begin() + 1, b.end());
    IndexMath m(e);
    std::string iy = m.position(2, 4, win.strides[0], win.pads[0], win.dilations[0]);
    std::string ix = m.position(3, 5, win.strides[1], win.pads[1], win.dilations[1]);
    std::string inside = m.both(m.within(iy, 0, H), m.within(ix, 0, W));
    std::string fill = e.constant(isMax ? lowest : 0, t);
    std::string v = loadMasked(e, m, x, m.at(0), m.at(1), iy, ix, inside, fill, t);
    if (isMax) // A NaN in the window is the result.
      return std::vector<std::string>{combineReduction(e, OpKind::ReduceMax, dt, a[0], v, "")};
    std::string counted = inside;
    if (includePad)
      counted = m.both(m.within(iy, -win.pads[0], H + win.pads[2]),
                       m.within(ix, -win.pads[1], W + win.pads[3]));
    std::string one = m.select(counted, e.constant(1, t), e.constant(0, t), t);
    return std::vector<std::string>{e.op("arith.addf " + a[0] + ", " + v, t),
                                    e.op("arith.addf " + a[1] + ", " + one, t)};
  });
  if (isMax) {
    finishAccumulation(e, acc, y);
    return success();
  }
  // Pads are at most half the window, so no count is zero.
  finishAccumulation(e, acc, y, count, countType);
  return success();
}

/// `leading` then the window's top and left pads and dilations, as a
/// library window kernel takes them. A slice of output rows from `origin`
/// on (KernelSpec::takesSliceOrigin) reads the whole input as if its top pad
/// were origin * strideH rows smaller.
static std::vector<std::string> windowScalars(KernelEmitter &e, const Window &win,
                                              std::initializer_list<int64_t> leading) {
  std::vector<std::string> scalars = i64Constants(e, leading);
  std::vector<std::string> window =
      i64Constants(e, {win.pads[0], win.pads[1], win.dilations[0], win.dilations[1]});
  if (e.spec.takesSliceOrigin) {
    std::string stride = i64Constants(e, {win.strides[0]})[0];
    std::string shift = e.op("arith.muli " + e.sliceOrigin() + ", " + stride, "i64");
    window[0] = e.op("arith.subi " + window[0] + ", " + shift, "i64");
  }
  scalars.insert(scalars.end(), window.begin(), window.end());
  return scalars;
}

/// The library conv2d's flags for `conv` with `epilogue`: the weights never
/// change (kept packed), bias, residual, ReLU, SiLU.
static int64_t libraryConvFlags(const Graph &graph, NodeId conv, const ConvEpilogue &epilogue) {
  auto operands = graph.operands(conv);
  return (isConstant(graph, operands[1]) ? 8 : 0) | (operands.size() == 3 ? 16 : 0) |
         (epilogue.residual ? 32 : 0) | (epilogue.relu ? 64 : 0) | (epilogue.silu ? 128 : 0);
}

/// Unranked x, w and `result`, then the bias, passed as `result` (never
/// read) when the convolution has none.
static std::vector<std::string> libraryConvOperands(KernelEmitter &e, NodeId conv,
                                                    ValueRef result) {
  auto operands = e.graph.operands(conv);
  std::vector<std::string> args;
  for (ValueRef v : {operands[0], operands[1], result})
    args.push_back(unranked(e, v));
  args.push_back(operands.size() == 3 ? unranked(e, operands[2]) : args[2]);
  return args;
}

/// A call to the library conv2d (kernels/x86/conv.cpp), which reads the
/// groups from the operands' channels and adds the bias itself.
static LogicalResult emitLibraryConv(KernelEmitter &e, NodeId node,
                                     const ConvEpilogue &epilogue) {
  const Graph &graph = e.graph;
  int64_t flags = libraryConvFlags(graph, node, epilogue);
  std::vector<std::string> args = libraryConvOperands(e, node, {node, 0});
  // An absent residual is passed as the result, never read.
  args.push_back(epilogue.residual ? unranked(e, *epilogue.residual) : args[2]);
  Window win = windowOf(graph, node);
  callLibrary(e, args, windowScalars(e, win, {flags, win.strides[0], win.strides[1]}),
              {epilogue.lo, epilogue.hi});
  return success();
}

/// A call to the library's pooled conv2d (kernels/x86/convpool.cpp): the
/// convolution's result is never written, only the pooling's.
LogicalResult codegen::emitPooledConv(KernelEmitter &e) {
  const Graph &graph = e.graph;
  PooledConv pooled = *pooledConvOfKernel(graph, e.spec.nodes);
  int64_t flags = libraryConvFlags(graph, pooled.conv, pooled.epilogue);
  std::vector<std::string> args = libraryConvOperands(e, pooled.conv, {pooled.pool, 0});
  Window conv = windowOf(graph, pooled.conv), pool = windowOf(graph, pooled.pool);
  ShapeRef result = graph.shape({pooled.conv, 0});
  std::vector<std::string> scalars =
      i64Constants(e, {flags, conv.strides[0], conv.strides[1], conv.pads[0], conv.pads[1],
                       conv.dilations[0], conv.dilations[1], result[2].size(), result[3].size(),
                       pool.kernel[0], pool.kernel[1], pool.strides[0], pool.strides[1],
                       pool.pads[0], pool.pads[1], pool.dilations[0], pool.dilations[1]});
  // The first pooled row of a slice of them (KernelSpec::takesSliceOrigin).
  scalars.push_back(e.spec.takesSliceOrigin ? e.sliceOrigin() : i64Constants(e, {0})[0]);
  callLibrary(e, args, scalars, {pooled.epilogue.lo, pooled.epilogue.hi});
  return success();
}

/// A call to the library 8-bit conv2d (kernels/x86/iconv.cpp), whose i32
/// result an emitted epilogue rescales.
static LogicalResult emitLibraryIntegerConv(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(node);
  // Flags: the weights never change (kept packed), x is u8, w is u8.
  int64_t flags = isConstant(graph, operands[1]) ? 8 : 0;
  flags |= graph.dtype(operands[0]) == DType::U8 ? 16 : 0;
  flags |= graph.dtype(operands[1]) == DType::U8 ? 32 : 0;
  Window win = windowOf(graph, node);
  callLibrary(e, {unranked(e, operands[0]), unranked(e, operands[1]), unranked(e, {node, 0})},
              windowScalars(e, win, {flags, win.strides[0], win.strides[1]}));
  return success();
}

/// A call to the library max_pool2d (kernels/x86/pool.cpp).
static LogicalResult emitLibraryMaxPool(KernelEmitter &e, NodeId node) {
  Window win = windowOf(e.graph, node);
  callLibrary(
      e, {unranked(e, e.graph.operands(node)[0]), unranked(e, {node, 0})},
      windowScalars(e, win, {win.kernel[0], win.kernel[1], win.strides[0], win.strides[1]}));
  return success();
}

bool codegen::emitConvWithEpilogue(KernelEmitter &e) {
  NodeId head = e.spec.nodes.front();
  if (e.spec.librarySymbol.empty() || e.graph.kind(head) != OpKind::Conv2D ||
      e.graph.dtype({head, 0}) == DType::I32)
    return false;
  std::optional<ConvEpilogue> epilogue = matchConvEpilogue(e.graph, e.spec.nodes);
  if (!epilogue)
    return false;
  e.alias({head, 0}, {e.spec.nodes.back(), 0});
  return succeeded(emitLibraryConv(e, head, *epilogue));
}

LogicalResult codegen::emitWindowed(KernelEmitter &e, NodeId node, DiagnosticEngine &) {
  if (e.graph.kind(node) == OpKind::Conv2D) {
    if (e.spec.librarySymbol.empty() || node != e.spec.nodes.front())
      return emitConv(e, node);
    return e.graph.dtype({node, 0}) == DType::I32 ? emitLibraryIntegerConv(e, node)
                                                  : emitLibraryConv(e, node, ConvEpilogue{});
  }
  bool head = node == e.spec.nodes.front();
  if (e.graph.kind(node) == OpKind::MaxPool2D && !e.spec.librarySymbol.empty() && head)
    return emitLibraryMaxPool(e, node);
  // The plane-at-a-time form reads its input and writes its result as
  // arguments, with one stride for both axes.
  Window win = windowOf(e.graph, node);
  if (e.graph.kind(node) == OpKind::MaxPool2D && e.hasArg(e.graph.operands(node)[0]) &&
      e.hasArg({node, 0}) && win.strides[0] == win.strides[1])
    return emitMaxPool(e, node);
  return emitPool(e, node);
}
