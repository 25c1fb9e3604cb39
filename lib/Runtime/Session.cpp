//===- Session.cpp - Loading and running .fplan artifacts -----------------===//

#include "fuel/Runtime/Runtime.h"

#include "Backend.h"
#include "Program.h"

#include "fuel/Import/GraphJson.h"
#include "fuel/IR/ValueLayout.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <sstream>
#include <thread>

using namespace fuel;
using namespace fuel::runtime;

namespace {
struct ProfileEntry {
  double seconds = 0;
  uint64_t calls = 0;
};
} // namespace

struct Session::Impl {
  std::shared_ptr<const FileBuffer> artifact;
  std::string name;
  std::optional<ArtifactView> view;
  std::optional<Graph> graph;
  Program program;
  std::string report;
  unsigned threads = 1;
  std::vector<std::unique_ptr<Backend>> backends; // By device; null if unused.
  std::vector<void *> entries;                    // By kernel.
  // Where each buffer is: in its device's arena, except graph inputs on the
  // CPU, which each run points at the caller's tensors.
  std::vector<char *> bufferBase;
  std::vector<bool> isInputBuffer;
  // Constants read by kernels on devices whose memory the host cannot
  // address: their device copies, by device and constant node.
  std::vector<std::map<NodeId, char *>> deviceConstants;
  // Kernel calls for the current symbol values, prepared by the binder
  // thread for the planned values and rebuilt when a run binds others.
  std::vector<KernelCall> calls;
  std::vector<int64_t> symbolValues;
  std::vector<std::shared_future<void>> bound;
  std::thread binder;
  bool allBound = false;
  std::atomic<bool> profiling{false};
  std::map<std::string, ProfileEntry> profile;

  ~Impl() {
    if (binder.joinable())
      binder.join();
  }

  LogicalResult error(DiagnosticEngine &diag, std::string message) {
    SourceLocation loc;
    loc.file = name;
    diag.error(std::move(loc), std::move(message));
    return failure();
  }

  LogicalResult open(DiagnosticEngine &diag);
  LogicalResult chooseRoute(const std::vector<Route> &routes,
                            const std::vector<DeviceInfo> &devices,
                            DiagnosticEngine &diag);
  LogicalResult prepareDevices(const std::map<std::string, std::string> &sections,
                               DiagnosticEngine &diag);
  char *baseOf(const Binding &b, unsigned device = 0);
  LogicalResult importConstants(DiagnosticEngine &diag);
  bool onHost(size_t buffer) const {
    return backends[program.buffers[buffer].device]->isHostMemory();
  }
  KernelCall buildCall(size_t k);
  void startBinding();
  LogicalResult bindSymbols(const std::map<std::string, Tensor> &inputs,
                            DiagnosticEngine &diag);
  void execute();
  void copy(const CopyInfo &c);
  void readOutput(const Binding &b, Tensor &t);
};

LogicalResult Session::Impl::open(DiagnosticEngine &diag) {
  view = readArtifact(artifact, name, diag);
  if (!view)
    return failure();
  auto section = [&](std::string_view s) -> std::optional<std::string_view> {
    std::optional<std::string_view> text = view->section(s);
    if (!text)
      (void)error(diag, "artifact has no '" + std::string(s) +
                            "' section (was it written by fuelc plan -o?)");
    return text;
  };
  std::optional<std::string_view> meta = section("meta"),
                                  graphText = section("graph");
  if (!meta || !graphText || !section("weights"))
    return failure();
  std::vector<DeviceInfo> devices;
  std::vector<Route> routes;
  std::string why;
  if (failed(readMeta(*meta, devices, routes, why)))
    return error(diag, why);
  GraphReadOptions options;
  for (const ArtifactView::Section &s : view->sections())
    if (s.name == "weights")
      options.preloadedFiles["weights"] =
          FileBuffer::slice(artifact, s.offset, s.size);
  graph = parseGraphJson(*graphText, name + ":graph", options, diag);
  if (!graph)
    return failure();
  return chooseRoute(routes, devices, diag);
}

