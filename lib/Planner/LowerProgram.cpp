//===- LowerProgram.cpp - A planned route as an executable program --------===//
//
// Everything the runtime would otherwise derive from the graph is decided
// here, once: which buffer or constant each kernel argument lives in, its
// layout (folded to offset and strides when no symbol is involved), the
// order of launches and copies and what each waits for.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/LowerProgram.h"

#include "fuel/IR/ValueLayout.h"

#include <cassert>
#include <map>

using namespace fuel;
using namespace fuel::artifact;

namespace {
class Lowering {
public:
  Lowering(const Graph &graph, const PlannedRoute &route)
      : graph(graph), plan(route.plan), route(route) {}

  Program lower(size_t routeIndex);

private:
  void lowerSymbols();
  void lowerDevices(size_t routeIndex);
  void lowerStorage();
  void lowerKernels();
  void lowerSteps();
  std::vector<Extent> extents(ShapeRef shape) const;
  artifact::Tensor tensor(ValueRef value, unsigned device) const;

  const Graph &graph;
  const ExecutionPlan &plan;
  const PlannedRoute &route;
  Program p;
  /// Program device of each machine device (~0u: not in the route).
  std::vector<uint32_t> deviceIndex;
  std::map<std::tuple<NodeId, uint32_t, unsigned>, uint32_t> bufferOf;
  std::map<NodeId, uint32_t> constantOf;
  /// Kernel of each plan step (the kernel its root step's group forms), or
  /// -1 for a step that runs in place.
  std::vector<int64_t> kernelOfStep;
};
} // namespace

void Lowering::lowerSymbols() {
  const SymbolTable &table = graph.symbols();
  for (uint32_t s = 0; s < table.size(); ++s) {
    Symbol sym;
    sym.name = std::string(table.name(s));
    sym.bound = plan.symbolBounds[s].second;
    if (table.isDerived(s)) {
      SymbolProduct product = table.expand(Dim::symbol(s));
      sym.factor = product.factor;
      sym.of = product.symbols;
    }
    p.symbols.push_back(std::move(sym));
  }
}

void Lowering::lowerDevices(size_t routeIndex) {
  const std::vector<DeviceSpec> &devices = plan.machine->devices;
  deviceIndex.assign(devices.size(), ~0u);
  std::vector<bool> hasKernels(devices.size(), false);
  for (const KernelSpec &spec : plan.kernels)
    hasKernels[plan.deviceOf[spec.nodes.back()]] = true;
  for (unsigned d = 0; d < devices.size(); ++d) {
    bool inRoute = std::find(route.devices.begin(), route.devices.end(),
                             devices[d].ref) != route.devices.end();
    if (!inRoute && !hasKernels[d] && plan.memory.devices[d].arenaBytes == 0)
      continue;
    deviceIndex[d] = static_cast<uint32_t>(p.devices.size());
    Device device;
    device.id = formatDevice(devices[d].ref);
    device.arenaBytes = plan.memory.devices[d].arenaBytes;
    if (auto target = route.kernelTargets.find(d); target != route.kernelTargets.end())
      device.kernelSection = routeSectionName("kernels." + target->second, routeIndex);
    p.devices.push_back(std::move(device));
  }
}

void Lowering::lowerStorage() {
  for (const PlannedBuffer &b : plan.memory.buffers) {
    if (!b.workspace)
      bufferOf[{b.value.node, b.value.result, b.device}] =
          static_cast<uint32_t>(p.buffers.size());
    p.buffers.push_back({deviceIndex[b.device], b.offset, b.size, b.sliceOf});
  }
  std::vector<uint64_t> offsets;
  constantOffsets(graph, offsets);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (const ConstantData *data = graph.constantData(n)) {
      constantOf[n] = static_cast<uint32_t>(p.constants.size());
      p.constants.push_back({offsets[n], data->size});
    }
}

std::vector<Extent> Lowering::extents(ShapeRef shape) const {
  std::vector<Extent> out;
  for (Dim d : shape)
    out.push_back(d.isStatic() ? Extent{d.size(), -1}
                               : Extent{0, static_cast<int32_t>(d.symbolId())});
  return out;
}

artifact::Tensor Lowering::tensor(ValueRef value, unsigned device) const {
  artifact::Tensor t;
  ValueRef root = bufferRoot(graph, value);
  if (auto c = constantOf.find(root.node); c != constantOf.end()) {
    t.storage = StorageKind::Constant;
    t.index = c->second;
  } else {
    t.index = bufferOf.at({root.node, root.result, device});
  }
  t.dtype = graph.dtype(value);
  t.sizes = extents(graph.shape(value));
  // The view chain from the storage's value up to `value`.
  std::vector<ValueRef> chain;
  bool symbolic = !isFullyStatic(graph.shape(value));
  for (ValueRef v = value; isViewOp(graph.kind(v.node));
       v = graph.operands(v.node)[0]) {
    chain.push_back(v);
    symbolic |= !isFullyStatic(graph.shape(graph.operands(v.node)[0]));
  }
  if (!symbolic) {
    Layout layout = valueLayout(graph, value, {});
    t.offset = layout.offset;
    t.strides = layout.strides;
    return t;
  }
  t.symbolic = true;
  t.root = extents(graph.shape(root));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    NodeId n = it->node;
    View view;
    ViewParams params = viewParams(graph, n);
    switch (graph.kind(n)) {
    case OpKind::Transpose:
      view.kind = ViewKind::Transpose;
      view.perm = std::move(params.perm);
      break;
    case OpKind::Slice:
      view.kind = ViewKind::Slice;
      view.axes = std::move(params.axes);
      view.starts = std::move(params.starts);
      view.ends = std::move(params.ends);
      view.steps = std::move(params.steps);
      break;
    case OpKind::BroadcastTo:
    case OpKind::Expand:
      view.kind = ViewKind::Broadcast;
      view.sizes = extents(graph.shape(*it));
      break;
    default: // reshape, squeeze, unsqueeze
      view.kind = ViewKind::Reshape;
      view.sizes = extents(graph.shape(*it));
      break;
    }
    t.views.push_back(std::move(view));
  }
  return t;
}

