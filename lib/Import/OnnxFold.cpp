//===- OnnxFold.cpp - Folding shape arithmetic at import ------------------===//
//
// Exporters compute shapes with small integer subgraphs (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, Range, ConstantOfShape). When every input
// of such a node is known, the importer computes its output here, so the
// shape reaches the Reshape (or Expand, Slice, ...) as a constant. Integer
// tensors of rank <= 1 are folded element by element, where an element is a
// factor times symbols: a Shape of `[T, B, 512]` is `[T, B, 512]`, and
// `B * 8` stays `8*B`, so a symbolic batch survives PyTorch's attention
// reshapes. Float scalar arithmetic folds too (a Range's float bounds).
// Anything else is imported as ops.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// A rank <= 1 integer tensor whose elements are factor * symbols (a plain
/// integer has no symbols and any sign).
struct IntVector {
  DType dtype = DType::I64;
  bool scalar = false;
  std::vector<SymbolProduct> elements;

  bool isStatic() const {
    return std::all_of(elements.begin(), elements.end(),
                       [](const SymbolProduct &p) { return p.symbols.empty(); });
  }
};

std::optional<IntVector> intVectorOf(Importer &im, size_t i) {
  if (const SymbolicInts *s = im.symbolicInput(i)) {
    IntVector v{s->dtype, s->scalar, {}};
    for (Dim d : s->elements)
      v.elements.push_back(d.isInferred() ? SymbolProduct{-1, {}} : im.graph.symbols().expand(d));
    return v;
  }
  const KnownTensor *t = im.constantInput(i);
  if (!t || (t->dtype != DType::I64 && t->dtype != DType::I32 && t->dtype != DType::Bool) ||
      t->shape.size() > 1)
    return std::nullopt;
  IntVector v{t->dtype, t->shape.empty(), {}};
  for (int64_t x : t->ints())
    v.elements.push_back({x, {}});
  return v;
}

std::vector<int64_t> staticValues(const IntVector &v) {
  std::vector<int64_t> out;
  for (const SymbolProduct &p : v.elements)
    out.push_back(p.factor);
  return out;
}

/// a op b for Add/Sub/Mul/Div: any two integers; products of symbols
/// multiply, and divide where the quotient is exact.
std::optional<SymbolProduct> arithmetic(const std::string &op, SymbolProduct a,
                                        const SymbolProduct &b) {
  bool plain = a.symbols.empty() && b.symbols.empty();
  if (op == "Mul") {
    a.factor *= b.factor;
    a.symbols.insert(a.symbols.end(), b.symbols.begin(), b.symbols.end());
    return a;
  }
  if (op == "Div") {
    if (b.factor == 0)
      return std::nullopt;
    if (plain)
      return SymbolProduct{a.factor / b.factor, {}};
    // Exact: b's symbols are among a's and the factors divide.
    for (uint32_t s : b.symbols) {
      auto it = std::find(a.symbols.begin(), a.symbols.end(), s);
      if (it == a.symbols.end())
        return std::nullopt;
      a.symbols.erase(it);
    }
    if (a.factor % b.factor != 0)
      return std::nullopt;
    a.factor /= b.factor;
    return a;
  }
  if (!plain)
    return std::nullopt; // A sum of symbols is not a product.
  return SymbolProduct{op == "Add" ? a.factor + b.factor : a.factor - b.factor, {}};
}

/// numpy broadcasting of two rank <= 1 vectors under `op`.
std::optional<IntVector> elementwise(const std::string &op, const IntVector &a,
                                     const IntVector &b) {
  size_t n = std::max(a.elements.size(), b.elements.size());
  if ((a.elements.size() != n && a.elements.size() != 1) ||
      (b.elements.size() != n && b.elements.size() != 1))
    return std::nullopt;
  IntVector out{a.dtype, a.scalar && b.scalar, {}};
  for (size_t i = 0; i < n; ++i) {
    std::optional<SymbolProduct> r = arithmetic(op, a.elements[a.elements.size() == 1 ? 0 : i],
                                                b.elements[b.elements.size() == 1 ? 0 : i]);
    if (!r)
      return std::nullopt;
    out.elements.push_back(*r);
  }
  return out;
}

