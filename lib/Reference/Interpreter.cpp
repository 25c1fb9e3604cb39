//===- Interpreter.cpp - Naive reference evaluation of graphs -------------===//
//
// One function per op family, each a direct transcription of the op's
// definition in docs/graph-format.md over concrete extents (symbols bound
// from the inputs). Views reuse IR/Layout.h to map indices.
//
//===----------------------------------------------------------------------===//

#include "fuel/Reference/Interpreter.h"

#include "fuel/IR/Layout.h"
#include "fuel/IR/Verifier.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace fuel;

namespace {
using Extents = std::vector<int64_t>;

int64_t product(const Extents &e, size_t from = 0, size_t to = ~size_t(0)) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, e.size()); ++i)
    n *= e[i];
  return n;
}

/// Row-major multi-index of `linear` in `shape`.
void unravel(int64_t linear, const Extents &shape, Extents &index) {
  index.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
}

/// Element offset, in a tensor of `shape`, of `index` into a (numpy-)
/// broadcast of it to a larger rank: leading axes dropped, unit axes pinned.
int64_t broadcastOffset(const Extents &index, const Extents &shape) {
  int64_t offset = 0;
  size_t lead = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    offset = offset * shape[d] + (shape[d] == 1 ? 0 : index[lead + d]);
  return offset;
}

class Interpreter {
public:
  Interpreter(const Graph &graph, DiagnosticEngine &diag)
      : graph(graph), diag(diag), symbolValues(graph.symbols().size(), -1),
        values(graph.numNodes()) {}

  LogicalResult run(const std::map<std::string, HostTensor> &inputs,
                    std::vector<HostTensor> &outputs);

private:
  LogicalResult error(NodeId node, std::string message) {
    SourceLocation loc;
    loc.node = graph.name(node);
    diag.error(std::move(loc), std::move(message));
    return failure();
  }
  LogicalResult bindInput(NodeId node, const HostTensor &t);
  Extents concrete(ShapeRef shape) const {
    Extents out;
    for (Dim d : shape)
      out.push_back(d.isStatic() ? d.size() : symbolValues[d.symbolId()]);
    return out;
  }
  const HostTensor &operand(NodeId node, unsigned i) const {
    ValueRef v = graph.operands(node)[i];
    return values[v.node][v.result];
  }
  /// A zero tensor of result `r`'s type.
  HostTensor result(NodeId node, uint32_t r = 0) const {
    HostTensor t{graph.dtype({node, r}), concrete(graph.shape({node, r})), {}};
    t.values.assign(t.numElements(), 0);
    return t;
  }
  std::vector<int64_t> ints(NodeId node, AttrName name,
                            std::vector<int64_t> dflt = {}) const {
    const Attribute *a = graph.findAttr(node, name);
    if (!a)
      return dflt;
    std::span<const int64_t> v = graph.intsAttr(*a);
    return {v.begin(), v.end()};
  }
  unsigned axisAttr(NodeId node, int64_t dflt, size_t rank) const {
    return *normalizeAxis(graph.getInt(node, AttrName::Axis, dflt), rank);
  }

  LogicalResult evalNode(NodeId node, std::vector<HostTensor> &out);
  HostTensor unary(NodeId node);
  HostTensor binary(NodeId node);
  HostTensor matmul(NodeId node);
  HostTensor linear(NodeId node);
  HostTensor conv2d(NodeId node);
  HostTensor pool2d(NodeId node);
  HostTensor reduce(NodeId node);
  HostTensor softmax(NodeId node);
  HostTensor normalize(NodeId node);
  HostTensor view(NodeId node);
  HostTensor concat(NodeId node);
  std::vector<HostTensor> split(NodeId node);
  LogicalResult gather(NodeId node, HostTensor &out);
  HostTensor pad(NodeId node);
  LogicalResult writeSlice(NodeId node, HostTensor &out);

