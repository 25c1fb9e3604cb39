//===- Placement.h - Device placement as a labeling problem -----*- C++ -*-===//
//
// The placement problem independent of ops and kernels: nodes with a cost per
// device (infinite where no admissible kernel exists or a pin forbids it) and
// values that flow from a producer to its consumers. Placing a value's
// producer on device a and some of its consumers on b != a costs one transfer
// a -> b, however many consumers sit on b. The objective is the sum of node
// and transfer costs. Solvers (docs/planner.md):
//   - Exact:     one device trivially; two devices by Stone's minimum cut with
//                Lawler's hyperedge gadget for fan-out (exact on any DAG);
//                devices linked in a line (accelerators that reach each other
//                through the host) by Ishikawa's layered minimum cut, where a
//                transfer pays once for every link it crosses.
//   - Expansion: other machines with three or more devices: alpha-expansion
//                moves (each a minimum cut) from the best baseline, then
//                single-node moves.
//   - Greedy / ChainDp: the seeds' baselines, kept for comparison.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_PLACEMENT_H
#define FUEL_PLANNER_PLACEMENT_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace fuel {

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

class PlacementProblem {
public:
  /// `latency` and `inverseBandwidth` are numDevices x numDevices row-major
  /// (from, to); the transfer of b bytes costs latency + b * inverseBandwidth.
  /// They are closed under shortest paths here (a staged route through the
  /// host is used where it is cheaper than a direct link, and pairs with no
  /// link at all become unreachable only if no route exists).
  PlacementProblem(unsigned numDevices, std::vector<double> latency,
                   std::vector<double> inverseBandwidth);

  /// Adds a node with one cost per device; returns its index.
  uint32_t addNode(const std::vector<double> &costs);
  /// Adds a value produced by `producer`, of `bytes` bytes, read by
  /// `consumers` (duplicates allowed; each destination device pays once).
  void addValue(uint32_t producer, double bytes, std::span<const uint32_t> consumers);

  unsigned numDevices() const { return devices; }
  uint32_t numNodes() const {
    return static_cast<uint32_t>(nodeCosts.size() / devices);
  }
  double nodeCost(uint32_t node, unsigned device) const {
    return nodeCosts[node * devices + device];
  }
  double transferCost(uint32_t value, unsigned from, unsigned to) const;

  /// True when the links form a path through all devices (three or more):
  /// a value then travels hop by hop and pays each link once, however many
  /// destinations lie beyond it.
  bool isLine() const { return !lineOrder.empty(); }
  /// Devices in path order (empty unless isLine()).
  const std::vector<unsigned> &linePath() const { return lineOrder; }

  struct Hop {
    unsigned from, to;
    double cost;
  };
  /// Calls `fn(Hop)` for each transfer that brings `value`, produced on
  /// `from`, to every device in the bitmask `destinations`, in an order that
  /// respects staging.
  template <typename Fn>
  void forEachHop(uint32_t value, unsigned from, uint64_t destinations, Fn &&fn) const;
  /// The sum of the hops' costs.
  double hopsCost(uint32_t value, unsigned from, uint64_t destinations) const {
    double total = 0;
    forEachHop(value, from, destinations, [&](const Hop &hop) { total += hop.cost; });
    return total;
  }

  struct Value {
    uint32_t producer;
    double bytes;
    /// consumers(v) is consumerList[firstConsumer, + numConsumers).
    uint32_t firstConsumer, numConsumers;
  };
  const std::vector<Value> &values() const { return valueList; }
  /// The distinct nodes that read `value`, ascending.
  std::span<const uint32_t> consumers(uint32_t value) const {
    return {consumerList.data() + valueList[value].firstConsumer,
            valueList[value].numConsumers};
  }
  /// Values each node consumes (indices into values()), built on each call:
  /// for the placers that walk nodes rather than values.
  std::vector<std::vector<uint32_t>> inputsByNode() const;

  /// Node costs plus, per value, one transfer per distinct consumer device.
  double evaluate(const std::vector<uint16_t> &labels) const;

private:
  double linkCost(uint32_t value, unsigned from, unsigned to) const;
  void detectLine();

  unsigned devices;
  std::vector<double> latency, inverseBandwidth;
  std::vector<unsigned> lineOrder, linePosition;
  std::vector<double> nodeCosts;
  std::vector<Value> valueList;
  std::vector<uint32_t> consumerList;
};

template <typename Fn>
void PlacementProblem::forEachHop(uint32_t value, unsigned from, uint64_t destinations,
                                  Fn &&fn) const {
  destinations &= ~(uint64_t(1) << from);
  if (!isLine()) {
    for (unsigned d = 0; d < devices; ++d)
      if (destinations & (uint64_t(1) << d))
        fn(Hop{from, d, transferCost(value, from, d)});
    return;
  }
  // Walk outwards from the producer to the farthest destination each way.
  unsigned p = linePosition[from], lo = p, hi = p;
  for (unsigned d = 0; d < devices; ++d)
    if (destinations & (uint64_t(1) << d)) {
      lo = std::min(lo, linePosition[d]);
      hi = std::max(hi, linePosition[d]);
    }
  for (unsigned i = p; i < hi; ++i)
    fn(Hop{lineOrder[i], lineOrder[i + 1], linkCost(value, lineOrder[i], lineOrder[i + 1])});
  for (unsigned i = p; i > lo; --i)
    fn(Hop{lineOrder[i], lineOrder[i - 1], linkCost(value, lineOrder[i], lineOrder[i - 1])});
}

enum class PlacerKind { Optimal, Greedy, ChainDp };

std::string_view placerName(PlacerKind kind);

struct PlacementResult {
  std::vector<uint16_t> labels;
  double cost = kInfiniteCost;
  /// True when `cost` is proven minimal (one or two devices, or a line).
  bool exact = false;
  /// A lower bound on the optimum (equal to `cost` when exact).
  double lowerBound = 0;
  /// Minimum cuts solved (for statistics).
  unsigned maxFlowRuns = 0;
  bool feasible() const { return cost < kInfiniteCost; }
};

/// `order` must be a topological order of the nodes (producers first).
PlacementResult solvePlacement(const PlacementProblem &problem,
                               const std::vector<uint32_t> &order,
                               PlacerKind kind);

/// Exhaustive search, for tests: tries every labeling (numDevices^numNodes).
PlacementResult solvePlacementBruteForce(const PlacementProblem &problem);

} // namespace fuel

#endif // FUEL_PLANNER_PLACEMENT_H