/// Equal of two rank <= 1 vectors (numpy broadcasting), when every element
/// is decided: static ones compare, and a product of symbols (a positive
/// extent) differs from any static value below 1 (-1 in PyTorch's expand
/// pattern).
std::optional<IntVector> equal(const IntVector &a, const IntVector &b) {
  size_t n = std::max(a.elements.size(), b.elements.size());
  if ((a.elements.size() != n && a.elements.size() != 1) ||
      (b.elements.size() != n && b.elements.size() != 1))
    return std::nullopt;
  IntVector out{DType::Bool, a.scalar && b.scalar, {}};
  for (size_t i = 0; i < n; ++i) {
    const SymbolProduct &x = a.elements[a.elements.size() == 1 ? 0 : i];
    const SymbolProduct &y = b.elements[b.elements.size() == 1 ? 0 : i];
    bool xStatic = x.symbols.empty(), yStatic = y.symbols.empty();
    if (xStatic && yStatic)
      out.elements.push_back({x.factor == y.factor ? 1 : 0, {}});
    else if ((xStatic && x.factor < 1) || (yStatic && y.factor < 1))
      out.elements.push_back({0, {}});
    else
      return std::nullopt;
  }
  return out;
}

/// Where(condition, x, y) over rank <= 1 vectors, the condition static.
std::optional<IntVector> select(const IntVector &c, const IntVector &x, const IntVector &y) {
  size_t n = std::max({c.elements.size(), x.elements.size(), y.elements.size()});
  for (const IntVector *v : {&c, &x, &y})
    if (v->elements.size() != n && v->elements.size() != 1)
      return std::nullopt;
  if (!c.isStatic())
    return std::nullopt;
  IntVector out{x.dtype, c.scalar && x.scalar && y.scalar, {}};
  auto at = [](const IntVector &v, size_t i) { return v.elements[v.elements.size() == 1 ? 0 : i]; };
  for (size_t i = 0; i < n; ++i)
    out.elements.push_back(at(c, i).factor != 0 ? at(x, i) : at(y, i));
  return out;
}

/// The indices numpy slicing picks from a vector of `n` (Slice's inputs;
/// axes must be {0}).
std::optional<std::vector<int64_t>> sliceIndices(int64_t n, const std::vector<int64_t> &starts,
                                                 const std::vector<int64_t> &ends,
                                                 const std::vector<int64_t> &axes,
                                                 const std::vector<int64_t> &steps) {
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
      (axes[0] != 0 && axes[0] != -1) || steps[0] == 0)
    return std::nullopt;
  int64_t step = steps[0];
  auto clampIndex = [&](int64_t i, int64_t lo, int64_t hi) {
    i = i < 0 ? (i < -n ? lo : i + n) : i;
    return std::clamp(i, lo, hi);
  };
  // Forward slices clamp to [0, n], backward ones to [-1, n - 1].
  int64_t begin = step > 0 ? clampIndex(starts[0], 0, n) : clampIndex(starts[0], -1, n - 1);
  int64_t end = step > 0 ? clampIndex(ends[0], 0, n) : clampIndex(ends[0], -1, n - 1);
  std::vector<int64_t> picked;
  for (int64_t i = begin; step > 0 ? i < end : i > end; i += step)
    picked.push_back(i);
  return picked;
}

