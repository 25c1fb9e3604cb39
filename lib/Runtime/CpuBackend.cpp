//===- CpuBackend.cpp - Running x86 kernels on the host -------------------===//
//
// The kernel binary is an ELF shared object: it is loaded from memory
// (memfd + dlopen, no temporary file) with every symbol resolved up front.
// A splittable kernel with enough work runs on the thread pool, each thread
// on a slice of the result's split axis (narrowed descriptors), when the
// first runs measured that faster than running it whole (SplitChoice.h).
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "HostResources.h"
#include "SplitChoice.h"
#include "ThreadPool.h"

#include "fuel/Support/CpuFeatures.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

using namespace fuel;
using namespace fuel::runtime;

namespace {
/// Below this many elements touched, one thread is faster than waking more.
/// (The workers spin between kernels, so waking them costs little; above
/// this the split choice measures. At 64 Ki, EfficientNet-B0's means and
/// scales of 7x7 images ran whole on two threads, reading half their input
/// from the other core, and the model took 1.06x as long, Zen 5.)
constexpr int64_t kParallelWork = int64_t(1) << 14;

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(std::unique_ptr<ThreadPool> pool) : pool(std::move(pool)) {}
  ~CpuBackend() override {
    if (library) {
      // Library kernels free their per-thread memory before the code goes.
      if (auto release = reinterpret_cast<void (*)()>(dlsym(library, "fuel_release")))
        release();
      dlclose(library);
    }
    if (binaryFd >= 0)
      ::close(binaryFd);
    if (arena)
      munmap(arena, arenaSize);
  }

  Expected<void> allocateArena(uint64_t bytes) override {
    std::optional<AvailableMemory> available = availableHostMemory();
    if (available && bytes > available->bytes)
      return Error{"the plan needs a " + std::to_string(bytes) + "-byte arena, but only " +
                   std::to_string(available->bytes) + " bytes of memory are available (" +
                   available->source + ")"};
    // Mapped, not malloc'd: unloading gives every page back (a freed large
    // malloc block raises glibc's mmap threshold, and later blocks of that
    // size stay in its heap). It lies on huge pages where the system gives
    // them (every kernel reads and writes it: fewer TLB misses, and a VM
    // traps to its host once per page fault), so it is aligned to one, and
    // its page faults are taken here, not in the first run.
    constexpr size_t kHugePage = 2 << 20;
    size_t size = (std::max<size_t>(bytes, 1) + kHugePage - 1) / kHugePage * kHugePage;
    void *mapped =
        mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      return Error{"cannot allocate a " + std::to_string(bytes) +
                   "-byte arena: " + std::strerror(errno)};
    char *start = static_cast<char *>(mapped);
    char *aligned =
        start + (kHugePage - reinterpret_cast<uintptr_t>(start) % kHugePage) % kHugePage;
    if (aligned > start)
      munmap(start, aligned - start);
    munmap(aligned + size, start + kHugePage - aligned); // The rest past the arena.
    madvise(aligned, size, MADV_HUGEPAGE);
    if (madvise(aligned, size, MADV_POPULATE_WRITE) != 0)
      for (size_t page = 0; page < size; page += 4096) // Kernels before 5.14.
        aligned[page] = 0;
    arena = aligned;
    arenaSize = size;
    return {};
  }

  char *arenaBase() override { return arena; }

  Expected<void> loadKernels(std::string_view binary, const artifact::Program &,
                             unsigned) override {
    int fd = memfd_create("fuel-kernels", MFD_CLOEXEC);
    if (fd < 0)
      return Error{std::string("memfd_create failed: ") + std::strerror(errno)};
    bool written = true;
    for (size_t done = 0; done < binary.size() && written;) {
      ssize_t n = ::write(fd, binary.data() + done, binary.size() - done);
      written = n > 0;
      done += written ? static_cast<size_t>(n) : 0;
    }
    if (!written) {
      Error error{std::string("cannot write the x86 kernel binary to memory: ") +
                  std::strerror(errno)};
      ::close(fd);
      return error;
    }
    library = openUnique(fd);
    if (!library) {
      const char *why = dlerror();
      Error error{std::string("the x86 kernel binary does not load: ") +
                  (why ? why : std::strerror(errno))};
      if (fd >= 0)
        ::close(fd);
      return error;
    }
    binaryFd = fd;
    return {};
  }

  void *findKernel(const std::string &symbol) override {
    return dlsym(library, symbol.c_str());
  }

  std::optional<std::string> kernelSignature(const std::string &symbol) override {
    auto *text = static_cast<const char *>(dlsym(library, (symbol + "_signature").c_str()));
    return std::string(text ? text : "(none)");
  }

