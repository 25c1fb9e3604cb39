//===- Runtime.h - Loading and running .fplan artifacts ---------*- C++ -*-===//
//
// The thin runtime. A Session loads an artifact and checks, before any work
// runs, everything the plan needs (the fail-fast dispatch contract):
//   - the container (magic, version, every section's hash);
//   - a route: the first of the artifact's planned routes whose devices all
//     exist here (a backend for their kind, the CPU features the x86 kernels
//     were built for); the choice, and why earlier routes were skipped, is
//     reported, and the device never changes afterwards;
//   - the route's program, validated (every index, offset, stride and step);
//   - every kernel of that route, present in its kernel binary for its
//     device, taking the arguments the program passes it.
// There is no fallback to another device at run time.
//
// Kernels are then bound on a worker thread (descriptor preparation on the
// CPU; pipeline or module creation on GPU backends) while the first run
// proceeds on the caller's thread, waiting per kernel only where it has not
// been bound yet. Arenas are allocated once, from the memory plan.
//
// The runtime executes the artifact's lowered program (Artifact/Program.h)
// and depends on fuelc's Support and Artifact libraries only: no graph, no
// importer, never LLVM or MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_RUNTIME_RUNTIME_H
#define FUEL_RUNTIME_RUNTIME_H

#include "fuel/Support/DType.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/LogicalResult.h"

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fuel::runtime {

/// A dense, row-major, little-endian host tensor.
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string data;
};

/// A caller's dense, row-major tensor memory, which a run reads in place
/// where the plan allows (it never writes it).
struct TensorRef {
  DType dtype = DType::F32;
  std::span<const int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// Gives a run the memory for output `index` (dense, row-major, `bytes`
/// long), before it executes; the run writes it before returning. An output
/// the CPU computes is written there in place (no copy) where the memory is
/// aligned to its elements and holds no input; any other is copied in at
/// the end. nullptr (for bytes > 0) fails the run.
using OutputAllocator = std::function<void *(size_t index, DType dtype,
                                             std::span<const int64_t> shape,
                                             size_t bytes)>;

/// Where a run left an output that is a view of one of its inputs or of
/// another output (a reshape, transpose or slice of it), when the caller
/// takes views: no memory was asked for it and nothing copied.
struct OutputView {
  enum class Source { None, Input, Output };
  /// None: the output was written like any other.
  Source source = Source::None;
  /// The input (in Session::inputs() order) or output it views.
  size_t index = 0;
  /// Its extents, and where its elements are in the viewed tensor's dense
  /// row-major memory: element offset and strides (in elements).
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

/// A graph input or output as the plan holds it.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  /// At the planned extents: a dim bound at run time may be smaller.
  std::vector<int64_t> shape;
  /// The symbol of each dim bound at run time, "" for a fixed one.
  std::vector<std::string> dimSymbols;
};

/// More CPU threads than this is a load error, not thousands of idle
/// workers.
inline constexpr unsigned kMaxThreads = 1024;

struct RuntimeOptions {
  /// Threads for CPU kernels (the caller's included); 0: one per CPU this
  /// process may use (its affinity mask and cgroup CPU quota); at most
  /// kMaxThreads.
  unsigned threads = 0;
  /// Per-kernel timing (fuel-run --profile): on the device where its
  /// backend has timestamps (Vulkan), without waiting between launches;
  /// else from the host, waiting for each launch.
  bool profile = false;
  /// Records a timeline of every run (fuel-run --trace): kernels per
  /// device, copies, waits; traceJson writes it.
  bool trace = false;
  /// Devices (ids such as "vulkan:0", or kinds such as "vulkan") run by
  /// the null backend instead of their own, to test scheduling without
  /// their hardware: kernels do nothing; a null CPU launches at once, any
  /// other null device queues launches until a flush submits them or a
  /// wait completes them. Each launch, submission, wait and copy is
  /// reported to `nullDeviceLog` in order ("vulkan:0 launch fuel_k1",
  /// "vulkan:0 submit 2", "vulkan:0 wait 2", "vulkan:0 upload", ...).
  std::vector<std::string> nullDevices;
  std::function<void(const std::string &event)> nullDeviceLog;
};

/// A loaded artifact. Its methods may be called from several threads at
/// once: runs share the session's arenas, so they take turns (one runs, the
/// others wait). For runs in parallel, load one Session per thread; sessions
/// share nothing.
class Session {
public:
  /// Loads `artifact` (named `name` in diagnostics); nullptr after
  /// reporting why it cannot run here.
  static std::unique_ptr<Session> load(std::shared_ptr<const FileBuffer> artifact,
                                       std::string_view name,
                                       const RuntimeOptions &options,
                                       DiagnosticEngine &diag);
  ~Session();

  /// Which route was chosen and why earlier ones were skipped.
  const std::string &routeReport() const;
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;

  /// Runs the plan once: binds symbolic dims from the inputs' shapes (and
  /// from `symbols`, by name, which the inputs must agree with; a symbol
  /// neither sets takes its planned bound), executes every step and
  /// returns the outputs in the graph's order.
  LogicalResult run(const std::map<std::string, Tensor> &inputs,
                    std::vector<Tensor> &outputs, DiagnosticEngine &diag,
                    const std::map<std::string, int64_t> &symbols = {});
  /// The same, without copies of the inputs, writing each output once into
  /// memory `allocate` gives (the C and Python APIs' entry). With `views`,
  /// outputs that are views of an input or of another output get no memory
  /// and no copy: (*views)[i] says where output i lies (Source::None for
  /// the others).
  LogicalResult run(const std::map<std::string, TensorRef> &inputs, const OutputAllocator &allocate,
                    DiagnosticEngine &diag, const std::map<std::string, int64_t> &symbols = {},
                    std::vector<OutputView> *views = nullptr);

  /// Time per kernel kind and backend over the runs so far (with profile).
  std::string profileReport() const;
  /// The runs so far (with trace) as Chrome trace JSON, for
  /// chrome://tracing or Perfetto: one track for the host (runs, copies,
  /// waits) and one per device (its kernels).
  std::string traceJson() const;
  /// Forgets the runs so far (profile and trace): a report after a warm-up
  /// run then shows the steady state, without the first run's page faults
  /// and weight packing.
  void resetProfile();
  /// Whether a backend is still measuring choices that later runs keep:
  /// with more than one thread, the CPU backend times its first runs split
  /// and whole to choose which kernels split (ten runs, the first whole one
  /// packing weights anew; false until a kernel large enough to split has
  /// run, and for plans without one). A benchmark of the steady state warms
  /// up until this is false. (After that, a run of each policy now and then
  /// checks the choice still holds: part of the steady state.)
  bool choosing() const;

private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace fuel::runtime

#endif // FUEL_RUNTIME_RUNTIME_H