/// The output of an integer shape op over `in`, or nullopt to import it as
/// ops.
std::optional<IntVector> fold(Importer &im, const std::string &op,
                              const std::vector<IntVector> &in) {
  if (in.empty())
    return std::nullopt;
  const IntVector &x = in[0];
  if (op == "Identity" || op == "Cast") {
    int64_t to = im.attrInt("to", onnx::TensorProto::INT64);
    if (op == "Cast" && to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
      return std::nullopt;
    IntVector out = x;
    if (op == "Cast")
      out.dtype = to == onnx::TensorProto::INT32 ? DType::I32 : DType::I64;
    return out;
  }
  if (op == "Squeeze" && x.elements.size() == 1) {
    IntVector out = x;
    out.scalar = true;
    return out;
  }
  if (op == "Unsqueeze" && x.scalar) {
    IntVector out = x;
    out.scalar = false;
    return out;
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && in.size() == 2)
    return elementwise(op, x, in[1]);
  if (op == "Equal" && in.size() == 2)
    return equal(x, in[1]);
  if (op == "Where" && in.size() == 3)
    return select(x, in[1], in[2]);
  // A vector reshaped to one axis (PyTorch's expand pattern reshapes its
  // target shape to [-1]).
  if (op == "Reshape" && in.size() == 2 && in[1].isStatic() && in[1].elements.size() == 1 &&
      (in[1].elements[0].factor == -1 ||
       in[1].elements[0].factor == static_cast<int64_t>(x.elements.size()))) {
    IntVector out = x;
    out.scalar = false;
    return out;
  }
  // The shape of a vector computed from symbolic extents (it has no IR
  // value to take the shape of).
  if (op == "Shape" && im.symbolicInput(0) && !im.attr("start") && !im.attr("end")) {
    IntVector out{DType::I64, false, {}};
    if (!x.scalar)
      out.elements.push_back({static_cast<int64_t>(x.elements.size()), {}});
    return out;
  }
  if (op == "Neg" && x.isStatic()) {
    IntVector out = x;
    for (SymbolProduct &p : out.elements)
      p.factor = -p.factor;
    return out;
  }
  if (op == "Concat") {
    IntVector out{x.dtype, false, {}};
    for (const IntVector &v : in) {
      if (v.scalar)
        return std::nullopt;
      out.elements.insert(out.elements.end(), v.elements.begin(), v.elements.end());
    }
    return out;
  }
  std::vector<int64_t> picked;
  if (op == "Gather" && in.size() == 2 && !x.scalar && im.attrInt("axis", 0) == 0 &&
      in[1].isStatic()) {
    int64_t n = static_cast<int64_t>(x.elements.size());
    for (int64_t i : staticValues(in[1])) {
      if (i < -n || i >= n)
        return std::nullopt;
      picked.push_back(i < 0 ? i + n : i);
    }
    IntVector out{x.dtype, in[1].scalar, {}};
    for (int64_t i : picked)
      out.elements.push_back(x.elements[i]);
    return out;
  }
  if (op == "Slice" && in.size() >= 3 && !x.scalar &&
      std::all_of(in.begin() + 1, in.end(), [](const IntVector &v) { return v.isStatic(); })) {
    std::optional<std::vector<int64_t>> at = sliceIndices(
        static_cast<int64_t>(x.elements.size()), staticValues(in[1]), staticValues(in[2]),
        in.size() > 3 ? staticValues(in[3]) : std::vector<int64_t>{0},
        in.size() > 4 ? staticValues(in[4]) : std::vector<int64_t>{1});
    if (!at)
      return std::nullopt;
    IntVector out{x.dtype, false, {}};
    for (int64_t i : *at)
      out.elements.push_back(x.elements[i]);
    return out;
  }
  return std::nullopt;
}

/// Range over known float scalars: max(ceil((limit - start) / delta), 0)
/// elements start + i * delta.
std::optional<KnownTensor> floatRange(Importer &im) {
  std::vector<double> bounds;
  DType type = DType::F32;
  for (size_t i = 0; i < 3; ++i) {
    const KnownTensor *t = im.constantInput(i);
    if (!t || !isFloat(t->dtype) || !t->shape.empty())
      return std::nullopt;
    type = t->dtype;
    bounds.push_back(t->reals().at(0));
  }
  double count = std::ceil((bounds[1] - bounds[0]) / bounds[2]);
  if (!(count <= 4096)) // NaN too (a zero delta).
    return std::nullopt;
  KnownTensor out{type, {std::max<int64_t>(static_cast<int64_t>(count), 0)}, {}};
  for (int64_t i = 0; i < out.shape[0]; ++i)
    appendScalar(out, bounds[0] + static_cast<double>(i) * bounds[2]);
  return out;
}

/// Scalar arithmetic over known one-element inputs: Cast, Add, Sub, Mul,
/// Div, Neg, Ceil, Floor, Relu where one of them or the cast's target is a
/// float (the window functions' and Range's expanded bodies compute bounds
/// and trip counts so), and comparisons and logic of any type (a Loop
/// body's condition). Computed in long double (exact for 64-bit integers),
/// rounded to the output dtype (a cast to an integer truncates).
std::optional<KnownTensor> foldRealScalar(Importer &im, const std::string &op) {
  static const std::map<std::string, std::function<long double(long double, long double)>> kBinary =
      {{"Add", std::plus<long double>()},
       {"Sub", std::minus<long double>()},
       {"Mul", std::multiplies<long double>()},
       {"Div", std::divides<long double>()},
       {"Less", std::less<long double>()},
       {"LessOrEqual", std::less_equal<long double>()},
       {"Greater", std::greater<long double>()},
       {"GreaterOrEqual", std::greater_equal<long double>()},
       {"Equal", std::equal_to<long double>()},
       {"And", std::logical_and<long double>()},
       {"Or", std::logical_or<long double>()},
       {"Xor", std::not_equal_to<long double>()}};
  auto binaryOp = kBinary.find(op);
  bool binary = binaryOp != kBinary.end();
  bool logical = op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual" ||
                 op == "Equal" || op == "And" || op == "Or" || op == "Xor" || op == "Not";
  if (!binary && op != "Cast" && op != "Neg" && op != "Ceil" && op != "Floor" && op != "Relu" &&
      op != "Not")
    return std::nullopt;
  std::vector<long double> values; // Exact for 64-bit integers too.
  bool anyFloat = false, anyVector = false;
  DType type = DType::F32;
  for (size_t i = 0; i < (binary ? 2u : 1u); ++i) {
    const KnownTensor *t = im.constantInput(i);
    if (!t || t->shape.size() > 1 || (t->shape.size() == 1 && t->shape[0] != 1))
      return std::nullopt;
    anyFloat |= isFloat(t->dtype);
    anyVector |= !t->shape.empty();
    type = t->dtype;
    values.push_back(isFloat(t->dtype) ? t->reals().at(0) : t->ints().at(0));
  }
  if (op == "Cast") {
    std::optional<DType> to = dtypeOfOnnx(im.attrInt("to", 0));
    if (!to)
      return std::nullopt;
    anyFloat |= isFloat(*to);
    type = *to;
  }
  // Integer arithmetic is the exact, symbolic fold's (below); comparisons
  // and logic of any type fold here (a Loop body's condition).
  if (!anyFloat && !logical)
    return std::nullopt;
  if (logical)
    type = DType::Bool;
  long double v = values[0];
  if (binary)
    v = binaryOp->second(v, values[1]);
  else if (op == "Not")
    v = v == 0;
  else if (op == "Neg")
    v = -v;
  else if (op == "Ceil")
    v = std::ceil(v);
  else if (op == "Floor")
    v = std::floor(v);
  else if (op == "Relu")
    v = std::max(v, 0.0L);
  if (type == DType::Bool)
    v = v != 0;
  else if (isInteger(type) && !(std::abs(v) < 9e18)) // NaN too: no integer holds it.
    return std::nullopt;
  KnownTensor out = scalar(static_cast<double>(v), type);
  if (anyVector)
    out.shape = {1};
  return out;
}

/// ConstantOfShape and Range of known inputs (ConstantOfShape of symbolic
/// extents is a broadcast, imported as an op).
bool foldGenerator(Importer &im, const std::string &op) {
  if (op == "ConstantOfShape") {
    std::optional<IntVector> shape = intVectorOf(im, 0);
    if (!shape || shape->scalar || !shape->isStatic())
      return false;
    KnownTensor value{DType::F32, {}, std::string(4, '\0')};
    if (const onnx::AttributeProto *a = im.attr("value")) {
      Expected<KnownTensor> decoded = decodeTensor(a->t());
      if (!decoded)
        return false;
      value = std::move(*decoded);
    }
    std::vector<int64_t> extents = staticValues(*shape);
    // At most 2^24 elements, checked before each product can overflow.
    constexpr int64_t kMaxFolded = int64_t(1) << 24;
    int64_t count = 1;
    for (int64_t d : extents)
      count = d < 0 || count < 0 || (d != 0 && count > kMaxFolded / d) ? -1 : count * d;
    if (count < 0 || value.bytes.empty())
      return false;
    KnownTensor out{value.dtype, extents, {}};
    for (int64_t i = 0; i < count; ++i)
      out.bytes += value.bytes.substr(0, dtypeByteSize(value.dtype));
    im.bindConstant(std::move(out));
    return true;
  }
  // Range
  if (std::optional<KnownTensor> reals = floatRange(im)) {
    im.bindConstant(std::move(*reals));
    return true;
  }
  std::optional<IntVector> start = intVectorOf(im, 0), limit = intVectorOf(im, 1),
                           delta = intVectorOf(im, 2);
  if (!start || !limit || !delta || !start->isStatic() || !limit->isStatic() ||
      !delta->isStatic() || start->elements.size() != 1 || limit->elements.size() != 1 ||
      delta->elements.size() != 1 || delta->elements[0].factor == 0)
    return false;
  int64_t from = start->elements[0].factor, to = limit->elements[0].factor,
          step = delta->elements[0].factor;
  std::vector<int64_t> out;
  for (int64_t v = from; (step > 0 ? v < to : v > to) && out.size() < 4096; v += step)
    out.push_back(v);
  im.bindConstant(intTensor(out, {static_cast<int64_t>(out.size())}, start->dtype));
  return true;
}
} // namespace

