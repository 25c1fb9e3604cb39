//===- CpuFeatures.cpp - What this CPU can execute ------------------------===//

#include "fuel/Support/CpuFeatures.h"

#include <cpuid.h>

#include <cstdlib>
#include <sstream>

using namespace fuel;

namespace {
enum Reg { EAX, EBX, ECX, EDX };
struct FeatureBit {
  const char *name;
  unsigned leaf;
  Reg reg;
  unsigned bit;
  unsigned subleaf = 0;
};
// CPUID locations (Intel SDM vol. 2A, CPUID; AMD APM vol. 3).
constexpr FeatureBit kFeatures[] = {
    {"sse3", 1, ECX, 0},        {"ssse3", 1, ECX, 9},      {"fma", 1, ECX, 12},
    {"cx16", 1, ECX, 13},       {"sse4.1", 1, ECX, 19},    {"sse4.2", 1, ECX, 20},
    {"movbe", 1, ECX, 22},      {"popcnt", 1, ECX, 23},    {"avx", 1, ECX, 28},
    {"f16c", 1, ECX, 29},       {"bmi1", 7, EBX, 3},       {"avx2", 7, EBX, 5},
    {"bmi2", 7, EBX, 8},        {"avx512f", 7, EBX, 16},   {"avx512dq", 7, EBX, 17},
    {"avx512cd", 7, EBX, 28},   {"avx512bw", 7, EBX, 30},  {"avx512vl", 7, EBX, 31},
    {"avx512vnni", 7, ECX, 11}, {"avxvnni", 7, EAX, 4, 1}, {"lzcnt", 0x80000001, ECX, 5},
};

bool hasFeature(const FeatureBit &f) {
  unsigned regs[4] = {0, 0, 0, 0}; // eax, ebx, ecx, edx
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2], &regs[3]))
    return false;
  return (regs[f.reg] >> f.bit) & 1;
}

bool hidden(const std::string &name) {
  const char *env = std::getenv("FUEL_HIDE_CPU_FEATURES");
  if (!env)
    return false;
  std::stringstream list(env);
  for (std::string item; std::getline(list, item, ',');)
    if (item == name)
      return true;
  return false;
}
} // namespace

std::vector<std::string> fuel::missingCpuFeatures(std::span<const std::string> required) {
  std::vector<std::string> missing;
  for (const std::string &name : required) {
    bool present = false;
    for (const FeatureBit &f : kFeatures)
      if (name == f.name)
        present = hasFeature(f);
    if (!present || hidden(name))
      missing.push_back(name);
  }
  return missing;
}
