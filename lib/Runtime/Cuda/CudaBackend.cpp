//===- CudaBackend.cpp - Running PTX kernels on a CUDA device --------------===//
//
// - Driver: libcuda.so.1 opened with dlopen (CudaDriver.h); no driver, no
//   device or a device older than the PTX's target fail the load, saying so.
// - Load: the `kernels.ptx` section is checked, its PTX modules JIT-compiled
//   by the driver (the JIT's error log is the error) and every dispatch's function
//   resolved; the arena and the constants the device's kernels read are
//   allocated (and uploaded) once. Device pointers are the addresses the
//   runtime's descriptors carry: the host never dereferences them.
// - Binding thread: each dispatch's parameter words and launch arguments
//   (generated kernels take memref descriptors: pointer, pointer, offset,
//   size, stride; library kernels pointers) are written into pinned host
//   memory.
// - Execution: one stream; parameter words changed since the last launch
//   are copied with the launch, in order; uploads go through pinned staging
//   memory, downloads into pinned memory per slot. An event is a CUDA event
//   recorded on the stream; the host synchronizes with it when it needs a
//   copy's bytes, and with the whole stream at the end of a run.
// - Timing (profiles, traces): timing events before and after each launch,
//   read at the end of a run and placed on the host's clock against one
//   more event the host waits for: nothing waits between launches.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"
#include "../GpuDispatch.h"
#include "CudaDriver.h"

#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

using namespace fuel;
using namespace fuel::runtime;
using nlohmann::json;

CudaDriver::~CudaDriver() {
  if (library)
    dlclose(library);
}

Expected<std::unique_ptr<CudaDriver>> CudaDriver::open() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return Error{"the CUDA driver (libcuda.so.1) is not installed"};
  auto driver = std::make_unique<CudaDriver>();
  driver->library = library;
#define FUEL_CUDA_LOAD(name, type)                                                                 \
  driver->name = reinterpret_cast<std::add_pointer_t<type>>(dlsym(library, #name));                \
  if (!driver->name)                                                                               \
    return Error{"the CUDA driver lacks " #name};
  FUEL_CUDA_FUNCTIONS(FUEL_CUDA_LOAD)
#undef FUEL_CUDA_LOAD
  for (const char *name : {"cuEventElapsedTime_v2", "cuEventElapsedTime"})
    if (!driver->eventElapsedTime)
      driver->eventElapsedTime =
          reinterpret_cast<decltype(driver->eventElapsedTime)>(dlsym(library, name));
  return driver;
}

std::string CudaDriver::errorName(CUresult result) const {
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) != 0 || !name)
    return "CUDA error " + std::to_string(result);
  return name;
}

namespace {
/// Launch state of one dispatch of a program kernel.
struct PreparedLaunch {
  const GpuDispatchInfo *dispatch = nullptr;
  CUfunction function = nullptr;
  size_t paramsOffset = 0, paramsBytes = 0; // In the parameter buffers.
  uint32_t groups = 0;
  /// Memref descriptor words of every argument, and pointers to each word
  /// (cuLaunchKernel's kernelParams).
  std::vector<uint64_t> words;
  std::vector<void *> pointers;
  bool paramsChanged = false;
};

class CudaBackend final : public Backend {
public:
  ~CudaBackend() override;
  Expected<void> open(const artifact::Device &info);

  Expected<void> allocateArena(uint64_t bytes) override;
  char *arenaBase() override { return reinterpret_cast<char *>(arena); }
  bool isHostMemory() const override { return false; }
  Expected<void> importConstants(const std::vector<std::string_view> &data,
                                 std::vector<char *> &addresses) override;
  Expected<void> loadKernels(std::string_view binary, const artifact::Program &program,
                             unsigned device) override;
  void *findKernel(const std::string &symbol) override;
  std::optional<std::string> kernelSignature(const std::string &symbol) override {
    auto *kernel = static_cast<const GpuKernelInfo *>(findKernel(symbol));
    return kernel ? kernel->signature : std::optional<std::string>();
  }
  void prepare(KernelCall &call) override;
  void launch(KernelCall &call) override;
  void upload(char *to, const char *from, size_t bytes) override;
  const char *enqueueDownload(size_t slot, const char *from, size_t bytes) override;
  Event record() override;
  void waitFor(Event event) override;
  void wait() override;
  bool startDeviceTiming() override;
  std::vector<LaunchSpan> takeLaunchSpans() override { return std::exchange(spans, {}); }
  std::string describe() const override { return name; }
  std::string error() override;

private:
  /// Whether `result` is success; otherwise records the failure.
  bool ok(CUresult result, const std::string &what);
  /// Room for `bytes` in the pinned staging memory.
  char *stage(size_t bytes);
  /// A timing event for the `index`-th timestamp since the last wait.
  CUevent timestamp(size_t index);
  /// Places the timestamps of the launches since the last wait on the
  /// host's clock, from an event the host waits for: each launch's end is
  /// that event's host time less the elapsed time between them.
  void readTimestamps();

