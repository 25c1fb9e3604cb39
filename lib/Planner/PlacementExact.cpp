//===- PlacementExact.cpp - Optimal placement by minimum cuts --------------===//
//
// Two devices: Stone's construction with Lawler's hyperedge gadget. Devices
// linked in a line: Ishikawa's layered construction. Both are exact on any
// DAG; the flow value equals the plan's cost (checked in debug builds).
//
//===----------------------------------------------------------------------===//

#include "PlacementSolvers.h"

#include "fuel/Planner/MaxFlow.h"

#include <cassert>
#include <span>

using namespace fuel;

//===----------------------------------------------------------------------===//
// Exact two-device placement (Stone's minimum cut)
//===----------------------------------------------------------------------===//

/// Prices one value across one cut: `sourceToSink` once if the producer
/// vertex `u` is on the source side and any consumer vertex on the sink side,
/// `sinkToSource` once in the opposite case (Lawler's hyperedge gadget: an
/// auxiliary vertex x with u -> x and x -> w (inf) for every consumer w, and
/// y with w -> y (inf) and y -> u; one consumer needs no auxiliary vertex).
static void addTransferTerms(MaxFlow &flow, uint32_t u,
                             std::span<const uint32_t> consumers,
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
    consumers += value.numConsumers;
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
PlacementResult fuel::placeTwoDevices(const PlacementProblem &p) {
  uint32_t n = p.numNodes();
  MaxFlow flow(n + 2);
  flow.reserve(2 * n + 2 * (p.values().size() + totalConsumers(p)));
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
    addTransferTerms(flow, value.producer, p.consumers(v),
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
PlacementResult fuel::placeOnLine(const PlacementProblem &p) {
  uint32_t n = p.numNodes();
  unsigned k = p.numDevices();
  const std::vector<unsigned> &order = p.linePath();
  MaxFlow flow(2 + n * (k - 1));
  flow.reserve(2 * k * n + 2 * (k - 1) * (p.values().size() + totalConsumers(p)));
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
      for (uint32_t w : p.consumers(v))
        boundary.push_back(vertex(w, i + 1));
      // Source side of X(i+1) = beyond the link: a producer below it with a
      // consumer beyond pays the forward hop, and vice versa.
      double forward = p.transferCost(v, order[i], order[i + 1]);
      double backward = p.transferCost(v, order[i + 1], order[i]);
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
