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

TEST_CASE("the trial runs alternate all split and all whole, then split per kernel",
          "[runtime]") {
  SplitChoice choice;
  auto seconds = [](size_t k, bool split) { return k == 0 && split ? 1.0 : 2.0; };
  for (int i = 0; i < 2 * SplitChoice::kTrials; ++i) {
    std::vector<bool> split = run(choice, 2, seconds);
    CHECK(split == std::vector<bool>(2, i % 2 == 0));
  }
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
