//===- Placement.cpp - Device placement as a labeling problem -------------===//

#include "fuel/Planner/Placement.h"

#include "fuel/Planner/MaxFlow.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace fuel;

/// Improvements smaller than this (relative) are rounding, not progress.
static constexpr double kRelativeTolerance = 1e-12;

static bool lessThan(double a, double b) {
  return a < b - kRelativeTolerance * std::max(std::fabs(b), 1e-30);
}

std::string_view fuel::placerName(PlacerKind kind) {
  switch (kind) {
  case PlacerKind::Optimal:
    return "optimal";
  case PlacerKind::Greedy:
    return "greedy";
  case PlacerKind::ChainDp:
    return "chain-dp";
  }
  return "optimal";
}

//===----------------------------------------------------------------------===//
// Problem
//===----------------------------------------------------------------------===//

PlacementProblem::PlacementProblem(unsigned numDevices,
                                   std::vector<double> latency,
                                   std::vector<double> inverseBandwidth)
    : devices(numDevices), latency(std::move(latency)),
      inverseBandwidth(std::move(inverseBandwidth)) {
  assert(devices >= 1 && devices <= 64 && "1 to 64 devices");
  assert(this->latency.size() == devices * devices &&
         this->inverseBandwidth.size() == devices * devices);
  detectLine();
}

void PlacementProblem::detectLine() {
  if (devices < 3)
    return;
  auto linked = [&](unsigned a, unsigned b) {
    return std::isfinite(latency[a * devices + b]) &&
           std::isfinite(inverseBandwidth[a * devices + b]) &&
           std::isfinite(latency[b * devices + a]) &&
           std::isfinite(inverseBandwidth[b * devices + a]);
  };
  std::vector<std::vector<unsigned>> neighbours(devices);
  unsigned links = 0;
  for (unsigned a = 0; a < devices; ++a)
    for (unsigned b = a + 1; b < devices; ++b)
      if (linked(a, b)) {
        neighbours[a].push_back(b);
        neighbours[b].push_back(a);
        ++links;
      }
  // A path: k - 1 links, degrees at most 2, one end, all devices reached.
  if (links != devices - 1)
    return;
  unsigned end = devices;
  for (unsigned d = 0; d < devices; ++d) {
    if (neighbours[d].size() > 2)
      return;
    if (neighbours[d].size() == 1 && end == devices)
      end = d;
  }
  if (end == devices)
    return;
  std::vector<unsigned> order{end};
  for (unsigned previous = devices, at = end; order.size() < devices;) {
    unsigned next = devices;
    for (unsigned n : neighbours[at])
      if (n != previous)
        next = n;
    if (next == devices)
      return; // Disconnected.
    previous = at;
    at = next;
    order.push_back(at);
  }
  lineOrder = std::move(order);
  linePosition.assign(devices, 0);
  for (unsigned i = 0; i < devices; ++i)
    linePosition[lineOrder[i]] = i;
}

double PlacementProblem::linkCost(uint32_t value, unsigned from,
                                  unsigned to) const {
  size_t i = from * devices + to;
  return latency[i] + valueList[value].bytes * inverseBandwidth[i];
}

std::vector<PlacementProblem::Hop>
PlacementProblem::transferHops(uint32_t value, unsigned from,
                               uint64_t destinations) const {
  std::vector<Hop> hops;
  destinations &= ~(uint64_t(1) << from);
  if (!isLine()) {
    for (unsigned d = 0; d < devices; ++d)
      if (destinations & (uint64_t(1) << d))
        hops.push_back({from, d, transferCost(value, from, d)});
    return hops;
  }
  // Walk outwards from the producer to the farthest destination each way.
  unsigned p = linePosition[from], lo = p, hi = p;
  for (unsigned d = 0; d < devices; ++d)
    if (destinations & (uint64_t(1) << d)) {
      lo = std::min(lo, linePosition[d]);
      hi = std::max(hi, linePosition[d]);
    }
  for (unsigned i = p; i < hi; ++i)
    hops.push_back({lineOrder[i], lineOrder[i + 1],
                    linkCost(value, lineOrder[i], lineOrder[i + 1])});
  for (unsigned i = p; i > lo; --i)
    hops.push_back({lineOrder[i], lineOrder[i - 1],
                    linkCost(value, lineOrder[i], lineOrder[i - 1])});
  return hops;
}

