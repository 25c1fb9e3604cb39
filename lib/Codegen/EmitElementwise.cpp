//===- EmitElementwise.cpp - Fused elementwise groups ---------------------===//
//
// A group of elementwise nodes becomes one linalg.generic over the root's
// shape: every operand from outside the group is broadcast into that domain
// by its indexing map, and the nodes are evaluated in the region in order,
// so intermediates never touch memory.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <cmath>
#include <numbers>

using namespace fuel;
using namespace fuel::codegen;

namespace {
/// Writes scalar arith/math ops for one node into the current region.
class ScalarWriter {
public:
  ScalarWriter(KernelEmitter &e, NodeId node)
      : e(e), graph(e.graph), node(node),
        in(graph.dtype(graph.operands(node)[0])),
        out(graph.dtype({node, 0})), type(computeType(in)) {}

  std::string emit(const std::vector<std::string> &x);

private:
  bool isFloatIn() const { return isFloat(in); }
  bool isUnsignedIn() const { return isUnsignedInteger(in); }
  std::string bin(const char *op, const std::string &a, const std::string &b) {
    return e.op(std::string(op) + " " + a + ", " + b, type);
  }
  std::string un(const char *op, const std::string &a) {
    return e.op(std::string(op) + " " + a, type);
  }
  std::string c(double v) { return e.constant(v, type); }
  std::string cmp(const std::string &pred, const std::string &a,
                  const std::string &b) {
    return e.op((isFloatIn() ? "arith.cmpf " : "arith.cmpi ") + pred + ", " +
                    a + ", " + b,
                type);
  }
  std::string select(const std::string &cond, const std::string &a,
                     const std::string &b, const std::string &t) {
    return e.op("arith.select " + cond + ", " + a + ", " + b, t);
  }
  std::string sigmoid(const std::string &x) {
    std::string denom = bin("arith.addf", c(1), un("math.exp", un("arith.negf", x)));
    return bin("arith.divf", c(1), denom);
  }
  std::string unary(const std::string &x);
  std::string binary(const std::string &a, const std::string &b);
  std::string integerPower(const std::string &a, const std::string &b);
  std::string remainder(const std::string &a, const std::string &b);
  std::string cast(const std::string &x);

  KernelEmitter &e;
  const Graph &graph;
  NodeId node;
  DType in, out;
  std::string type; // Compute type of the operands.
};
} // namespace