LogicalResult Session::Impl::chooseRoute(const std::vector<Route> &routes,
                                         const std::vector<DeviceInfo> &devices,
                                         DiagnosticEngine &diag) {
  std::string reasons;
  for (size_t r = 0; r < routes.size(); ++r) {
    const Route &route = routes[r];
    std::string line = "route " + std::to_string(r) + " (";
    for (size_t i = 0; i < route.devices.size(); ++i)
      line += (i ? ", " : "") + route.devices[i];
    line += ")";
    std::vector<std::unique_ptr<Backend>> candidate(devices.size());
    std::string missing;
    for (const std::string &id : route.devices) {
      auto it = std::find_if(devices.begin(), devices.end(),
                             [&](const DeviceInfo &d) { return d.id == id; });
      std::string why;
      if (it == devices.end())
        why = "not in the artifact's machine";
      else if (auto backend = createBackend(*it, threads, why))
        candidate[it - devices.begin()] = std::move(backend);
      if (!why.empty())
        missing += "\n    " + id + ": " + why;
    }
    if (!missing.empty()) {
      report += line + ": skipped, missing devices:" + missing + "\n";
      reasons += "\n  " + line + ":" + missing;
      continue;
    }
    report += line + ": chosen\n";
    for (size_t d = 0; d < candidate.size(); ++d)
      if (candidate[d] && !candidate[d]->describe().empty())
        report += "  " + devices[d].id + ": " + candidate[d]->describe() + "\n";
    backends = std::move(candidate);
    std::optional<std::string_view> plan = view->section(route.planSection);
    std::string why;
    if (!plan)
      return error(diag, "route " + std::to_string(r) + " names a missing section '" +
                             route.planSection + "'");
    if (failed(readProgram(*plan, *graph, devices, program, why)))
      return error(diag, "section '" + route.planSection + "' is malformed: " + why);
    return prepareDevices(route.kernelSections, diag);
  }
  return error(diag, "no planned route can run here:" + reasons);
}

LogicalResult Session::Impl::prepareDevices(
    const std::map<std::string, std::string> &sections, DiagnosticEngine &diag) {
  static const char *const kBackendNames[] = {"x86", "ptx", "spirv"};
  for (unsigned d = 0; d < backends.size(); ++d) {
    if (!backends[d])
      continue;
    const DeviceInfo &device = program.devices[d];
    std::string why;
    if (failed(backends[d]->allocateArena(program.arenaBytes[d], why)))
      return error(diag, device.id + ": " + why);
    bool hasKernels = std::any_of(program.kernels.begin(), program.kernels.end(),
                                  [&](const KernelInfo &k) { return k.device == d; });
    if (!hasKernels)
      continue;
    const char *backendName = kBackendNames[static_cast<unsigned>(device.kind)];
    auto it = sections.find(backendName);
    std::optional<std::string_view> binary;
    if (it != sections.end())
      binary = view->section(it->second);
    if (!binary)
      return error(diag, device.id + ": the artifact carries no " +
                             std::string(backendName) +
                             " kernels for this route (fuelc had no code "
                             "generator for this device)");
    if (failed(backends[d]->loadKernels(*binary, program, d, why)))
      return error(diag, device.id + ": " + why);
  }
  // Fail fast: every kernel resolves on its device before anything runs.
  for (const KernelInfo &k : program.kernels) {
    Backend *backend = backends[k.device].get();
    void *entry = backend ? backend->findKernel(k.symbol) : nullptr;
    if (!entry)
      return error(diag, "step '" + k.rootName + "': kernel '" + k.symbol +
                             "' (capsule " + k.capsule + ") is missing on " +
                             program.devices[k.device].id);
    entries.push_back(entry);
  }
  for (const BufferInfo &b : program.buffers)
    bufferBase.push_back(backends[b.device] ? backends[b.device]->arenaBase() + b.offset
                                            : nullptr);
  if (failed(importConstants(diag)))
    return failure();
  isInputBuffer.assign(program.buffers.size(), false);
  for (const Binding &b : program.inputs) {
    if (!b.buffer)
      return error(diag, "input is not bound to a buffer");
    isInputBuffer[*b.buffer] = program.devices[program.buffers[*b.buffer].device].kind ==
                               DeviceKind::CPU;
  }
  return success();
}

