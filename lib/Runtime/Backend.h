//===- Backend.h - One device kind's side of the runtime --------*- C++ -*-===//
//
// A backend owns a device's arena, loads the kernel binary the artifact has
// for that device, resolves kernels by symbol (a missing one fails the load)
// and launches them. Launches and copies may be asynchronous, in one queue
// per device: `record` marks an event after the work enqueued so far, and
// the host waits for that event alone (`waitFor`) or for everything (`wait`).
//
// Device memory is addressed like host memory: the arena and the constants
// a device's kernels read get a range of addresses (arenaBase() and
// importConstants), which descriptors carry. For a device whose memory the
// host cannot address (a GPU), the range is reserved but inaccessible, and
// only the backend turns its addresses into buffers; the host moves data
// with upload and download.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_BACKEND_H
#define FUEL_LIB_RUNTIME_BACKEND_H

#include "fuel/Artifact/Program.h"
#include "fuel/Support/Expected.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuel::runtime {

/// A kernel call: the kernel and one strided memref descriptor per argument
/// ({allocated, aligned, offset, sizes[rank], strides[rank]} as 64-bit
/// words; see Transforms/KernelSpec.h). Offsets are folded into the aligned
/// pointer, so the offset word is always 0.
struct KernelCall {
  /// The kernel's index in the program, and its entry point.
  size_t kernel = 0;
  void *entry = nullptr;
  std::vector<std::vector<int64_t>> descriptors;
  /// Values of the symbols the kernel reads (the data of the descriptor
  /// after the arguments').
  std::vector<int64_t> symbolValues;
  /// The descriptor of the slice's first index (KernelSpec::takesSliceOrigin),
  /// or -1. It holds 0 as built; a backend running slices points it at each
  /// slice's.
  int originArg = -1;
  std::vector<int> splitAxes;
  std::vector<int64_t> elementBytes;
  /// Extent of the split axis (0: not splittable) and elements touched, to
  /// decide whether to use several threads.
  int64_t splitExtent = 0;
  int64_t work = 0;
  /// Pointers to `descriptors`, as the entry point takes them.
  std::vector<void *> argv;
  /// Arguments in graph inputs' buffers, which each run points at the
  /// caller's tensors (zero-copy): argument, buffer, byte offset in it.
  struct Rebind {
    unsigned arg;
    size_t buffer;
    int64_t offset;
  };
  std::vector<Rebind> rebinds;
};

/// Now, in seconds of the host's steady clock: the clock of every span.
inline double hostSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// When a launch ran on its device, in seconds of the host's steady clock.
struct LaunchSpan {
  size_t kernel;
  double start, end;
};

/// One thread's slice of a launch split over a device's threads, in
/// seconds of the host's steady clock; thread 0 is the one that launched.
struct SliceSpan {
  unsigned thread;
  double start, end;
};

