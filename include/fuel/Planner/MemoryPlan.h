//===- MemoryPlan.h - Per-device arenas with buffer reuse -------*- C++ -*-===//
//
// Every buffer of a plan (kernel results, graph inputs, copy destinations,
// kernels' scratch workspaces) gets an offset in one arena per device; the
// operands of an in-place concat get slices of its result's. Buffers whose lifetimes (in plan
// order) do not overlap share memory: allocation is simulated in plan order
// with a best-fit free list that coalesces neighbours. Constants are not in
// the arenas: they are loaded once per device that reads them and counted
// separately. Sizes use the priced extents of symbolic dims, which the
// runtime treats as upper bounds.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_MEMORYPLAN_H
#define FUEL_PLANNER_MEMORYPLAN_H

#include "fuel/IR/Graph.h"

#include <cstdint>
#include <vector>

namespace fuel {

struct ExecutionPlan;
class SymbolPricing;

struct PlannedBuffer {
  /// The value held, or for a kernel's scratch memory, the node's result 0.
  ValueRef value;
  bool workspace = false;
  unsigned device;
  uint64_t offset;
  uint64_t size;
  /// Lifetime in plan positions: 0 is "before the first step", step s is at
  /// 2s + 1 and the copies after it at 2s + 2.
  uint32_t firstUse, lastUse;
  /// The buffer this one is a slice of (an operand of an in-place concat
  /// inside its result), or -1. A slice gets no memory of its own: its
  /// offset lies inside the other's range, which lives as long as both.
  int64_t sliceOf = -1;
};

struct DeviceMemory {
  uint64_t alignment = 64;
  uint64_t arenaBytes = 0;    // Peak offset + size over all buffers.
  uint64_t constantBytes = 0; // Weights resident on the device.
  uint64_t naiveBytes = 0;    // Sum of all buffer sizes (no reuse).
};

struct MemoryPlan {
  std::vector<DeviceMemory> devices;
  std::vector<PlannedBuffer> buffers;
};

/// Builds the memory plan of `plan` (whose steps, copies and deviceOf are
/// final).
MemoryPlan planMemory(const Graph &graph, const ExecutionPlan &plan,
                      const SymbolPricing &pricing);

} // namespace fuel

#endif // FUEL_PLANNER_MEMORYPLAN_H
