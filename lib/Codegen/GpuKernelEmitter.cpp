//===- GpuKernelEmitter.cpp - Writing one kernel as gpu.func ---------------===//

#include "GpuKernelEmitter.h"

#include "fuel/IR/OpKind.h"
#include "fuel/Planner/Capsule.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::codegen;

std::optional<unsigned> GpuKernelEmitter::argOf(ValueRef value) const {
  auto it = args.find(value);
  if (it == args.end())
    return std::nullopt;
  return it->second;
}

bool GpuKernelEmitter::inGroup(NodeId node) const {
  return std::find(spec.nodes.begin(), spec.nodes.end(), node) != spec.nodes.end();
}

std::string GpuKernelEmitter::param(unsigned arg, unsigned word) {
  unsigned slot = word;
  for (unsigned i = 0; i < arg; ++i)
    slot += 1 + 2 * static_cast<unsigned>(graph.shape(spec.args[i].value).size());
  auto [it, inserted] = paramWords.try_emplace(slot);
  if (inserted) {
    std::string raw = s.fresh(), v = s.fresh();
    top += "    " + raw + " = memref.load %params[" + c(slot) + "] : memref<?xi32>\n";
    top += "    " + v + " = arith.index_cast " + raw + " : i32 to index\n";
    it->second = v;
  }
  return it->second;
}

GpuKernelEmitter::Coords GpuKernelEmitter::extents(ValueRef value) {
  ShapeRef shape = graph.shape(value);
  Coords out;
  for (const Dim &d : shape) {
    if (d.isStatic()) {
      out.push_back(c(d.size()));
      continue;
    }
    // Any argument with this symbolic dim carries its value.
    std::string found;
    for (unsigned a = 0; a < spec.args.size() && found.empty(); ++a) {
      ShapeRef as = graph.shape(spec.args[a].value);
      for (size_t k = 0; k < as.size() && found.empty(); ++k)
        if (as[k] == d)
          found = param(a, 1 + static_cast<unsigned>(k));
    }
    out.push_back(found);
  }
  return out;
}

std::string GpuKernelEmitter::product(const Coords &extents) {
  std::string p = c(1);
  for (const std::string &e : extents)
    p = p == c(1) ? e : ix("muli", p, e);
  return p;
}

GpuKernelEmitter::Coords
GpuKernelEmitter::delinearize(const std::string &linear, const Coords &extents) {
  Coords at(extents.size());
  std::string rest = linear;
  for (size_t d = extents.size(); d-- > 0;) {
    if (d == 0) {
      at[d] = rest;
      break;
    }
    at[d] = ix("remui", rest, extents[d]);
    rest = ix("divui", rest, extents[d]);
  }
  return at;
}

std::string GpuKernelEmitter::elementOffset(unsigned arg, const Point &p) {
  const KernelArg &a = spec.args[arg];
  ShapeRef shape = graph.shape(a.value);
  std::string offset = param(arg, 0);
  if (a.contiguous && !p.linear.empty() &&
      std::equal(shape.begin(), shape.end(), p.shape.begin(), p.shape.end()))
    return ix("addi", offset, p.linear);
  Coords ext = extents(a.value);
  unsigned rank = static_cast<unsigned>(shape.size());
  std::string stride = c(1);
  for (unsigned d = rank; d-- > 0;) {
    std::string st = a.contiguous ? stride : param(arg, 1 + rank + d);
    offset = ix("addi", offset, ix("muli", p.at[d], st));
    if (a.contiguous && d > 0)
      stride = stride == c(1) ? ext[d] : ix("muli", stride, ext[d]);
  }
  return offset;
}

GpuKernelEmitter::Point GpuKernelEmitter::broadcast(ValueRef value,
                                                    const Point &p) {
  ShapeRef shape = graph.shape(value);
  Point out;
  out.shape.assign(shape.begin(), shape.end());
  if (std::equal(shape.begin(), shape.end(), p.shape.begin(), p.shape.end()))
    out.linear = p.linear;
  size_t lead = p.shape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    out.at.push_back(shape[d] == Dim::fixed(1) && p.shape[lead + d] != Dim::fixed(1)
                         ? c(0)
                         : p.at[lead + d]);
  return out;
}

std::string GpuKernelEmitter::valueAt(ValueRef v, const Point &p, Memo &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  std::string result;
  NodeId n = v.node;
  DType t = graph.dtype(v);
  if (inGroup(n) && isElementwiseOp(graph.kind(n))) {
    std::vector<std::string> operands;
    for (ValueRef u : graph.operands(n))
      operands.push_back(valueAt(u, broadcast(u, p), memo));
    result = emitScalarOp(s, n, operands);
    // Rounded to the value's dtype, as if it had been stored.
    if (t == DType::F16 || t == DType::BF16)
      result = s.toCompute(s.toStorage(result, t), t);
  } else if (inGroup(n) && graph.kind(n) == OpKind::Contiguous) {
    ValueRef x = graph.operands(n)[0];
    result = valueAt(x, broadcast(x, p), memo);
  } else {
    result = load(v, p);
  }
  memo[v] = result;
  return result;
}

