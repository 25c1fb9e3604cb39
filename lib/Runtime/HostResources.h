//===- HostResources.h - The CPUs and memory this process may use -*- C++ -*-===//
//
// What the host lets this process have, as opposed to what the machine
// has: a container or a CI runner limits both.
// - An arena is pre-touched at load, so one larger than the memory left
//   would be met by the OOM killer halfway through, not by a failed
//   allocation (Linux overcommits): the loader compares it with this first.
// - The default thread count is the CPUs the process may run on (its
//   affinity mask, its cgroup's CPU quota), not the machine's cores: more
//   threads than that only wait for each other.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_HOSTRESOURCES_H
#define FUEL_LIB_RUNTIME_HOSTRESOURCES_H

#include <cstdint>
#include <optional>
#include <string>

namespace fuel::runtime {

struct AvailableMemory {
  uint64_t bytes = 0;
  /// Where the figure comes from, for diagnostics ("MemAvailable",
  /// "the cgroup's memory.max").
  std::string source;
};

/// The memory this process may still touch: the kernel's MemAvailable,
/// lowered to the room left under the cgroup's limit where one is set;
/// nullopt where neither can be read.
std::optional<AvailableMemory> availableHostMemory();

/// The CPUs this process may use at once: its affinity mask, lowered to its
/// cgroup's CPU quota (rounded up) where one is set; at least 1.
unsigned usableCpuCount();

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_HOSTRESOURCES_H
