//===- Session.cpp - Loading and running .fplan artifacts -----------------===//

#include "fuel/Runtime/Runtime.h"

#include "Backend.h"
#include "HostResources.h"
#include "Timeline.h"

#include "fuel/Artifact/Artifact.h"
#include "fuel/Artifact/Program.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>
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
  artifact::Program program;
  std::string_view weights;
  std::string report;
  unsigned threads = 1;
  std::vector<std::string> nullDevices;
  NullDeviceLog nullDeviceLog;
  std::vector<std::unique_ptr<Backend>> backends; // By program device.
  std::vector<void *> entries;                    // By kernel.
  // Where each buffer is in its device's arena (fixed at load: the binder
  // thread reads it), and where the current run has it: there too, except
  // inputs on the CPU, which each run points at the caller's tensors.
  std::vector<char *> arenaAddress, bufferBase;
  std::vector<bool> isInputBuffer;
  // Outputs the run writes straight into the caller's memory (by output:
  // its buffer, or -1): a CPU buffer holding that output alone, which no
  // copy touches; and the kernel arguments in such buffers, which must fit
  // the output at the run's extents. The current run's output memory.
  std::vector<int64_t> directBuffer;
  std::vector<std::pair<size_t, size_t>> directArgs; // Kernel, argument.
  std::vector<char *> outputMemory;
  // By output: the input or output it is a view of, for callers that take
  // views (findViewSources): a CPU input's buffer, else the first output
  // holding the buffer whole.
  std::vector<OutputView> viewSource;
  // By device: the steps touching it (its launches, copies from and to
  // it), in plan order.
  std::vector<std::vector<size_t>> stepsTouching;
  // Where each device's kernels read each constant (by constant index):
  // the weights section itself where the host's memory is the device's.
  std::vector<std::vector<char *>> constantBase;
  // Kernel calls, prepared by the binder thread for the planned bounds;
  // the symbol values each call was built for (`callValues`), and the
  // current run's (`symbolValues`). A call built for other values is
  // rebuilt before its launch: a first run with smaller extents still
  // overlaps the binder, and later runs rebuild only when values change.
  std::vector<KernelCall> calls;
  std::vector<std::vector<int64_t>> callValues;
  std::vector<int64_t> symbolValues;
  std::vector<std::shared_future<void>> bound;
  std::thread binder;
  // Held while a call is built: the binder and the first run may both
  // prepare calls, and backends prepare one at a time.
  std::mutex building;
  bool allBound = false;
  // Timing (profile, trace): launches are timed on the device where its
  // backend can (deviceTimed), else from the host.
  bool profiling = false, tracing = false, timing = false;
  std::vector<bool> deviceTimed;
  std::map<std::string, ProfileEntry> profile;
  Timeline timeline;
  // The trace's tracks after the host's and the devices': one per thread
  // of each CPU device, for the slices of split kernels (device, thread).
  std::vector<std::pair<unsigned, unsigned>> sliceTracks;
  // A run owns the arenas, the calls and the profile: runs from several
  // threads take turns.
  std::mutex running;

  ~Impl() {
    if (binder.joinable())
      binder.join();
  }

  LogicalResult error(DiagnosticEngine &diag, std::string message) const {
    SourceLocation loc;
    loc.file = name;
    diag.error(std::move(loc), std::move(message));
    return failure();
  }

  LogicalResult open(DiagnosticEngine &diag);
  bool isNull(const artifact::Device &device) const {
    return std::any_of(nullDevices.begin(), nullDevices.end(), [&](const std::string &n) {
      return n == device.id || n == device.kind;
    });
  }
  LogicalResult chooseRoute(const artifact::Meta &meta, DiagnosticEngine &diag);
  LogicalResult prepareDevices(DiagnosticEngine &diag);
  LogicalResult importConstants(DiagnosticEngine &diag);
  char *baseOf(const artifact::Tensor &t, unsigned device) const {
    return t.storage == artifact::StorageKind::Buffer ? arenaAddress[t.index]
                                                      : constantBase[device][t.index];
  }
  bool onHost(size_t buffer) const {
    return backends[program.buffers[buffer].device]->isHostMemory();
  }
  bool isDirect(size_t buffer) const {
    return std::find(directBuffer.begin(), directBuffer.end(), int64_t(buffer)) !=
           directBuffer.end();
  }
  KernelCall buildCall(size_t k, const std::vector<int64_t> &values);
  void bindCall(size_t k, const std::vector<int64_t> &values);
  void startBinding();
  LogicalResult bindSymbols(const std::map<std::string, TensorRef> &inputs,
                            const std::map<std::string, int64_t> &symbols,
                            DiagnosticEngine &diag);
  LogicalResult checkExtents(const std::vector<int64_t> &values,
                             DiagnosticEngine &diag) const;
  /// A copy from a device to the host in flight: the event after it on the
  /// source device, and the host memory that then holds its bytes.
  struct Download {
    Backend::Event event = 0;
    const char *staged = nullptr;
    bool pending = false;
  };
  std::vector<Download> downloads; // By step, during a run.
  void execute();
  /// Runs step `step` (a copy; one from a device to the host is enqueued,
  /// and finishDownload completes it) or launches it (a kernel).
  void issue(size_t step);
  /// Waits for the download of step `step` and moves its bytes into place.
  void finishDownload(size_t step);
  /// For execute's issue order: the steps that touch each device.
  void planIssueOrder();
  void launch(size_t op);
  void copy(size_t step);
  void recordKernel(size_t kernel, double start, double end);
  /// The trace track of `device`'s thread `thread`, for its slices.
  unsigned sliceTrack(unsigned device, unsigned thread);
  static double now() { return hostSeconds(); }
  /// Whether `t` is its buffer's whole contents, dense, at the bounds.
  bool holdsWhole(const artifact::Tensor &t) const;
  void findDirectOutputs();
  void findViewSources();
  /// Where each output lies at the run's extents, for a caller taking views.
  std::vector<OutputView> outputViews() const;
  /// Gets each output's memory from `allocate` and points the buffers of
  /// direct outputs at it where it fits (aligned, the arguments within, no
  /// input in it: the caller may have an output overwrite an input).
  LogicalResult bindOutputs(const std::map<std::string, TensorRef> &inputs,
                            const OutputAllocator &allocate, const std::vector<OutputView> *views,
                            DiagnosticEngine &diag);
  /// Copies output `index` into its memory, unless the run wrote it there.
  LogicalResult readOutput(size_t index, DiagnosticEngine &diag);
};