std::string GpuKernelEmitter::load(ValueRef v, const Point &p) {
  unsigned arg = *argOf(v);
  DType t = graph.dtype(v);
  std::string loaded = s.op("memref.load %a" + std::to_string(arg) + "[" +
                                elementOffset(arg, p) + "]",
                            "memref<?x" + storageType(t) + ">");
  return s.toCompute(loaded, t);
}

void GpuKernelEmitter::storeResults(const Point &p, Memo &memo) {
  for (unsigned a = 0; a < spec.args.size(); ++a) {
    const KernelArg &arg = spec.args[a];
    if (!arg.isResult)
      continue;
    Point q = broadcast(arg.value, p);
    DType t = graph.dtype(arg.value);
    // Operands first: computing them writes ops.
    std::string v = s.toStorage(valueAt(arg.value, q, memo), t);
    std::string offset = elementOffset(a, q);
    s.body() << "    memref.store " << v << ", %a" << a << "[" << offset
             << "] : memref<?x" << storageType(t) << ">\n";
  }
}

GpuKernelEmitter::Loop GpuKernelEmitter::beginFor(const std::string &lo,
                                                  const std::string &hi,
                                                  const std::string &step,
                                                  const std::string &init,
                                                  const std::string &type) {
  // A carried value lives in a private one-element array rather than in
  // scf.for iter_args: the SPIR-V conversion leaves the result of a loop
  // that runs zero times undefined.
  Loop l;
  if (!init.empty()) {
    l.type = type;
    l.slot = s.fresh();
    l.slotType = "memref<1x" + type + ", " + target.privateSpace + ">";
    top += "    " + l.slot + " = memref.alloca() : " + l.slotType + "\n";
    s.body() << "    memref.store " << init << ", " << l.slot << "[" << c(0)
             << "] : " << l.slotType << "\n";
  }
  l.iv = s.fresh();
  s.body() << "    scf.for " << l.iv << " = " << lo << " to " << hi << " step "
           << step << " {\n";
  if (!init.empty())
    l.carried = s.op("memref.load " + l.slot + "[" + c(0) + "]", l.slotType);
  return l;
}

void GpuKernelEmitter::endFor(Loop &loop, const std::string &next) {
  if (!loop.type.empty())
    s.body() << "    memref.store " << next << ", " << loop.slot << "[" << c(0)
             << "] : " << loop.slotType << "\n";
  s.body() << "    }\n";
  if (!loop.type.empty())
    loop.result = s.op("memref.load " + loop.slot + "[" + c(0) + "]", loop.slotType);
}

GpuKernelEmitter::Loop GpuKernelEmitter::beginThreadLoop(const std::string &n) {
  std::string first = ix("addi", ix("muli", groupId, c(kWorkgroupSize)), threadId);
  return beginFor(first, n, ix("muli", numGroups, c(kWorkgroupSize)));
}

GpuKernelEmitter::Loop GpuKernelEmitter::beginGroupLoop(const std::string &n) {
  return beginFor(groupId, n, numGroups);
}

void GpuKernelEmitter::beginIf(const std::string &cond) {
  s.body() << "    scf.if " << cond << " {\n";
}

void GpuKernelEmitter::endIf() { s.body() << "    }\n"; }

std::string GpuKernelEmitter::workgroupReduce(const std::string &value,
                                              const std::string &type,
                                              const Combine &combine) {
  auto [it, inserted] = sharedArrays.try_emplace(type);
  if (inserted) {
    it->second = s.fresh();
    top += "    " + it->second + " = memref.alloc() : " + sharedType(type) + "\n";
  }
  const std::string &shared = it->second;
  std::string memref = sharedType(type);
  std::ostringstream &os = s.body();
  os << "    memref.store " << value << ", " << shared << "[" << threadId
     << "] : " << memref << "\n    gpu.barrier\n";
  for (int64_t width = kWorkgroupSize / 2; width >= 1; width /= 2) {
    beginIf(s.op("arith.cmpi ult, " + threadId + ", " + c(width), "index"));
    std::string other = ix("addi", threadId, c(width));
    std::string a = s.op("memref.load " + shared + "[" + threadId + "]", memref);
    std::string b = s.op("memref.load " + shared + "[" + other + "]", memref);
    std::string combined = combine(a, b);
    os << "    memref.store " << combined << ", " << shared << "[" << threadId
       << "] : " << memref << "\n";
    endIf();
    os << "    gpu.barrier\n";
  }
  std::string total = s.op("memref.load " + shared + "[" + c(0) + "]", memref);
  // Nobody overwrites the array before every thread has read the total.
  os << "    gpu.barrier\n";
  return total;
}

