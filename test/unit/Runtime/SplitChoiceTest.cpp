//===- SplitChoiceTest.cpp - Runs, not only kernels, choose the split -----===//

#include "../../../lib/Runtime/SplitChoice.h"

#include <catch2/catch.hpp>

#include <functional>

using namespace fuel::runtime;
using Policy = SplitChoice::Policy;

namespace {
/// One run of `kernels` splittable kernels (the launch loop of CpuBackend):
/// the time of kernel k is seconds(k, split). Returns what each did.
std::vector<bool> run(SplitChoice &choice, size_t kernels,
                      const std::function<double(size_t, bool)> &seconds) {
  std::vector<bool> split;
  for (size_t k = 0; k < kernels; ++k) {
    bool timed = choice.begin(k);
    split.push_back(choice.split(k));
    if (timed)
      choice.record(k, split.back(), seconds(k, split.back()));
  }
  return split;
}

/// Runs until the policy is chosen (and one more, which starts it).
void decide(SplitChoice &choice, size_t kernels,
            const std::function<double(size_t, bool)> &seconds) {
  for (int i = 0; i < 3 * SplitChoice::kTrials; ++i)
    run(choice, kernels, seconds);
}
} // namespace

TEST_CASE("a round times all split, all whole, then split per kernel", "[runtime]") {
  SplitChoice choice;
  auto seconds = [](size_t k, bool split) { return k == 0 && split ? 1.0 : 2.0; };
  CHECK(run(choice, 2, seconds) == std::vector<bool>{true, true});
  CHECK(choice.policy() == Policy::Split);
  CHECK(run(choice, 2, seconds) == std::vector<bool>{false, false});
  CHECK(choice.policy() == Policy::Whole);
  // Kernel 0 was faster split (1 s against 2), kernel 1 was not.
  CHECK(run(choice, 2, seconds) == std::vector<bool>{true, false});
  CHECK(choice.policy() == Policy::PerKernel);
}

TEST_CASE("the policy of the fastest run is kept", "[runtime]") {
  SECTION("each kernel's own choice, when its run was fastest") {
    SplitChoice choice;
    // Kernel 0 is faster split, kernel 1 whole, independently.
    auto seconds = [](size_t k, bool split) { return (k == 0) == split ? 1.0 : 3.0; };
    decide(choice, 2, seconds);
    CHECK(run(choice, 2, seconds) == std::vector<bool>{true, false});
    CHECK(choice.policy() == Policy::PerKernel);
  }
  SECTION("all split, when a kernel whole after a split one is slow") {
    SplitChoice choice;
    // Kernel 1 alone is faster whole (1.0 against 1.2), but after a split
    // kernel 0 it reads the other core's data: 4 s whole.
    bool firstSplit = false;
    auto seconds = [&](size_t k, bool split) {
      if (k == 0) {
        firstSplit = split;
        return split ? 1.0 : 2.0;
      }
      return split ? 1.2 : firstSplit ? 4.0 : 1.0;
    };
    decide(choice, 2, seconds);
    CHECK(run(choice, 2, seconds) == std::vector<bool>{true, true});
    CHECK(choice.policy() == Policy::Split);
  }
  SECTION("all whole, when splitting is slower everywhere") {
    SplitChoice choice;
    auto seconds = [](size_t, bool split) { return split ? 2.0 : 1.0; };
    decide(choice, 3, seconds);
    CHECK(run(choice, 3, seconds) == std::vector<bool>(3, false));
    CHECK(choice.policy() == Policy::Whole);
  }
}

TEST_CASE("the choice settles as the run after the last trial starts", "[runtime]") {
  SplitChoice choice;
  auto seconds = [](size_t k, bool split) { return k == 0 && split ? 1.0 : 2.0; };
  for (int i = 0; i < 3 * SplitChoice::kTrials; ++i) {
    CHECK_FALSE(choice.settled());
    run(choice, 2, seconds);
  }
  // The last trial is counted when the next run starts, which takes the
  // chosen policy.
  CHECK_FALSE(choice.settled());
  run(choice, 2, seconds);
  CHECK(choice.settled());
}

TEST_CASE("a one-kernel program counts each launch as a run", "[runtime]") {
  SplitChoice choice;
  auto seconds = [](size_t, bool split) { return split ? 1.0 : 2.0; };
  decide(choice, 1, seconds);
  CHECK(run(choice, 1, seconds) == std::vector<bool>{true});
  // Chosen: no launch is timed any more.
  CHECK_FALSE(choice.begin(0));
}

namespace {
/// Runs `count` runs of one splittable kernel taking `seconds(run, split)`,
/// counting runs in `runIndex`; returns whether each split.
std::vector<bool> runOneKernel(SplitChoice &choice, int count, int &runIndex,
                               const std::function<double(int, bool)> &seconds) {
  std::vector<bool> split;
  for (int i = 0; i < count; ++i, ++runIndex)
    split.push_back(run(choice, 1, [&](size_t, bool s) { return seconds(runIndex, s); })[0]);
  return split;
}
} // namespace

