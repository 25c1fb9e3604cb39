//===- MemoryPlan.cpp - Per-device arenas with buffer reuse ---------------===//

#include "fuel/Planner/MemoryPlan.h"

#include "fuel/Planner/Planner.h"

#include <algorithm>
#include <map>
#include <set>

using namespace fuel;

namespace {

/// Best-fit free list over one arena, coalescing on free. Holes are indexed
/// by offset (to coalesce) and by size (to find the best fit in log time:
/// a plan of a million buffers can have thousands of holes).
class Arena {
public:
  explicit Arena(uint64_t alignment) : alignment(alignment) {}

  uint64_t allocate(uint64_t size) {
    size = std::max<uint64_t>((size + alignment - 1) / alignment * alignment,
                              alignment);
    // Best fit: the smallest hole that holds the buffer, the lowest first.
    auto best = bySize.lower_bound({size, 0});
    if (best == bySize.end()) {
      // Grow the arena, reusing a hole that ends at the top.
      uint64_t offset = top;
      if (!holes.empty()) {
        auto last = std::prev(holes.end());
        if (last->first + last->second == top) {
          offset = last->first;
          erase(last);
        }
      }
      top = offset + size;
      return offset;
    }
    auto [holeSize, offset] = *best;
    erase(holes.find(offset));
    if (holeSize > size)
      insert(offset + size, holeSize - size);
    return offset;
  }

  void release(uint64_t offset, uint64_t size) {
    size = std::max<uint64_t>((size + alignment - 1) / alignment * alignment,
                              alignment);
    auto next = holes.lower_bound(offset);
    if (next != holes.end() && offset + size == next->first) {
      size += next->second;
      next = erase(next);
    }
    if (next != holes.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        erase(prev);
      }
    }
    insert(offset, size);
  }

  uint64_t peak() const { return top; }

private:
  using Holes = std::map<uint64_t, uint64_t>; // offset -> size
  void insert(uint64_t offset, uint64_t size) {
    holes.emplace(offset, size);
    bySize.emplace(size, offset);
  }
  Holes::iterator erase(Holes::iterator hole) {
    bySize.erase({hole->second, hole->first});
    return holes.erase(hole);
  }

  uint64_t alignment;
  uint64_t top = 0;
  Holes holes;
  std::set<std::pair<uint64_t, uint64_t>> bySize; // (size, offset)
};
} // namespace