class Backend {
public:
  virtual ~Backend() = default;
  /// Allocates (and pre-touches) the device arena.
  virtual Expected<void> allocateArena(uint64_t bytes) = 0;
  /// Base address of the arena as kernels see it.
  virtual char *arenaBase() = 0;
  /// Whether the host can read and write the device's addresses directly.
  virtual bool isHostMemory() const { return true; }
  /// Makes constants (host bytes) readable by the device's kernels and
  /// gives their device addresses.
  virtual Expected<void> importConstants(const std::vector<std::string_view> &data,
                                         std::vector<char *> &addresses) {
    for (std::string_view d : data)
      addresses.push_back(const_cast<char *>(d.data()));
    return {};
  }
  /// Loads the kernel binary of this device for the kernels of `program`
  /// placed on it (device index `device`).
  virtual Expected<void> loadKernels(std::string_view binary, const artifact::Program &program,
                                     unsigned device) = 0;
  /// The entry point of `symbol`, or nullptr when the binary lacks it.
  virtual void *findKernel(const std::string &symbol) = 0;
  /// What the binary says kernel `symbol` takes (artifact::kernelSignature:
  /// an x86 object's `<symbol>_signature`, a GPU section's `signature`), or
  /// nullopt when the binary has no such kernel.
  virtual std::optional<std::string> kernelSignature(const std::string &symbol) = 0;
  /// Prepares `call` for launches (runs on the runtime's binding thread,
  /// while earlier kernels execute).
  virtual void prepare(KernelCall &call) {}
  virtual void launch(KernelCall &call) = 0;
  /// Copies host bytes to device address `to`, in order with launches.
  virtual void upload(char *to, const char *from, size_t bytes) {
    std::memcpy(to, from, bytes);
  }
  /// Enqueues a copy of `bytes` at device address `from`, in order with
  /// launches, into host memory the backend keeps for `slot` (any key; one
  /// region per key, reused by later calls), and gives that memory: it holds
  /// the bytes once an event recorded after this call has completed. Later
  /// launches may reuse `from` at once. (The host reads memory it can
  /// address in place: the session copies from it directly.)
  virtual const char *enqueueDownload(size_t slot, const char *from, size_t bytes) { return from; }
  /// A point in the device's queue: complete once everything enqueued
  /// before it is. Events increase; 0 is always complete.
  using Event = uint64_t;
  /// An event after the work enqueued so far, which starts on the device.
  virtual Event record() { return 0; }
  /// Blocks until `event` has completed, and no longer: work enqueued after
  /// it keeps running.
  virtual void waitFor(Event event) {}
  /// Blocks until everything enqueued so far has completed.
  virtual void wait() = 0;
  /// Starts work recorded so far without waiting for it: a device that
  /// defers its launches then runs them while the host does other work.
  virtual void flush() {}
  /// Starts timing launches on the device (timestamps), so that profiles
  /// and traces do not serialize it; false when the backend cannot, and
  /// the session then waits for each launch to time it from the host.
  virtual bool startDeviceTiming() { return false; }
  /// The launches the last waits completed, in launch order (with device
  /// timing).
  virtual std::vector<LaunchSpan> takeLaunchSpans() { return {}; }
  /// Records, from now on, the slices that split launches run on each
  /// thread (traces), and gives the number of threads (0: it splits none);
  /// takeSliceSpans gives those of the last launch.
  virtual unsigned traceSlices() { return 0; }
  virtual std::vector<SliceSpan> takeSliceSpans() { return {}; }
  /// Whether the backend is still measuring choices that its later runs
  /// keep (the CPU backend's split policy, SplitChoice.h): until then its
  /// runs are not yet its steady state.
  virtual bool choosing() const { return false; }
  /// What the backend runs on, for the route report (e.g. the GPU's name).
  virtual std::string describe() const { return ""; }
  /// The first failure of asynchronous work (launches, copies); the backend
  /// does nothing more after one.
  virtual std::string error() { return ""; }
};

/// The backend for `device` from the registry of device kinds (Backend.cpp),
/// or why it is unavailable on this machine (no backend for the kind, a
/// missing driver or device, missing CPU features).
Expected<std::unique_ptr<Backend>> createBackend(const artifact::Device &device, unsigned threads);
/// The device kinds the registry has a backend for.
std::vector<std::string> backendKinds();

/// Where the null backend reports what it is asked to do ("vulkan:0 launch
/// fuel_k1", "vulkan:0 submit 2", "vulkan:0 wait 2", "cpu:0 launch ...").
using NullDeviceLog = std::function<void(const std::string &event)>;
/// A stand-in for `device` whose kernels do nothing (NullBackend.cpp).
std::unique_ptr<Backend> createNullBackend(const artifact::Device &device,
                                           NullDeviceLog log);
Expected<std::unique_ptr<Backend>> createCpuBackend(const artifact::Device &device,
                                                    unsigned threads);
Expected<std::unique_ptr<Backend>> createVulkanBackend(const artifact::Device &device);
Expected<std::unique_ptr<Backend>> createCudaBackend(const artifact::Device &device);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_BACKEND_H
