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
// kernels. A round times one run of each policy: all split, all whole,
// then split where a kernel was 5% faster split. The first kTrials rounds
// come one after another (the first run splits); each later run splits as
// the fastest of the last kTrials timed runs of each policy did (a run per
// kernel keeps the splits it measured: a later round's per-kernel times
// may choose splits that run slower).
//
// The trials take milliseconds, and a VM's other core can be busy for that
// long (a loop on it for the first 80 ms of a process made a transformer
// layer choose whole runs, 2.7-3.0 ms against 1.4 split, for good). So a
// round is run again kFirstGap runs after the trials, then after gaps
// doubling up to kLastGap runs, where its two runs of the policies not
// chosen cost under 0.5% of the runs.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_SPLITCHOICE_H
#define FUEL_LIB_RUNTIME_SPLITCHOICE_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace fuel::runtime {

class SplitChoice {
public:
  static constexpr int kTrials = 3;
  static constexpr int kFirstGap = 8;
  static constexpr int kLastGap = 512;
  enum class Policy { Split, Whole, PerKernel };

  /// Starts the launch of `kernel`. Launches come in program order, so a
  /// kernel not after the last one starts a new run. Whether to time it
  /// (and call record): only the runs of a round are timed.
  bool begin(size_t kernel);
  /// Whether `kernel`, which has enough work to split, splits in this run.
  bool split(size_t kernel) const;
  /// The time of a launch begin() asked to time; `split`, for a kernel
  /// that could split, whether it did.
  void record(size_t kernel, std::optional<bool> split, double seconds);
  /// The policy of the current run.
  Policy policy() const;
  /// Whether the first rounds are over, after which runs take the chosen
  /// policy but for a round now and then. (A run is counted when the next
  /// one starts: this turns true as the run after the last trial begins.)
  bool settled() const { return run >= kTrials * kRoundRuns; }

private:
  static constexpr int kRoundRuns = 3; // One run of each Policy.
  void endRun();

  /// The fastest of the last kTrials times: a policy measured slow while
  /// the other core was busy gets measured anew, and one that was fast
  /// once is not kept after it no longer is. Each time may carry the
  /// splits it was measured with.
  class RecentFastest {
  public:
    void add(double seconds, std::vector<bool> splits = {});
    double fastest() const { return times[fastestIndex()]; }
    const std::vector<bool> &fastestSplits() const { return splits[fastestIndex()]; }

  private:
    int fastestIndex() const;
    double times[kTrials] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    std::vector<bool> splits[kTrials];
    int next = 0;
  };

  struct Kernel {
    RecentFastest times[2]; // Whole, split.
  };
  std::vector<Kernel> kernels;
  int64_t run = 0;
  int64_t roundStart = 0; // The first run of the current or next round.
  int64_t gap = kFirstGap;
  size_t last = 0;
  bool launched = false;
  double runSeconds = 0;
  std::vector<bool> runSplits;    // Of the timed run per kernel under way.
  RecentFastest runs[kRoundRuns]; // Per Policy.
  Policy chosen = Policy::PerKernel;
  std::vector<bool> chosenSplits; // When `chosen` is PerKernel.
};

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_SPLITCHOICE_H
