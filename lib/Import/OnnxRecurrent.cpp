//===- OnnxRecurrent.cpp - ONNX RNN, GRU and LSTM, unrolled ---------------===//
//
// The recurrent ops over a static sequence length, unrolled at import:
// - the input projection of every step is one matmul per direction
//   ([S, B, I] x [I, G*H], biases added once), so the bulk of the
//   arithmetic is a single GEMM;
// - each step is the recurrent matmul (H_{t-1} x R^T, all gates at once)
//   and the cell's elementwise gate arithmetic, which the fusion pass fuses
//   into one kernel per step;
// - Y stacks the steps' hidden states, Y_h (and LSTM's Y_c) is the last.
// Gate orders and equations are ONNX's: RNN `i`; GRU `z r h` (with
// linear_before_reset); LSTM `i o f c` with peepholes `i o f`. Directions
// forward, reverse and bidirectional; `clip` bounds the gates' inputs;
// `sequence_lens` (constant) masks the steps past each batch's length, the
// state held and Y zero there (reverse directions need full lengths).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
enum class Cell { Rnn, Gru, Lstm };

/// Each step is a few dozen IR nodes: beyond this the graph (and its plan)
/// grows past what unrolling is good for.
constexpr int64_t kMaxUnrolledSteps = 4096;

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

class Recurrence {
public:
  Recurrence(Importer &im, Cell cell) : im(im), k(im), cell(cell) {}

  bool run();

private:
  unsigned gates() const { return cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4; }
  unsigned activationsPerDirection() const {
    return cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  }
  bool readActivations(unsigned directions);

  ValueRef slice(ValueRef v, int64_t axis, int64_t begin, int64_t end) {
    return k.op(OpKind::Slice, {v}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{begin});
      g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{end});
      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{axis});
    });
  }
  ValueRef squeezeOrUnsqueeze(OpKind kind, ValueRef v, int64_t axis) {
    return k.op(kind, {v},
                [&](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{axis}); });
  }
  /// Entry `d` of axis 0 of input `i` ([D, ...] -> [...]).
  ValueRef direction(size_t i, int64_t d) {
    return squeezeOrUnsqueeze(OpKind::Squeeze, slice(im.input(i), 0, d, d + 1), 0);
  }
  /// Gates g..g+count-1 (`hidden` entries each) along the last axis.
  ValueRef gate(ValueRef v, unsigned g, unsigned count = 1) {
    int64_t axis = static_cast<int64_t>(im.graph.shape(v).size()) - 1;
    return slice(v, axis, g * hidden, (g + count) * hidden);
  }
  /// The rows of a [gates * hidden, hidden] recurrence weight for gates
  /// g..g+count-1.
  ValueRef gateRows(ValueRef v, unsigned g, unsigned count = 1) {
    return slice(v, 0, g * hidden, (g + count) * hidden);
  }
  /// a x b^T.
  ValueRef matmulT(ValueRef a, ValueRef b) {
    return k.op(OpKind::MatMul, {a, b},
                [](Graph &g) { g.addBoolAttr(AttrName::TransposeB, true); });
  }
  ValueRef add(std::optional<ValueRef> a, ValueRef b) { return a ? k.op(OpKind::Add, {*a, b}) : b; }
  ValueRef apply(const Activation &f, ValueRef v);

  /// Runs direction `d` over the steps in `order`; returns the steps'
  /// hidden states in time order and the final hidden and cell states.
  bool runDirection(int64_t d, std::vector<ValueRef> &ys, ValueRef &lastH, ValueRef &lastC);

  Importer &im;
  Composer k;
  Cell cell;
  int64_t steps = 0, hidden = 0;
  std::vector<Activation> activations; // activationsPerDirection() per direction.
  std::optional<double> clip;
  std::vector<int64_t> lengths; // Per batch, empty: every step.
  bool reverseOnly = false;
  bool linearBeforeReset = false;
  ValueRef x;
};

