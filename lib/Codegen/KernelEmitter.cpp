//===- KernelEmitter.cpp - Writing one kernel as MLIR ---------------------===//

#include "KernelEmitter.h"

#include "fuel/IR/OpKind.h"
#include "fuel/Support/Float16.h"
#include "fuel/Transforms/Attention.h"
#include "fuel/Transforms/ConvEpilogue.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <utility>

using namespace fuel;
using namespace fuel::codegen;

std::string codegen::storageType(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I16:
  case DType::U16:
    return "i16";
  case DType::I32:
  case DType::U32:
    return "i32";
  case DType::I64:
  case DType::U64:
    return "i64";
  default: // i8, u8, bool
    return "i8";
  }
}

std::string codegen::computeType(DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return "f32";
  if (t == DType::Bool)
    return "i1";
  return storageType(t);
}

std::string codegen::scalarLiteral(double value, const std::string &type) {
  char buf[40];
  if (type == "f64") {
    std::snprintf(buf, sizeof buf, "0x%016llX",
                  static_cast<unsigned long long>(std::bit_cast<uint64_t>(value)));
  } else if (type == "f32") {
    std::snprintf(buf, sizeof buf, "0x%08X",
                  std::bit_cast<uint32_t>(static_cast<float>(value)));
  } else if (type == "f16" || type == "bf16") {
    float f = static_cast<float>(value);
    std::snprintf(buf, sizeof buf, "0x%04X",
                  type == "f16" ? floatToHalfBits(f) : floatToBFloat16Bits(f));
  } else if (type == "i1") {
    return value != 0 ? "1" : "0";
  } else { // Integers: saturate to int64 first; the type's width wraps.
    long long v = value >= 9.2e18    ? INT64_MAX
                  : value <= -9.2e18 ? INT64_MIN
                                     : static_cast<long long>(value);
    std::snprintf(buf, sizeof buf, "%lld", v);
  }
  return buf;
}

bool codegen::isConstant(const Graph &graph, ValueRef value) {
  while (isViewOp(graph.kind(value.node)))
    value = graph.operands(value.node)[0];
  return graph.kind(value.node) == OpKind::Constant;
}

std::string codegen::librarySignature(const Graph &graph, const KernelSpec &spec) {
  NodeId head = spec.nodes.front();
  OpKind kind = graph.kind(head);
  if (attentionOfKernel(graph, spec.nodes)) // q, k, v, scale, mask, o, flags.
    return "(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, "
           "memref<*xf32>, i64) -> ()";
  if (pooledConvOfKernel(graph, spec.nodes)) // x, w, y, bias, flags, the convolution's window
    // (strides, top/left pads, dilations) and result rows and columns, the
    // pooling's window (extents, strides, top/left pads, dilations), origin,
    // clamp bounds.
    return "(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, "
           "i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f32, f32) -> ()";
  // f32 matmul and linear: a, b, c, bias, flags.
  std::string operands = "memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64";
  if (kind == OpKind::MatMul && graph.dtype({head, 0}) == DType::I32) // 8-bit operands.
    operands = "memref<*xi8>, memref<*xi8>, memref<*xi32>, i64";
  else if (kind == OpKind::Conv2D && graph.dtype({head, 0}) == DType::I32) // 8-bit operands:
    // flags, strides, top/left pads, dilations.
    operands = "memref<*xi8>, memref<*xi8>, memref<*xi32>, i64, i64, i64, i64, i64, i64, i64";
  else if (kind == OpKind::Conv2D) // Bias, residual, flags, strides, top/left
    // pads, dilations, clamp bounds.
    operands = "memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, "
               "memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, f32, f32";
  else if (kind == OpKind::MaxPool2D) // Window, strides, top/left pads, dilations.
    operands = "memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64";
  return "(" + operands + ") -> ()";
}

std::string codegen::unranked(KernelEmitter &e, ValueRef value) {
  return e.op("memref.cast " + e.argName(value) + " : " + e.argType(value) + " to memref<*x" +
                  storageType(e.graph.dtype(value)) + ">",
              "");
}