std::string GpuKernelEmitter::sharedType(const std::string &type) const {
  return "memref<" + std::to_string(kWorkgroupSize) + "x" + type + ", " +
         target.workgroupSpace + ">";
}

void GpuKernelEmitter::beginDispatch(const GpuGrid &grid) {
  finishFunction();
  GpuDispatch d;
  d.entry = spec.symbol + "_" + std::to_string(dispatches.size());
  for (unsigned a = 0; a < spec.args.size(); ++a)
    d.args.push_back(a);
  d.workgroupSize = kWorkgroupSize;
  d.grid = grid;
  dispatches.push_back(d);
  open = "  gpu.func @" + d.entry + "(";
  for (unsigned a = 0; a < spec.args.size(); ++a)
    open += "%a" + std::to_string(a) + ": memref<?x" +
            storageType(graph.dtype(spec.args[a].value)) + ">, ";
  std::string attributes = target.kernelAttributes;
  std::string size = std::to_string(kWorkgroupSize);
  for (size_t at; (at = attributes.find("%N")) != std::string::npos;)
    attributes.replace(at, 2, size);
  open += "%params: memref<?xi32>) kernel attributes {" + attributes + "} {\n";
  threadId = s.fresh(), groupId = s.fresh(), numGroups = s.fresh();
  top = "    " + threadId + " = gpu.thread_id x\n    " + groupId +
        " = gpu.block_id x\n    " + numGroups + " = gpu.grid_dim x\n";
}

void GpuKernelEmitter::addLibraryDispatch(std::vector<unsigned> bound,
                                          GpuGrid grid,
                                          std::vector<int32_t> constants,
                                          unsigned workgroup) {
  GpuDispatch d;
  d.entry = spec.librarySymbol;
  d.isLibrary = true;
  d.args = std::move(bound);
  d.grid = std::move(grid);
  d.constants = std::move(constants);
  d.workgroupSize = workgroup;
  dispatches.push_back(std::move(d));
}

void GpuKernelEmitter::finishFunction() {
  if (open.empty())
    return;
  std::string constants, body;
  s.takeFunction(constants, body);
  functions += open + constants + top + body + "    gpu.return\n  }\n";
  open.clear();
  top.clear();
  paramWords.clear();
  sharedArrays.clear();
}

LogicalResult GpuKernelEmitter::emit(std::string &module, GpuKernel &kernel,
                                     std::string &error) {
  for (unsigned a = 0; a < spec.args.size(); ++a)
    args[spec.args[a].value] = a;
  std::optional<NodeId> head;
  for (NodeId n : spec.nodes) {
    OpKind kind = graph.kind(n);
    if (!isGpuCodegenOp(kind)) {
      error = "no GPU code generator for " + std::string(opName(kind)) +
              " (node '" + std::string(graph.name(n)) + "')";
      return failure();
    }
    if (!isElementwiseOp(kind) && kind != OpKind::Contiguous)
      head = n;
  }
  LogicalResult result = success();
  if (!head) {
    result = emitGpuPointwise(*this, error);
  } else {
    switch (graph.kind(*head)) {
    case OpKind::MatMul:
    case OpKind::Linear:
      result = emitGpuContraction(*this, *head, error);
      break;
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      result = emitGpuNormalization(*this, *head, error);
      break;
    default:
      result = emitGpuReduction(*this, *head, error);
    }
  }
  if (failed(result))
    return failure();
  finishFunction();
  module += functions;
  kernel.symbol = spec.symbol;
  kernel.dispatches = std::move(dispatches);
  return success();
}

LogicalResult fuel::emitGpuModule(const Graph &graph,
                                  const std::vector<KernelSpec> &kernels,
                                  const GpuDialectTarget &target,
                                  std::string &module,
                                  std::vector<GpuKernel> &described,
                                  std::string &error) {
  module = "gpu.module @kernels {\n";
  for (const KernelSpec &spec : kernels) {
    GpuKernelEmitter emitter(graph, spec, target);
    GpuKernel kernel;
    std::string why;
    if (failed(emitter.emit(module, kernel, why))) {
      error = "node '" + std::string(graph.name(spec.nodes.back())) + "': " + why;
      return failure();
    }
    described.push_back(std::move(kernel));
  }
  module += "}\n";
  return success();
}