LogicalResult Session::Impl::importConstants(DiagnosticEngine &diag) {
  deviceConstants.resize(backends.size());
  for (unsigned d = 0; d < backends.size(); ++d) {
    if (!backends[d] || backends[d]->isHostMemory())
      continue;
    std::vector<NodeId> nodes;
    for (const KernelInfo &k : program.kernels)
      for (const KernelArgInfo &arg : k.args)
        if (k.device == d && !arg.binding.buffer)
          nodes.push_back(bufferRoot(*graph, arg.binding.value).node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    std::vector<std::string_view> data;
    for (NodeId n : nodes)
      data.push_back(graph->constantData(n)->bytes());
    std::vector<char *> addresses;
    std::string why;
    if (failed(backends[d]->importConstants(data, addresses, why)))
      return error(diag, program.devices[d].id + ": " + why);
    for (size_t i = 0; i < nodes.size(); ++i)
      deviceConstants[d][nodes[i]] = addresses[i];
  }
  return success();
}

char *Session::Impl::baseOf(const Binding &b, unsigned device) {
  if (b.buffer)
    return bufferBase[*b.buffer];
  ValueRef root = bufferRoot(*graph, b.value);
  if (device < deviceConstants.size())
    if (auto it = deviceConstants[device].find(root.node); it != deviceConstants[device].end())
      return it->second;
  return const_cast<char *>(graph->constantData(root.node)->bytes().data());
}

KernelCall Session::Impl::buildCall(size_t k) {
  const KernelInfo &info = program.kernels[k];
  KernelCall call;
  call.kernel = k;
  call.entry = entries[k];
  for (const KernelArgInfo &arg : info.args) {
    Layout layout = valueLayout(*graph, arg.binding.value, symbolValues);
    // The element offset goes into the aligned pointer: a contiguous memref
    // type has a static offset of 0 and ignores the descriptor's.
    int64_t width = dtypeByteSize(graph->dtype(arg.binding.value));
    int64_t base = reinterpret_cast<int64_t>(baseOf(arg.binding, info.device));
    std::vector<int64_t> d{base, base + layout.offset * width, 0};
    if (arg.binding.buffer && isInputBuffer[*arg.binding.buffer])
      call.rebinds.push_back({static_cast<unsigned>(call.descriptors.size()),
                              *arg.binding.buffer, layout.offset * width});
    d.insert(d.end(), layout.sizes.begin(), layout.sizes.end());
    d.insert(d.end(), layout.strides.begin(), layout.strides.end());
    call.descriptors.push_back(std::move(d));
    call.splitAxes.push_back(info.splittable ? arg.splitAxis : -1);
    call.elementBytes.push_back(width);
    call.work += layout.numElements();
    if (arg.isResult && info.splittable && call.splitExtent == 0 && arg.splitAxis >= 0)
      call.splitExtent = layout.sizes[arg.splitAxis];
  }
  if (!info.symbols.empty()) {
    for (uint32_t id : info.symbols)
      call.symbolValues.push_back(symbolValues[id]);
    call.descriptors.push_back({0, 0, 0, int64_t(info.symbols.size()), 1});
    call.splitAxes.push_back(-1);
    call.elementBytes.push_back(8);
  }
  for (std::vector<int64_t> &d : call.descriptors)
    call.argv.push_back(d.data());
  if (!call.symbolValues.empty()) {
    int64_t base = reinterpret_cast<int64_t>(call.symbolValues.data());
    call.descriptors.back()[0] = call.descriptors.back()[1] = base;
  }
  backends[info.device]->prepare(call);
  return call;
}

void Session::Impl::startBinding() {
  // Planned symbol values: the runtime binds real ones at the first run.
  symbolValues.assign(graph->symbols().size(), 1);
  calls.resize(program.kernels.size());
  std::vector<std::shared_ptr<std::promise<void>>> promises;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    promises.push_back(std::make_shared<std::promise<void>>());
    bound.push_back(promises.back()->get_future().share());
  }
  binder = std::thread([this, promises] {
    for (size_t k = 0; k < calls.size(); ++k) {
      calls[k] = buildCall(k);
      promises[k]->set_value();
    }
  });
}