LogicalResult Session::Impl::open(DiagnosticEngine &diag) {
  view = readArtifact(artifact, name, diag);
  if (!view)
    return failure();
  for (std::string_view s : {"meta", "weights"})
    if (!view->section(s))
      return error(diag, "artifact has no '" + std::string(s) +
                             "' section (was it written by fuelc plan -o?)");
  weights = *view->section("weights");
  std::optional<artifact::Meta> meta =
      artifact::readMeta(*view->section("meta"), name + ":meta", diag);
  if (!meta)
    return failure();
  return chooseRoute(*meta, diag);
}

LogicalResult Session::Impl::chooseRoute(const artifact::Meta &meta,
                                         DiagnosticEngine &diag) {
  std::string reasons;
  for (size_t r = 0; r < meta.routes.size(); ++r) {
    const artifact::Route &route = meta.routes[r];
    std::string line = "route " + std::to_string(r) + " (";
    for (size_t i = 0; i < route.devices.size(); ++i)
      line += (i ? ", " : "") + route.devices[i];
    line += ")";
    std::map<std::string, std::unique_ptr<Backend>> candidate;
    std::string missing;
    for (const std::string &id : route.devices) {
      auto it = std::find_if(meta.devices.begin(), meta.devices.end(),
                             [&](const artifact::Device &d) { return d.id == id; });
      Expected<std::unique_ptr<Backend>> backend =
          it == meta.devices.end() ? Error{"not in the artifact's machine"}
          : isNull(*it)            ? createNullBackend(*it, nullDeviceLog)
                                   : createBackend(*it, threads);
      if (backend)
        candidate[id] = std::move(*backend);
      else
        missing += "\n    " + id + ": " + backend.error();
    }
    if (!missing.empty()) {
      report += line + ": skipped, missing devices:" + missing + "\n";
      reasons += "\n  " + line + ":" + missing;
      continue;
    }
    report += line + ": chosen\n";
    for (const auto &[id, backend] : candidate)
      if (!backend->describe().empty())
        report += "  " + id + ": " + backend->describe() + "\n";
    std::optional<std::string_view> text = view->section(route.section);
    if (!text)
      return error(diag, "route " + std::to_string(r) + " names a missing section '" +
                             route.section + "'");
    std::optional<artifact::Program> p = artifact::readProgram(
        *text, name + ":" + route.section, meta, weights.size(), diag);
    if (!p)
      return failure();
    program = std::move(*p);
    for (const artifact::Device &d : program.devices) {
      auto it = candidate.find(d.id);
      if (it == candidate.end())
        return error(diag, "section '" + route.section + "' uses device " + d.id +
                               ", which is not in its route");
      backends.push_back(std::move(it->second));
    }
    return prepareDevices(diag);
  }
  return error(diag, "no planned route can run here:" + reasons);
}

LogicalResult Session::Impl::prepareDevices(DiagnosticEngine &diag) {
  for (unsigned d = 0; d < backends.size(); ++d) {
    const artifact::Device &device = program.devices[d];
    if (Expected<void> allocated = backends[d]->allocateArena(device.arenaBytes); !allocated)
      return error(diag, device.id + ": " + allocated.error());
    if (device.kernelSection.empty())
      continue;
    std::optional<std::string_view> binary = view->section(device.kernelSection);
    if (!binary)
      return error(diag, device.id + ": the artifact has no section '" +
                             device.kernelSection + "' for its kernels");
    if (Expected<void> loaded = backends[d]->loadKernels(*binary, program, d); !loaded)
      return error(diag, device.id + ": " + loaded.error());
  }
  planIssueOrder();
  deviceTimed.assign(backends.size(), false);
  for (unsigned d = 0; d < backends.size() && timing; ++d)
    deviceTimed[d] = !backends[d]->isHostMemory() && backends[d]->startDeviceTiming();
  for (unsigned d = 0; d < backends.size() && tracing; ++d)
    for (unsigned t = 0, n = backends[d]->traceSlices(); t < n; ++t)
      sliceTracks.emplace_back(d, t);
  // Fail fast: every kernel resolves on its device before anything runs.
  for (const artifact::Kernel &k : program.kernels) {
    void *entry = backends[k.device]->findKernel(k.symbol);
    if (!entry)
      return error(diag, "step '" + k.node + "': kernel '" + k.symbol +
                             "' (capsule " + k.capsule + ") is missing on " +
                             program.devices[k.device].id);
    entries.push_back(entry);
  }
  for (const artifact::Kernel &k : program.kernels) {
    std::optional<std::string> takes = backends[k.device]->kernelSignature(k.symbol);
    if (takes && *takes != artifact::kernelSignature(k))
      return error(diag, "kernel '" + k.symbol + "' takes (" + *takes +
                             ") but the program passes it (" +
                             artifact::kernelSignature(k) + ")");
  }
  for (const artifact::Buffer &b : program.buffers)
    arenaAddress.push_back(backends[b.device]->arenaBase() + b.offset);
  bufferBase = arenaAddress;
  if (failed(importConstants(diag)))
    return failure();
  isInputBuffer.assign(program.buffers.size(), false);
  for (const artifact::Io &in : program.inputs)
    isInputBuffer[in.tensor.index] =
        program.devices[program.buffers[in.tensor.index].device].kind == "cpu";
  findDirectOutputs();
  findViewSources();
  return success();
}