  const Graph &graph;
  DiagnosticEngine &diag;
  std::vector<int64_t> symbolValues;
  std::vector<std::vector<HostTensor>> values;
};
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static double applyUnary(OpKind kind, double v, double lo, double hi,
                         bool tanhGelu) {
  switch (kind) {
  case OpKind::Neg:
    return -v;
  case OpKind::Abs:
    return std::fabs(v);
  case OpKind::Exp:
    return std::exp(v);
  case OpKind::Log:
    return std::log(v);
  case OpKind::Sqrt:
    return std::sqrt(v);
  case OpKind::Rsqrt:
    return 1 / std::sqrt(v);
  case OpKind::Tanh:
    return std::tanh(v);
  case OpKind::Sigmoid:
    return 1 / (1 + std::exp(-v));
  case OpKind::Relu:
    return v > 0 ? v : 0;
  case OpKind::Gelu:
    if (tanhGelu)
      return 0.5 * v *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case OpKind::Silu:
    return v / (1 + std::exp(-v));
  case OpKind::Erf:
    return std::erf(v);
  case OpKind::Sin:
    return std::sin(v);
  case OpKind::Cos:
    return std::cos(v);
  case OpKind::Recip:
    return 1 / v;
  case OpKind::Not:
    return v == 0;
  case OpKind::Clamp:
    return std::min(std::max(v, lo), hi);
  default: // Cast: the result's rounding does the work.
    return v;
  }
}

HostTensor Interpreter::unary(NodeId node) {
  OpKind kind = graph.kind(node);
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  double lo = graph.getFloat(node, AttrName::MinValue,
                             -std::numeric_limits<double>::infinity());
  double hi = graph.getFloat(node, AttrName::MaxValue,
                             std::numeric_limits<double>::infinity());
  const Attribute *approx = graph.findAttr(node, AttrName::Approximate);
  bool tanhGelu = approx && graph.stringAttr(*approx) == "tanh";
  for (size_t i = 0; i < in.values.size(); ++i)
    out.values[i] = applyUnary(kind, in.values[i], lo, hi, tanhGelu);
  return out;
}

static double applyBinary(OpKind kind, double a, double b, bool integer) {
  switch (kind) {
  case OpKind::Add:
    return a + b;
  case OpKind::Sub:
    return a - b;
  case OpKind::Mul:
    return a * b;
  case OpKind::Div:
    // Integer division truncates toward zero (as C and ONNX); x / 0 is 0.
    return integer ? (b == 0 ? 0 : std::trunc(a / b)) : a / b;
  case OpKind::Pow:
    return std::pow(a, b);
  case OpKind::Max:
    return std::max(a, b);
  case OpKind::Min:
    return std::min(a, b);
  case OpKind::Eq:
    return a == b;
  case OpKind::Ne:
    return a != b;
  case OpKind::Lt:
    return a < b;
  case OpKind::Le:
    return a <= b;
  case OpKind::Gt:
    return a > b;
  case OpKind::Ge:
    return a >= b;
  case OpKind::And:
    return a != 0 && b != 0;
  default: // Or
    return a != 0 || b != 0;
  }
}

