//===- PlacementBaselines.cpp - The seeds' placers, kept for comparison ---===//
//
// --placer=greedy and --placer=chain-dp reproduce the seeds' planners with
// their documented limits, so that plan quality can be compared side by side
// (docs/planner.md).
//
//===----------------------------------------------------------------------===//

#include "PlacementSolvers.h"

using namespace fuel;

//===----------------------------------------------------------------------===//
// Baselines (the seeds' planners)
//===----------------------------------------------------------------------===//

/// The seeds' Stage-2 walk: each node, in order, takes the device that
/// minimizes its own cost plus the inbound transfers from already placed
/// producers (fan-out priced per consumer, as the walk cannot know better).
std::vector<uint16_t> fuel::placeGreedy(const PlacementProblem &p,
                                         const std::vector<uint32_t> &order) {
  std::vector<uint16_t> labels(p.numNodes(), 0);
  std::vector<std::vector<uint32_t>> inputsOf = p.inputsByNode();
  for (uint32_t node : order) {
    double best = kInfiniteCost;
    for (unsigned d = 0; d < p.numDevices(); ++d) {
      double cost = p.nodeCost(node, d);
      for (uint32_t v : inputsOf[node])
        cost += p.transferCost(v, labels[p.values()[v].producer], d);
      if (cost < best) {
        best = cost;
        labels[node] = static_cast<uint16_t>(d);
      }
    }
  }
  return labels;
}

/// The seeds' carry-forward chain DP, with its documented limits: a value's
/// edge is priced only for its first consumer (later consumers see an
/// unknown residency), which turns the DAG into a forest solved exactly;
/// diamonds are thereby re-anchored as independent chains.
std::vector<uint16_t> fuel::placeChainDp(const PlacementProblem &p,
                                          const std::vector<uint32_t> &order) {
  unsigned k = p.numDevices();
  uint32_t n = p.numNodes();
  std::vector<uint32_t> position(n);
  for (uint32_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  // The edge of value v belongs to its earliest consumer in `order`.
  std::vector<std::vector<uint32_t>> ownedInputs(n);
  for (uint32_t v = 0; v < p.values().size(); ++v) {
    std::span<const uint32_t> consumers = p.consumers(v);
    if (consumers.empty())
      continue;
    uint32_t first = *std::min_element(
        consumers.begin(), consumers.end(),
        [&](uint32_t a, uint32_t b) { return position[a] < position[b]; });
    ownedInputs[first].push_back(v);
  }
  std::vector<double> best(size_t(n) * k);
  std::vector<uint16_t> choice(size_t(p.values().size()) * k);
  for (uint32_t node : order) {
    for (unsigned d = 0; d < k; ++d) {
      double cost = p.nodeCost(node, d);
      for (uint32_t v : ownedInputs[node]) {
        uint32_t producer = p.values()[v].producer;
        double bestIn = kInfiniteCost;
        for (unsigned e = 0; e < k; ++e) {
          double c = best[producer * k + e] + p.transferCost(v, e, d);
          if (c < bestIn) {
            bestIn = c;
            choice[size_t(v) * k + d] = static_cast<uint16_t>(e);
          }
        }
        cost += bestIn;
      }
      best[node * k + d] = cost;
    }
  }
  // Backtrack from the forest's roots (nodes that own no outgoing edge).
  std::vector<bool> isOwnedProducer(n, false);
  for (uint32_t node = 0; node < n; ++node)
    for (uint32_t v : ownedInputs[node])
      isOwnedProducer[p.values()[v].producer] = true;
  std::vector<uint16_t> labels(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    uint32_t node = *it;
    if (!isOwnedProducer[node]) {
      double bestCost = kInfiniteCost;
      for (unsigned d = 0; d < k; ++d)
        if (best[node * k + d] < bestCost) {
          bestCost = best[node * k + d];
          labels[node] = static_cast<uint16_t>(d);
        }
    }
    for (uint32_t v : ownedInputs[node])
      labels[p.values()[v].producer] = choice[size_t(v) * k + labels[node]];
  }
  return labels;
}
