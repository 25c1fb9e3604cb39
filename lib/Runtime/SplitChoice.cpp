//===- SplitChoice.cpp - Whether CPU kernels split over threads -----------===//

#include "SplitChoice.h"

#include <algorithm>

using namespace fuel::runtime;

bool SplitChoice::begin(size_t kernel) {
  if (kernel >= kernels.size())
    kernels.resize(kernel + 1);
  if (launched && kernel <= last)
    endRun();
  launched = true;
  last = kernel;
  return run < kPolicyTrials;
}

SplitChoice::Policy SplitChoice::policy() const {
  if (run < 2 * kTrials)
    return run % 2 == 0 ? Policy::Split : Policy::Whole;
  return run < kPolicyTrials ? Policy::PerKernel : chosen;
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
  const Kernel &k = kernels[kernel];
  return k.best[1] < 0.95 * k.best[0];
}

void SplitChoice::record(size_t kernel, std::optional<bool> split, double seconds) {
  runSeconds += seconds;
  if (split && run < 2 * kTrials) {
    Kernel &k = kernels[kernel];
    k.best[*split] = std::min(k.best[*split], seconds);
  }
}

void SplitChoice::endRun() {
  if (run >= kPolicyTrials)
    return;
  double &best = bestRun[static_cast<int>(policy())];
  best = std::min(best, runSeconds);
  runSeconds = 0;
  if (++run == kPolicyTrials)
    chosen = static_cast<Policy>(std::min_element(bestRun, bestRun + 3) - bestRun);
}