HostTensor Interpreter::binary(NodeId node) {
  OpKind kind = graph.kind(node);
  HostTensor out = result(node);
  Extents index;
  if (kind == OpKind::Where) {
    const HostTensor &c = operand(node, 0), &a = operand(node, 1),
                     &b = operand(node, 2);
    for (int64_t i = 0; i < out.numElements(); ++i) {
      unravel(i, out.shape, index);
      out.values[i] = c.values[broadcastOffset(index, c.shape)] != 0
                          ? a.values[broadcastOffset(index, a.shape)]
                          : b.values[broadcastOffset(index, b.shape)];
    }
    return out;
  }
  const HostTensor &a = operand(node, 0), &b = operand(node, 1);
  bool integer = isInteger(a.dtype);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    out.values[i] = applyBinary(kind, a.values[broadcastOffset(index, a.shape)],
                                b.values[broadcastOffset(index, b.shape)],
                                integer);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling
//===----------------------------------------------------------------------===//

HostTensor Interpreter::matmul(NodeId node) {
  HostTensor a = operand(node, 0), b = operand(node, 1);
  bool transA = graph.getBool(node, AttrName::TransposeA, false);
  bool transB = graph.getBool(node, AttrName::TransposeB, false);
  auto swapLast = [](HostTensor &t) {
    size_t r = t.shape.size();
    std::vector<int64_t> perm(r);
    for (size_t i = 0; i < r; ++i)
      perm[i] = static_cast<int64_t>(i);
    std::swap(perm[r - 1], perm[r - 2]);
    Layout l = transposeView(Layout::contiguous(t.shape), perm);
    HostTensor out{t.dtype, l.sizes, std::vector<double>(t.values.size())};
    Extents index;
    for (int64_t i = 0; i < out.numElements(); ++i) {
      unravel(i, out.shape, index);
      out.values[i] = t.values[l.elementOffset(index)];
    }
    t = std::move(out);
  };
  if (transA)
    swapLast(a);
  if (transB)
    swapLast(b);
  if (a.shape.size() == 1)
    a.shape.insert(a.shape.begin(), 1);
  if (b.shape.size() == 1)
    b.shape.push_back(1);
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(),
          n = b.shape.back();
  Extents batchA(a.shape.begin(), a.shape.end() - 2),
      batchB(b.shape.begin(), b.shape.end() - 2);
  size_t rank = std::max(batchA.size(), batchB.size());
  Extents batch(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t ea = d < rank - batchA.size() ? 1 : batchA[d - (rank - batchA.size())];
    int64_t eb = d < rank - batchB.size() ? 1 : batchB[d - (rank - batchB.size())];
    batch[d] = std::max(ea, eb);
  }
  HostTensor out = result(node);
  Extents index;
  for (int64_t bi = 0; bi < product(batch); ++bi) {
    unravel(bi, batch, index);
    int64_t offA = broadcastOffset(index, batchA) * m * k;
    int64_t offB = broadcastOffset(index, batchB) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          sum += a.values[offA + i * k + kk] * b.values[offB + kk * n + j];
        out.values[(bi * m + i) * n + j] = sum;
      }
  }
  return out;
}

HostTensor Interpreter::linear(NodeId node) {
  const HostTensor &x = operand(node, 0), &w = operand(node, 1);
  HostTensor out = result(node);
  int64_t n = w.shape[0], k = w.shape[1], rows = x.numElements() / k;
  bool hasBias = graph.operands(node).size() == 3;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double sum = hasBias ? operand(node, 2).values[j] : 0;
      for (int64_t kk = 0; kk < k; ++kk)
        sum += x.values[r * k + kk] * w.values[j * k + kk];
      out.values[r * n + j] = sum;
    }
  return out;
}

namespace {
struct Window {
  int64_t kernel[2] = {1, 1}, strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0},
          dilations[2] = {1, 1};
};
} // namespace

static Window windowOf(const Graph &graph, NodeId node) {
  Window w;
  auto read = [&](AttrName name, int64_t *out, size_t n) {
    if (const Attribute *a = graph.findAttr(node, name))
      for (size_t i = 0; i < n; ++i)
        out[i] = graph.intsAttr(*a)[i];
  };
  read(AttrName::Kernel, w.kernel, 2);
  read(AttrName::Strides, w.strides, 2);
  read(AttrName::Pads, w.pads, 4);
  read(AttrName::Dilations, w.dilations, 2);
  return w;
}

HostTensor Interpreter::conv2d(NodeId node) {
  const HostTensor &x = operand(node, 0), &w = operand(node, 1);
  HostTensor out = result(node);
  Window win = windowOf(graph, node);
  int64_t groups = graph.getInt(node, AttrName::Groups, 1);
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t O = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = out.shape[2], OW = out.shape[3], Og = O / groups;
  bool hasBias = graph.operands(node).size() == 3;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double sum = hasBias ? operand(node, 2).values[o] : 0;
          int64_t g = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                int64_t y = oh * win.strides[0] - win.pads[0] + i * win.dilations[0];
                int64_t xx = ow * win.strides[1] - win.pads[1] + j * win.dilations[1];
                if (y < 0 || y >= H || xx < 0 || xx >= W)
                  continue;
                int64_t ci = g * Cg + c;
                sum += x.values[((n * C + ci) * H + y) * W + xx] *
                       w.values[((o * Cg + c) * KH + i) * KW + j];
              }
          out.values[((n * O + o) * OH + oh) * OW + ow] = sum;
        }
  return out;
}

