//===- GpuKernelEmitter.cpp - Writing one kernel as gpu.func ---------------===//

#include "GpuKernelEmitter.h"

#include "fuel/Artifact/Program.h"
#include "fuel/Codegen/TargetKernels.h"
#include "fuel/IR/OpKind.h"
#include "fuel/Support/Sha256.h"

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
    result = rounded(result, t); // As if it had been stored.
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

void GpuKernelEmitter::store(ValueRef v, const Point &p, const std::string &value) {
  unsigned arg = *argOf(v);
  DType t = graph.dtype(v);
  // Operands first: computing them writes ops.
  std::string stored = s.toStorage(value, t);
  std::string offset = elementOffset(arg, p);
  s.body() << "    memref.store " << stored << ", %a" << arg << "[" << offset
           << "] : memref<?x" << storageType(t) << ">\n";
}

void GpuKernelEmitter::storeResults(const Point &p, Memo &memo) {
  for (const KernelArg &arg : spec.args)
    if (arg.isResult) {
      Point q = broadcast(arg.value, p);
      store(arg.value, q, valueAt(arg.value, q, memo));
    }
}

std::string GpuKernelEmitter::privateVariable(const std::string &type) {
  std::string var = s.fresh();
  top += "    " + var + " = memref.alloca() : memref<1x" + type + ", " +
         target.privateSpace + ">\n";
  return var;
}

std::string GpuKernelEmitter::loadVariable(const std::string &var,
                                           const std::string &type) {
  return s.op("memref.load " + var + "[" + c(0) + "]",
              "memref<1x" + type + ", " + target.privateSpace + ">");
}

void GpuKernelEmitter::storeVariable(const std::string &var,
                                     const std::string &type,
                                     const std::string &value) {
  s.body() << "    memref.store " << value << ", " << var << "[" << c(0)
           << "] : memref<1x" << type << ", " << target.privateSpace << ">\n";
}

GpuKernelEmitter::Loop GpuKernelEmitter::beginFor(const std::string &lo,
                                                  const std::string &hi,
                                                  const std::string &step,
                                                  const std::string &init,
                                                  const std::string &type) {
  // A carried value lives in a private variable rather than in scf.for
  // iter_args: the SPIR-V conversion leaves the result of a loop that runs
  // zero times undefined.
  Loop l;
  if (!init.empty()) {
    l.type = type;
    l.slot = privateVariable(type);
    storeVariable(l.slot, type, init);
  }
  l.iv = s.fresh();
  s.body() << "    scf.for " << l.iv << " = " << lo << " to " << hi << " step "
           << step << " {\n";
  if (!init.empty())
    l.carried = loadVariable(l.slot, type);
  return l;
}

void GpuKernelEmitter::endFor(Loop &loop, const std::string &next) {
  if (!loop.type.empty())
    storeVariable(loop.slot, loop.type, next);
  s.body() << "    }\n";
  if (!loop.type.empty())
    loop.result = loadVariable(loop.slot, loop.type);
}

GpuKernelEmitter::Loop GpuKernelEmitter::beginThreadLoop(const std::string &n) {
  std::string first = ix("addi", ix("muli", groupId, c(workgroupSize)), threadId);
  return beginFor(first, n, ix("muli", numGroups, c(workgroupSize)));
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
  return workgroupReduce(std::vector<std::string>{value}, {type},
                         [&](const std::vector<std::string> &a,
                             const std::vector<std::string> &b) {
                           return std::vector<std::string>{combine(a[0], b[0])};
                         })[0];
}

std::vector<std::string>
GpuKernelEmitter::workgroupReduce(const std::vector<std::string> &values,
                                  const std::vector<std::string> &types,
                                  const CombineTuple &combine) {
  std::vector<std::string> arrays;
  std::map<std::string, size_t> used;
  for (const std::string &type : types) {
    std::vector<std::string> &ofType = sharedArrays[type];
    size_t n = used[type]++;
    if (n == ofType.size()) {
      ofType.push_back(s.fresh());
      if (target.workgroupAttributions)
        attributions += (attributions.empty() ? "" : ", ") + ofType.back() + " : " +
                        sharedType(type);
      else
        top += "    " + ofType.back() + " = memref.alloc() : " + sharedType(type) + "\n";
    }
    arrays.push_back(ofType[n]);
  }
  std::ostringstream &os = s.body();
  auto load = [&](size_t i, const std::string &at) {
    return s.op("memref.load " + arrays[i] + "[" + at + "]", sharedType(types[i]));
  };
  auto store = [&](const std::vector<std::string> &v) {
    for (size_t i = 0; i < v.size(); ++i)
      os << "    memref.store " << v[i] << ", " << arrays[i] << "[" << threadId
         << "] : " << sharedType(types[i]) << "\n";
  };
  store(values);
  os << "    gpu.barrier\n";
  for (int64_t width = workgroupSize / 2; width >= 1; width /= 2) {
    beginIf(s.op("arith.cmpi ult, " + threadId + ", " + c(width), "index"));
    std::string other = ix("addi", threadId, c(width));
    std::vector<std::string> mine, theirs;
    for (size_t i = 0; i < arrays.size(); ++i) {
      mine.push_back(load(i, threadId));
      theirs.push_back(load(i, other));
    }
    store(combine(mine, theirs));
    endIf();
    os << "    gpu.barrier\n";
  }
  std::vector<std::string> total;
  for (size_t i = 0; i < arrays.size(); ++i)
    total.push_back(load(i, c(0)));
  // Nobody overwrites the arrays before every thread has read the total.
  os << "    gpu.barrier\n";
  return total;
}

