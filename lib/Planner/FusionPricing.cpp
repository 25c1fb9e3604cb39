//===- FusionPricing.cpp - What a fusion group costs on a device ----------===//

#include "FusionPricing.h"

#include "fuel/Planner/CostModel.h"
#include "fuel/Transforms/Fusion.h"

#include <algorithm>

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
                             std::vector<NodeId> groupRoot, const std::vector<NodeId> &order)
    : graph(graph), machine(machine), pricing(pricing), candidates(candidates),
      groupRoot(std::move(groupRoot)),
      membersOf(
          graph.numNodes(), order.size(), [&](size_t i) { return this->groupRoot[order[i]]; },
          [&](size_t i) { return order[i]; }),
      devices(static_cast<unsigned>(machine.devices.size())) {
  fusedOn.assign(size_t(graph.numNodes()) * devices, false);
  times.assign(size_t(graph.numNodes()) * devices, kInfiniteCost);
  for (NodeId root = 0; root < graph.numNodes(); ++root) {
    if (this->groupRoot[root] != root)
      continue;
    std::span<NodeId> group = membersOf[root];
    moveHeadFirst(graph, group);
    for (unsigned d = 0; d < devices; ++d) {
      double unfused = unfusedTime(root, d);
      // Fused, every member runs a kernel fuelc emits: a faster library
      // kernel that cannot take the group's epilogue may make it slower.
      double fused = group.size() > 1 ? fusedTime(root, d) : kInfiniteCost;
      fusedOn[root * devices + d] = fused <= unfused && fused < kInfiniteCost;
      times[root * devices + d] = std::min(fused, unfused);
    }
  }
}

double FusionPricing::unfusedTime(NodeId root, unsigned d) const {
  double sum = 0;
  for (NodeId n : members(root))
    sum += candidates[n].bestTime(d);
  return sum;
}

const Candidate *FusionPricing::candidate(NodeId node, unsigned d) const {
  return fuses(groupRoot[node], d) ? bestEmitted(candidates[node], d)
                                   : candidates[node].best(d);
}

double FusionPricing::fusedTime(NodeId root, unsigned d) {
  std::span<const NodeId> group = members(root);
  for (NodeId n : group)
    if (!bestEmitted(candidates[n], d))
      return kInfiniteCost;
  NodeId head = group.front();
  bool hasHead = !isElementwiseOp(graph.kind(head));
  NodeWork tail = estimateWork(graph, root, pricing);
  tail.flops = 0;
  tail.bytes = pricing.bytes(graph, {root, 0});
  externalReads.clear();
  for (NodeId n : group) {
    if (hasHead && n == head)
      continue;
    tail.flops += estimateWork(graph, n, pricing).flops;
    for (ValueRef v : graph.operands(n)) {
      bool inside = groupRoot[v.node] == root;
      if (!inside && std::find(externalReads.begin(), externalReads.end(), v) ==
                         externalReads.end()) {
        externalReads.push_back(v);
        tail.bytes += pricing.bytes(graph, v);
      }
    }
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
