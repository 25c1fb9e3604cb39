//===- HostResources.cpp - The CPUs and memory this process may use -------===//

#include "HostResources.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace fuel;
using namespace fuel::runtime;

/// The first number in `path` (a cgroup file), or nullopt where the file is
/// missing or says "max".
static std::optional<uint64_t> readNumber(const char *path) {
  std::ifstream in(path);
  uint64_t value = 0;
  if (in >> value)
    return value;
  return std::nullopt;
}

static std::optional<uint64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:")
      return kib * 1024;
  }
  return std::nullopt;
}

std::optional<AvailableMemory> runtime::availableHostMemory() {
  std::optional<AvailableMemory> result;
  if (std::optional<uint64_t> bytes = memAvailable())
    result = AvailableMemory{*bytes, "MemAvailable"};
  // cgroup v2, then v1 (whose "no limit" is a huge number, not "max").
  struct CgroupFiles {
    const char *limit, *usage, *name;
  };
  for (const CgroupFiles &files :
       {CgroupFiles{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current",
                    "the cgroup's memory.max"},
        CgroupFiles{"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                    "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                    "the cgroup's memory.limit_in_bytes"}}) {
    std::optional<uint64_t> limit = readNumber(files.limit), usage = readNumber(files.usage);
    if (!limit || !usage)
      continue;
    uint64_t room = *limit > *usage ? *limit - *usage : 0;
    if (!result || room < result->bytes)
      result = AvailableMemory{room, files.name};
    break;
  }
  return result;
}

/// The cgroup's CPU quota in CPUs, where one is set: v2's cpu.max ("max" or
/// "QUOTA PERIOD"), then v1's cfs_quota_us (-1: none) over cfs_period_us.
static std::optional<double> cpuQuota() {
  std::ifstream v2("/sys/fs/cgroup/cpu.max");
  std::string quota;
  double period = 0;
  if (v2 >> quota >> period)
    return quota == "max" || period <= 0 ? std::nullopt
                                         : std::optional<double>(std::stod(quota) / period);
  std::ifstream v1Quota("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
      v1Period("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double q = -1;
  if (v1Quota >> q && v1Period >> period && q > 0 && period > 0)
    return q / period;
  return std::nullopt;
}

unsigned runtime::usableCpuCount() {
  cpu_set_t set;
  unsigned cpus = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    cpus = std::max(1, CPU_COUNT(&set));
  if (std::optional<double> quota = cpuQuota())
    cpus = std::clamp(static_cast<unsigned>(std::ceil(*quota)), 1u, cpus);
  return cpus;
}