void codegen::callLibrary(KernelEmitter &e, const std::vector<std::string> &operands,
                          const std::vector<std::string> &scalars,
                          std::initializer_list<double> floats) {
  std::vector<std::string> args = operands;
  args.insert(args.end(), scalars.begin(), scalars.end());
  for (double v : floats)
    args.push_back(e.constant(v, "f32"));
  e.body() << "    func.call @" << e.spec.librarySymbol << "(";
  for (size_t i = 0; i < args.size(); ++i)
    e.body() << (i ? ", " : "") << args[i];
  e.body() << ") : " << librarySignature(e.graph, e.spec) << "\n";
}

std::vector<std::string> codegen::i64Constants(KernelEmitter &e,
                                               std::initializer_list<int64_t> ints) {
  std::vector<std::string> values;
  for (int64_t v : ints)
    values.push_back(e.op("arith.constant " + std::to_string(v), "i64"));
  return values;
}

std::string codegen::affineMap(unsigned rank,
                               const std::vector<std::string> &results) {
  std::string s = "affine_map<(";
  for (unsigned d = 0; d < rank; ++d)
    s += (d ? ", d" : "d") + std::to_string(d);
  s += ") -> (";
  for (size_t i = 0; i < results.size(); ++i)
    s += (i ? ", " : "") + results[i];
  return s + ")>";
}

std::string codegen::broadcastMap(const Graph &graph, ValueRef value,
                                  ShapeRef domain) {
  ShapeRef shape = graph.shape(value);
  size_t lead = domain.size() - shape.size();
  std::vector<std::string> results;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool pinned = shape[d] == Dim::fixed(1) && domain[lead + d] != Dim::fixed(1);
    results.push_back(pinned ? "0" : "d" + std::to_string(lead + d));
  }
  return affineMap(domain.size(), results);
}

static std::string memrefType(const Graph &graph, const KernelArg &arg) {
  ShapeRef shape = graph.shape(arg.value);
  std::string s = "memref<";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (shape[d].isStatic() && static_cast<int>(d) != arg.splitAxis
              ? std::to_string(shape[d].size())
              : std::string("?")) +
         "x";
  s += storageType(graph.dtype(arg.value));
  if (!arg.contiguous) {
    s += ", strided<[";
    for (size_t d = 0; d < shape.size(); ++d)
      s += d ? ", ?" : "?";
    s += "], offset: ?>";
  }
  return s + ">";
}

const std::string &KernelEmitter::argName(ValueRef value) const {
  return argNames[argIndex.at(value)];
}
const std::string &KernelEmitter::argType(ValueRef value) const {
  return argTypes[argIndex.at(value)];
}

std::string KernelEmitter::index(int64_t value) {
  auto [it, inserted] = indexConstants.try_emplace(value);
  if (inserted) {
    it->second = "%c" + std::to_string(indexConstants.size() - 1);
    prologue << "    " << it->second << " = arith.constant " << value
             << " : index\n";
  }
  return it->second;
}

std::vector<Extent> KernelEmitter::extents(ValueRef value) {
  if (!hasArg(value))
    return computedExtents(value);
  const std::string &type = argType(value);
  ShapeRef shape = graph.shape(value);
  // The memref type's `?` axes (symbols and the split axis) are read back.
  std::vector<Extent> out;
  size_t pos = type.find('<') + 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    size_t x = type.find('x', pos);
    std::string token = type.substr(pos, x - pos);
    pos = x + 1;
    Extent e;
    if (token == "?") {
      e.ssa = fresh();
      text << "    " << e.ssa << " = memref.dim " << argName(value) << ", "
           << index(static_cast<int64_t>(d)) << " : " << type << "\n";
    } else {
      e.size = std::stoll(token);
    }
    out.push_back(e);
  }
  return out;
}

std::string KernelEmitter::symbolValue(uint32_t symbol) {
  size_t position = std::find(spec.symbols.begin(), spec.symbols.end(), symbol) -
                    spec.symbols.begin();
  std::string v = op("memref.load %syms[" + index(static_cast<int64_t>(position)) +
                         "]",
                     "memref<?xi64>");
  return op("arith.index_cast " + v + " : i64 to index", "");
}

std::string KernelEmitter::sliceOrigin() {
  return op("memref.load %origin[" + index(0) + "]", "memref<1xi64>");
}

