//===- FusionPricing.h - What a fusion group costs on a device --*- C++ -*-===//
//
// The planner places each fusion group (Transforms/Fusion.h) as one node.
// On a device where every member has a kernel fuelc emits (generated, or a
// library kernel called from generated code), the group is priced as the
// fused kernel it will be: the head's own time, plus one elementwise kernel
// that reads only the group's external operands and writes only its result
// (in place over the head's result when there is a head). Elsewhere the
// members run unfused and cost the sum of their own times.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_PLANNER_FUSIONPRICING_H
#define FUEL_LIB_PLANNER_FUSIONPRICING_H

#include "fuel/Planner/Candidates.h"
#include "fuel/Planner/Machine.h"
#include "fuel/Support/Buckets.h"

#include <span>

namespace fuel {

class FusionPricing {
public:
  /// Prices every group on every device once: placement reads the prices
  /// for each attempt and each member.
  FusionPricing(const Graph &graph, const Machine &machine,
                const SymbolPricing &pricing,
                const std::vector<NodeCandidates> &candidates,
                std::vector<NodeId> groupRoot, const std::vector<NodeId> &order);

  NodeId rootOf(NodeId node) const { return groupRoot[node]; }
  /// Members of `root`'s group in topological order, head first.
  std::span<const NodeId> members(NodeId root) const { return membersOf[root]; }
  /// Whether the group of `root` runs as one fused kernel on device `d`:
  /// all its members have kernels fuelc emits, and fused is no slower.
  bool fuses(NodeId root, unsigned d) const { return fusedOn[root * devices + d]; }
  /// The group's time on `d` (infinite where a member cannot run).
  double groupTime(NodeId root, unsigned d) const { return times[root * devices + d]; }
  /// The candidate member `node` runs with on `d`: its best one, or, in a
  /// group fused there, its best kernel that fuelc emits.
  const Candidate *candidate(NodeId node, unsigned d) const;

private:
  /// The fused kernel's time, or infinity when a member has no kernel
  /// fuelc emits on `d`.
  double fusedTime(NodeId root, unsigned d);
  double unfusedTime(NodeId root, unsigned d) const;

  const Graph &graph;
  const Machine &machine;
  const SymbolPricing &pricing;
  const std::vector<NodeCandidates> &candidates;
  std::vector<NodeId> groupRoot;
  Buckets<NodeId> membersOf; // By root.
  unsigned devices;
  /// By root * devices + device (other nodes' entries are unused).
  std::vector<bool> fusedOn;
  std::vector<double> times;
  /// Values a group reads from outside (scratch of fusedTime).
  std::vector<ValueRef> externalReads;
};

} // namespace fuel

#endif // FUEL_LIB_PLANNER_FUSIONPRICING_H
