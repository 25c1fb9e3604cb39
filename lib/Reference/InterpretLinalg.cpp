//===- InterpretLinalg.cpp - Reference contractions and reductions --------===//
//
// matmul, linear, conv2d, pooling, reductions, softmax and normalizations,
// as plain loops accumulating in double precision.
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

#include "fuel/IR/Window.h"

using namespace fuel;
using namespace fuel::detail;

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
            acc = isMax ? maxOrNaN(acc, v) : acc + v;
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
      acc[o] = maxOrNaN(acc[o], v);
      break;
    case OpKind::ReduceMin:
      acc[o] = minOrNaN(acc[o], v);
      break;
    default: // First occurrence wins on ties; the first NaN wins (numpy).
      if (!std::isnan(best[o]) &&
          (std::isnan(v) || (kind == OpKind::ArgMax ? v > best[o] : v < best[o]))) {
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
        mx = maxOrNaN(mx, in.values[at(j)]);
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