GpuKernelEmitter::Point GpuKernelEmitter::pointOf(ValueRef v, Coords at,
                                                  std::string linear) const {
  ShapeRef shape = graph.shape(v);
  return {Shape(shape.begin(), shape.end()), std::move(at), std::move(linear)};
}

std::string GpuKernelEmitter::rounded(const std::string &v, DType t) {
  if (t == DType::F16 || t == DType::BF16)
    return s.toCompute(s.toStorage(v, t), t);
  return v;
}

void GpuKernelEmitter::storeWithHead(NodeId head, const std::string &value,
                                     const Point &p) {
  Memo memo;
  memo[{head, 0}] = rounded(value, graph.dtype({head, 0}));
  storeResults(p, memo);
}

std::string GpuKernelEmitter::sharedType(const std::string &type) const {
  return "memref<" + std::to_string(workgroupSize) + "x" + type + ", " +
         target.workgroupSpace + ">";
}

void GpuKernelEmitter::beginDispatch(const GpuGrid &grid) {
  finishFunction();
  GpuDispatch d;
  d.entry = spec.symbol + "_" + std::to_string(dispatches.size());
  for (unsigned a = 0; a < spec.args.size(); ++a)
    d.args.push_back(a);
  d.workgroupSize = static_cast<unsigned>(workgroupSize);
  d.grid = grid;
  dispatches.push_back(d);
  open = "  gpu.func @" + d.entry + "(";
  for (unsigned a = 0; a < spec.args.size(); ++a)
    open += "%a" + std::to_string(a) + ": memref<?x" +
            storageType(graph.dtype(spec.args[a].value)) + ">, ";
  attributes = target.kernelAttributes;
  std::string size = std::to_string(workgroupSize);
  for (size_t at; (at = attributes.find("%N")) != std::string::npos;)
    attributes.replace(at, 2, size);
  open += "%params: memref<?xi32>)";
  attributes = " kernel attributes {" + attributes + "} {\n";
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
  std::string workgroup =
      attributions.empty() ? "" : " workgroup(" + attributions + ")";
  functions += open + workgroup + attributes + constants + top + body +
               "    gpu.return\n  }\n";
  open.clear();
  attributions.clear();
  top.clear();
  paramWords.clear();
  sharedArrays.clear();
}

LogicalResult GpuKernelEmitter::emit(std::string &module, GpuKernel &kernel,
                                     DiagnosticEngine &diag) {
  for (unsigned a = 0; a < spec.args.size(); ++a)
    args[spec.args[a].value] = a;
  std::optional<NodeId> head;
  for (NodeId n : spec.nodes) {
    OpKind kind = graph.kind(n);
    if (!gpuEmitterGenerates(kind)) {
      diag.error(nodeLocation(graph.name(n)),
                 "no GPU code generator for " + std::string(opName(kind)));
      return failure();
    }
    if (!isElementwiseOp(kind))
      head = n;
  }
  LogicalResult result = success();
  switch (head ? graph.kind(*head) : OpKind::Add) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    result = emitGpuNormalization(*this, *head, diag);
    break;
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
    result = emitGpuReduction(*this, *head, diag);
    break;
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    result = emitGpuArgReduction(*this, *head, diag);
    break;
  case OpKind::Split:
    result = emitGpuSplit(*this, *head, diag);
    break;
  default:
    result = emitGpuPerElement(*this, head, diag);
  }
  if (failed(result))
    return failure();
  finishFunction();
  module += functions;
  kernel.symbol = spec.symbol;
  kernel.dispatches = std::move(dispatches);
  return success();
}

LogicalResult fuel::emitGpuModule(const Graph &graph, const std::vector<KernelSpec> &kernels,
                                  const GpuDialectTarget &target, std::string &module,
                                  std::vector<GpuKernel> &described, DiagnosticEngine &diag) {
  module = "gpu.module @kernels {\n";
  for (const KernelSpec &spec : kernels) {
    GpuKernelEmitter emitter(graph, spec, target);
    GpuKernel kernel;
    size_t start = module.size();
    if (failed(emitter.emit(module, kernel, diag)))
      return failure();
    std::vector<std::pair<DType, size_t>> args;
    for (const KernelArg &arg : spec.args)
      args.emplace_back(graph.dtype(arg.value), graph.shape(arg.value).size());
    kernel.signature =
        artifact::kernelSignature(args, !spec.symbols.empty(), spec.takesSliceOrigin);
    // A library kernel alone generates no code: its capsule's revision stands.
    if (module.size() > start)
      kernel.revision =
          "sha256:" + toHex(Sha256::of(std::string_view(module).substr(start)));
    described.push_back(std::move(kernel));
  }
  module += "}\n";
  return success();
}