bool Recurrence::readActivations(unsigned directions) {
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = im.attr("activations"))
    names.assign(a->strings().begin(), a->strings().end());
  if (names.empty()) {
    for (unsigned d = 0; d < directions; ++d) {
      if (cell == Cell::Rnn)
        names.push_back("Tanh");
      else
        names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
      names.resize((d + 1) * activationsPerDirection());
    }
  }
  if (names.size() != directions * activationsPerDirection())
    return im.unsupported("expected " + std::to_string(directions * activationsPerDirection()) +
                          " activations, got " + std::to_string(names.size()));
  std::vector<float> alphas, betas;
  if (const onnx::AttributeProto *a = im.attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const onnx::AttributeProto *a = im.attr("activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  // Defaults are the ONNX ops'; listed values go, in order, to the
  // functions that take them.
  struct Defaults {
    const char *name;
    double alpha, beta;
    bool takesAlpha, takesBeta;
  };
  static const Defaults kKnown[] = {
      {"Sigmoid", 0, 0, false, false},     {"Tanh", 0, 0, false, false},
      {"Relu", 0, 0, false, false},        {"Softsign", 0, 0, false, false},
      {"LeakyRelu", 0.01, 0, true, false}, {"HardSigmoid", 0.2, 0.5, true, true},
      {"Affine", 1, 0, true, true},        {"ScaledTanh", 1, 1, true, true}};
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    auto it = std::find_if(std::begin(kKnown), std::end(kKnown),
                           [&](const Defaults &d) { return name == d.name; });
    if (it == std::end(kKnown))
      return im.unsupported("activation '" + name + "' is not supported");
    Activation f{name, it->alpha, it->beta};
    if (it->takesAlpha && nextAlpha < alphas.size())
      f.alpha = alphas[nextAlpha++];
    if (it->takesBeta && nextBeta < betas.size())
      f.beta = betas[nextBeta++];
    activations.push_back(f);
  }
  return true;
}

ValueRef Recurrence::apply(const Activation &f, ValueRef v) {
  if (clip)
    v = k.op(OpKind::Clamp, {v}, [&](Graph &g) {
      g.addFloatAttr(AttrName::MinValue, -*clip);
      g.addFloatAttr(AttrName::MaxValue, *clip);
    });
  if (f.name == "Sigmoid")
    return k.op(OpKind::Sigmoid, {v});
  if (f.name == "Tanh")
    return k.op(OpKind::Tanh, {v});
  if (f.name == "Relu")
    return k.op(OpKind::Relu, {v});
  if (f.name == "Softsign")
    return k.op(OpKind::Div, {v, k.op(OpKind::Add, {k.op(OpKind::Abs, {v}), k.c(1)})});
  if (f.name == "LeakyRelu")
    return k.op(OpKind::Max, {v, k.op(OpKind::Mul, {v, k.c(f.alpha)})});
  ValueRef affine = k.op(OpKind::Add, {k.op(OpKind::Mul, {v, k.c(f.alpha)}), k.c(f.beta)});
  if (f.name == "Affine")
    return affine;
  if (f.name == "HardSigmoid")
    return k.op(OpKind::Clamp, {affine}, [](Graph &g) {
      g.addFloatAttr(AttrName::MinValue, 0);
      g.addFloatAttr(AttrName::MaxValue, 1);
    });
  // ScaledTanh: alpha * tanh(beta * v).
  ValueRef scaled = k.op(OpKind::Mul, {v, k.c(f.beta)});
  return k.op(OpKind::Mul, {k.op(OpKind::Tanh, {scaled}), k.c(f.alpha)});
}