std::string KernelEmitter::extentProduct(const std::vector<Extent> &shape,
                                         size_t from, size_t to) {
  int64_t fixed = 1;
  std::string product;
  for (size_t d = from; d < to; ++d) {
    if (shape[d].isStatic())
      fixed *= shape[d].size;
    else
      product = product.empty()
                    ? shape[d].ssa
                    : op("arith.muli " + product + ", " + shape[d].ssa, "index");
  }
  if (product.empty())
    return index(fixed);
  return fixed == 1 ? product
                    : op("arith.muli " + product + ", " + index(fixed), "index");
}

std::string KernelEmitter::indexToFloat(const std::string &value,
                                        const std::string &type) {
  std::string i = op("arith.index_cast " + value + " : index to i64", "");
  return op("arith.sitofp " + i + " : i64 to " + type, "");
}

std::vector<Extent> KernelEmitter::computedExtents(ValueRef value) {
  // A prologue's value is a broadcast of its inputs: each axis comes from an
  // input that has it (read back when the kernel sees it as dynamic).
  ShapeRef shape = graph.shape(value);
  std::vector<Extent> out(shape.size());
  for (const KernelArg &arg : spec.args) {
    if (arg.isResult)
      continue;
    ShapeRef s = graph.shape(arg.value);
    if (s.size() > shape.size())
      continue;
    std::vector<Extent> own;
    size_t lead = shape.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      Extent &e = out[lead + d];
      if (!e.isStatic() && e.ssa.empty() && s[d] == shape[lead + d]) {
        if (own.empty())
          own = extents(arg.value);
        e = own[d];
      }
    }
  }
  for (size_t d = 0; d < shape.size(); ++d)
    if (!out[d].isStatic() && out[d].ssa.empty())
      out[d].size = shape[d].size(); // Static and broadcast (1) everywhere.
  return out;
}

std::string KernelEmitter::scratch(const std::vector<Extent> &shape,
                                   const std::string &elemType,
                                   std::string &type) {
  type = "memref<";
  std::string dynamic;
  for (const Extent &e : shape) {
    type += (e.isStatic() ? std::to_string(e.size) : std::string("?")) + "x";
    if (!e.isStatic())
      dynamic += (dynamic.empty() ? "" : ", ") + e.ssa;
  }
  type += elemType + ">";
  std::string name = fresh();
  text << "    " << name << " = memref.alloc(" << dynamic << ") {alignment = 64 : i64} : "
       << type << "\n";
  epilogue << "    memref.dealloc " << name << " : " << type << "\n";
  return name;
}

void KernelEmitter::fill(const std::string &buffer, const std::string &type,
                         const std::string &elemType,
                         const std::string &literal) {
  std::string c = fresh();
  text << "    " << c << " = arith.constant " << literal << " : " << elemType
       << "\n";
  text << "    linalg.fill ins(" << c << " : " << elemType << ") outs("
       << buffer << " : " << type << ")\n";
}

bool KernelEmitter::isContiguousArg(ValueRef value) const {
  return spec.args[argIndex.at(value)].contiguous;
}

bool KernelEmitter::mergesLeadingAxes(ValueRef value, unsigned to) const {
  const KernelArg &arg = spec.args[argIndex.at(value)];
  if (!arg.contiguous)
    return false;
  ShapeRef shape = graph.shape(value);
  int split = arg.splitAxis;
  return split <= 0 || split >= static_cast<int>(to) ||
         std::all_of(shape.begin(), shape.begin() + split,
                     [](Dim d) { return d == Dim::fixed(1); });
}

std::pair<std::string, std::string> KernelEmitter::collapseArg(ValueRef value, unsigned from,
                                                               unsigned to) {
  const KernelArg &arg = spec.args[argIndex.at(value)];
  ShapeRef shape = graph.shape(value);
  to = to ? to : static_cast<unsigned>(shape.size());
  auto isStatic = [&](size_t d) {
    return shape[d].isStatic() && static_cast<int>(d) != arg.splitAxis;
  };
  std::string groups, type = "memref<";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > from && d < to)
      continue;
    bool run = true;
    int64_t elements = 1;
    groups += std::string(d ? ", " : "") + "[";
    for (size_t i = d; i < (d == from ? to : d + 1); ++i) {
      groups += (i > d ? ", " : "") + std::to_string(i);
      run &= isStatic(i);
      elements *= run ? shape[i].size() : 1;
    }
    groups += "]";
    type += (run ? std::to_string(elements) : "?") + "x";
  }
  type += storageType(graph.dtype(value)) + ">";
  std::string collapsed = fresh();
  text << "    " << collapsed << " = memref.collapse_shape " << argName(value) << " [" << groups
       << "] : " << argType(value) << " into " << type << "\n";
  return {collapsed, type};
}