void Lowering::lowerKernels() {
  // Kernel k is the k-th kernel-launching step in step order.
  kernelOfStep.assign(plan.steps.size(), -1);
  std::vector<size_t> rootStep;
  for (size_t s = 0; s < plan.rootOf.size(); ++s)
    if (plan.launchesKernel(s)) {
      kernelOfStep[s] = static_cast<int64_t>(rootStep.size());
      rootStep.push_back(s);
    }
  for (size_t s = 0; s < plan.steps.size(); ++s)
    kernelOfStep[s] = kernelOfStep[plan.rootOf[s]];
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const KernelSpec &spec = plan.kernels[k];
    const PlannedStep &root = plan.steps[rootStep[k]];
    unsigned device = plan.deviceOf[spec.nodes.back()];
    Kernel kernel;
    kernel.symbol = spec.symbol;
    kernel.device = deviceIndex[device];
    kernel.capsule = root.capsule ? root.capsule->id : "";
    auto revision = route.kernelRevisions.find(spec.symbol);
    kernel.revision = revision != route.kernelRevisions.end() && !revision->second.empty()
                          ? revision->second
                          : (root.capsule ? root.capsule->revision : "");
    kernel.node = std::string(graph.name(root.node));
    for (NodeId n : spec.nodes)
      kernel.label += (kernel.label.empty() ? "" : "+") + std::string(opName(graph.kind(n)));
    kernel.splittable = spec.splittable;
    for (const fuel::KernelArg &arg : spec.args)
      kernel.args.push_back(
          {tensor(arg.value, device), arg.isResult, arg.splitAxis, arg.contiguous});
    kernel.symbols = spec.symbols;
    kernel.sliceOrigin = spec.takesSliceOrigin;
    p.kernels.push_back(std::move(kernel));
  }
}

void Lowering::lowerSteps() {
  for (const PlannedCopy &c : plan.copies)
    p.copies.push_back({bufferOf.at({c.value.node, c.value.result, c.from}),
                        bufferOf.at({c.value.node, c.value.result, c.to}),
                        valueName(graph, c.value)});
  // A kernel launches at the last step of its group; copies follow the step
  // producing their value (those of inputs come first).
  std::vector<size_t> lastStep(p.kernels.size(), 0);
  for (size_t s = 0; s < kernelOfStep.size(); ++s)
    if (kernelOfStep[s] >= 0)
      lastStep[kernelOfStep[s]] = s;
  std::vector<int64_t> launchAt(plan.steps.size(), -1);
  for (size_t k = 0; k < lastStep.size(); ++k)
    launchAt[lastStep[k]] = static_cast<int64_t>(k);
  // The last step writing each buffer, and those writing the slices of an
  // in-place concat's result (which its readers wait for).
  std::vector<int64_t> writer(p.buffers.size(), -1);
  std::vector<std::vector<uint32_t>> sliceWriters(p.buffers.size());
  auto add = [&](StepKind kind, uint32_t index) {
    Step step{kind, index, {}};
    std::vector<uint32_t> reads, writes;
    if (kind == StepKind::Launch) {
      for (const artifact::KernelArg &a : p.kernels[index].args)
        if (a.tensor.storage == StorageKind::Buffer)
          (a.isResult ? writes : reads).push_back(a.tensor.index);
    } else {
      reads.push_back(p.copies[index].source);
      writes.push_back(p.copies[index].target);
    }
    for (uint32_t b : reads) {
      if (writer[b] >= 0)
        step.deps.push_back(static_cast<uint32_t>(writer[b]));
      step.deps.insert(step.deps.end(), sliceWriters[b].begin(), sliceWriters[b].end());
    }
    std::sort(step.deps.begin(), step.deps.end());
    step.deps.erase(std::unique(step.deps.begin(), step.deps.end()), step.deps.end());
    for (uint32_t b : writes) {
      writer[b] = static_cast<int64_t>(p.steps.size());
      if (int64_t whole = p.buffers[b].sliceOf; whole >= 0)
        sliceWriters[whole].push_back(static_cast<uint32_t>(p.steps.size()));
    }
    p.steps.push_back(std::move(step));
  };
  auto addCopies = [&](size_t step) {
    for (const PlannedCopy &c : plan.copiesAfter(step))
      add(StepKind::Copy, static_cast<uint32_t>(&c - plan.copies.data()));
  };
  addCopies(~size_t(0));
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (launchAt[s] >= 0)
      add(StepKind::Launch, static_cast<uint32_t>(launchAt[s]));
    addCopies(s);
  }
}

Program Lowering::lower(size_t routeIndex) {
  lowerSymbols();
  lowerDevices(routeIndex);
  lowerStorage();
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      p.inputs.push_back({std::string(graph.name(n)), tensor({n, 0}, plan.inputDevice)});
  for (ValueRef out : graph.outputs())
    p.outputs.push_back({std::string(graph.name(out.node)), tensor(out, plan.outputDevice)});
  lowerKernels();
  lowerSteps();
  return std::move(p);
}

std::string fuel::routeSectionName(std::string_view base, size_t routeIndex) {
  return routeIndex == 0 ? std::string(base)
                         : std::string(base) + "." + std::to_string(routeIndex);
}

Program fuel::lowerProgram(const Graph &graph, const PlannedRoute &route,
                           size_t routeIndex) {
  return Lowering(graph, route).lower(routeIndex);
}