LogicalResult Session::Impl::bindSymbols(const std::map<std::string, Tensor> &inputs,
                                         DiagnosticEngine &diag) {
  std::vector<int64_t> values(graph->symbols().size(), -1);
  for (const Binding &b : program.inputs) {
    std::string inputName(graph->name(b.value.node));
    auto it = inputs.find(inputName);
    if (it == inputs.end())
      return error(diag, "missing input '" + inputName + "'");
    const Tensor &t = it->second;
    DType declared = graph->dtype(b.value);
    ShapeRef shape = graph->shape(b.value);
    if (t.dtype != declared)
      return error(diag, "input '" + inputName + "' must be " +
                             std::string(dtypeName(declared)) + ", got " +
                             std::string(dtypeName(t.dtype)));
    bool rankOk = t.shape.size() == shape.size();
    for (size_t d = 0; rankOk && d < shape.size(); ++d) {
      if (shape[d].isStatic()) {
        rankOk = shape[d].size() == t.shape[d];
        continue;
      }
      int64_t &v = values[shape[d].symbolId()];
      if (v >= 0 && v != t.shape[d])
        return error(diag, "input '" + inputName + "' binds symbol '" +
                               std::string(graph->symbols().name(shape[d].symbolId())) +
                               "' to " + std::to_string(t.shape[d]) +
                               ", another input bound it to " + std::to_string(v));
      v = t.shape[d];
    }
    if (!rankOk)
      return error(diag, "input '" + inputName + "' must have shape " +
                             formatShape(shape, graph->symbols()));
  }
  graph->symbols().evaluate(values); // Products of the bound symbols.
  for (uint32_t s = 0; s < values.size(); ++s)
    if (values[s] > program.symbolBounds[s]) {
      std::string name(graph->symbols().name(s));
      return error(diag, "the inputs bind " + name + "=" + std::to_string(values[s]) +
                             ", but the plan's buffers hold " + name + " <= " +
                             std::to_string(program.symbolBounds[s]) +
                             " (plan again with --dim " + name + "=" +
                             std::to_string(values[s]) + " or larger)");
    }
  for (const auto &entry : inputs) {
    const std::string &given = entry.first;
    if (std::none_of(program.inputs.begin(), program.inputs.end(),
                     [&](const Binding &b) { return graph->name(b.value.node) == given; }))
      return error(diag, "the plan has no input named '" + given + "'");
  }
  for (const Binding &b : program.inputs) {
    const Tensor &t = inputs.at(std::string(graph->name(b.value.node)));
    int64_t count = 1;
    for (int64_t e : t.shape)
      count *= e;
    if (t.data.size() != static_cast<size_t>(count) * dtypeByteSize(t.dtype) ||
        t.data.size() > program.buffers[*b.buffer].size)
      return error(diag, "input '" + std::string(graph->name(b.value.node)) +
                             "' holds " + std::to_string(t.data.size()) +
                             " bytes; its shape needs " +
                             std::to_string(count * dtypeByteSize(t.dtype)) +
                             " and the plan's buffer holds " +
                             std::to_string(program.buffers[*b.buffer].size));
  }
  if (values == symbolValues)
    return success();
  if (!allBound) {
    for (const std::shared_future<void> &f : bound)
      f.wait();
    allBound = true;
  }
  // Every buffer must hold its value at these extents: the memory plan sized
  // them for the planned (upper-bound) extents.
  for (size_t k = 0; k < program.kernels.size(); ++k)
    for (const KernelArgInfo &arg : program.kernels[k].args) {
      if (!arg.binding.buffer)
        continue;
      std::vector<int64_t> sizes = concreteShape(graph->shape(arg.binding.value), values);
      Layout layout = valueLayout(*graph, arg.binding.value, values);
      int64_t span = 0;
      for (size_t d = 0; d < sizes.size(); ++d)
        span += sizes[d] ? (sizes[d] - 1) * std::abs(layout.strides[d]) : 0;
      uint64_t bytes = static_cast<uint64_t>(layout.offset + span + 1) *
                       dtypeByteSize(graph->dtype(arg.binding.value));
      if (layout.numElements() != 0 &&
          bytes > program.buffers[*arg.binding.buffer].size)
        return error(diag, "value '" + std::string(graph->name(arg.binding.value.node)) +
                               "' needs " + std::to_string(bytes) +
                               " bytes at these input shapes, but the plan "
                               "sized its buffer for " +
                               std::to_string(program.buffers[*arg.binding.buffer].size) +
                               " (plan again with a larger --dim)");
    }
  symbolValues = std::move(values);
  for (size_t k = 0; k < calls.size(); ++k)
    calls[k] = buildCall(k);
  return success();
}

void Session::Impl::copy(const CopyInfo &c) {
  size_t bytes = std::min(program.buffers[c.source].size, program.buffers[c.target].size);
  Backend &from = *backends[c.from], &to = *backends[c.to];
  if (!to.isHostMemory()) {
    from.wait(); // The source's writes are done before the host reads them.
    to.upload(bufferBase[c.target], bufferBase[c.source], bytes);
  } else if (!from.isHostMemory()) {
    from.download(bufferBase[c.target], bufferBase[c.source], bytes);
  } else {
    std::memcpy(bufferBase[c.target], bufferBase[c.source], bytes);
  }
}