uint32_t PlacementProblem::addNode(std::vector<double> costs) {
  assert(costs.size() == devices);
  nodeCosts.insert(nodeCosts.end(), costs.begin(), costs.end());
  nodeInputs.emplace_back();
  return numNodes() - 1;
}

void PlacementProblem::addValue(uint32_t producer, double bytes,
                                std::vector<uint32_t> consumers) {
  std::sort(consumers.begin(), consumers.end());
  consumers.erase(std::unique(consumers.begin(), consumers.end()),
                  consumers.end());
  uint32_t index = static_cast<uint32_t>(valueList.size());
  for (uint32_t c : consumers)
    nodeInputs[c].push_back(index);
  valueList.push_back({producer, bytes, std::move(consumers)});
}

double PlacementProblem::transferCost(uint32_t value, unsigned from,
                                      unsigned to) const {
  if (from == to)
    return 0;
  if (isLine()) {
    double total = 0;
    for (const Hop &hop : transferHops(value, from, uint64_t(1) << to))
      total += hop.cost;
    return total;
  }
  // Routes with at most one intermediate device (exact closure for up to
  // three devices; e.g. GPU -> host -> GPU staging).
  double best = linkCost(value, from, to);
  for (unsigned via = 0; via < devices; ++via)
    if (via != from && via != to)
      best = std::min(best, linkCost(value, from, via) + linkCost(value, via, to));
  return best;
}