std::string ScalarWriter::unary(const std::string &x) {
  OpKind kind = graph.kind(node);
  if (!isFloatIn()) {
    switch (kind) {
    case OpKind::Neg:
      return bin("arith.subi", c(0), x);
    case OpKind::Abs:
      return isUnsignedIn() ? x : un("math.absi", x);
    case OpKind::Relu:
      return isUnsignedIn() ? x : bin("arith.maxsi", x, c(0));
    case OpKind::Not: // Logical on i1, bitwise on integers: x ^ all ones.
      return bin("arith.xori", x, type == "i1" ? e.constant(1, "i1") : c(-1));
    default: { // Clamp: bounds rounded toward the inside of the range.
      double lo = graph.getFloat(node, AttrName::MinValue, -INFINITY);
      double hi = graph.getFloat(node, AttrName::MaxValue, INFINITY);
      std::string v = x;
      const char *mx = isUnsignedIn() ? "arith.maxui" : "arith.maxsi";
      const char *mn = isUnsignedIn() ? "arith.minui" : "arith.minsi";
      if (std::isfinite(lo))
        v = bin(mx, v, c(std::ceil(lo)));
      if (std::isfinite(hi))
        v = bin(mn, v, c(std::floor(hi)));
      return v;
    }
    }
  }
  switch (kind) {
  case OpKind::Neg:
    return un("arith.negf", x);
  case OpKind::Abs:
    return un("math.absf", x);
  case OpKind::Exp:
    return un("math.exp", x);
  case OpKind::Log:
    return un("math.log", x);
  case OpKind::Sqrt:
    return un("math.sqrt", x);
  case OpKind::Rsqrt:
    return bin("arith.divf", c(1), un("math.sqrt", x));
  case OpKind::Tanh:
    return un("math.tanh", x);
  case OpKind::Sigmoid:
    return sigmoid(x);
  case OpKind::Relu: // NaN kept, as numpy.maximum(x, 0) and ONNX.
    return select(cmp("ugt", x, c(0)), x, c(0), type);
  case OpKind::Gelu: {
    const Attribute *a = graph.findAttr(node, AttrName::Approximate);
    std::string inner;
    if (a && graph.stringAttr(*a) == "tanh") {
      std::string cube = bin("arith.mulf", bin("arith.mulf", x, x), x);
      std::string poly = bin("arith.addf", x, bin("arith.mulf", c(0.044715), cube));
      inner = un("math.tanh",
                 bin("arith.mulf", c(std::sqrt(2 / std::numbers::pi)), poly));
    } else {
      inner = un("math.erf", bin("arith.mulf", x, c(1 / std::numbers::sqrt2)));
    }
    std::string half = bin("arith.mulf", c(0.5), x);
    return bin("arith.mulf", half, bin("arith.addf", c(1), inner));
  }
  case OpKind::Silu:
    return bin("arith.mulf", x, sigmoid(x));
  case OpKind::Erf:
    return un("math.erf", x);
  case OpKind::Sin:
    return un("math.sin", x);
  case OpKind::Cos:
    return un("math.cos", x);
  case OpKind::Recip:
    return bin("arith.divf", c(1), x);
  case OpKind::Floor:
    return un("math.floor", x);
  case OpKind::Ceil:
    return un("math.ceil", x);
  case OpKind::Round: // Halves to even, as numpy and ONNX.
    return un("math.roundeven", x);
  default: { // Clamp; NaN propagates as std::min/std::max do here.
    double lo = graph.getFloat(node, AttrName::MinValue, -INFINITY);
    double hi = graph.getFloat(node, AttrName::MaxValue, INFINITY);
    std::string v = x;
    if (std::isfinite(lo))
      v = select(cmp("olt", v, c(lo)), c(lo), v, type);
    if (std::isfinite(hi))
      v = select(cmp("olt", c(hi), v), c(hi), v, type);
    return v;
  }
  }
}

/// fmod: the remainder of the quotient truncated toward zero (the
/// dividend's sign, C's fmod and %); mod: of the quotient floored (the
/// divisor's sign, numpy.mod and Python's %), the truncated one plus the
/// divisor where their signs differ. An integer x % 0 is 0, never a trap.
std::string ScalarWriter::remainder(const std::string &a, const std::string &b) {
  bool fp = isFloatIn(), u = isUnsignedIn();
  std::string r, zeroDivisor;
  if (fp) {
    r = bin("arith.remf", a, b);
  } else {
    zeroDivisor = cmp("eq", b, c(0));
    r = bin(u ? "arith.remui" : "arith.remsi", a, select(zeroDivisor, c(1), b, type));
  }
  if (graph.kind(node) == OpKind::Mod && !u) {
    const char *lt = fp ? "olt" : "slt";
    std::string nonzero = cmp(fp ? "une" : "ne", r, c(0));
    std::string signsDiffer = e.op("arith.xori " + cmp(lt, r, c(0)) + ", " + cmp(lt, b, c(0)), "i1");
    std::string adjust = e.op("arith.andi " + nonzero + ", " + signsDiffer, "i1");
    r = select(adjust, bin(fp ? "arith.addf" : "arith.addi", r, b), r, type);
  }
  return fp ? r : select(zeroDivisor, c(0), r, type);
}

