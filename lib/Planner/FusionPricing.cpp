//===- FusionPricing.cpp - What a fusion group costs on a device ----------===//

#include "FusionPricing.h"

#include "fuel/Planner/CostModel.h"
#include "fuel/Transforms/Fusion.h"

#include <set>

using namespace fuel;

/// Kernels fuelc emits code for, so it can fuse them.
static bool emitted(const Capsule &c) {
  return c.provider == "fuelc-codegen" || !c.symbol.empty();
}

static const Candidate *bestEmitted(const NodeCandidates &nc, unsigned d) {
  for (const Candidate &c : nc.frontier) // Best first within a device.
    if (c.device == d && emitted(*c.capsule))
      return &c;
  return nullptr;
}

FusionPricing::FusionPricing(const Graph &graph, const Machine &machine,
                             const SymbolPricing &pricing,
                             const std::vector<NodeCandidates> &candidates,
                             std::vector<NodeId> groupRoot,
                             const std::vector<NodeId> &order)
    : graph(graph), machine(machine), pricing(pricing), candidates(candidates),
      groupRoot(std::move(groupRoot)), groups(graph.numNodes()) {
  for (NodeId n : order)
    groups[this->groupRoot[n]].push_back(n);
  for (std::vector<NodeId> &group : groups)
    moveHeadFirst(graph, group);
}

bool FusionPricing::fuses(NodeId root, unsigned d) const {
  const std::vector<NodeId> &group = groups[root];
  if (group.size() < 2)
    return false;
  for (NodeId n : group)
    if (!bestEmitted(candidates[n], d))
      return false;
  // Fused, every member runs a kernel fuelc emits: a faster library kernel
  // that cannot take the group's epilogue may make it the slower choice.
  return fusedTime(root, d) <= unfusedTime(root, d);
}

double FusionPricing::unfusedTime(NodeId root, unsigned d) const {
  double sum = 0;
  for (NodeId n : groups[root])
    sum += candidates[n].bestTime(d);
  return sum;
}

const Candidate *FusionPricing::candidate(NodeId node, unsigned d) const {
  return fuses(groupRoot[node], d) ? bestEmitted(candidates[node], d)
                                   : candidates[node].best(d);
}

double FusionPricing::fusedTime(NodeId root, unsigned d) const {
  const std::vector<NodeId> &group = groups[root];
  NodeId head = group.front();
  bool hasHead = !isElementwiseOp(graph.kind(head));
  std::set<NodeId> inside(group.begin(), group.end());
  NodeWork tail = estimateWork(graph, root, pricing);
  tail.flops = 0;
  tail.bytes = pricing.bytes(graph, {root, 0});
  std::set<std::pair<NodeId, uint32_t>> read;
  for (NodeId n : group) {
    if (hasHead && n == head)
      continue;
    tail.flops += estimateWork(graph, n, pricing).flops;
    for (ValueRef v : graph.operands(n))
      if (!inside.count(v.node) && read.insert({v.node, v.result}).second)
        tail.bytes += pricing.bytes(graph, v);
  }
  double time = 0;
  if (hasHead) {
    time = bestEmitted(candidates[head], d)->time;
    tail.bytes += pricing.bytes(graph, {root, 0}); // Read in place.
  }
  return time + kernelTime(*bestEmitted(candidates[root], d)->capsule,
                           machine.devices[d], tail,
                           machine.calibration ? &*machine.calibration : nullptr);
}

double FusionPricing::groupTime(NodeId root, unsigned d) const {
  return fuses(root, d) ? fusedTime(root, d) : unfusedTime(root, d);
}
