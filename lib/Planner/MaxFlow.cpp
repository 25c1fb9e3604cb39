//===- MaxFlow.cpp - s-t maximum flow / minimum cut -----------------------===//
//
// Dinic: BFS levels, then blocking flows found by an iterative DFS with
// per-node edge cursors (no recursion: graphs have millions of nodes).
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/MaxFlow.h"

#include <algorithm>

using namespace fuel;

/// Flow below this is numerical noise (capacities are seconds).
static constexpr double kEpsilon = 1e-15;

void MaxFlow::reserve(size_t nodes, size_t numEdges) {
  firstEdge.reserve(nodes);
  edges.reserve(2 * numEdges); // Each edge has its residual twin.
}

uint32_t MaxFlow::addNode() {
  firstEdge.push_back(kNone);
  return static_cast<uint32_t>(firstEdge.size() - 1);
}

void MaxFlow::addEdge(uint32_t from, uint32_t to, double capacity) {
  if (capacity <= 0 || from == to)
    return;
  capacity = std::min(capacity, kInfinity);
  edges.push_back({to, firstEdge[from], capacity});
  firstEdge[from] = static_cast<uint32_t>(edges.size() - 1);
  edges.push_back({from, firstEdge[to], 0});
  firstEdge[to] = static_cast<uint32_t>(edges.size() - 1);
}

bool MaxFlow::buildLevels(uint32_t source, uint32_t sink) {
  level.assign(firstEdge.size(), -1);
  std::vector<uint32_t> queue{source};
  level[source] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    uint32_t node = queue[head];
    for (uint32_t e = firstEdge[node]; e != kNone; e = edges[e].next) {
      if (edges[e].capacity > kEpsilon && level[edges[e].to] < 0) {
        level[edges[e].to] = level[node] + 1;
        queue.push_back(edges[e].to);
      }
    }
  }
  return level[sink] >= 0;
}

double MaxFlow::augment(uint32_t source, uint32_t sink, double limit) {
  // Iterative DFS along level-increasing edges; `path` holds edge indices.
  std::vector<uint32_t> path;
  double total = 0;
  uint32_t node = source;
  while (true) {
    if (node == sink) {
      double bottleneck = limit - total;
      for (uint32_t e : path)
        bottleneck = std::min(bottleneck, edges[e].capacity);
      for (uint32_t e : path) {
        if (edges[e].capacity < kInfinity)
          edges[e].capacity -= bottleneck;
        if (edges[e ^ 1].capacity < kInfinity)
          edges[e ^ 1].capacity += bottleneck;
      }
      total += bottleneck;
      if (total >= limit)
        return total;
      path.clear();
      node = source;
      continue;
    }
    uint32_t &e = cursor[node];
    while (e != kNone && (edges[e].capacity <= kEpsilon ||
                          level[edges[e].to] != level[node] + 1))
      e = edges[e].next;
    if (e != kNone) {
      path.push_back(e);
      node = edges[e].to;
      continue;
    }
    // Dead end: retreat and never try this node again in this phase.
    if (node == source)
      return total;
    level[node] = -1;
    uint32_t back = path.back();
    path.pop_back();
    node = edges[back ^ 1].to;
    cursor[node] = edges[cursor[node]].next;
  }
}

double MaxFlow::run(uint32_t source, uint32_t sink) {
  // Paths s -> v -> t of length two (a node's costs on either side) are
  // saturated up front: in placement graphs that is most of the flow, and
  // it leaves Dinic only the transfers to resolve.
  double flow = 0;
  std::vector<uint32_t> toSink(firstEdge.size(), kNone);
  for (uint32_t e = firstEdge[sink]; e != kNone; e = edges[e].next)
    toSink[edges[e].to] = e ^ 1; // The forward edge v -> sink.
  for (uint32_t e = firstEdge[source]; e != kNone; e = edges[e].next) {
    uint32_t v = edges[e].to, back = toSink[v];
    if (back == kNone || edges[e].capacity <= kEpsilon)
      continue;
    double push = std::min(edges[e].capacity, edges[back].capacity);
    if (push <= kEpsilon || push >= kInfinity)
      continue;
    for (uint32_t f : {e, back}) {
      if (edges[f].capacity < kInfinity)
        edges[f].capacity -= push;
      edges[f ^ 1].capacity += push;
    }
    flow += push;
  }
  while (buildLevels(source, sink)) {
    cursor = firstEdge;
    double pushed = augment(source, sink, kInfinity);
    flow += pushed;
    if (flow >= kInfinity || pushed <= kEpsilon)
      break;
  }
  buildLevels(source, sink); // Final residual reachability for the cut.
  return flow;
}