std::string ScalarWriter::binary(const std::string &a, const std::string &b) {
  OpKind kind = graph.kind(node);
  bool fp = isFloatIn(), u = isUnsignedIn();
  switch (kind) {
  case OpKind::Add:
    return bin(fp ? "arith.addf" : "arith.addi", a, b);
  case OpKind::Sub:
    return bin(fp ? "arith.subf" : "arith.subi", a, b);
  case OpKind::Mul:
    return bin(fp ? "arith.mulf" : "arith.muli", a, b);
  case OpKind::Div: {
    if (fp)
      return bin("arith.divf", a, b);
    // Integer x / 0 is 0 (the reference's definition), never a trap.
    std::string zero = cmp("eq", b, c(0));
    std::string safe = select(zero, c(1), b, type);
    std::string q = bin(u ? "arith.divui" : "arith.divsi", a, safe);
    return select(zero, c(0), q, type);
  }
  case OpKind::Pow:
    return fp ? bin("math.powf", a, b) : integerPower(a, b);
  case OpKind::Mod:
  case OpKind::Fmod:
    return remainder(a, b);
  case OpKind::Max: // A NaN on either side is the result (numpy, ONNX).
    return bin(fp ? "arith.maximumf" : u ? "arith.maxui" : "arith.maxsi", a, b);
  case OpKind::Min:
    return bin(fp ? "arith.minimumf" : u ? "arith.minui" : "arith.minsi", a, b);
  case OpKind::And:
    return bin("arith.andi", a, b);
  case OpKind::Or:
    return bin("arith.ori", a, b);
  default: {
    const char *floatPred = "oeq", *intPred = "eq";
    switch (kind) {
    case OpKind::Ne:
      floatPred = "une", intPred = "ne";
      break;
    case OpKind::Lt:
      floatPred = "olt", intPred = u ? "ult" : "slt";
      break;
    case OpKind::Le:
      floatPred = "ole", intPred = u ? "ule" : "sle";
      break;
    case OpKind::Gt:
      floatPred = "ogt", intPred = u ? "ugt" : "sgt";
      break;
    case OpKind::Ge:
      floatPred = "oge", intPred = u ? "uge" : "sge";
      break;
    default:
      break;
    }
    return cmp(fp ? floatPred : intPred, a, b);
  }
  }
}

/// a^b exactly, by square-and-multiply from the exponent's top bit down
/// (wrapping as the multiplications do); a negative exponent truncates
/// toward zero: 1 for a base of 1, +-1 for -1, 0 otherwise. The same on
/// every target. Top bit first, so that every step depends on b: squaring
/// the base itself would make a chain of uniform values (a scalar base such
/// as 2^y) on which LLVM's loop vectorizer recurses exponentially.
std::string ScalarWriter::integerPower(const std::string &a,
                                       const std::string &b) {
  unsigned bits = static_cast<unsigned>(std::stoi(type.substr(1)));
  std::string result = c(1);
  for (unsigned i = bits; i-- > 0;) {
    if (i + 1 < bits)
      result = bin("arith.muli", result, result);
    std::string bit = bin("arith.andi", bin("arith.shrui", b, c(i)), c(1));
    std::string set = cmp("ne", bit, c(0));
    result = select(set, bin("arith.muli", result, a), result, type);
  }
  if (isUnsignedIn())
    return result;
  std::string odd = cmp("ne", bin("arith.andi", b, c(1)), c(0));
  std::string minusOne = select(odd, c(-1), c(1), type);
  std::string small = select(cmp("eq", a, c(1)), c(1),
                             select(cmp("eq", a, c(-1)), minusOne, c(0), type), type);
  return select(cmp("slt", b, c(0)), small, result, type);
}

