//===- CpuLevels.cpp - x86-64 micro-architecture levels -------------------===//
//
// The levels of the x86-64 psABI; each includes the previous one.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Machine.h"

using namespace fuel;

std::optional<std::vector<std::string>>
fuel::x86LevelFeatures(std::string_view level) {
  static const char *const v2[] = {"cx16", "popcnt", "sse3", "sse4.1",
                                   "sse4.2", "ssse3"};
  static const char *const v3[] = {"avx",  "avx2",  "bmi1",  "bmi2",
                                   "f16c", "fma",   "lzcnt", "movbe"};
  static const char *const v4[] = {"avx512bw", "avx512cd", "avx512dq",
                                   "avx512f", "avx512vl"};
  int n = level == "x86-64"      ? 1
          : level == "x86-64-v2" ? 2
          : level == "x86-64-v3" ? 3
          : level == "x86-64-v4" ? 4
                                 : 0;
  if (!n)
    return std::nullopt;
  std::vector<std::string> features;
  if (n >= 2)
    features.insert(features.end(), std::begin(v2), std::end(v2));
  if (n >= 3)
    features.insert(features.end(), std::begin(v3), std::end(v3));
  if (n >= 4)
    features.insert(features.end(), std::begin(v4), std::end(v4));
  return features;
}