  std::unique_ptr<CudaDriver> cu;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::vector<CUmodule> modules;
  std::string name;
  int major = 0, minor = 0;
  CUdeviceptr arena = 0, constants = 0, params = 0;
  char *hostParams = nullptr, *staging = nullptr;
  size_t stagingSize = 0, stagingUsed = 0;
  std::vector<GpuKernelInfo> kernels;
  std::map<std::string, const GpuKernelInfo *> bySymbol;
  std::vector<std::vector<PreparedLaunch>> prepared;
  std::vector<const artifact::Kernel *> kernelInfo;
  /// Pinned memory each download slot copies into: address and size.
  std::map<size_t, std::pair<char *, size_t>> downloadSlots;
  // Events recorded since the last full wait (`epoch` events before them
  // are complete), reused after it.
  std::vector<CUevent> events;
  uint64_t recorded = 0, epoch = 0;
  // Device timing: a pair of timing events around each launch since the
  // last wait (and one more to anchor them), and the kernel each timed.
  bool timing = false;
  std::vector<CUevent> timestamps;
  std::vector<size_t> timedKernels;
  std::vector<LaunchSpan> spans;
  std::mutex errorMutex;
  std::string asyncError;
};
} // namespace

CudaBackend::~CudaBackend() {
  if (!context)
    return;
  cu->cuCtxSetCurrent(context);
  if (stream)
    cu->cuStreamSynchronize(stream);
  for (CUdeviceptr p : {arena, constants, params})
    if (p)
      cu->cuMemFree_v2(p);
  for (char *p : {hostParams, staging})
    if (p)
      cu->cuMemFreeHost(p);
  for (auto &[slot, region] : downloadSlots)
    cu->cuMemFreeHost(region.first);
  for (const std::vector<CUevent> *pool : {&events, &timestamps})
    for (CUevent e : *pool)
      cu->cuEventDestroy_v2(e);
  for (CUmodule m : modules)
    cu->cuModuleUnload(m);
  if (stream)
    cu->cuStreamDestroy_v2(stream);
  cu->cuDevicePrimaryCtxRelease(device);
}

bool CudaBackend::ok(CUresult result, const std::string &what) {
  if (result == 0)
    return true;
  std::lock_guard<std::mutex> lock(errorMutex);
  if (asyncError.empty())
    asyncError = what + " failed: " + cu->errorName(result);
  return false;
}

std::string CudaBackend::error() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return asyncError;
}

Expected<void> CudaBackend::open(const artifact::Device &info) {
  Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::open();
  if (!driver)
    return Error{driver.error()};
  cu = std::move(*driver);
  int count = 0;
  if (cu->cuInit(0) != 0 || cu->cuDeviceGetCount(&count) != 0 || count == 0)
    return Error{"the CUDA driver reports no usable device"};
  // The reader checked that the id is `cuda:N`.
  int index = 0;
  std::string_view number = std::string_view(info.id).substr(info.id.find(':') + 1);
  std::from_chars(number.data(), number.data() + number.size(), index);
  if (index >= count)
    return Error{"there are " + std::to_string(count) + " CUDA devices"};
  char deviceName[256] = {};
  if (!ok(cu->cuDeviceGet(&device, index), "cuDeviceGet") ||
      !ok(cu->cuDeviceGetName(deviceName, sizeof deviceName - 1, device), "cuDeviceGetName") ||
      !ok(cu->cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device), "cuDeviceGetAttribute") ||
      !ok(cu->cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device), "cuDeviceGetAttribute") ||
      !ok(cu->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !ok(cu->cuStreamCreate(&stream, 0), "cuStreamCreate")) {
    return Error{error()};
  }
  name = deviceName;
  name += " (compute capability " + std::to_string(major) + "." + std::to_string(minor) + ")";
  return {};
}