std::string ScalarWriter::cast(const std::string &x) {
  std::string from = computeType(in), to = computeType(out);
  if (in == out || (from == to && !isUnsignedInteger(in) && !isUnsignedInteger(out)))
    return x;
  if (out == DType::Bool)
    return cmp(isFloatIn() ? "une" : "ne", x, c(0));
  auto conv = [&](const std::string &op) {
    return e.op(op + " " + x + " : " + from + " to " + to, "");
  };
  bool fromFloat = isFloat(in), toFloat = isFloat(out);
  bool fromUnsigned = isUnsignedInteger(in) || in == DType::Bool;
  if (fromFloat && toFloat)
    return conv(from == "f64" ? "arith.truncf" : "arith.extf");
  if (fromFloat) {
    // Truncate toward zero into i64, then wrap to the width (the reference's
    // rule; a direct conversion out of range would be undefined).
    std::string wide = e.op("arith.fptosi " + x + " : " + from + " to i64", "");
    return to == "i64" ? wide : e.op("arith.trunci " + wide + " : i64 to " + to, "");
  }
  if (toFloat)
    return conv(fromUnsigned ? "arith.uitofp" : "arith.sitofp");
  unsigned fromBits = std::stoi(from.substr(1)), toBits = std::stoi(to.substr(1));
  if (fromBits == toBits)
    return x; // Signed <-> unsigned of one width: the same bits.
  if (fromBits > toBits)
    return conv("arith.trunci");
  return conv(fromUnsigned ? "arith.extui" : "arith.extsi");
}

std::string ScalarWriter::emit(const std::vector<std::string> &x) {
  OpKind kind = graph.kind(node);
  if (kind == OpKind::Cast)
    return cast(x[0]);
  if (kind == OpKind::Where)
    return select(x[0], x[1], x[2], computeType(out));
  if (opFamily(kind) == OpFamily::Unary)
    return unary(x[0]);
  return binary(x[0], x[1]);
}

std::string codegen::emitScalarOp(KernelEmitter &e, NodeId node,
                                  const std::vector<std::string> &operands) {
  ScalarWriter w(e, node);
  return w.emit(operands);
}

namespace {
/// How an operand reads an axis of the domain: all of it, one element of
/// it (broadcast), or either (the axis has one element).
enum class AxisRead { Whole, Broadcast, Either };

AxisRead axisRead(const Graph &graph, ValueRef value, ShapeRef domain, size_t axis) {
  if (domain[axis] == Dim::fixed(1))
    return AxisRead::Either;
  ShapeRef shape = graph.shape(value);
  size_t lead = domain.size() - shape.size();
  if (axis < lead || shape[axis - lead] == Dim::fixed(1))
    return AxisRead::Broadcast;
  return AxisRead::Whole;
}

/// The first of the domain's trailing axes that index like one for every
/// operand (`values`, all kernel arguments): static, unsplit, each operand
/// contiguous and reading all of them or broadcasting all of them. Those
/// axes collapse into one, so that the innermost loop is long enough to
/// vectorize: the loop vectorizer left the 28-wide rows of a [1, 240, 28,
/// 28] x [1, 240, 1, 1] product scalar (94 us; 14 us as [1, 240, 784]).
size_t collapsibleFrom(const KernelEmitter &e, const std::vector<ValueRef> &values,
                       ShapeRef domain) {
  const Graph &graph = e.graph;
  size_t rank = domain.size();
  for (ValueRef v : values)
    if (!e.isContiguousArg(v))
      return rank;
  auto unsplit = [&](size_t axis) {
    for (ValueRef v : values) {
      size_t lead = rank - graph.shape(v).size();
      int split = e.arg(v).splitAxis;
      if (split >= 0 && lead + split == axis)
        return false;
    }
    return domain[axis].isStatic();
  };
  if (rank == 0 || !unsplit(rank - 1))
    return rank;
  // Each operand's read of the run so far: Either until an axis decides.
  std::vector<AxisRead> run(values.size(), AxisRead::Either);
  size_t from = rank;
  for (size_t axis = rank; axis-- > 0;) {
    if (!unsplit(axis))
      break;
    bool alike = true;
    for (size_t i = 0; i < values.size() && alike; ++i) {
      AxisRead read = axisRead(graph, values[i], domain, axis);
      alike = read == AxisRead::Either || run[i] == AxisRead::Either || read == run[i];
    }
    if (!alike)
      break;
    for (size_t i = 0; i < values.size(); ++i)
      if (AxisRead read = axisRead(graph, values[i], domain, axis); read != AxisRead::Either)
        run[i] = read;
    from = axis;
  }
  return from;
}
} // namespace