double PlacementProblem::evaluate(const std::vector<uint16_t> &labels) const {
  double total = 0;
  for (uint32_t n = 0; n < numNodes(); ++n)
    total += nodeCost(n, labels[n]);
  for (uint32_t v = 0; v < valueList.size(); ++v) {
    const Value &value = valueList[v];
    uint64_t destinations = 0;
    for (uint32_t c : value.consumers)
      destinations |= uint64_t(1) << labels[c];
    for (const Hop &hop : transferHops(v, labels[value.producer], destinations))
      total += hop.cost;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Baselines (the seeds' planners)
//===----------------------------------------------------------------------===//

/// The seeds' Stage-2 walk: each node, in order, takes the device that
/// minimizes its own cost plus the inbound transfers from already placed
/// producers (fan-out priced per consumer, as the walk cannot know better).
static std::vector<uint16_t> placeGreedy(const PlacementProblem &p,
                                         const std::vector<uint32_t> &order) {
  std::vector<uint16_t> labels(p.numNodes(), 0);
  for (uint32_t node : order) {
    double best = kInfiniteCost;
    for (unsigned d = 0; d < p.numDevices(); ++d) {
      double cost = p.nodeCost(node, d);
      for (uint32_t v : p.inputsOf()[node])
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
static std::vector<uint16_t> placeChainDp(const PlacementProblem &p,
                                          const std::vector<uint32_t> &order) {
  unsigned k = p.numDevices();
  uint32_t n = p.numNodes();
  std::vector<uint32_t> position(n);
  for (uint32_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  // The edge of value v belongs to its earliest consumer in `order`.
  std::vector<std::vector<uint32_t>> ownedInputs(n);
  for (uint32_t v = 0; v < p.values().size(); ++v) {
    const auto &consumers = p.values()[v].consumers;
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

//===----------------------------------------------------------------------===//
// Exact two-device placement (Stone's minimum cut)
//===----------------------------------------------------------------------===//

/// Prices one value across one cut: `sourceToSink` once if the producer
/// vertex `u` is on the source side and any consumer vertex on the sink side,
/// `sinkToSource` once in the opposite case (Lawler's hyperedge gadget: an
/// auxiliary vertex x with u -> x and x -> w (inf) for every consumer w, and
/// y with w -> y (inf) and y -> u; one consumer needs no auxiliary vertex).
static void addTransferTerms(MaxFlow &flow, uint32_t u,
                             const std::vector<uint32_t> &consumers,
                             double sourceToSink, double sinkToSource) {
  if (consumers.size() == 1) {
    flow.addEdge(u, consumers[0], sourceToSink);
    flow.addEdge(consumers[0], u, sinkToSource);
    return;
  }
  if (sourceToSink > 0) {
    uint32_t x = flow.addNode();
    flow.addEdge(u, x, sourceToSink);
    for (uint32_t w : consumers)
      flow.addEdge(x, w, MaxFlow::kInfinity);
  }
  if (sinkToSource > 0) {
    uint32_t y = flow.addNode();
    flow.addEdge(y, u, sinkToSource);
    for (uint32_t w : consumers)
      flow.addEdge(w, y, MaxFlow::kInfinity);
  }
}

/// Total consumer count over all values (to size max-flow graphs).
static size_t totalConsumers(const PlacementProblem &p) {
  size_t consumers = 0;
  for (const PlacementProblem::Value &value : p.values())
    consumers += value.consumers.size();
  return consumers;
}

/// Finishes an exact solve: the cut (plus the costs taken out as a constant)
/// must equal the plan's cost, which is checked in debug builds.
static PlacementResult exactResult(const PlacementProblem &p,
                                   std::vector<uint16_t> labels, double cut) {
  PlacementResult result;
  result.maxFlowRuns = 1;
  result.labels = std::move(labels);
  result.cost = p.evaluate(result.labels);
  assert(std::fabs(cut - result.cost) <= 1e-9 * std::max(1.0, cut) &&
         "minimum cut and plan cost disagree");
  result.exact = true;
  result.lowerBound = result.cost;
  return result;
}

/// Source side = device 0, sink side = device 1. A node's cost on device 0 is
/// an edge to the sink (cut when it stays on the source side) and vice versa.
static PlacementResult placeTwoDevices(const PlacementProblem &p) {
  uint32_t n = p.numNodes();
  MaxFlow flow(n + 2);
  flow.reserve(n + 2 + 2 * p.values().size(),
               2 * n + 2 * (p.values().size() + totalConsumers(p)));
  uint32_t source = n, sink = n + 1;
  double offset = 0; // Each node's cheapest cost, paid whatever the cut.
  for (uint32_t node = 0; node < n; ++node) {
    double base = std::min(p.nodeCost(node, 0), p.nodeCost(node, 1));
    if (!std::isfinite(base))
      return PlacementResult(); // Admissible nowhere.
    offset += base;
    flow.addEdge(node, sink, p.nodeCost(node, 0) - base);
    flow.addEdge(source, node, p.nodeCost(node, 1) - base);
  }
  for (uint32_t v = 0; v < p.values().size(); ++v) {
    const PlacementProblem::Value &value = p.values()[v];
    addTransferTerms(flow, value.producer, value.consumers,
                     p.transferCost(v, 0, 1), p.transferCost(v, 1, 0));
  }
  double cut = flow.run(source, sink);
  if (cut >= MaxFlow::kInfinity)
    return PlacementResult(); // No placement satisfies every pin and capability.
  std::vector<uint16_t> labels(n);
  for (uint32_t node = 0; node < n; ++node)
    labels[node] = flow.onSourceSide(node) ? 0 : 1;
  return exactResult(p, std::move(labels), cut + offset);
}

//===----------------------------------------------------------------------===//
// Devices in a line: Ishikawa's layered minimum cut
//===----------------------------------------------------------------------===//

/// Positions 0..k-1 along the path. Node v has a chain s = X0 -> X1 -> ... ->
/// X(k-1) -> X(k) = t whose edge X(i) -> X(i+1) costs its cost at position i,
/// with infinite reverse edges so that exactly one chain edge is cut: v sits
/// at position p when X1..Xp are on the source side. "Position > i" is then
/// "X(i+1) on the source side", and a value crossing the link between
/// positions i and i+1 is the two-device hyperedge term on the X(i+1)
/// vertices, so every boundary is priced exactly and once per direction.
static PlacementResult placeOnLine(const PlacementProblem &p) {
  uint32_t n = p.numNodes();
  unsigned k = p.numDevices();
  const std::vector<unsigned> &order = p.linePath();
  MaxFlow flow(2 + n * (k - 1));
  flow.reserve(2 + n * (k - 1) + 2 * (k - 1) * p.values().size(),
               2 * k * n + 2 * (k - 1) * (p.values().size() + totalConsumers(p)));
  uint32_t source = 0, sink = 1;
  auto vertex = [&](uint32_t node, unsigned i) -> uint32_t {
    if (i == 0)
      return source;
    if (i == k)
      return sink;
    return 2 + node * (k - 1) + (i - 1);
  };
  double offset = 0; // Each node's cheapest cost, paid whatever the cut.
  for (uint32_t node = 0; node < n; ++node) {
    double base = kInfiniteCost;
    for (unsigned d = 0; d < k; ++d)
      base = std::min(base, p.nodeCost(node, d));
    if (!std::isfinite(base))
      return PlacementResult(); // Admissible nowhere.
    offset += base;
    for (unsigned i = 0; i < k; ++i) {
      flow.addEdge(vertex(node, i), vertex(node, i + 1),
                   p.nodeCost(node, order[i]) - base);
      flow.addEdge(vertex(node, i + 1), vertex(node, i), MaxFlow::kInfinity);
    }
  }
  std::vector<uint32_t> boundary;
  for (uint32_t v = 0; v < p.values().size(); ++v) {
    const PlacementProblem::Value &value = p.values()[v];
    for (unsigned i = 0; i + 1 < k; ++i) {
      boundary.clear();
      for (uint32_t w : value.consumers)
        boundary.push_back(vertex(w, i + 1));
      // Source side of X(i+1) = beyond the link: a producer below it with a
      // consumer beyond pays the forward hop, and vice versa.
      double forward = p.transferHops(v, order[i], uint64_t(1) << order[i + 1])[0].cost;
      double backward = p.transferHops(v, order[i + 1], uint64_t(1) << order[i])[0].cost;
      addTransferTerms(flow, vertex(value.producer, i + 1), boundary, backward,
                       forward);
    }
  }
  double cut = flow.run(source, sink);
  if (cut >= MaxFlow::kInfinity)
    return PlacementResult();
  std::vector<uint16_t> labels(n);
  for (uint32_t node = 0; node < n; ++node) {
    unsigned position = 0;
    while (position + 1 < k && flow.onSourceSide(vertex(node, position + 1)))
      ++position;
    labels[node] = static_cast<uint16_t>(order[position]);
  }
  return exactResult(p, std::move(labels), cut + offset);
}

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
    for (uint32_t w : value.consumers) {
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
                        const std::vector<std::vector<uint32_t>> &outputsOf,
                        std::vector<uint16_t> &labels, uint32_t node,
                        unsigned device) {
  uint16_t saved = labels[node];
  labels[node] = static_cast<uint16_t>(device);
  double cost = p.nodeCost(node, device);
  auto valueCost = [&](uint32_t v) {
    const PlacementProblem::Value &value = p.values()[v];
    uint64_t destinations = 0;
    for (uint32_t c : value.consumers)
      destinations |= uint64_t(1) << labels[c];
    double total = 0;
    for (const PlacementProblem::Hop &hop :
         p.transferHops(v, labels[value.producer], destinations))
      total += hop.cost;
    return total;
  };
  for (uint32_t v : p.inputsOf()[node])
    cost += valueCost(v);
  for (uint32_t v : outputsOf[node])
    cost += valueCost(v);
  labels[node] = saved;
  return cost;
}

static PlacementResult placeByExpansion(const PlacementProblem &p,
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
          localCost(p, outputsOf, result.labels, node, current);
      for (unsigned d = 0; d < p.numDevices(); ++d) {
        if (d == current)
          continue;
        double there = localCost(p, outputsOf, result.labels, node, d);
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

PlacementResult fuel::solvePlacement(const PlacementProblem &problem,
                                     const std::vector<uint32_t> &order,
                                     PlacerKind kind) {
  PlacementResult result;
  if (kind != PlacerKind::Optimal) {
    result.labels = kind == PlacerKind::Greedy ? placeGreedy(problem, order)
                                               : placeChainDp(problem, order);
    result.cost = problem.evaluate(result.labels);
    return result;
  }
  if (problem.numDevices() == 1) {
    result.labels.assign(problem.numNodes(), 0);
    result.cost = problem.evaluate(result.labels);
    result.exact = true;
    result.lowerBound = result.cost;
    return result;
  }
  if (problem.numDevices() == 2)
    return placeTwoDevices(problem);
  if (problem.isLine())
    return placeOnLine(problem);
  return placeByExpansion(problem, order);
}

PlacementResult fuel::solvePlacementBruteForce(const PlacementProblem &p) {
  PlacementResult result;
  std::vector<uint16_t> labels(p.numNodes(), 0);
  while (true) {
    double cost = p.evaluate(labels);
    if (cost < result.cost) {
      result.cost = cost;
      result.labels = labels;
    }
    uint32_t i = 0;
    while (i < labels.size() && ++labels[i] == p.numDevices())
      labels[i++] = 0;
    if (i == labels.size())
      break;
  }
  result.exact = true;
  result.lowerBound = result.cost;
  return result;
}