Expected<void> CudaBackend::allocateArena(uint64_t bytes) {
  if (!ok(cu->cuMemAlloc_v2(&arena, std::max<uint64_t>(bytes, 256)),
          "allocating a " + std::to_string(bytes) + "-byte arena")) {
    return Error{error()};
  }
  return {};
}

Expected<void> CudaBackend::importConstants(const std::vector<std::string_view> &data,
                                            std::vector<char *> &addresses) {
  size_t size = 0;
  std::vector<size_t> offsets;
  for (std::string_view d : data) {
    offsets.push_back(size);
    size = (size + d.size() + 255) / 256 * 256;
  }
  if (data.empty())
    return {};
  if (!ok(cu->cuMemAlloc_v2(&constants, size), "allocating constants"))
    return Error{error()};
  for (size_t i = 0; i < data.size(); ++i) {
    addresses.push_back(reinterpret_cast<char *>(constants + offsets[i]));
    upload(addresses.back(), data[i].data(), data[i].size());
  }
  wait();
  if (std::string failure = error(); !failure.empty())
    return Error{failure};
  return {};
}

Expected<void> CudaBackend::loadKernels(std::string_view binary, const artifact::Program &program,
                                        unsigned deviceIndex) {
  json j = json::parse(binary, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || jsonMember<std::string>(j, "format") != "fuel.ptx-kernels" ||
      jsonMember<int>(j, "version") != 1)
    return Error{"the PTX kernel section is not fuel.ptx-kernels version 1"};
  std::string target = jsonMember<std::string>(j, "target").value_or("");
  if (!j.contains("modules") || !j["modules"].is_array() || !j.contains("kernels"))
    return Error{"the PTX kernel section lacks 'modules' or 'kernels'"};
  std::vector<std::pair<std::string, std::string>> ptx; // Name, text.
  for (const json &m : j["modules"]) {
    std::optional<std::string> moduleName = jsonMember<std::string>(m, "name");
    std::optional<std::string> text = jsonMember<std::string>(m, "ptx");
    if (!moduleName || !text)
      return Error{"the PTX kernel section has a module without 'name' and 'ptx' strings"};
    ptx.emplace_back(std::move(*moduleName), std::move(*text));
  }
  if (Expected<void> read = readGpuKernels(j["kernels"], ptx.size(), kernels); !read)
    return Error{"the PTX kernel section: " + read.error()};
  int wanted = target.size() > 3 ? std::atoi(target.c_str() + 3) : 0;
  if (major * 10 + minor < wanted)
    return Error{"the kernels are PTX for " + target + ", and " + name + " is older"};
  for (const auto &[moduleName, text] : ptx) {
    char log[8192] = {};
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
    void *values[] = {log, reinterpret_cast<void *>(sizeof log - 1)};
    CUmodule module = nullptr;
    CUresult loaded = cu->cuModuleLoadDataEx(&module, text.c_str(), 2, options, values);
    if (loaded != 0)
      return Error{"the driver cannot compile PTX module '" + moduleName + "' (" +
                   cu->errorName(loaded) + "): " + log};
    modules.push_back(module);
  }
  for (const GpuKernelInfo &k : kernels)
    bySymbol[k.symbol] = &k;
  prepared.assign(program.kernels.size(), {});
  kernelInfo.assign(program.kernels.size(), nullptr);
  size_t paramsBytes = 0;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const artifact::Kernel &info = program.kernels[k];
    auto it = bySymbol.find(info.symbol);
    if (info.device != deviceIndex || it == bySymbol.end())
      continue;
    if (Expected<void> checked = checkGpuKernel(*it->second, info); !checked)
      return checked;
    kernelInfo[k] = &info;
    for (const GpuDispatchInfo &d : it->second->dispatches) {
      PreparedLaunch p;
      p.dispatch = &d;
      if (cu->cuModuleGetFunction(&p.function, modules[d.module], d.entry.c_str()) != 0)
        return Error{"the PTX has no entry point '" + d.entry + "'"};
      p.paramsOffset = paramsBytes;
      p.paramsBytes = parameterWords(d, info) * 4;
      paramsBytes += (p.paramsBytes + 255) / 256 * 256;
      prepared[k].push_back(std::move(p));
    }
  }
  if (paramsBytes &&
      (!ok(cu->cuMemAlloc_v2(&params, paramsBytes), "allocating parameters") ||
       !ok(cu->cuMemAllocHost_v2(reinterpret_cast<void **>(&hostParams), paramsBytes),
           "allocating pinned parameters"))) {
    return Error{error()};
  }
  return {};
}