LogicalResult codegen::emitElementwiseGroup(KernelEmitter &e, DiagnosticEngine &diag) {
  const Graph &graph = e.graph;
  ValueRef root{e.spec.nodes.back(), 0};
  ShapeRef domain = graph.shape(root);
  // A non-elementwise head (matmul, conv, normalization) writes the
  // result's buffer first; the elementwise tail then updates it in place.
  NodeId head = e.spec.nodes.front();
  bool hasHead = !isElementwiseOp(graph.kind(head));
  if (hasHead && (emitConvWithEpilogue(e) || emitMatMulWithEpilogue(e)))
    return success();
  auto readByTail = [&](ValueRef v) {
    for (NodeId n : e.spec.nodes)
      if (!(hasHead && n == head))
        for (ValueRef operand : graph.operands(n))
          if (operand == v)
            return true;
    return false;
  };
  std::vector<GenericOperand> ins, outs;
  std::vector<ValueRef> inValues, outValues;
  for (const KernelArg &arg : e.spec.args) {
    if (!arg.isResult && !readByTail(arg.value))
      continue;
    GenericOperand o = e.operand(arg.value, broadcastMap(graph, arg.value, domain));
    (arg.isResult ? outs : ins).push_back(o);
    (arg.isResult ? outValues : inValues).push_back(arg.value);
  }
  if (hasHead) {
    e.alias({head, 0}, root);
    if (failed(emitNode(e, head, diag)))
      return failure();
    ins.push_back(e.operand({head, 0}, broadcastMap(graph, root, domain)));
    inValues.push_back({head, 0});
  }
  unsigned rank = static_cast<unsigned>(domain.size());
  std::vector<ValueRef> values = inValues;
  values.insert(values.end(), outValues.begin(), outValues.end());
  if (size_t from = hasHead ? rank : collapsibleFrom(e, values, domain); from + 1 < rank) {
    // The axes from `from` on become axis `from` of a smaller domain.
    for (size_t i = 0; i < values.size(); ++i) {
      GenericOperand &o = i < ins.size() ? ins[i] : outs[i - ins.size()];
      ShapeRef shape = graph.shape(values[i]);
      size_t lead = rank - shape.size();
      std::vector<std::string> results;
      for (size_t d = 0; d < shape.size() && lead + d < from; ++d)
        results.push_back(shape[d] == Dim::fixed(1) && domain[lead + d] != Dim::fixed(1)
                              ? "0"
                              : "d" + std::to_string(lead + d));
      // Its axes in the run from `first` on, if any (a run of one needs no
      // collapsing).
      if (size_t first = from > lead ? from - lead : 0; first < shape.size()) {
        if (shape.size() - first > 1)
          std::tie(o.value, o.type) = e.collapseArg(values[i], static_cast<unsigned>(first));
        bool broadcast = false;
        for (size_t axis = from; axis < rank; ++axis)
          broadcast |= axisRead(graph, values[i], domain, axis) == AxisRead::Broadcast;
        results.push_back(broadcast ? "0" : "d" + std::to_string(from));
      }
      o.map = affineMap(static_cast<unsigned>(from + 1), results);
    }
    rank = static_cast<unsigned>(from + 1);
  }
  e.generic(rank, std::vector<bool>(rank, false), ins, outs,
            [&](const std::vector<std::string> &blockArgs) {
              std::map<ValueRef, std::string> computed;
              for (size_t i = 0; i < inValues.size(); ++i)
                computed[inValues[i]] =
                    e.toCompute(blockArgs[i], graph.dtype(inValues[i]));
              for (NodeId n : e.spec.nodes) {
                if (hasHead && n == head)
                  continue;
                std::vector<std::string> operands;
                for (ValueRef v : graph.operands(n))
                  operands.push_back(computed.at(v));
                computed[{n, 0}] = emitScalarOp(e, n, operands);
              }
              std::vector<std::string> yields;
              for (ValueRef v : outValues)
                yields.push_back(e.toStorage(computed.at(v), graph.dtype(v)));
              return yields;
            });
  return success();
}