TEST_CASE("a later round measures the policies anew", "[runtime]") {
  constexpr int kRounds = 3 * SplitChoice::kTrials;
  SplitChoice choice;
  int count = 0;
  SECTION("a choice made while splitting was slow is undone") {
    // The other core was busy during the first rounds: split took 3 s
    // against 2 whole, then 1.
    auto seconds = [](int run, bool split) { return !split ? 2.0 : run < kRounds ? 3.0 : 1.0; };
    runOneKernel(choice, kRounds, count, seconds);
    CHECK(runOneKernel(choice, SplitChoice::kFirstGap, count, seconds) ==
          std::vector<bool>(SplitChoice::kFirstGap, false));
    CHECK(choice.policy() == Policy::Whole);
    // The round: split, whole, per kernel (split: 1 s is the fastest).
    CHECK(runOneKernel(choice, 3, count, seconds) == std::vector<bool>{true, false, true});
    CHECK(runOneKernel(choice, 2 * SplitChoice::kFirstGap, count, seconds) ==
          std::vector<bool>(2 * SplitChoice::kFirstGap, true));
    CHECK(choice.policy() == Policy::Split);
    CHECK(choice.settled());
  }
  SECTION("a policy that became slower is dropped once its fast runs are old") {
    // Splitting took 1 s, then 3 (the other core taken), against 2 whole.
    auto seconds = [](int run, bool split) { return !split ? 2.0 : run < kRounds ? 1.0 : 3.0; };
    runOneKernel(choice, kRounds, count, seconds);
    // Each later round adds one slow time per policy: after kTrials of
    // them, the fastest of splitting's last kTrials is slow.
    int gap = SplitChoice::kFirstGap;
    for (int round = 0; round <= SplitChoice::kTrials; ++round, gap *= 2) {
      CHECK(runOneKernel(choice, gap, count, seconds) ==
            std::vector<bool>(gap, round < SplitChoice::kTrials));
      runOneKernel(choice, 3, count, seconds);
    }
  }
}

TEST_CASE("a run per kernel keeps the splits of its fastest run", "[runtime]") {
  constexpr int kRounds = 3 * SplitChoice::kTrials;
  SplitChoice choice;
  int runIndex = 0;
  // Kernel 0 is faster split. Kernel 1 is faster whole (1 s against 2)
  // after a split kernel 0; from run kRounds on, whole after a whole
  // kernel 0 it takes 3 s, which makes the per-kernel times choose to
  // split it, slower in the runs per kernel (3 s against 2).
  bool firstSplit = false;
  auto seconds = [&](size_t k, bool split) {
    if (k == 0) {
      firstSplit = split;
      return split ? 1.0 : 2.0;
    }
    if (split)
      return 2.0;
    return firstSplit || runIndex < kRounds ? 1.0 : 3.0;
  };
  auto runs = [&](int count) {
    std::vector<std::vector<bool>> splits;
    for (int i = 0; i < count; ++i, ++runIndex)
      splits.push_back(run(choice, 2, seconds));
    return splits;
  };
  runs(kRounds);
  const std::vector<bool> perKernel = {true, false};
  int gap = SplitChoice::kFirstGap;
  for (int round = 0; round < SplitChoice::kTrials; ++round, gap *= 2) {
    CHECK(runs(gap) == std::vector<std::vector<bool>>(gap, perKernel));
    CHECK(choice.policy() == Policy::PerKernel);
    std::vector<std::vector<bool>> tried = runs(3);
    bool flushed = round == SplitChoice::kTrials - 1; // Kernel 1's fast whole times.
    CHECK(tried.back() == (flushed ? std::vector<bool>{true, true} : perKernel));
  }
  // The third round's run per kernel split both (3 s), but the two before
  // it kept kernel 1 whole (2 s).
  CHECK(runs(gap) == std::vector<std::vector<bool>>(gap, perKernel));
}

TEST_CASE("the rounds after the first come after gaps doubling to the last", "[runtime]") {
  SplitChoice choice;
  auto seconds = [](size_t, bool split) { return split ? 1.0 : 2.0; };
  std::vector<int> timed;
  for (int i = 0; i < 6000; ++i) {
    if (choice.begin(0))
      timed.push_back(i);
    choice.record(0, choice.split(0), seconds(0, choice.split(0)));
  }
  // Three rounds, then one after each gap: 8, 16, ..., 512, 512, ...
  std::vector<int> starts;
  for (size_t i = 0; i < timed.size(); i += 3) {
    REQUIRE(i + 2 < timed.size());
    CHECK(timed[i + 2] == timed[i] + 2);
    starts.push_back(timed[i]);
  }
  REQUIRE(starts.size() > 12);
  for (size_t r = 1; r < 3; ++r)
    CHECK(starts[r] == starts[r - 1] + 3);
  for (size_t r = 3; r < starts.size(); ++r)
    CHECK(starts[r] - starts[r - 1] - 3 ==
          std::min(SplitChoice::kFirstGap << (r - 3), SplitChoice::kLastGap));
}
