//===- CpuFeatures.h - What this CPU can execute ----------------*- C++ -*-===//
#ifndef FUEL_SUPPORT_CPUFEATURES_H
#define FUEL_SUPPORT_CPUFEATURES_H

#include <span>
#include <string>
#include <vector>

namespace fuel {

/// The features in `required` (LLVM spelling, e.g. `avx512f`) the CPU this
/// process runs on lacks, read with CPUID (the runtime checks a plan's
/// kernels against it; the `host` machine preset takes its level from it).
/// FUEL_HIDE_CPU_FEATURES (comma-separated) treats the listed features as
/// absent, to test refusals and levels on a capable machine.
std::vector<std::string> missingCpuFeatures(std::span<const std::string> required);

} // namespace fuel

#endif // FUEL_SUPPORT_CPUFEATURES_H