bool onnximport::foldConstant(Importer &im) {
  const std::string &op = im.current().op_type();
  if (op == "ConstantOfShape" || op == "Range")
    return foldGenerator(im, op);
  if (op == "Identity" && im.constantInput(0)) { // A Loop body's condition, passed on.
    im.bindBound(0, im.boundInput(0));
    return true;
  }
  if (std::optional<KnownTensor> real = foldRealScalar(im, op)) {
    im.bindConstant(std::move(*real));
    return true;
  }
  std::vector<IntVector> in;
  for (size_t i = 0; i < im.numInputs(); ++i) {
    if (!im.hasInput(i))
      continue;
    std::optional<IntVector> v = intVectorOf(im, i);
    if (!v)
      return false;
    in.push_back(std::move(*v));
  }
  std::optional<IntVector> out = fold(im, op, in);
  if (!out)
    return false;
  if (out->isStatic()) {
    std::vector<int64_t> shape;
    if (!out->scalar)
      shape.push_back(static_cast<int64_t>(out->elements.size()));
    im.bindConstant(intTensor(staticValues(*out), shape, out->dtype));
    return true;
  }
  // Symbolic elements become Dims: positive products of symbols, and -1
  // (a reshape's "the rest") as Dim::inferred().
  SymbolicInts symbolic{out->dtype, out->scalar, {}};
  for (const SymbolProduct &p : out->elements) {
    std::optional<Dim> d =
        p.symbols.empty() && p.factor == -1 ? Dim::inferred() : im.graph.symbols().product(p);
    if (!d)
      return false;
    symbolic.elements.push_back(*d);
  }
  im.bindSymbolic(std::move(symbolic));
  return true;
}