bool Session::Impl::holdsWhole(const artifact::Tensor &t) const {
  std::optional<Layout> atBounds = t.layout(program.boundValues());
  return t.storage == artifact::StorageKind::Buffer && atBounds && atBounds->isContiguous() &&
         atBounds->offset == 0 &&
         uint64_t(atBounds->numElements()) * dtypeByteSize(t.dtype) ==
             program.buffers[t.index].size;
}

void Session::Impl::findViewSources() {
  viewSource.assign(program.outputs.size(), {});
  for (size_t o = 0; o < program.outputs.size(); ++o) {
    const artifact::Tensor &t = program.outputs[o].tensor;
    if (t.storage != artifact::StorageKind::Buffer)
      continue;
    OutputView &v = viewSource[o];
    for (size_t j = 0; j < program.inputs.size() && v.source == OutputView::Source::None; ++j)
      if (program.inputs[j].tensor.index == t.index && isInputBuffer[t.index] &&
          program.inputs[j].tensor.dtype == t.dtype) {
        v.source = OutputView::Source::Input;
        v.index = j;
      }
    // Else a view of the first output holding the buffer whole, unless this
    // is that one.
    for (size_t k = 0; k < program.outputs.size() && v.source == OutputView::Source::None; ++k) {
      const artifact::Tensor &base = program.outputs[k].tensor;
      if (k != o && base.storage == artifact::StorageKind::Buffer && base.index == t.index &&
          base.dtype == t.dtype && holdsWhole(base) && (k < o || !holdsWhole(t))) {
        v.source = OutputView::Source::Output;
        v.index = k;
      }
    }
  }
}

std::vector<OutputView> Session::Impl::outputViews() const {
  std::vector<OutputView> views = viewSource;
  for (size_t o = 0; o < views.size(); ++o) {
    OutputView &v = views[o];
    if (v.source == OutputView::Source::Output) { // Its base must be dense at these extents.
      std::optional<Layout> base = program.outputs[v.index].tensor.layout(symbolValues);
      if (!base || !base->isContiguous() || base->offset != 0)
        v = {};
    }
    if (v.source == OutputView::Source::None)
      continue;
    Layout layout = *program.outputs[o].tensor.layout(symbolValues);
    v.shape = layout.sizes;
    v.strides = layout.strides;
    v.offset = layout.offset;
  }
  return views;
}

void Session::Impl::findDirectOutputs() {
  std::vector<int64_t> outputOf(program.buffers.size(), -1); // -2: not direct.
  for (size_t o = 0; o < program.outputs.size(); ++o) {
    const artifact::Tensor &t = program.outputs[o].tensor;
    if (t.storage != artifact::StorageKind::Buffer)
      continue;
    int64_t &owner = outputOf[t.index];
    owner = owner == -1 ? int64_t(o) : -2; // Outputs sharing a buffer are copied.
    const artifact::Buffer &b = program.buffers[t.index];
    if (isInputBuffer[t.index] || program.devices[b.device].kind != "cpu" || b.sliceOf >= 0 ||
        !holdsWhole(t))
      owner = -2;
  }
  for (const artifact::Buffer &b : program.buffers)
    if (b.sliceOf >= 0) // In-place concats: the whole stays in the arena.
      outputOf[b.sliceOf] = -2;
  for (const artifact::Copy &c : program.copies) // Copies move planned sizes.
    outputOf[c.source] = outputOf[c.target] = -2;
  directBuffer.assign(program.outputs.size(), -1);
  for (size_t b = 0; b < outputOf.size(); ++b)
    if (outputOf[b] >= 0)
      directBuffer[outputOf[b]] = int64_t(b);
  for (size_t k = 0; k < program.kernels.size(); ++k)
    for (size_t a = 0; a < program.kernels[k].args.size(); ++a) {
      const artifact::Tensor &t = program.kernels[k].args[a].tensor;
      if (t.storage == artifact::StorageKind::Buffer && outputOf[t.index] >= 0)
        directArgs.push_back({k, a});
    }
}

LogicalResult Session::Impl::importConstants(DiagnosticEngine &diag) {
  std::vector<char *> host;
  for (const artifact::Constant &c : program.constants)
    host.push_back(const_cast<char *>(weights.data() + c.offset));
  constantBase.assign(backends.size(), host);
  for (unsigned d = 0; d < backends.size(); ++d) {
    if (backends[d]->isHostMemory())
      continue;
    std::vector<uint32_t> used;
    for (const artifact::Kernel &k : program.kernels)
      for (const artifact::KernelArg &arg : k.args)
        if (k.device == d && arg.tensor.storage == artifact::StorageKind::Constant)
          used.push_back(arg.tensor.index);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    std::vector<std::string_view> data;
    for (uint32_t c : used)
      data.push_back(weights.substr(program.constants[c].offset,
                                    program.constants[c].size));
    std::vector<char *> addresses;
    if (Expected<void> imported = backends[d]->importConstants(data, addresses); !imported)
      return error(diag, program.devices[d].id + ": " + imported.error());
    for (size_t i = 0; i < used.size(); ++i)
      constantBase[d][used[i]] = addresses[i];
  }
  return success();
}