bool Recurrence::runDirection(int64_t d, std::vector<ValueRef> &ys, ValueRef &lastH,
                              ValueRef &lastC) {
  const Activation *f = &activations[d * activationsPerDirection()];
  ValueRef w = direction(1, d), r = direction(2, d);
  // Biases: Wb and Rb summed into the projection, but GRU's Rb_h, which
  // linear_before_reset puts inside the reset gate's product.
  std::optional<ValueRef> inputBias, hiddenBias;
  if (im.hasInput(3)) {
    ValueRef b = direction(3, d);
    int64_t gh = gates() * hidden;
    ValueRef wb = slice(b, 0, 0, gh), rb = slice(b, 0, gh, 2 * gh);
    if (cell == Cell::Gru && linearBeforeReset) {
      inputBias =
          k.op(OpKind::Concat, {k.op(OpKind::Add, {gate(wb, 0, 2), gate(rb, 0, 2)}), gate(wb, 2)},
               [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); });
      hiddenBias = gate(rb, 2);
    } else {
      inputBias = k.op(OpKind::Add, {wb, rb});
    }
  }
  ValueRef projection = matmulT(x, w);
  if (inputBias)
    projection = k.op(OpKind::Add, {projection, *inputBias});
  std::optional<ValueRef> h, c, peephole;
  if (im.hasInput(5))
    h = direction(5, d);
  if (cell == Cell::Lstm && im.hasInput(6))
    c = direction(6, d);
  if (cell == Cell::Lstm && im.hasInput(7))
    peephole = direction(7, d);
  bool reverse = reverseOnly || d == 1;
  ys.assign(static_cast<size_t>(steps), projection);
  for (int64_t i = 0; i < steps; ++i) {
    int64_t t = reverse ? steps - 1 - i : i;
    ValueRef in = squeezeOrUnsqueeze(OpKind::Squeeze, slice(projection, 0, t, t + 1), 0);
    ValueRef newH;
    std::optional<ValueRef> newC;
    if (cell == Cell::Rnn) {
      newH = apply(f[0], h ? add(matmulT(*h, r), in) : in);
    } else if (cell == Cell::Gru) {
      std::optional<ValueRef> recZr =
          h ? std::optional(matmulT(*h, gateRows(r, 0, 2))) : std::nullopt;
      ValueRef zr = recZr ? add(*recZr, gate(in, 0, 2)) : gate(in, 0, 2);
      ValueRef z = apply(f[0], gate(zr, 0)), reset = apply(f[0], gate(zr, 1));
      ValueRef candidate = gate(in, 2);
      if (h) {
        ValueRef rh = gateRows(r, 2);
        ValueRef recH =
            linearBeforeReset
                ? k.op(OpKind::Mul,
                       {reset, hiddenBias ? add(matmulT(*h, rh), *hiddenBias) : matmulT(*h, rh)})
                : matmulT(k.op(OpKind::Mul, {reset, *h}), rh);
        candidate = add(candidate, recH);
      } else if (linearBeforeReset && hiddenBias) {
        candidate = add(candidate, k.op(OpKind::Mul, {reset, *hiddenBias}));
      }
      ValueRef hTilde = apply(f[1], candidate);
      // (1 - z) * h~ + z * H = h~ + z * (H - h~)
      newH =
          h ? k.op(OpKind::Add, {hTilde, k.op(OpKind::Mul, {z, k.op(OpKind::Sub, {*h, hTilde})})})
            : k.op(OpKind::Sub, {hTilde, k.op(OpKind::Mul, {z, hTilde})});
    } else {
      ValueRef pre = h ? add(matmulT(*h, r), in) : in;
      auto withPeephole = [&](ValueRef v, unsigned p, std::optional<ValueRef> state) {
        return peephole && state
                   ? k.op(OpKind::Add, {v, k.op(OpKind::Mul, {gate(*peephole, p), *state})})
                   : v;
      };
      ValueRef inputGate = apply(f[0], withPeephole(gate(pre, 0), 0, c));
      ValueRef forgetGate = apply(f[0], withPeephole(gate(pre, 2), 2, c));
      ValueRef cellIn = apply(f[1], gate(pre, 3));
      ValueRef kept = k.op(OpKind::Mul, {inputGate, cellIn});
      newC = c ? k.op(OpKind::Add, {k.op(OpKind::Mul, {forgetGate, *c}), kept}) : kept;
      ValueRef outputGate = apply(f[0], withPeephole(gate(pre, 1), 1, newC));
      newH = k.op(OpKind::Mul, {outputGate, apply(f[2], *newC)});
    }
    if (!lengths.empty() &&
        std::any_of(lengths.begin(), lengths.end(), [&](int64_t n) { return n <= t; })) {
      KnownTensor mask{DType::Bool, {static_cast<int64_t>(lengths.size()), 1}, {}};
      for (int64_t n : lengths)
        mask.bytes += static_cast<char>(t < n);
      ValueRef live = k.constant(mask);
      ValueRef zero = k.c(0);
      ys[t] = k.op(OpKind::Where, {live, newH, zero});
      newH = k.op(OpKind::Where, {live, newH, h ? *h : zero});
      if (newC)
        newC = k.op(OpKind::Where, {live, *newC, c ? *c : zero});
    } else {
      ys[t] = newH;
    }
    h = newH;
    c = newC;
  }
  lastH = *h;
  lastC = c.value_or(*h);
  return !k.failed();
}

