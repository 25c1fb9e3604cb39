//===- SplitChoice.cpp - Whether CPU kernels split over threads -----------===//

#include "SplitChoice.h"

#include <algorithm>

using namespace fuel::runtime;

void SplitChoice::RecentFastest::add(double seconds, std::vector<bool> measured) {
  times[next] = seconds;
  splits[next] = std::move(measured);
  next = (next + 1) % kTrials;
}

int SplitChoice::RecentFastest::fastestIndex() const {
  return std::min_element(times, times + kTrials) - times;
}

bool SplitChoice::begin(size_t kernel) {
  if (kernel >= kernels.size())
    kernels.resize(kernel + 1);
  if (launched && kernel <= last)
    endRun();
  launched = true;
  last = kernel;
  return run >= roundStart;
}

SplitChoice::Policy SplitChoice::policy() const {
  if (run < roundStart)
    return chosen;
  return static_cast<Policy>((run - roundStart) % kRoundRuns);
}

bool SplitChoice::split(size_t kernel) const {
  switch (policy()) {
  case Policy::Split:
    return true;
  case Policy::Whole:
    return false;
  case Policy::PerKernel:
    break;
  }
  if (run < roundStart)
    return kernel < chosenSplits.size() && chosenSplits[kernel];
  const Kernel &k = kernels[kernel];
  return k.times[1].fastest() < 0.95 * k.times[0].fastest();
}

void SplitChoice::record(size_t kernel, std::optional<bool> split, double seconds) {
  runSeconds += seconds;
  if (!split)
    return;
  if (policy() != Policy::PerKernel) {
    kernels[kernel].times[*split].add(seconds);
    return;
  }
  if (kernel >= runSplits.size())
    runSplits.resize(kernel + 1);
  runSplits[kernel] = *split;
}

void SplitChoice::endRun() {
  if (run < roundStart) {
    ++run;
    return;
  }
  runs[static_cast<int>(policy())].add(runSeconds, std::move(runSplits));
  runSeconds = 0;
  runSplits.clear();
  ++run;
  // The first rounds come one after another; a later one is alone.
  if (run < kTrials * kRoundRuns || (run - roundStart) % kRoundRuns != 0)
    return;
  double fastest[kRoundRuns];
  for (int p = 0; p < kRoundRuns; ++p)
    fastest[p] = runs[p].fastest();
  chosen = static_cast<Policy>(std::min_element(fastest, fastest + kRoundRuns) - fastest);
  chosenSplits = runs[static_cast<int>(Policy::PerKernel)].fastestSplits();
  roundStart = run + gap;
  gap = std::min<int64_t>(2 * gap, kLastGap);
}