KernelCall Session::Impl::buildCall(size_t k, const std::vector<int64_t> &values) {
  const artifact::Kernel &info = program.kernels[k];
  KernelCall call;
  call.kernel = k;
  call.entry = entries[k];
  for (const artifact::KernelArg &arg : info.args) {
    // Checked by checkExtents (or, at the bounds, by the reader) before.
    Layout layout = *arg.tensor.layout(values);
    // The element offset goes into the aligned pointer: a contiguous memref
    // type has a static offset of 0 and ignores the descriptor's.
    int64_t width = dtypeByteSize(arg.tensor.dtype);
    int64_t base = reinterpret_cast<int64_t>(baseOf(arg.tensor, info.device));
    std::vector<int64_t> d{base, base + layout.offset * width, 0};
    if (arg.tensor.storage == artifact::StorageKind::Buffer &&
        (isInputBuffer[arg.tensor.index] || isDirect(arg.tensor.index)))
      call.rebinds.push_back({static_cast<unsigned>(call.descriptors.size()),
                              arg.tensor.index, layout.offset * width});
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
      call.symbolValues.push_back(values[id]);
    int64_t at = reinterpret_cast<int64_t>(call.symbolValues.data());
    call.descriptors.push_back({at, at, 0, int64_t(info.symbols.size()), 1});
    call.splitAxes.push_back(-1);
    call.elementBytes.push_back(8);
  }
  if (info.sliceOrigin) {
    static const int64_t kWholeOrigin = 0;
    int64_t at = reinterpret_cast<int64_t>(&kWholeOrigin);
    call.originArg = static_cast<int>(call.descriptors.size());
    call.descriptors.push_back({at, at, 0, 1, 1});
    call.splitAxes.push_back(-1);
    call.elementBytes.push_back(8);
  }
  for (std::vector<int64_t> &d : call.descriptors)
    call.argv.push_back(d.data());
  backends[info.device]->prepare(call);
  return call;
}

void Session::Impl::bindCall(size_t k, const std::vector<int64_t> &values) {
  std::lock_guard<std::mutex> lock(building);
  calls[k] = buildCall(k, values);
  callValues[k] = values;
}

void Session::Impl::startBinding() {
  // Bound at the planned extents, which the reader checked.
  symbolValues = program.boundValues();
  calls.resize(program.kernels.size());
  callValues.resize(program.kernels.size());
  std::vector<std::shared_ptr<std::promise<void>>> promises;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    promises.push_back(std::make_shared<std::promise<void>>());
    bound.push_back(promises.back()->get_future().share());
  }
  auto bindAll = [this, promises, values = symbolValues] {
    for (size_t k = 0; k < calls.size(); ++k) {
      bindCall(k, values);
      promises[k]->set_value();
    }
  };
  try {
    binder = std::thread(bindAll);
  } catch (const std::system_error &) {
    // No thread to spare (a task limit): the same work, before the first
    // run instead of beside it.
    bindAll();
  }
}

static std::string formatExtents(const std::vector<artifact::Extent> &extents,
                                 const artifact::Program &program) {
  std::string out = "[";
  for (size_t i = 0; i < extents.size(); ++i)
    out += (i ? ", " : "") + (extents[i].isStatic()
                                  ? std::to_string(extents[i].constant)
                                  : program.symbols[extents[i].symbol].name);
  return out + "]";
}

LogicalResult Session::Impl::checkExtents(const std::vector<int64_t> &values,
                                          DiagnosticEngine &diag) const {
  // Every tensor must lie in its storage at these extents: the memory plan
  // sized buffers for the planned (upper-bound) extents.
  auto check = [&](const artifact::Tensor &t, const std::string &what) {
    std::optional<Layout> layout = t.layout(values);
    uint64_t bytes = t.storage == artifact::StorageKind::Buffer
                         ? program.buffers[t.index].size
                         : program.constants[t.index].size;
    if (layout && layout->fitsIn(static_cast<int64_t>(bytes / dtypeByteSize(t.dtype))))
      return success();
    return error(
        diag, what + " does not fit its " + std::to_string(bytes) +
                  "-byte storage at these input shapes (plan again with a larger --dim)");
  };
  for (const artifact::Kernel &k : program.kernels)
    for (size_t a = 0; a < k.args.size(); ++a)
      if (failed(check(k.args[a].tensor, "argument " + std::to_string(a) +
                                             " of kernel '" + k.symbol + "'")))
        return failure();
  for (const artifact::Io &out : program.outputs)
    if (failed(check(out.tensor, "output '" + out.name + "'")))
      return failure();
  return success();
}