HostTensor Interpreter::pool2d(NodeId node) {
  const HostTensor &x = operand(node, 0);
  HostTensor out = result(node);
  Window win = windowOf(graph, node);
  bool isMax = graph.kind(node) == OpKind::MaxPool2D;
  bool includePad = graph.getBool(node, AttrName::CountIncludePad, false);
  int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t OH = out.shape[2], OW = out.shape[3];
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0;
        int64_t count = 0;
        for (int64_t i = 0; i < win.kernel[0]; ++i)
          for (int64_t j = 0; j < win.kernel[1]; ++j) {
            int64_t y = oh * win.strides[0] - win.pads[0] + i * win.dilations[0];
            int64_t xx = ow * win.strides[1] - win.pads[1] + j * win.dilations[1];
            bool inside = y >= 0 && y < H && xx >= 0 && xx < W;
            bool inPadded = y >= -win.pads[0] && y < H + win.pads[2] &&
                            xx >= -win.pads[1] && xx < W + win.pads[3];
            if (includePad ? inPadded : inside)
              ++count;
            if (!inside)
              continue;
            double v = x.values[(nc * H + y) * W + xx];
            acc = isMax ? std::max(acc, v) : acc + v;
          }
        out.values[(nc * OH + oh) * OW + ow] =
            isMax ? acc : acc / static_cast<double>(std::max<int64_t>(count, 1));
      }
  return out;
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

HostTensor Interpreter::reduce(NodeId node) {
  OpKind kind = graph.kind(node);
  const HostTensor &in = operand(node, 0);
  size_t rank = in.shape.size();
  std::vector<bool> reduced(rank, true);
  if (kind == OpKind::ArgMax || kind == OpKind::ArgMin) {
    reduced.assign(rank, false);
    reduced[axisAttr(node, 0, rank)] = true;
  } else if (const Attribute *a = graph.findAttr(node, AttrName::Axes)) {
    reduced.assign(rank, false);
    for (int64_t axis : graph.intsAttr(*a))
      reduced[*normalizeAxis(axis, rank)] = true;
  }
  // The reduced shape with unit axes kept, to index the result.
  Extents kept(in.shape);
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d])
      kept[d] = 1;
  HostTensor out = result(node);
  int64_t outCount = product(kept);
  std::vector<double> acc(outCount), best(outCount);
  std::vector<int64_t> count(outCount, 0), where(outCount, 0);
  Extents index;
  for (int64_t i = 0; i < in.numElements(); ++i) {
    unravel(i, in.shape, index);
    int64_t position = 0; // Along the arg axis.
    for (size_t d = 0; d < rank; ++d)
      if (reduced[d]) {
        position = index[d];
        index[d] = 0;
      }
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d)
      o = o * kept[d] + index[d];
    double v = in.values[i];
    if (count[o]++ == 0) {
      acc[o] = v;
      best[o] = v;
      where[o] = position;
      continue;
    }
    switch (kind) {
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
      acc[o] += v;
      break;
    case OpKind::ReduceProd:
      acc[o] *= v;
      break;
    case OpKind::ReduceMax:
      acc[o] = std::max(acc[o], v);
      break;
    case OpKind::ReduceMin:
      acc[o] = std::min(acc[o], v);
      break;
    default: // First occurrence wins on ties.
      if (kind == OpKind::ArgMax ? v > best[o] : v < best[o]) {
        best[o] = v;
        where[o] = position;
      }
    }
  }
  for (int64_t o = 0; o < outCount; ++o) {
    if (kind == OpKind::ArgMax || kind == OpKind::ArgMin)
      out.values[o] = static_cast<double>(where[o]);
    else if (count[o] == 0) // Reducing an empty axis: the identity.
      out.values[o] = kind == OpKind::ReduceProd ? 1 : 0;
    else
      out.values[o] = kind == OpKind::ReduceMean ? acc[o] / count[o] : acc[o];
  }
  return out;
}

