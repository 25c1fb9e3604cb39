//===- CpuLevels.cpp - x86-64 targets: levels and extensions --------------===//
//
// The levels of the x86-64 psABI, each including the previous one, and the
// extensions beyond them that fuelc's library kernels use.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Machine.h"
#include "fuel/Support/CpuFeatures.h"

#include <algorithm>
#include <map>
#include <mutex>

using namespace fuel;

/// The features of `level`, or nullopt when it is not an x86-64 level.
static std::optional<std::span<const std::string_view>> levelFeatures(std::string_view level) {
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

namespace {
struct Extension {
  std::string_view name;
  std::string_view level; // The lowest level it extends (its encoding's).
};
} // namespace

// The 8-bit dot products of the int8 GEMM (kernels/x86/igemm.cpp).
static constexpr Extension kExtensions[] = {{"avxvnni", "x86-64-v3"}, {"avx512vnni", "x86-64-v4"}};

static const Extension *findExtension(std::string_view name) {
  for (const Extension &e : kExtensions)
    if (e.name == name)
      return &e;
  return nullptr;
}

/// Whether `level` includes `base` (both x86-64 levels).
static bool includesLevel(std::string_view level, std::string_view base) {
  return levelFeatures(base)->size() <= levelFeatures(level)->size();
}

std::optional<X86TargetName> fuel::parseX86Target(std::string_view target) {
  size_t plus = target.find('+');
  X86TargetName name{std::string(target.substr(0, plus)), {}};
  if (!levelFeatures(name.level))
    return std::nullopt;
  while (plus != std::string_view::npos) {
    size_t next = target.find('+', plus + 1);
    std::string_view extension = target.substr(plus + 1, next - plus - 1);
    const Extension *known = findExtension(extension);
    if (!known || !includesLevel(name.level, known->level) ||
        std::find(name.extensions.begin(), name.extensions.end(), extension) !=
            name.extensions.end())
      return std::nullopt;
    name.extensions.emplace_back(extension);
    plus = next;
  }
  return name;
}

const std::vector<std::string> *fuel::x86TargetFeatures(std::string_view target) {
  // Only valid targets are kept, and there are few of them: the cache
  // stays small whatever targets a machine file names.
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>, std::less<>> parsed;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = parsed.find(target); it != parsed.end())
    return &it->second;
  std::optional<X86TargetName> name = parseX86Target(target);
  if (!name)
    return nullptr;
  std::span<const std::string_view> level = *levelFeatures(name->level);
  std::vector<std::string> features(level.begin(), level.end());
  features.insert(features.end(), name->extensions.begin(), name->extensions.end());
  return &parsed.emplace(std::string(target), std::move(features)).first->second;
}

std::string fuel::hostX86Target() {
  std::string_view level = "x86-64";
  for (std::string_view candidate : {"x86-64-v4", "x86-64-v3", "x86-64-v2"}) {
    std::span<const std::string_view> features = *levelFeatures(candidate);
    std::vector<std::string> required(features.begin(), features.end());
    if (missingCpuFeatures(required).empty()) {
      level = candidate;
      break;
    }
  }
  std::string target(level);
  for (const Extension &e : kExtensions) {
    std::string required[] = {std::string(e.name)};
    if (includesLevel(level, e.level) && missingCpuFeatures(required).empty())
      target += "+" + std::string(e.name);
  }
  return target;
}