LogicalResult Session::Impl::bindSymbols(const std::map<std::string, TensorRef> &inputs,
                                         const std::map<std::string, int64_t> &symbols,
                                         DiagnosticEngine &diag) {
  for (const auto &entry : inputs)
    if (std::none_of(program.inputs.begin(), program.inputs.end(),
                     [&](const artifact::Io &in) { return in.name == entry.first; })) {
      std::string names;
      for (const artifact::Io &in : program.inputs)
        names += (names.empty() ? "" : ", ") + in.name;
      return error(diag, "the plan has no input named '" + entry.first +
                             "' (its inputs: " + names + ")");
    }
  std::vector<int64_t> values(program.symbols.size(), -1);
  std::vector<bool> setByCaller(program.symbols.size(), false);
  for (const auto &setting : symbols) {
    const std::string &name = setting.first;
    int64_t value = setting.second;
    auto it = std::find_if(program.symbols.begin(), program.symbols.end(),
                           [&](const artifact::Symbol &sym) { return sym.name == name; });
    if (it == program.symbols.end()) {
      std::string names;
      for (const artifact::Symbol &sym : program.symbols)
        names += (names.empty() ? "" : ", ") + sym.name;
      return error(diag, "the plan has no symbol named '" + name + "' (" +
                             (names.empty() ? "it has none" : "its symbols: " + names) + ")");
    }
    if (value < 0)
      return error(diag, "symbol '" + name + "' is set to " + std::to_string(value) +
                             "; an extent is 0 or more");
    size_t s = static_cast<size_t>(it - program.symbols.begin());
    values[s] = value;
    setByCaller[s] = true;
  }
  for (const artifact::Io &in : program.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end())
      return error(diag, "missing input '" + in.name + "'");
    const TensorRef &t = it->second;
    if (t.data == nullptr && t.bytes > 0)
      return error(diag, "input '" + in.name + "' has no data");
    if (t.dtype != in.tensor.dtype)
      return error(diag, "input '" + in.name + "' must be " +
                             std::string(dtypeName(in.tensor.dtype)) + ", got " +
                             std::string(dtypeName(t.dtype)));
    if (reinterpret_cast<uintptr_t>(t.data) % dtypeByteSize(t.dtype) != 0)
      return error(diag, "input '" + in.name + "' is not aligned to its " +
                             std::to_string(dtypeByteSize(t.dtype)) + "-byte elements");
    if (std::any_of(t.shape.begin(), t.shape.end(), [](int64_t e) { return e < 0; }))
      return error(diag, "input '" + in.name + "' has a negative extent");
    const std::vector<artifact::Extent> &shape = in.tensor.sizes;
    bool rankOk = t.shape.size() == shape.size();
    for (size_t d = 0; rankOk && d < shape.size(); ++d) {
      if (shape[d].isStatic()) {
        rankOk = shape[d].constant == t.shape[d];
        continue;
      }
      int64_t &v = values[shape[d].symbol];
      if (v >= 0 && v != t.shape[d])
        return error(diag, "input '" + in.name + "' binds symbol '" +
                               program.symbols[shape[d].symbol].name + "' to " +
                               std::to_string(t.shape[d]) +
                               (setByCaller[shape[d].symbol] ? ", but it is set to "
                                                             : ", another input bound it to ") +
                               std::to_string(v));
      v = t.shape[d];
    }
    if (!rankOk)
      return error(diag, "input '" + in.name + "' must have shape " +
                             formatExtents(shape, program));
  }
  std::vector<int64_t> given = values;
  for (size_t s = 0; s < values.size(); ++s) // Symbols no input binds.
    if (values[s] < 0 && program.symbols[s].isFree())
      values[s] = program.symbols[s].bound;
  program.evaluateSymbols(values);
  for (size_t s = 0; s < values.size(); ++s) {
    const artifact::Symbol &sym = program.symbols[s];
    if (given[s] >= 0 && given[s] != values[s])
      return error(diag, "the inputs bind " + sym.name + "=" + std::to_string(given[s]) +
                             ", but its factors give " + std::to_string(values[s]));
    if (values[s] > sym.bound)
      return error(diag, "the inputs bind " + sym.name + "=" + std::to_string(values[s]) +
                             ", but the plan's buffers hold " + sym.name + " <= " +
                             std::to_string(sym.bound) + " (plan again with --dim " +
                             sym.name + "=" + std::to_string(values[s]) + " or larger)");
  }
  for (const artifact::Io &in : program.inputs) {
    const TensorRef &t = inputs.at(in.name);
    // Extents are at most the plan's bounds here, so the product fits.
    int64_t count = 1;
    for (int64_t e : t.shape)
      count *= e;
    uint64_t capacity = program.buffers[in.tensor.index].size;
    if (t.bytes != static_cast<size_t>(count) * dtypeByteSize(t.dtype) ||
        t.bytes > capacity)
      return error(diag, "input '" + in.name + "' holds " + std::to_string(t.bytes) +
                             " bytes; its shape needs " +
                             std::to_string(count * dtypeByteSize(t.dtype)) +
                             " and the plan's buffer holds " + std::to_string(capacity));
  }
  if (values == symbolValues)
    return success();
  if (failed(checkExtents(values, diag)))
    return failure();
  symbolValues = std::move(values);
  return success();
}