void *CudaBackend::findKernel(const std::string &symbol) {
  auto it = bySymbol.find(symbol);
  return it == bySymbol.end() ? nullptr : const_cast<GpuKernelInfo *>(it->second);
}

void CudaBackend::prepare(KernelCall &call) {
  const artifact::Kernel &info = *kernelInfo[call.kernel];
  for (PreparedLaunch &p : prepared[call.kernel]) {
    const GpuDispatchInfo &d = *p.dispatch;
    // Arguments are bound at their first element: no element offsets.
    writeParameters(d, info, call, std::vector<int64_t>(d.args.size(), 0),
                    reinterpret_cast<int32_t *>(hostParams + p.paramsOffset));
    p.words.clear();
    // Library kernels take pointers; generated ones memref descriptors.
    auto memref = [&](uint64_t pointer, uint64_t elements) {
      if (d.library)
        p.words.push_back(pointer);
      else
        p.words.insert(p.words.end(), {pointer, pointer, 0, elements, 1});
    };
    for (unsigned a : d.args) {
      const std::vector<int64_t> &desc = call.descriptors[a];
      unsigned rank = info.args[a].tensor.sizes.size();
      uint64_t span = 1; // Elements from the first to one past the last.
      for (unsigned i = 0; i < rank; ++i)
        span += desc[3 + i] ? (desc[3 + i] - 1) * std::abs(desc[3 + rank + i]) : 0;
      memref(static_cast<uint64_t>(desc[1]), span);
    }
    memref(params + p.paramsOffset, p.paramsBytes / 4);
    p.pointers.clear();
    for (uint64_t &w : p.words)
      p.pointers.push_back(&w);
    p.groups = workgroups(d, info, call, int64_t(1) << 31);
    p.paramsChanged = true;
  }
}