  void launch(KernelCall &call) override {
    using Entry = void (*)(void **);
    auto entry = reinterpret_cast<Entry>(call.entry);
    int64_t chunks = std::min<int64_t>(pool->size(), call.splitExtent);
    bool timed = pool->size() > 1 && choice.begin(call.kernel);
    std::optional<bool> split;
    if (chunks > 1 && call.work >= kParallelWork) {
      split = choice.split(call.kernel);
      splits = true;
    }
    // The clock is read only in the runs that choose the split policy.
    std::chrono::steady_clock::time_point start;
    if (timed)
      start = std::chrono::steady_clock::now();
    if (split.value_or(false))
      runSplit(call, chunks);
    else
      entry(call.argv.data());
    if (timed)
      choice.record(call.kernel, split,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                        .count());
  }

  void wait() override {}

  // A program whose kernels are all too small to split (or that launches
  // none here) has nothing to choose.
  bool choosing() const override { return splits && !choice.settled(); }

  unsigned traceSlices() override {
    tracingSlices = pool->size() > 1;
    return tracingSlices ? pool->size() : 0;
  }
  std::vector<SliceSpan> takeSliceSpans() override { return std::exchange(sliceSpans, {}); }

private:
  /// Runs `call` on `chunks` slices of its split axis, one per thread.
  void runSplit(const KernelCall &call, int64_t chunks) {
    using Entry = void (*)(void **);
    auto entry = reinterpret_cast<Entry>(call.entry);
    int64_t extent = call.splitExtent;
    // Each slice writes only its own entry.
    if (tracingSlices)
      sliceSpans.assign(chunks, {});
    if (sliceArgs.size() < static_cast<size_t>(chunks))
      sliceArgs.resize(chunks);
    pool->parallelFor(chunks, [&](int64_t c) {
      double start = tracingSlices ? hostSeconds() : 0;
      int64_t lo = extent * c / chunks, hi = extent * (c + 1) / chunks;
      SliceArgs &slice = sliceArgs[c];
      slice.descriptors.resize(call.descriptors.size());
      slice.argv.resize(call.descriptors.size());
      for (size_t i = 0; i < call.descriptors.size(); ++i) {
        std::vector<int64_t> &d = slice.descriptors[i];
        d.assign(call.descriptors[i].begin(), call.descriptors[i].end());
        if (static_cast<int>(i) == call.originArg)
          d[0] = d[1] = reinterpret_cast<int64_t>(&lo);
        if (int axis = call.splitAxes[i]; axis >= 0) {
          size_t rank = (d.size() - 3) / 2;
          d[1] += lo * d[3 + rank + axis] * call.elementBytes[i];
          d[3 + axis] = hi - lo;
        }
        slice.argv[i] = d.data();
      }
      entry(slice.argv.data());
      if (tracingSlices)
        sliceSpans[c] = {ThreadPool::currentThread(), start, hostSeconds()};
    });
  }

  /// dlopen of the memfd `fd` through /proc/self/fd/N. The dynamic loader
  /// finds libraries by name first, so N must name no library loaded now:
  /// the descriptor stays open while the library is loaded, and a name
  /// still taken (a library that was not unloaded) moves to another
  /// descriptor. Sessions of different artifacts would otherwise share the
  /// first one's kernels.
  void *openUnique(int &fd) {
    for (;;) {
      std::string path = "/proc/self/fd/" + std::to_string(fd);
      void *taken = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
      if (!taken)
        return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      dlclose(taken);
      int next = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
      ::close(fd);
      fd = next;
      if (fd < 0)
        return nullptr;
    }
  }

  /// Each slice's arguments, kept from launch to launch: copied into
  /// storage already allocated, a launch allocates nothing.
  struct SliceArgs {
    std::vector<std::vector<int64_t>> descriptors;
    std::vector<void *> argv;
  };

  std::unique_ptr<ThreadPool> pool;
  std::vector<SliceArgs> sliceArgs; // One per chunk of the current launch.
  SplitChoice choice;
  bool splits = false; // Whether a launch so far was large enough to split.
  bool tracingSlices = false;
  std::vector<SliceSpan> sliceSpans; // Of the last split launch, when tracing.
  char *arena = nullptr;
  size_t arenaSize = 0;
  void *library = nullptr;
  int binaryFd = -1; // The memfd `library` was loaded from.
};
} // namespace

Expected<std::unique_ptr<Backend>> runtime::createCpuBackend(const artifact::Device &device,
                                                             unsigned threads) {
  std::vector<std::string> missing = missingCpuFeatures(device.cpuFeatures);
  if (!missing.empty()) {
    std::string why = "this CPU lacks";
    for (const std::string &f : missing)
      why += " " + f;
    return Error{why + ", which kernels built for " + device.target + " need"};
  }
  Expected<std::unique_ptr<ThreadPool>> pool = ThreadPool::create(threads);
  if (!pool)
    return Error{pool.error()};
  return std::make_unique<CpuBackend>(std::move(*pool));
}