void Session::Impl::copy(size_t step) {
  size_t index = program.steps[step].index;
  const artifact::Copy &c = program.copies[index];
  const artifact::Buffer &source = program.buffers[c.source],
                         &target = program.buffers[c.target];
  size_t bytes = std::min(source.size, target.size);
  Backend &from = *backends[source.device], &to = *backends[target.device];
  if (!from.isHostMemory()) {
    // Into host memory the source device keeps for the copy, in order with
    // its launches; the host waits for it only when it needs the bytes.
    Download &d = downloads[step];
    d.staged = from.enqueueDownload(index, bufferBase[c.source], bytes);
    d.event = from.record();
    d.pending = true;
    if (to.isHostMemory())
      return;
    // Between two devices the host cannot address (two GPUs): staged
    // through host memory, as neither backend can reach the other's.
    finishDownload(step);
    return;
  }
  double start = timing ? now() : 0;
  if (to.isHostMemory())
    std::memcpy(bufferBase[c.target], bufferBase[c.source], bytes);
  else
    to.upload(bufferBase[c.target], bufferBase[c.source], bytes);
  if (tracing)
    timeline.add(Timeline::Kind::Copy,
                 "copy " + program.devices[source.device].id + " -> " +
                     program.devices[target.device].id,
                 0, start, now());
}

void Session::Impl::finishDownload(size_t step) {
  Download &d = downloads[step];
  d.pending = false;
  const artifact::Copy &c = program.copies[program.steps[step].index];
  const artifact::Buffer &source = program.buffers[c.source], &target = program.buffers[c.target];
  size_t bytes = std::min(source.size, target.size);
  double start = timing ? now() : 0;
  backends[source.device]->waitFor(d.event);
  double waited = timing ? now() : 0;
  if (!d.staged) // The device failed; the run reports why.
    return;
  Backend &to = *backends[target.device];
  if (to.isHostMemory())
    std::memcpy(bufferBase[c.target], d.staged, bytes);
  else
    to.upload(bufferBase[c.target], d.staged, bytes);
  if (!tracing)
    return;
  timeline.add(Timeline::Kind::Wait, "wait " + program.devices[source.device].id, 0, start, waited);
  timeline.add(Timeline::Kind::Copy,
               "copy " + program.devices[source.device].id + " -> " +
                   program.devices[target.device].id,
               0, waited, now());
}

void Session::Impl::recordKernel(size_t kernel, double start, double end) {
  const artifact::Kernel &k = program.kernels[kernel];
  if (profiling) {
    ProfileEntry &e = profile[k.label + "\t" + program.devices[k.device].id];
    e.seconds += end - start;
    ++e.calls;
  }
  if (tracing)
    timeline.add(Timeline::Kind::Kernel, k.label, k.device + 1, start, end);
}

void Session::Impl::launch(size_t op) {
  KernelCall &call = calls[op];
  for (const KernelCall::Rebind &r : call.rebinds) {
    int64_t base = reinterpret_cast<int64_t>(bufferBase[r.buffer]);
    call.descriptors[r.arg][0] = base;
    call.descriptors[r.arg][1] = base + r.offset;
  }
  unsigned device = program.kernels[op].device;
  Backend &backend = *backends[device];
  if (backend.isHostMemory()) {
    // The host is about to compute: devices that defer their launches
    // start on what they hold, in parallel.
    for (const std::unique_ptr<Backend> &other : backends)
      if (other.get() != &backend)
        other->flush();
  }
  if (!timing || deviceTimed[device]) {
    backend.launch(call);
    return;
  }
  // The host's launch returns when the kernel is done; another device's is
  // timed by waiting for it, which serializes that device.
  double start = now();
  backend.launch(call);
  if (!backend.isHostMemory())
    backend.wait();
  recordKernel(op, start, now());
  if (tracing)
    for (const SliceSpan &slice : backend.takeSliceSpans())
      timeline.add(Timeline::Kind::Slice, program.kernels[op].label,
                   sliceTrack(device, slice.thread), slice.start, slice.end);
}

unsigned Session::Impl::sliceTrack(unsigned device, unsigned thread) {
  auto it = std::find(sliceTracks.begin(), sliceTracks.end(), std::pair(device, thread));
  return static_cast<unsigned>(1 + backends.size() + (it - sliceTracks.begin()));
}

void Session::Impl::issue(size_t step) {
  const artifact::Step &s = program.steps[step];
  if (s.kind == artifact::StepKind::Copy) {
    copy(step);
    return;
  }
  size_t op = s.index;
  if (!allBound) // First run: overlap with the binder thread.
    bound[op].wait();
  if (callValues[op] != symbolValues)
    bindCall(op, symbolValues);
  launch(op);
}

void Session::Impl::planIssueOrder() {
  stepsTouching.assign(backends.size(), {});
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const artifact::Step &s = program.steps[i];
    if (s.kind == artifact::StepKind::Launch) {
      stepsTouching[program.kernels[s.index].device].push_back(i);
      continue;
    }
    const artifact::Copy &c = program.copies[s.index];
    stepsTouching[program.buffers[c.source].device].push_back(i);
    stepsTouching[program.buffers[c.target].device].push_back(i);
  }
}