HostTensor Interpreter::softmax(NodeId node) {
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  unsigned axis = axisAttr(node, -1, in.shape.size());
  int64_t extent = in.shape[axis], inner = product(in.shape, axis + 1);
  int64_t outer = product(in.shape, 0, axis);
  bool log = graph.kind(node) == OpKind::LogSoftmax;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * extent + j) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < extent; ++j)
        mx = std::max(mx, in.values[at(j)]);
      for (int64_t j = 0; j < extent; ++j)
        sum += std::exp(in.values[at(j)] - mx);
      for (int64_t j = 0; j < extent; ++j)
        out.values[at(j)] = log ? in.values[at(j)] - mx - std::log(sum)
                                : std::exp(in.values[at(j)] - mx) / sum;
    }
  return out;
}

HostTensor Interpreter::normalize(NodeId node) {
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  unsigned axis = axisAttr(node, -1, in.shape.size());
  double eps = graph.getFloat(node, AttrName::Eps, 1e-5);
  int64_t size = product(in.shape, axis), rows = product(in.shape, 0, axis);
  size_t numOperands = graph.operands(node).size();
  bool rms = graph.kind(node) == OpKind::RmsNorm;
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = in.values.data() + r * size;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < size; ++j)
      mean += x[j];
    mean = rms ? 0 : mean / size;
    for (int64_t j = 0; j < size; ++j)
      var += (x[j] - mean) * (x[j] - mean);
    double inv = 1 / std::sqrt(var / size + eps);
    for (int64_t j = 0; j < size; ++j) {
      double y = (x[j] - mean) * inv;
      if (numOperands > 1)
        y *= operand(node, 1).values[j];
      if (numOperands > 2)
        y += operand(node, 2).values[j];
      out.values[r * size + j] = y;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Views and data movement
//===----------------------------------------------------------------------===//

HostTensor Interpreter::view(NodeId node) {
  OpKind kind = graph.kind(node);
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  Layout source = Layout::contiguous(in.shape);
  Layout layout;
  switch (kind) {
  case OpKind::Transpose: {
    std::vector<int64_t> reversed(in.shape.size());
    for (size_t i = 0; i < reversed.size(); ++i)
      reversed[i] = static_cast<int64_t>(reversed.size() - 1 - i);
    layout = transposeView(source, ints(node, AttrName::Perm, reversed));
    break;
  }
  case OpKind::Slice: {
    std::vector<int64_t> starts = ints(node, AttrName::Starts);
    std::vector<int64_t> defaultAxes(starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
      defaultAxes[i] = static_cast<int64_t>(i);
    layout = sliceView(source, ints(node, AttrName::Axes, defaultAxes), starts,
                       ints(node, AttrName::Ends),
                       ints(node, AttrName::Steps,
                            std::vector<int64_t>(starts.size(), 1)));
    break;
  }
  case OpKind::BroadcastTo:
  case OpKind::Expand:
    layout = broadcastView(source, out.shape);
    break;
  default: // reshape, squeeze, unsqueeze: the same elements in order.
    out.values = in.values;
    return out;
  }
  Extents index;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    out.values[i] = in.values[layout.elementOffset(index)];
  }
  return out;
}

HostTensor Interpreter::concat(NodeId node) {
  HostTensor out = result(node);
  unsigned axis = axisAttr(node, 0, out.shape.size());
  int64_t outer = product(out.shape, 0, axis);
  int64_t inner = product(out.shape, axis + 1);
  int64_t at = 0; // Position along the axis.
  for (unsigned i = 0; i < graph.operands(node).size(); ++i) {
    const HostTensor &in = operand(node, i);
    int64_t extent = in.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(in.values.begin() + o * extent * inner, extent * inner,
                  out.values.begin() + (o * out.shape[axis] + at) * inner);
    at += extent;
  }
  return out;
}

std::vector<HostTensor> Interpreter::split(NodeId node) {
  const HostTensor &in = operand(node, 0);
  unsigned axis = axisAttr(node, 0, in.shape.size());
  int64_t outer = product(in.shape, 0, axis), inner = product(in.shape, axis + 1);
  std::vector<HostTensor> parts;
  int64_t at = 0;
  for (uint32_t r = 0; r < graph.numResults(node); ++r) {
    HostTensor part = result(node, r);
    int64_t extent = part.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(in.values.begin() + (o * in.shape[axis] + at) * inner,
                  extent * inner, part.values.begin() + o * extent * inner);
    at += extent;
    parts.push_back(std::move(part));
  }
  return parts;
}

LogicalResult Interpreter::gather(NodeId node, HostTensor &out) {
  const HostTensor &data = operand(node, 0), &indices = operand(node, 1);
  out = result(node);
  unsigned axis = axisAttr(node, 0, data.shape.size());
  int64_t outer = product(data.shape, 0, axis);
  int64_t inner = product(data.shape, axis + 1), extent = data.shape[axis];
  int64_t count = indices.numElements();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = static_cast<int64_t>(indices.values[i]);
      if (index < -extent || index >= extent)
        return error(node, "gather index " + std::to_string(index) +
                               " is out of range for extent " +
                               std::to_string(extent));
      if (index < 0)
        index += extent;
      std::copy_n(data.values.begin() + (o * extent + index) * inner, inner,
                  out.values.begin() + (o * count + i) * inner);
    }
  return success();
}

