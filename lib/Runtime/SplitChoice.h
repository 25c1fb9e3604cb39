//===- SplitChoice.h - Whether CPU kernels split over threads ---*- C++ -*-===//
//
// Whether kernels run split over the threads or whole, measured: a slice
// may read data another core wrote, whose transfer no cost model here
// knows (on the 2-core VM the benchmarks run on, reading 774 KB written by
// the other core took 3x as long, and a 40 us pointwise convolution took
// 70 us split). That couples neighbours: a kernel measured whole in a run
// where its producer ran whole too reads local data, but run whole after a
// split producer it reads half of it from the other core (MobileNetV2's
// 56x56 pointwise layers took 136 us whole, 154 us split, and 277 us whole
// after a split depthwise layer). So whole runs are compared, not only
// kernels:
//   - the first 2 * kTrials runs alternate all split and all whole (the
//     first run split), recording each kernel's fastest time either way;
//   - the next kTrials runs split the kernels that were 5% faster split;
//   - every run after that takes whichever of the three policies had the
//     fastest run, timed over all its launches.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_SPLITCHOICE_H
#define FUEL_LIB_RUNTIME_SPLITCHOICE_H

#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

namespace fuel::runtime {

class SplitChoice {
public:
  static constexpr int kTrials = 3;
  enum class Policy { Split, Whole, PerKernel };

  /// Starts the launch of `kernel`. Launches come in program order, so a
  /// kernel not after the last one starts a new run. Whether to time it
  /// (and call record): only the runs that choose the policy are timed.
  bool begin(size_t kernel);
  /// Whether `kernel`, which has enough work to split, splits in this run.
  bool split(size_t kernel) const;
  /// The time of a launch begin() asked to time; `split`, for a kernel
  /// that could split, whether it did.
  void record(size_t kernel, std::optional<bool> split, double seconds);
  /// The policy of the current run.
  Policy policy() const;
  /// Whether every later run takes the chosen policy. (A run is counted
  /// when the next one starts: this turns true as the run after the last
  /// trial begins.)
  bool settled() const { return run >= kPolicyTrials; }

private:
  static constexpr int kPolicyTrials = 3 * kTrials;
  void endRun();

  struct Kernel {
    double best[2] = {HUGE_VAL, HUGE_VAL}; // Fastest whole, split.
  };
  std::vector<Kernel> kernels;
  int run = 0;
  size_t last = 0;
  bool launched = false;
  double runSeconds = 0;
  double bestRun[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}; // Fastest run per Policy.
  Policy chosen = Policy::PerKernel;
};

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_SPLITCHOICE_H