void Session::Impl::execute() {
  double runStart = timing ? now() : 0;
  // The plan's order, except where devices run beside the host:
  // - a device that queues its work gets its launches, and the copies from
  //   and into it that pass the host, as early as they may go: after every
  //   earlier step touching the device (which keeps its memory's reuse
  //   ordered) and the steps they read; so its queue works while the host
  //   computes;
  // - a copy from such a device to the host is enqueued there, followed by
  //   an event; the host waits for that event, and not for the device's
  //   later work, when a step reads the copy's result (or the run ends).
  downloads.assign(program.steps.size(), {});
  std::vector<bool> issued(program.steps.size(), false);
  auto ready = [&](size_t step) {
    const std::vector<uint32_t> &deps = program.steps[step].deps;
    return std::all_of(deps.begin(), deps.end(),
                       [&](uint32_t d) { return issued[d] && !downloads[d].pending; });
  };
  auto run = [&](size_t step) {
    for (uint32_t d : program.steps[step].deps)
      if (downloads[d].pending)
        finishDownload(d);
    issue(step);
    issued[step] = true;
  };
  std::vector<size_t> next(backends.size(), 0); // Into stepsTouching.
  auto hoist = [&] {
    for (size_t d = 0; d < backends.size(); ++d) {
      if (backends[d]->isHostMemory())
        continue;
      const std::vector<size_t> &steps = stepsTouching[d];
      for (; next[d] < steps.size(); ++next[d]) {
        size_t step = steps[next[d]];
        if (issued[step])
          continue;
        const artifact::Step &s = program.steps[step];
        if (s.kind == artifact::StepKind::Copy) {
          const artifact::Copy &c = program.copies[s.index];
          bool passesHost = onHost(c.source) || onHost(c.target);
          if (!passesHost || !ready(step))
            break;
        }
        run(step);
      }
    }
  };
  for (size_t step = 0; step < program.steps.size(); ++step) {
    hoist();
    if (!issued[step])
      run(step);
  }
  for (size_t step = 0; step < program.steps.size(); ++step)
    if (downloads[step].pending)
      finishDownload(step);
  for (size_t d = 0; d < backends.size(); ++d) {
    double start = timing ? now() : 0;
    backends[d]->wait();
    if (tracing && !backends[d]->isHostMemory())
      timeline.add(Timeline::Kind::Wait, "wait " + program.devices[d].id, 0, start, now());
    if (timing)
      for (const LaunchSpan &span : backends[d]->takeLaunchSpans())
        recordKernel(span.kernel, span.start, span.end);
  }
  if (tracing)
    timeline.add(Timeline::Kind::Run, "run", 0, runStart, now());
  if (binder.joinable()) // Done binding: no helper thread outlives the first run.
    binder.join();
  allBound = true;
}

LogicalResult Session::Impl::bindOutputs(const std::map<std::string, TensorRef> &inputs,
                                         const OutputAllocator &allocate,
                                         const std::vector<OutputView> *views,
                                         DiagnosticEngine &diag) {
  outputMemory.assign(program.outputs.size(), nullptr);
  std::vector<int64_t> outputBytes(program.outputs.size(), 0);
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    if (views && (*views)[i].source != OutputView::Source::None)
      continue; // The caller's view of other memory: nothing to write.
    const artifact::Io &out = program.outputs[i];
    Layout layout = *out.tensor.layout(symbolValues);
    size_t width = dtypeByteSize(out.tensor.dtype);
    size_t bytes = static_cast<size_t>(layout.numElements()) * width;
    outputMemory[i] = static_cast<char *>(allocate(i, out.tensor.dtype, layout.sizes, bytes));
    if (!outputMemory[i] && bytes > 0)
      return error(diag, "no memory was given for output '" + out.name + "'");
    outputBytes[i] = static_cast<int64_t>(bytes);
    if (directBuffer[i] < 0)
      continue;
    // Kernels take pointers aligned to their elements; an output the run
    // does not write whole and dense is copied.
    char *to = outputMemory[i];
    bool fits = reinterpret_cast<uintptr_t>(to) % width == 0 && bytes > 0 &&
                layout.isContiguous() && layout.offset == 0;
    for (const auto &[name, in] : inputs) {
      uintptr_t data = reinterpret_cast<uintptr_t>(in.data), at = reinterpret_cast<uintptr_t>(to);
      fits = fits && (data + in.bytes <= at || at + bytes <= data);
    }
    bufferBase[directBuffer[i]] = fits ? to : arenaAddress[directBuffer[i]];
  }
  for (auto [k, a] : directArgs) {
    const artifact::Tensor &t = program.kernels[k].args[a].tensor;
    size_t o = std::find(directBuffer.begin(), directBuffer.end(), int64_t(t.index)) -
               directBuffer.begin();
    if (bufferBase[t.index] != outputMemory[o])
      continue;
    std::optional<Layout> layout = t.layout(symbolValues);
    if (!layout || !layout->fitsIn(outputBytes[o] / int64_t(dtypeByteSize(t.dtype))))
      bufferBase[t.index] = arenaAddress[t.index];
  }
  return success();
}