void Session::Impl::execute() {
  bool timing = profiling.load(std::memory_order_relaxed);
  for (int64_t op : program.order) {
    if (op < 0) {
      copy(program.copies[~op]);
      continue;
    }
    if (!allBound) // First run: overlap with the binder thread.
      bound[op].wait();
    KernelCall &call = calls[op];
    for (const KernelCall::Rebind &r : call.rebinds) {
      int64_t base = reinterpret_cast<int64_t>(bufferBase[r.buffer]);
      call.descriptors[r.arg][0] = base;
      call.descriptors[r.arg][1] = base + r.offset;
    }
    Backend &backend = *backends[program.kernels[op].device];
    if (!timing) {
      backend.launch(call);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    backend.launch(call);
    backend.wait();
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const KernelInfo &k = program.kernels[op];
    ProfileEntry &e = profile[k.label + "\t" + program.devices[k.device].id];
    e.seconds += elapsed.count();
    ++e.calls;
  }
  for (const std::unique_ptr<Backend> &b : backends)
    if (b)
      b->wait();
  allBound = true;
}

void Session::Impl::readOutput(const Binding &b, Tensor &t) {
  t.dtype = graph->dtype(b.value);
  t.shape = concreteShape(graph->shape(b.value), symbolValues);
  Layout layout = valueLayout(*graph, b.value, symbolValues);
  size_t width = dtypeByteSize(t.dtype);
  int64_t count = layout.numElements();
  t.data.resize(static_cast<size_t>(count) * width);
  const char *base = baseOf(b);
  std::vector<char> staged;
  if (b.buffer && !onHost(*b.buffer)) { // Fetch the whole buffer first.
    staged.resize(program.buffers[*b.buffer].size);
    backends[program.buffers[*b.buffer].device]->download(staged.data(), base,
                                                          staged.size());
    base = staged.data();
  }
  if (layout.isContiguous()) {
    std::memcpy(t.data.data(), base + layout.offset * width, t.data.size());
    return;
  }
  std::vector<int64_t> index(t.shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(t.data.data() + i * width,
                base + layout.elementOffset(index) * width, width);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.shape[d])
        break;
      index[d] = 0;
    }
  }
}

Session::Session(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::load(std::shared_ptr<const FileBuffer> artifact,
                                       std::string_view name,
                                       const RuntimeOptions &options,
                                       DiagnosticEngine &diag) {
  auto impl = std::make_unique<Impl>();
  impl->artifact = std::move(artifact);
  impl->name = name;
  impl->threads = options.threads ? options.threads
                                  : std::max(1u, std::thread::hardware_concurrency());
  impl->profiling.store(options.profile, std::memory_order_relaxed);
  if (failed(impl->open(diag)))
    return nullptr;
  impl->startBinding();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::string &Session::routeReport() const { return impl->report; }

std::vector<std::string> Session::inputNames() const {
  std::vector<std::string> names;
  for (const Binding &b : impl->program.inputs)
    names.emplace_back(impl->graph->name(b.value.node));
  return names;
}

std::vector<std::string> Session::outputNames() const {
  std::vector<std::string> names;
  for (const Binding &b : impl->program.outputs)
    names.emplace_back(impl->graph->name(b.value.node));
  return names;
}

LogicalResult Session::run(const std::map<std::string, Tensor> &inputs,
                           std::vector<Tensor> &outputs, DiagnosticEngine &diag) {
  if (failed(impl->bindSymbols(inputs, diag)))
    return failure();
  for (const Binding &b : impl->program.inputs) {
    const Tensor &t = inputs.at(std::string(impl->graph->name(b.value.node)));
    if (impl->isInputBuffer[*b.buffer]) { // Read in place: the run never writes it.
      impl->bufferBase[*b.buffer] = const_cast<char *>(t.data.data());
      continue;
    }
    if (impl->onHost(*b.buffer))
      std::memcpy(impl->baseOf(b), t.data.data(), t.data.size());
    else
      impl->backends[impl->program.buffers[*b.buffer].device]->upload(
          impl->baseOf(b), t.data.data(), t.data.size());
  }
  impl->execute();
  for (size_t d = 0; d < impl->backends.size(); ++d)
    if (impl->backends[d] && !impl->backends[d]->error().empty())
      return impl->error(diag, impl->program.devices[d].id + ": " +
                                   impl->backends[d]->error());
  // Output tensors of a previous run are reused: fresh memory costs page
  // faults on every run.
  outputs.resize(impl->program.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    impl->readOutput(impl->program.outputs[i], outputs[i]);
  return success();
}

std::string Session::profileReport() const {
  std::ostringstream os;
  double total = 0;
  for (const auto &[key, e] : impl->profile)
    total += e.seconds;
  os << "kernel\tdevice\tcalls\ttotal_ms\tshare\n";
  for (const auto &[key, e] : impl->profile)
    os << key << '\t' << e.calls << '\t' << e.seconds * 1e3 << '\t'
       << (total > 0 ? e.seconds / total : 0) << '\n';
  return os.str();
}
