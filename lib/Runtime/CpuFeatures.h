//===- CpuFeatures.h - What this CPU can execute ----------------*- C++ -*-===//
#ifndef FUEL_LIB_RUNTIME_CPUFEATURES_H
#define FUEL_LIB_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace fuel::runtime {

/// The features in `required` (LLVM spelling, e.g. `avx512f`) this CPU
/// lacks. FUEL_HIDE_CPU_FEATURES (comma-separated) makes the runtime treat
/// the listed features as absent, to test refusals on a capable machine.
std::vector<std::string> missingCpuFeatures(const std::vector<std::string> &required);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_CPUFEATURES_H