LogicalResult Session::Impl::readOutput(size_t index, DiagnosticEngine &diag) {
  const artifact::Io &out = program.outputs[index];
  const artifact::Tensor &tensor = out.tensor;
  Layout layout = *tensor.layout(symbolValues);
  size_t width = dtypeByteSize(tensor.dtype);
  int64_t count = layout.numElements();
  size_t bytes = static_cast<size_t>(count) * width;
  char *to = outputMemory[index];
  if (!to || (directBuffer[index] >= 0 && bufferBase[directBuffer[index]] == to))
    return success(); // A view, empty, or written in place.
  const char *base = nullptr;
  if (tensor.storage == artifact::StorageKind::Constant) {
    base = weights.data() + program.constants[tensor.index].offset;
  } else if (!onHost(tensor.index)) { // Fetch the whole buffer first.
    unsigned d = program.buffers[tensor.index].device;
    Backend &device = *backends[d];
    base = device.enqueueDownload(program.copies.size() + index, bufferBase[tensor.index],
                                  program.buffers[tensor.index].size);
    device.waitFor(device.record());
    if (!device.error().empty())
      return error(diag, program.devices[d].id + ": " + device.error());
  } else {
    base = bufferBase[tensor.index];
  }
  if (layout.isContiguous()) {
    if (bytes > 0)
      std::memcpy(to, base + layout.offset * width, bytes);
    return success();
  }
  std::vector<int64_t> at(layout.sizes.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(to + i * width, base + layout.elementOffset(at) * width, width);
    for (size_t d = at.size(); d-- > 0;) {
      if (++at[d] < layout.sizes[d])
        break;
      at[d] = 0;
    }
  }
  return success();
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
  if (options.threads > kMaxThreads) {
    (void)impl->error(diag, "asked for " + std::to_string(options.threads) +
                                " threads; the runtime runs at most " +
                                std::to_string(kMaxThreads));
    return nullptr;
  }
  impl->threads = options.threads ? options.threads : usableCpuCount();
  impl->nullDevices = options.nullDevices;
  impl->nullDeviceLog = options.nullDeviceLog;
  impl->profiling = options.profile;
  impl->tracing = options.trace;
  impl->timing = options.profile || options.trace;
  if (failed(impl->open(diag)))
    return nullptr;
  impl->startBinding();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::string &Session::routeReport() const { return impl->report; }

static std::vector<TensorInfo> describe(const std::vector<artifact::Io> &ios,
                                        const artifact::Program &program) {
  std::vector<int64_t> bounds = program.boundValues();
  std::vector<TensorInfo> infos;
  for (const artifact::Io &io : ios) {
    TensorInfo &info = infos.emplace_back();
    info.name = io.name;
    info.dtype = io.tensor.dtype;
    for (const artifact::Extent &e : io.tensor.sizes) {
      info.shape.push_back(e.value(bounds));
      info.dimSymbols.push_back(e.isStatic() ? "" : program.symbols[e.symbol].name);
    }
  }
  return infos;
}

std::vector<TensorInfo> Session::inputs() const {
  return describe(impl->program.inputs, impl->program);
}

std::vector<TensorInfo> Session::outputs() const {
  return describe(impl->program.outputs, impl->program);
}

LogicalResult Session::run(const std::map<std::string, Tensor> &inputs,
                           std::vector<Tensor> &outputs, DiagnosticEngine &diag,
                           const std::map<std::string, int64_t> &symbols) {
  std::map<std::string, TensorRef> refs;
  for (const auto &[name, t] : inputs)
    refs[name] = {t.dtype, t.shape, t.data.data(), t.data.size()};
  // Output tensors of a previous run are reused: fresh memory costs page
  // faults on every run.
  outputs.resize(impl->program.outputs.size());
  return run(refs,
             [&](size_t i, DType dtype, std::span<const int64_t> shape, size_t bytes) {
               Tensor &t = outputs[i];
               t.dtype = dtype;
               t.shape.assign(shape.begin(), shape.end());
               t.data.resize(bytes);
               return static_cast<void *>(t.data.data());
             },
             diag, symbols);
}

LogicalResult Session::run(const std::map<std::string, TensorRef> &inputs,
                           const OutputAllocator &allocate, DiagnosticEngine &diag,
                           const std::map<std::string, int64_t> &symbols,
                           std::vector<OutputView> *views) {
  std::lock_guard<std::mutex> lock(impl->running);
  if (failed(impl->bindSymbols(inputs, symbols, diag)))
    return failure();
  if (views)
    *views = impl->outputViews();
  if (failed(impl->bindOutputs(inputs, allocate, views, diag)))
    return failure();
  for (const artifact::Io &in : impl->program.inputs) {
    const TensorRef &t = inputs.at(in.name);
    const char *data = static_cast<const char *>(t.data);
    uint32_t b = in.tensor.index;
    if (impl->isInputBuffer[b]) { // Read in place: the run never writes it.
      impl->bufferBase[b] = const_cast<char *>(data);
      continue;
    }
    if (t.bytes == 0)
      continue;
    if (impl->onHost(b))
      std::memcpy(impl->bufferBase[b], data, t.bytes);
    else
      impl->backends[impl->program.buffers[b].device]->upload(impl->bufferBase[b], data,
                                                              t.bytes);
  }
  impl->execute();
  for (size_t d = 0; d < impl->backends.size(); ++d)
    if (!impl->backends[d]->error().empty())
      return impl->error(diag, impl->program.devices[d].id + ": " +
                                   impl->backends[d]->error());
  for (size_t i = 0; i < impl->program.outputs.size(); ++i)
    if (failed(impl->readOutput(i, diag)))
      return failure();
  return success();
}

void Session::resetProfile() {
  std::lock_guard<std::mutex> lock(impl->running);
  impl->profile.clear();
  impl->timeline.clear();
}

bool Session::choosing() const {
  std::lock_guard<std::mutex> lock(impl->running);
  return std::any_of(impl->backends.begin(), impl->backends.end(),
                     [](const std::unique_ptr<Backend> &b) { return b->choosing(); });
}

std::string Session::traceJson() const {
  std::lock_guard<std::mutex> lock(impl->running);
  std::vector<std::string> tracks{"host"};
  for (size_t d = 0; d < impl->backends.size(); ++d) {
    std::string what = impl->backends[d]->describe();
    tracks.push_back(impl->program.devices[d].id + (what.empty() ? "" : " (" + what + ")"));
  }
  for (const auto &[device, thread] : impl->sliceTracks)
    tracks.push_back(impl->program.devices[device].id + " thread " + std::to_string(thread));
  return impl->timeline.toChromeTrace(tracks);
}

std::string Session::profileReport() const {
  std::lock_guard<std::mutex> lock(impl->running);
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