std::vector<ValueRef> KernelEmitter::prologueInputs() const {
  std::vector<ValueRef> inputs;
  for (const KernelArg &arg : spec.args) {
    if (arg.isResult)
      continue;
    bool read = false;
    for (size_t i = 0; i + 1 < spec.nodes.size(); ++i)
      for (ValueRef v : graph.operands(spec.nodes[i]))
        read |= v == arg.value;
    if (read)
      inputs.push_back(arg.value);
  }
  return inputs;
}

GenericOperand KernelEmitter::operand(ValueRef value, const std::string &map) {
  std::string elem = storageType(graph.dtype(value));
  if (hasArg(value))
    return {argName(value), argType(value), map, elem};
  // Computed by the prologue: every node of the kernel but its root.
  ShapeRef domain = graph.shape(value);
  GenericOperand expr{"", "", map, elem};
  std::vector<ValueRef> inputs = prologueInputs();
  for (ValueRef input : inputs)
    expr.parts.push_back({argName(input), argType(input), broadcastMap(graph, input, domain),
                          storageType(graph.dtype(input))});
  expr.compute = [this, inputs, value](const std::vector<std::string> &args) {
    std::map<ValueRef, std::string> computed;
    for (size_t i = 0; i < inputs.size(); ++i)
      computed[inputs[i]] = toCompute(args[i], graph.dtype(inputs[i]));
    for (size_t i = 0; i + 1 < spec.nodes.size(); ++i) {
      std::vector<std::string> operands;
      for (ValueRef v : graph.operands(spec.nodes[i]))
        operands.push_back(computed.at(v));
      computed[{spec.nodes[i], 0}] = emitScalarOp(*this, spec.nodes[i], operands);
    }
    // Rounded to the value's dtype, as if it had been stored.
    return toStorage(computed.at(value), graph.dtype(value));
  };
  return expr;
}

void KernelEmitter::generic(unsigned rank, const std::vector<bool> &reduction,
                            const std::vector<GenericOperand> &logicalIns,
                            const std::vector<GenericOperand> &outs,
                            const BodyFn &bodyFn) {
  // Computed operands read their parts instead.
  std::vector<GenericOperand> ins;
  for (const GenericOperand &o : logicalIns) {
    if (o.compute)
      ins.insert(ins.end(), o.parts.begin(), o.parts.end());
    else
      ins.push_back(o);
  }
  text << "    linalg.generic {indexing_maps = [";
  bool first = true;
  for (const std::vector<GenericOperand> *list : {&std::as_const(ins), &outs})
    for (const GenericOperand &o : *list) {
      text << (first ? "" : ", ") << o.map;
      first = false;
    }
  text << "], iterator_types = [";
  for (unsigned d = 0; d < rank; ++d)
    text << (d ? ", " : "") << (reduction[d] ? "\"reduction\"" : "\"parallel\"");
  text << "]}";
  auto operandList = [&](const char *keyword,
                         const std::vector<GenericOperand> &list) {
    if (list.empty())
      return;
    text << " " << keyword << "(";
    for (size_t i = 0; i < list.size(); ++i)
      text << (i ? ", " : "") << list[i].value;
    text << " : ";
    for (size_t i = 0; i < list.size(); ++i)
      text << (i ? ", " : "") << list[i].type;
    text << ")";
  };
  operandList("ins", ins);
  operandList("outs", outs);
  text << " {\n    ^bb0(";
  std::vector<std::string> blockArgs;
  for (const std::vector<GenericOperand> *list : {&std::as_const(ins), &outs})
    for (const GenericOperand &o : *list) {
      blockArgs.push_back(fresh());
      text << (blockArgs.size() > 1 ? ", " : "") << blockArgs.back() << ": "
           << o.elemType;
    }
  text << "):\n";
  std::vector<std::string> logicalArgs;
  size_t next = 0;
  for (const GenericOperand &o : logicalIns) {
    if (!o.compute) {
      logicalArgs.push_back(blockArgs[next++]);
      continue;
    }
    std::vector<std::string> parts(blockArgs.begin() + next,
                                   blockArgs.begin() + next + o.parts.size());
    next += o.parts.size();
    logicalArgs.push_back(o.compute(parts));
  }
  logicalArgs.insert(logicalArgs.end(), blockArgs.begin() + next, blockArgs.end());
  std::vector<std::string> yields = bodyFn(logicalArgs);
  text << "      linalg.yield ";
  for (size_t i = 0; i < yields.size(); ++i)
    text << (i ? ", " : "") << yields[i];
  text << " : ";
  for (size_t i = 0; i < outs.size(); ++i)
    text << (i ? ", " : "") << outs[i].elemType;
  text << "\n    }\n";
}