bool Recurrence::run() {
  if (!k.floatInput())
    return false;
  std::string dir = im.attrString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return im.unsupported("direction '" + dir + "' is not supported");
  unsigned directions = dir == "bidirectional" ? 2 : 1;
  reverseOnly = dir == "reverse";
  bool batchFirst = im.attrInt("layout", 0) != 0;
  linearBeforeReset = im.attrInt("linear_before_reset", 0) != 0;
  if (im.attrInt("input_forget", 0))
    return im.unsupported("input_forget=1 is not supported");
  if (const onnx::AttributeProto *a = im.attr("clip"))
    clip = a->f();
  if (!readActivations(directions))
    return false;
  x = k.x;
  if (batchFirst)
    x = k.op(OpKind::Transpose, {x}, [](Graph &g) {
      g.addIntsAttr(AttrName::Perm, std::vector<int64_t>{1, 0, 2});
    });
  ShapeRef xs = im.graph.shape(x), ws = im.graph.shape(im.input(1));
  if (xs.size() != 3 || !xs[0].isStatic() || ws.size() != 3 || !ws[1].isStatic())
    return im.unsupported("X must be [seq, batch, input] with a static sequence length "
                          "(it is unrolled) and W [directions, gates * hidden, input]");
  steps = xs[0].size();
  if (steps > kMaxUnrolledSteps)
    return im.unsupported("a sequence of " + std::to_string(steps) + " steps is longer than the " +
                          std::to_string(kMaxUnrolledSteps) +
                          " fuelc unrolls (a loop kernel is not implemented yet)");
  hidden = im.attrInt("hidden_size", ws[1].size() / gates());
  if (hidden * gates() != ws[1].size() || ws[0] != Dim::fixed(directions))
    return im.unsupported("W must be [" + std::to_string(directions) + ", " +
                          std::to_string(gates()) + " * hidden_size, input]");
  if (im.hasInput(4)) {
    const KnownTensor *lens = constInts(im, 4, "sequence_lens");
    if (!lens)
      return false;
    lengths = lens->ints();
    if (xs[1] != Dim::fixed(static_cast<int64_t>(lengths.size())))
      return im.unsupported("sequence_lens must have one length per batch entry");
    bool full = std::all_of(lengths.begin(), lengths.end(), [&](int64_t n) { return n >= steps; });
    if (full)
      lengths.clear();
    else if (dir != "forward")
      return im.unsupported("sequence_lens shorter than the sequence need direction forward");
  }
  std::vector<ValueRef> stacked, lastH, lastC;
  for (unsigned d = 0; d < directions; ++d) {
    std::vector<ValueRef> ys;
    ValueRef h = x, c = x;
    if (!runDirection(d, ys, h, c))
      return false;
    for (ValueRef &y : ys) // [B, H] -> [1, 1, B, H]
      y = squeezeOrUnsqueeze(OpKind::Unsqueeze, squeezeOrUnsqueeze(OpKind::Unsqueeze, y, 0), 0);
    auto concat0 = [&](const std::vector<ValueRef> &parts) {
      return parts.size() == 1
                 ? parts[0]
                 : k.op(OpKind::Concat, parts, [](Graph &g) { g.addIntAttr(AttrName::Axis, 0); });
    };
    stacked.push_back(concat0(ys));
    lastH.push_back(squeezeOrUnsqueeze(OpKind::Unsqueeze, h, 0));
    lastC.push_back(squeezeOrUnsqueeze(OpKind::Unsqueeze, c, 0));
  }
  auto join = [&](const std::vector<ValueRef> &parts, int64_t axis) {
    return parts.size() == 1
               ? parts[0]
               : k.op(OpKind::Concat, parts, [&](Graph &g) { g.addIntAttr(AttrName::Axis, axis); });
  };
  ValueRef y = join(stacked, 1), yh = join(lastH, 0), yc = join(lastC, 0);
  if (batchFirst) { // [S, D, B, H] -> [B, S, D, H]; [D, B, H] -> [B, D, H]
    y = k.op(OpKind::Transpose, {y}, [](Graph &g) {
      g.addIntsAttr(AttrName::Perm, std::vector<int64_t>{2, 0, 1, 3});
    });
    auto batchLead = [&](ValueRef v) {
      return k.op(OpKind::Transpose, {v}, [](Graph &g) {
        g.addIntsAttr(AttrName::Perm, std::vector<int64_t>{1, 0, 2});
      });
    };
    yh = batchLead(yh);
    yc = batchLead(yc);
  }
  bool ok = !k.failed();
  if (im.outputUsed(0))
    ok = ok && k.finish(y, 0);
  if (im.outputUsed(1))
    ok = ok && k.finish(yh, 1);
  if (cell == Cell::Lstm && im.outputUsed(2))
    ok = ok && k.finish(yc, 2);
  return ok;
}
} // namespace

void onnximport::addRecurrentHandlers(HandlerTable &table) {
  table.insert({{"RNN", [](Importer &im) { return Recurrence(im, Cell::Rnn).run(); }},
                {"GRU", [](Importer &im) { return Recurrence(im, Cell::Gru).run(); }},
                {"LSTM", [](Importer &im) { return Recurrence(im, Cell::Lstm).run(); }}});
}
