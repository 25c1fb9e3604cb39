//===- CpuLevels.cpp - x86-64 micro-architecture levels -------------------===//
//
// The levels of the x86-64 psABI; each includes the previous one.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Machine.h"
#include "fuel/Support/CpuFeatures.h"

using namespace fuel;

std::optional<std::span<const std::string_view>>
fuel::x86LevelFeatures(std::string_view level) {
  // Each level adds its features to the previous level's: a level's
  // features are a prefix of this table.
  static constexpr std::string_view kFeatures[] = {
      "cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3",                // v2
      "avx",  "avx2",   "bmi1", "bmi2",   "f16c",   "fma", "lzcnt", "movbe", // v3
      "avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"};             // v4
  size_t count = level == "x86-64"      ? 0
                 : level == "x86-64-v2" ? 6
                 : level == "x86-64-v3" ? 14
                 : level == "x86-64-v4" ? std::size(kFeatures)
                                        : ~size_t(0);
  if (count == ~size_t(0))
    return std::nullopt;
  return std::span<const std::string_view>(kFeatures, count);
}

std::string_view fuel::hostX86Level() {
  for (std::string_view level : {"x86-64-v4", "x86-64-v3", "x86-64-v2"}) {
    std::span<const std::string_view> features = *x86LevelFeatures(level);
    std::vector<std::string> required(features.begin(), features.end());
    if (missingCpuFeatures(required).empty())
      return level;
  }
  return "x86-64";
}