std::string KernelEmitter::op(const std::string &opText,
                              const std::string &type) {
  std::string v = fresh();
  text << "      " << v << " = " << opText;
  if (!type.empty())
    text << " : " << type;
  text << "\n";
  return v;
}

std::string KernelEmitter::constant(double value, const std::string &type) {
  return op("arith.constant " + scalarLiteral(value, type), type);
}

std::string KernelEmitter::toCompute(const std::string &v, DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return op("arith.extf " + v + " : " + storageType(t) + " to f32", "");
  if (t == DType::Bool) {
    std::string zero = constant(0, "i8");
    return op("arith.cmpi ne, " + v + ", " + zero, "i8");
  }
  return v;
}

std::string KernelEmitter::toAccumulator(const std::string &v, DType t, const std::string &acc) {
  if ((t != DType::U8 && t != DType::I8) || acc == "i8")
    return v;
  return op(std::string(t == DType::U8 ? "arith.extui " : "arith.extsi ") + v + " : i8 to " + acc,
            "");
}

std::string KernelEmitter::toStorage(const std::string &v, DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return op("arith.truncf " + v + " : f32 to " + storageType(t), "");
  if (t == DType::Bool)
    return op("arith.extui " + v + " : i1 to i8", "");
  return v;
}

void KernelEmitter::takeFunction(std::string &constants, std::string &body) {
  constants = prologue.str();
  body = text.str();
  prologue.str("");
  text.str("");
  indexConstants.clear();
}

void KernelEmitter::alias(ValueRef value, ValueRef arg) {
  argIndex[value] = argIndex.at(arg);
}

LogicalResult codegen::emitNode(KernelEmitter &e, NodeId node, DiagnosticEngine &diag) {
  OpKind kind = e.graph.kind(node);
  switch (opFamily(kind)) {
  case OpFamily::Reduction:
    return kind == OpKind::Softmax || kind == OpKind::LogSoftmax || kind == OpKind::LayerNorm ||
                   kind == OpKind::RmsNorm
               ? emitNormalization(e, node, diag)
               : emitReduction(e, node, diag);
  case OpFamily::Linalg:
    return kind == OpKind::MatMul || kind == OpKind::Linear ? emitContraction(e, node, diag)
                                                            : emitWindowed(e, node, diag);
  default:
    return emitMovement(e, node, diag);
  }
}

LogicalResult KernelEmitter::emit(std::string &out, DiagnosticEngine &diag) {
  for (const KernelArg &arg : spec.args) {
    argIndex[arg.value] = static_cast<unsigned>(argNames.size());
    argNames.push_back("%a" + std::to_string(argNames.size()));
    argTypes.push_back(memrefType(graph, arg));
  }
  NodeId root = spec.nodes.back();
  LogicalResult result = attentionOfKernel(graph, spec.nodes)    ? emitAttention(*this)
                         : pooledConvOfKernel(graph, spec.nodes) ? emitPooledConv(*this)
                         : isElementwiseOp(graph.kind(root))     ? emitElementwiseGroup(*this, diag)
                                                                 : emitNode(*this, root, diag);
  if (failed(result))
    return failure();
  out += "  func.func @" + spec.symbol + "_memref(";
  for (size_t i = 0; i < argNames.size(); ++i)
    out += (i ? ", " : "") + argNames[i] + ": " + argTypes[i] +
           " {llvm.noalias}";
  if (!spec.symbols.empty())
    out += ", %syms: memref<?xi64> {llvm.noalias}";
  if (spec.takesSliceOrigin)
    out += ", %origin: memref<1xi64> {llvm.noalias}";
  out += ") attributes {llvm.emit_c_interface} {\n";
  out += prologue.str() + text.str() + epilogue.str();
  out += "    return\n  }\n";
  return success();
}