HostTensor Interpreter::pad(NodeId node) {
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  std::vector<int64_t> pads = ints(node, AttrName::Pads);
  std::string_view mode = "constant";
  if (const Attribute *a = graph.findAttr(node, AttrName::Mode))
    mode = graph.stringAttr(*a);
  double value = graph.getFloat(node, AttrName::Value, 0);
  size_t rank = in.shape.size();
  Extents index;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    bool outside = false;
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t at = index[d] - pads[d], extent = in.shape[d];
      if (at < 0 || at >= extent) {
        outside = true;
        if (mode == "reflect")
          at = at < 0 ? -at : 2 * (extent - 1) - at;
        else if (mode == "edge")
          at = std::clamp<int64_t>(at, 0, extent - 1);
      }
      offset = offset * extent + at;
    }
    out.values[i] = outside && mode == "constant" ? value : in.values[offset];
  }
  return out;
}

LogicalResult Interpreter::writeSlice(NodeId node, HostTensor &out) {
  out = operand(node, 0);
  const HostTensor &src = operand(node, 1);
  unsigned axis = axisAttr(node, 0, out.shape.size());
  Dim offsetDim = graph.dimsAttr(*graph.findAttr(node, AttrName::Offset))[0];
  int64_t offset = offsetDim.isStatic() ? offsetDim.size()
                                        : symbolValues[offsetDim.symbolId()];
  if (offset < 0 || offset + src.shape[axis] > out.shape[axis])
    return error(node, "write_slice offset " + std::to_string(offset) +
                           " puts a slice of extent " +
                           std::to_string(src.shape[axis]) +
                           " outside the destination extent " +
                           std::to_string(out.shape[axis]));
  Extents index;
  for (int64_t i = 0; i < src.numElements(); ++i) {
    unravel(i, src.shape, index);
    index[axis] += offset;
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d)
      o = o * out.shape[d] + index[d];
    out.values[o] = src.values[i];
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::bindInput(NodeId node, const HostTensor &t) {
  ValueRef v{node, 0};
  std::string name(graph.name(node));
  if (t.dtype != graph.dtype(v))
    return error(node, "input '" + name + "' must be " +
                           std::string(dtypeName(graph.dtype(v))) + ", got " +
                           std::string(dtypeName(t.dtype)));
  ShapeRef declared = graph.shape(v);
  auto mismatch = [&] {
    std::string got;
    for (size_t i = 0; i < t.shape.size(); ++i)
      got += (i ? ", " : "") + std::to_string(t.shape[i]);
    return error(node, "input '" + name + "' must have shape " +
                           formatShape(declared, graph.symbols()) + ", got [" +
                           got + "]");
  };
  if (declared.size() != t.shape.size())
    return mismatch();
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d].isStatic()) {
      if (declared[d].size() != t.shape[d])
        return mismatch();
      continue;
    }
    int64_t &bound = symbolValues[declared[d].symbolId()];
    if (bound >= 0 && bound != t.shape[d])
      return error(node, "input '" + name + "' binds symbol '" +
                             std::string(graph.symbols().name(declared[d].symbolId())) +
                             "' to " + std::to_string(t.shape[d]) +
                             ", another input bound it to " +
                             std::to_string(bound));
    bound = t.shape[d];
  }
  HostTensor rounded = t;
  for (double &x : rounded.values)
    x = roundToDType(x, rounded.dtype);
  values[node] = {std::move(rounded)};
  return success();
}