MemoryPlan fuel::planMemory(const Graph &graph, const ExecutionPlan &plan,
                            const SymbolPricing &pricing) {
  unsigned k = static_cast<unsigned>(plan.machine->devices.size());
  MemoryPlan memory;
  memory.devices.resize(k);
  for (unsigned d = 0; d < k; ++d)
    if (plan.machine->devices[d].ref.kind != DeviceKind::CPU)
      memory.devices[d].alignment = 256; // GPU buffer offset alignment.

  // Buffers: placed results on their producer's device, copies on their
  // destination. Indexed by (root value slot, device).
  std::vector<uint32_t> firstSlot(graph.numNodes() + 1, 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    firstSlot[n + 1] = firstSlot[n] + graph.numResults(n);
  std::vector<int64_t> bufferOf(size_t(firstSlot.back()) * k, -1);
  auto key = [&](ValueRef v, unsigned d) {
    return (size_t(firstSlot[v.node]) + v.result) * k + d;
  };
  auto addBuffer = [&](ValueRef v, unsigned d, uint32_t def) {
    bufferOf[key(v, d)] = static_cast<int64_t>(memory.buffers.size());
    uint64_t size = static_cast<uint64_t>(pricing.bytes(graph, v));
    memory.buffers.push_back({v, false, d, 0, size, def, def, -1});
  };
  auto use = [&](ValueRef v, unsigned d, uint32_t at) {
    int64_t b = bufferOf[key(v, d)];
    if (b >= 0)
      memory.buffers[b].lastUse = std::max(memory.buffers[b].lastUse, at);
  };

  // At most one buffer per result, copy and workspace.
  memory.buffers.reserve(firstSlot.back() + plan.copies.size() + plan.steps.size());
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      addBuffer({n, 0}, plan.deviceOf[n], 0);
  auto position = [](size_t step) { return static_cast<uint32_t>(2 * step + 1); };
  auto runCopies = [&](size_t step, uint32_t at) {
    for (const PlannedCopy &c : plan.copiesAfter(step)) {
      use(c.value, c.from, at);
      addBuffer(c.value, c.to, at);
    }
  };
  runCopies(~size_t(0), 0);
  std::vector<bool> constantOn(size_t(graph.numNodes()) * k, false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep &step = plan.steps[s];
    // A fused step runs inside its root's kernel: its operands are read
    // there.
    bool fused = !plan.rootOf.empty() && plan.rootOf[s] != s;
    uint32_t readAt = position(fused ? plan.rootOf[s] : s);
    for (ValueRef v : graph.operands(step.node)) {
      ValueRef root = bufferRoot(graph, v);
      if (graph.kind(root.node) == OpKind::Constant) {
        if (!constantOn[root.node * k + step.device]) {
          constantOn[root.node * k + step.device] = true;
          memory.devices[step.device].constantBytes +=
              static_cast<uint64_t>(pricing.bytes(graph, root));
        }
        continue;
      }
      use(root, step.device, readAt);
    }
    for (uint32_t r = 0; r < graph.numResults(step.node) && !fused; ++r)
      addBuffer({step.node, r}, step.device, position(s));
    if (step.capsule && step.capsule->workspaceBytes != 0)
      memory.buffers.push_back({{step.node, 0}, true, step.device, 0, step.capsule->workspaceBytes,
                                position(s), position(s), -1});
    runCopies(s, position(s) + 1);
  }
  // Outputs live to the end on the device they are delivered to.
  uint32_t end = position(plan.steps.size());
  for (ValueRef out : graph.outputs())
    use(bufferRoot(graph, out), plan.outputDevice, end);
  // An in-place concat's operands are slices of its result, laid out along
  // its axis (every dim before it is 1); the result lives from its first
  // slice's writing to the last read of it or of any slice.
  for (const PlannedStep &step : plan.steps) {
    if (!step.inPlace)
      continue;
    PlannedBuffer &whole = memory.buffers[bufferOf[key({step.node, 0}, step.device)]];
    uint64_t at = 0;
    for (ValueRef v : graph.operands(step.node)) {
      int64_t b = bufferOf[key(v, step.device)];
      PlannedBuffer &slice = memory.buffers[b];
      slice.sliceOf = bufferOf[key({step.node, 0}, step.device)];
      slice.offset = at;
      at += slice.size;
      whole.firstUse = std::min(whole.firstUse, slice.firstUse);
      whole.lastUse = std::max(whole.lastUse, slice.lastUse);
    }
  }

  // Simulate allocation per device in plan order: buffers whose last use is
  // before a position are freed before that position allocates.
  for (unsigned d = 0; d < k; ++d) {
    std::vector<size_t> order;
    for (size_t b = 0; b < memory.buffers.size(); ++b)
      if (memory.buffers[b].device == d && memory.buffers[b].sliceOf < 0) {
        order.push_back(b);
        memory.devices[d].naiveBytes += memory.buffers[b].size;
      }
    std::vector<size_t> byEnd = order;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return memory.buffers[a].firstUse < memory.buffers[b].firstUse;
    });
    std::stable_sort(byEnd.begin(), byEnd.end(), [&](size_t a, size_t b) {
      return memory.buffers[a].lastUse < memory.buffers[b].lastUse;
    });
    Arena arena(memory.devices[d].alignment);
    size_t nextFree = 0;
    for (size_t b : order) {
      PlannedBuffer &buffer = memory.buffers[b];
      while (nextFree < byEnd.size() &&
             memory.buffers[byEnd[nextFree]].lastUse < buffer.firstUse) {
        const PlannedBuffer &done = memory.buffers[byEnd[nextFree++]];
        arena.release(done.offset, done.size);
      }
      buffer.offset = arena.allocate(buffer.size);
    }
    memory.devices[d].arenaBytes = arena.peak();
  }
  for (PlannedBuffer &slice : memory.buffers)
    if (slice.sliceOf >= 0)
      slice.offset += memory.buffers[slice.sliceOf].offset;
  return memory;
}