void CudaBackend::launch(KernelCall &call) {
  if (!error().empty() || !ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return;
  if (timing) {
    CUevent start = timestamp(2 * timedKernels.size());
    if (!start || !ok(cu->cuEventRecord(start, stream), "recording a timestamp"))
      return;
    timedKernels.push_back(call.kernel);
  }
  for (PreparedLaunch &p : prepared[call.kernel]) {
    if (p.paramsChanged) {
      if (!ok(cu->cuMemcpyHtoDAsync_v2(params + p.paramsOffset, hostParams + p.paramsOffset,
                                       p.paramsBytes, stream),
              "copying kernel parameters"))
        return;
      p.paramsChanged = false;
    }
    if (p.groups == 0)
      continue;
    if (!ok(cu->cuLaunchKernel(p.function, p.groups, 1, 1, p.dispatch->workgroupSize, 1, 1, 0,
                               stream, p.pointers.data(), nullptr),
            "launching '" + p.dispatch->entry + "'"))
      return;
  }
  if (timing) {
    CUevent end = timestamp(2 * timedKernels.size() - 1);
    if (end)
      ok(cu->cuEventRecord(end, stream), "recording a timestamp");
  }
}

CUevent CudaBackend::timestamp(size_t index) {
  while (timestamps.size() <= index) {
    CUevent event = nullptr;
    if (!ok(cu->cuEventCreate(&event, 0), "creating a timing event"))
      return nullptr;
    timestamps.push_back(event);
  }
  return timestamps[index];
}

bool CudaBackend::startDeviceTiming() {
  timing = cu->eventElapsedTime != nullptr;
  return timing;
}

void CudaBackend::readTimestamps() {
  if (timedKernels.empty() || !error().empty())
    return;
  CUevent anchor = timestamp(2 * timedKernels.size());
  if (!anchor || !ok(cu->cuEventRecord(anchor, stream), "recording a timestamp") ||
      !ok(cu->cuEventSynchronize(anchor), "running on the device"))
    return;
  double now = hostSeconds();
  auto hostTime = [&](CUevent event) {
    float ms = 0;
    ok(cu->eventElapsedTime(&ms, event, anchor), "reading a timestamp");
    return now - ms * 1e-3;
  };
  for (size_t i = 0; i < timedKernels.size(); ++i)
    spans.push_back(
        {timedKernels[i], hostTime(timestamps[2 * i]), hostTime(timestamps[2 * i + 1])});
  timedKernels.clear();
}

char *CudaBackend::stage(size_t bytes) {
  size_t at = (stagingUsed + 255) / 256 * 256;
  if (at + bytes > stagingSize) {
    wait(); // Everything staged so far has been copied.
    at = 0;
    if (bytes > stagingSize) {
      if (staging)
        cu->cuMemFreeHost(staging);
      staging = nullptr;
      stagingSize = std::max<size_t>(bytes, size_t(1) << 20);
      if (!ok(cu->cuMemAllocHost_v2(reinterpret_cast<void **>(&staging), stagingSize),
              "allocating pinned staging memory")) {
        stagingSize = 0;
        return nullptr;
      }
    }
  }
  stagingUsed = at + bytes;
  return staging + at;
}

void CudaBackend::upload(char *to, const char *from, size_t bytes) {
  if (bytes == 0)
    return;
  // The caller's thread may not have the context yet.
  bool ready = error().empty() && ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
  char *staged = ready ? stage(bytes) : nullptr;
  if (!staged)
    return;
  std::memcpy(staged, from, bytes);
  ok(cu->cuMemcpyHtoDAsync_v2(reinterpret_cast<CUdeviceptr>(to), staged, bytes, stream),
     "copying to the device");
}

const char *CudaBackend::enqueueDownload(size_t slot, const char *from, size_t bytes) {
  if (!error().empty() || !ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return nullptr;
  auto &[region, size] = downloadSlots[slot];
  if (size < bytes || !region) {
    wait(); // A copy in flight may still target the old region.
    if (region)
      cu->cuMemFreeHost(region);
    region = nullptr;
    size = 0;
    size_t want = std::max<size_t>(bytes, 64);
    if (!ok(cu->cuMemAllocHost_v2(reinterpret_cast<void **>(&region), want),
            "allocating pinned memory for a download"))
      return nullptr;
    size = want;
  }
  if (bytes > 0 &&
      !ok(cu->cuMemcpyDtoHAsync_v2(region, reinterpret_cast<CUdeviceptr>(from), bytes, stream),
          "copying from the device"))
    return nullptr;
  return region;
}

Backend::Event CudaBackend::record() {
  if (!error().empty() || !ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return recorded;
  size_t index = recorded - epoch;
  if (index == events.size()) {
    CUevent event = nullptr;
    if (!ok(cu->cuEventCreate(&event, kEventDisableTiming), "creating an event"))
      return recorded;
    events.push_back(event);
  }
  if (!ok(cu->cuEventRecord(events[index], stream), "recording an event"))
    return recorded;
  return ++recorded;
}

void CudaBackend::waitFor(Event event) {
  if (event <= epoch || !error().empty() || !ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    return;
  ok(cu->cuEventSynchronize(events[event - 1 - epoch]), "running on the device");
}

void CudaBackend::wait() {
  if (error().empty() && ok(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"))
    ok(cu->cuStreamSynchronize(stream), "running on the device");
  stagingUsed = 0;
  epoch = recorded;
  readTimestamps();
}

Expected<std::unique_ptr<Backend>> runtime::createCudaBackend(const artifact::Device &device) {
  auto backend = std::make_unique<CudaBackend>();
  if (Expected<void> opened = backend->open(device); !opened)
    return Error{opened.error()};
  return std::unique_ptr<Backend>(std::move(backend));
}