LogicalResult Interpreter::evalNode(NodeId node, std::vector<HostTensor> &out) {
  OpKind kind = graph.kind(node);
  switch (opFamily(kind)) {
  case OpFamily::Unary:
    out = {unary(node)};
    break;
  case OpFamily::Binary:
    out = {binary(node)};
    break;
  case OpFamily::Linalg:
    out = {kind == OpKind::MatMul   ? matmul(node)
           : kind == OpKind::Linear ? linear(node)
           : kind == OpKind::Conv2D ? conv2d(node)
                                    : pool2d(node)};
    break;
  case OpFamily::Reduction:
    out = {kind == OpKind::Softmax || kind == OpKind::LogSoftmax ? softmax(node)
           : kind == OpKind::LayerNorm || kind == OpKind::RmsNorm
               ? normalize(node)
               : reduce(node)};
    break;
  case OpFamily::View:
    out = {view(node)};
    break;
  case OpFamily::Movement:
    if (kind == OpKind::Concat)
      out = {concat(node)};
    else if (kind == OpKind::Split)
      out = split(node);
    else if (kind == OpKind::Pad)
      out = {pad(node)};
    else {
      out.resize(1);
      return gather(node, out[0]);
    }
    break;
  case OpFamily::Structural:
    if (kind == OpKind::Alloc) {
      out = {result(node)};
    } else if (kind == OpKind::WriteSlice) {
      out.resize(1);
      return writeSlice(node, out[0]);
    } else {
      out = {operand(node, 0)}; // copy, move: same values, other device.
    }
    break;
  case OpFamily::Source: {
    const ConstantData *data = graph.constantData(node);
    out = {HostTensor::fromBytes(graph.dtype({node, 0}),
                                 concrete(graph.shape({node, 0})),
                                 data->bytes())};
    break;
  }
  }
  return success();
}

LogicalResult Interpreter::run(const std::map<std::string, HostTensor> &inputs,
                               std::vector<HostTensor> &outputs) {
  bool ok = true;
  std::map<std::string_view, NodeId> declared;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      declared[graph.name(n)] = n;
  for (const auto &[name, tensor] : inputs) {
    auto it = declared.find(name);
    if (it == declared.end()) {
      diag.error({}, "the graph has no input named '" + name + "'");
      ok = false;
      continue;
    }
    ok &= succeeded(bindInput(it->second, tensor));
  }
  for (const auto &[name, node] : declared)
    if (!inputs.count(std::string(name))) {
      ok = false;
      (void)error(node, "input '" + std::string(name) + "' is not given");
    }
  if (!ok)
    return failure();
  std::vector<NodeId> order;
  topologicalOrder(graph, order);
  for (NodeId node : order) {
    if (graph.kind(node) == OpKind::Input)
      continue;
    std::vector<HostTensor> results;
    if (failed(evalNode(node, results)))
      return failure();
    for (HostTensor &t : results)
      for (double &x : t.values)
        x = roundToDType(x, t.dtype);
    values[node] = std::move(results);
  }
  outputs.clear();
  for (ValueRef v : graph.outputs())
    outputs.push_back(values[v.node][v.result]);
  return success();
}

LogicalResult fuel::interpret(const Graph &graph,
                              const std::map<std::string, HostTensor> &inputs,
                              std::vector<HostTensor> &outputs,
                              DiagnosticEngine &diag) {
  return Interpreter(graph, diag).run(inputs, outputs);
}
