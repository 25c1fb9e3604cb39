//===- PlacementExpansion.cpp - Alpha-expansion for general machines ------===//
//
// Machines with three or more devices whose links do not form a line: the
// problem is NP-hard; expansion moves (each a minimum cut) and single-node
// moves improve the best baseline, never making the plan worse.
//
//===----------------------------------------------------------------------===//

#include "PlacementSolvers.h"

#include "fuel/Planner/MaxFlow.h"

using namespace fuel;

//===----------------------------------------------------------------------===//
// Three or more devices: alpha-expansion + single-node moves
//===----------------------------------------------------------------------===//

namespace {
/// One expansion move: every node either keeps its device (source side) or
/// switches to `alpha` (sink side). Transfer terms are decomposed per
/// destination group; the only non-submodular piece (staying is dearer than
/// switching for a group) is over-approximated by its value at "stay", which
/// is exact at the current labeling, so an accepted move never raises the
/// true cost.
class ExpansionMove {
public:
  ExpansionMove(const PlacementProblem &p, const std::vector<uint16_t> &labels,
                unsigned alpha)
      : p(p), labels(labels), alpha(alpha), flow(p.numNodes() + 2),
        source(p.numNodes()), sink(p.numNodes() + 1) {}

  std::vector<uint16_t> solve() {
    for (uint32_t node = 0; node < p.numNodes(); ++node) {
      if (labels[node] == alpha) {
        flow.addEdge(node, sink, MaxFlow::kInfinity); // Already alpha.
        continue;
      }
      flow.addEdge(node, sink, p.nodeCost(node, labels[node]));
      flow.addEdge(source, node, p.nodeCost(node, alpha));
    }
    for (uint32_t v = 0; v < p.values().size(); ++v)
      addValueTerms(v);
    std::vector<uint16_t> next = labels;
    if (flow.run(source, sink) >= MaxFlow::kInfinity)
      return next;
    for (uint32_t node = 0; node < p.numNodes(); ++node)
      if (!flow.onSourceSide(node))
        next[node] = static_cast<uint16_t>(alpha);
    return next;
  }

private:
  /// cost * [u stays] * [some w in `group` switches].
  void staysAndSomeSwitch(uint32_t u, const std::vector<uint32_t> &group,
                          double cost) {
    uint32_t x = flow.addNode();
    flow.addEdge(u, x, cost);
    for (uint32_t w : group)
      flow.addEdge(x, w, MaxFlow::kInfinity);
  }
  /// cost * [some w in `group` stays], and with `u`, cost * [u switches] *
  /// [some w stays].
  void someStays(const std::vector<uint32_t> &group, double cost,
                 uint32_t target) {
    uint32_t y = flow.addNode();
    for (uint32_t w : group)
      flow.addEdge(w, y, MaxFlow::kInfinity);
    flow.addEdge(y, target, cost);
  }

  void addValueTerms(uint32_t v) {
    const PlacementProblem::Value &value = p.values()[v];
    uint32_t u = value.producer;
    unsigned from = labels[u];
    bool producerFixed = from == alpha;
    // Consumers already on alpha end there; the others may switch.
    std::vector<uint32_t> movable;
    bool someAlreadyAlpha = false;
    for (uint32_t w : p.consumers(v)) {
      if (labels[w] == alpha)
        someAlreadyAlpha = true;
      else
        movable.push_back(w);
    }
    // Group alpha: T(from -> alpha) if u stays and some consumer is on alpha.
    if (!producerFixed) {
      double t = p.transferCost(v, from, alpha);
      if (someAlreadyAlpha)
        flow.addEdge(u, sink, t); // Unary: paid whenever u stays.
      else if (!movable.empty())
        staysAndSomeSwitch(u, movable, t);
    }
    // Groups of consumers sharing a current device g != alpha: paid if some
    // member stays; A if u stays, B if u switches.
    std::vector<uint32_t> group;
    for (unsigned g = 0; g < p.numDevices(); ++g) {
      if (g == alpha)
        continue;
      group.clear();
      for (uint32_t w : movable)
        if (labels[w] == g)
          group.push_back(w);
      if (group.empty())
        continue;
      double b = p.transferCost(v, alpha, g);
      if (producerFixed) {
        someStays(group, b, sink);
        continue;
      }
      double a = p.transferCost(v, from, g);
      if (b >= a) {
        someStays(group, a, sink);
        someStays(group, b - a, u); // Cut when u switches and some w stays.
      } else {
        someStays(group, a, sink); // Over-approximation, exact at "stay".
      }
    }
  }

