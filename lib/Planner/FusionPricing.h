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

namespace fuel {

class FusionPricing {
public:
  FusionPricing(const Graph &graph, const Machine &machine,
                const SymbolPricing &pricing,
                const std::vector<NodeCandidates> &candidates,
                std::vector<NodeId> groupRoot, const std::vector<NodeId> &order);

  NodeId rootOf(NodeId node) const { return groupRoot[node]; }
  /// Members of `root`'s group in topological order (the root last).
  const std::vector<NodeId> &members(NodeId root) const { return groups[root]; }
  /// Whether the group of `root` runs as one fused kernel on device `d`:
  /// all its members have kernels fuelc emits, and fused is no slower.
  bool fuses(NodeId root, unsigned d) const;
  /// The group's time on `d` (infinite where a member cannot run).
  double groupTime(NodeId root, unsigned d) const;
  /// The candidate member `node` runs with on `d`: its best one, or, in a
  /// group fused there, its best kernel that fuelc emits.
  const Candidate *candidate(NodeId node, unsigned d) const;

private:
  double fusedTime(NodeId root, unsigned d) const;
  double unfusedTime(NodeId root, unsigned d) const;

  const Graph &graph;
  const Machine &machine;
  const SymbolPricing &pricing;
  const std::vector<NodeCandidates> &candidates;
  std::vector<NodeId> groupRoot;
  std::vector<std::vector<NodeId>> groups; // By root.
};

} // namespace fuel

#endif // FUEL_LIB_PLANNER_FUSIONPRICING_H