  const PlacementProblem &p;
  const std::vector<uint16_t> &labels;
  unsigned alpha;
  MaxFlow flow;
  uint32_t source, sink;
};
} // namespace

/// The cost terms that change when `node` changes device.
static double localCost(const PlacementProblem &p,
                        const std::vector<std::vector<uint32_t>> &inputsOf,
                        const std::vector<std::vector<uint32_t>> &outputsOf,
                        std::vector<uint16_t> &labels, uint32_t node,
                        unsigned device) {
  uint16_t saved = labels[node];
  labels[node] = static_cast<uint16_t>(device);
  double cost = p.nodeCost(node, device);
  auto valueCost = [&](uint32_t v) {
    uint64_t destinations = 0;
    for (uint32_t c : p.consumers(v))
      destinations |= uint64_t(1) << labels[c];
    return p.hopsCost(v, labels[p.values()[v].producer], destinations);
  };
  for (uint32_t v : inputsOf[node])
    cost += valueCost(v);
  for (uint32_t v : outputsOf[node])
    cost += valueCost(v);
  labels[node] = saved;
  return cost;
}

PlacementResult fuel::placeByExpansion(const PlacementProblem &p,
                                        const std::vector<uint32_t> &order) {
  PlacementResult result;
  // Start from the best of the baselines and every single-device plan.
  std::vector<std::vector<uint16_t>> starts{placeGreedy(p, order),
                                            placeChainDp(p, order)};
  for (unsigned d = 0; d < p.numDevices(); ++d)
    starts.emplace_back(p.numNodes(), static_cast<uint16_t>(d));
  for (auto &labels : starts) {
    double cost = p.evaluate(labels);
    if (cost < result.cost) {
      result.cost = cost;
      result.labels = std::move(labels);
    }
  }
  if (!result.feasible())
    result.labels = starts.front();

  std::vector<std::vector<uint32_t>> inputsOf = p.inputsByNode();
  std::vector<std::vector<uint32_t>> outputsOf(p.numNodes());
  for (uint32_t v = 0; v < p.values().size(); ++v)
    outputsOf[p.values()[v].producer].push_back(v);

  for (bool improved = true; improved;) {
    improved = false;
    for (unsigned alpha = 0; alpha < p.numDevices(); ++alpha) {
      std::vector<uint16_t> next =
          ExpansionMove(p, result.labels, alpha).solve();
      ++result.maxFlowRuns;
      double cost = p.evaluate(next);
      if (lessThan(cost, result.cost)) {
        result.cost = cost;
        result.labels = std::move(next);
        improved = true;
      }
    }
    // Single-node moves reach what the truncated expansions cannot.
    for (uint32_t node : order) {
      unsigned current = result.labels[node];
      double here =
          localCost(p, inputsOf, outputsOf, result.labels, node, current);
      for (unsigned d = 0; d < p.numDevices(); ++d) {
        if (d == current)
          continue;
        double there = localCost(p, inputsOf, outputsOf, result.labels, node, d);
        if (lessThan(there, here)) {
          result.labels[node] = static_cast<uint16_t>(d);
          current = d;
          here = there;
          improved = true;
        }
      }
    }
    result.cost = p.evaluate(result.labels);
  }
  // A valid, if loose, bound: every node at its cheapest, transfers free.
  result.lowerBound = 0;
  for (uint32_t node = 0; node < p.numNodes(); ++node) {
    double cheapest = kInfiniteCost;
    for (unsigned d = 0; d < p.numDevices(); ++d)
      cheapest = std::min(cheapest, p.nodeCost(node, d));
    result.lowerBound += cheapest;
  }
  return result;
}
