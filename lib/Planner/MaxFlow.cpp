//===- MaxFlow.cpp - s-t maximum flow / minimum cut -----------------------===//
//
// Dinic: BFS levels, then blocking flows found by an iterative DFS with
// per-node arc cursors (no recursion: graphs have millions of nodes).
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/MaxFlow.h"

#include <algorithm>

using namespace fuel;

/// Flow below this is numerical noise (capacities are seconds).
static constexpr double kEpsilon = 1e-15;

void MaxFlow::reserve(size_t numEdges) { edges.reserve(numEdges); }

void MaxFlow::addEdge(uint32_t from, uint32_t to, double capacity) {
  if (capacity <= 0 || from == to)
    return;
  edges.push_back({from, to, std::min(capacity, kInfinity)});
}

void MaxFlow::buildArcs() {
  firstArc.assign(size_t(nodes) + 1, 0);
  for (const Edge &e : edges) {
    ++firstArc[e.from + 1];
    ++firstArc[e.to + 1];
  }
  for (uint32_t v = 0; v < nodes; ++v)
    firstArc[v + 1] += firstArc[v];
  arcs.resize(firstArc.back());
  std::vector<uint32_t> filled(firstArc.begin(), firstArc.end() - 1);
  for (const Edge &e : edges) {
    uint32_t forward = filled[e.from]++, backward = filled[e.to]++;
    arcs[forward] = {e.to, backward, e.capacity};
    arcs[backward] = {e.from, forward, 0};
  }
  edges = std::vector<Edge>();
}

void MaxFlow::push(uint32_t arc, double amount) {
  Arc &a = arcs[arc];
  if (a.capacity < kInfinity)
    a.capacity -= amount;
  Arc &back = arcs[a.twin];
  if (back.capacity < kInfinity)
    back.capacity += amount;
}

bool MaxFlow::buildLevels(uint32_t source, uint32_t sink) {
  level.assign(nodes, -1);
  queue.clear();
  queue.push_back(source);
  level[source] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    uint32_t node = queue[head];
    for (uint32_t a = firstArc[node]; a < firstArc[node + 1]; ++a) {
      const Arc &arc = arcs[a];
      if (arc.capacity > kEpsilon && level[arc.to] < 0) {
        level[arc.to] = level[node] + 1;
        queue.push_back(arc.to);
      }
    }
  }
  return level[sink] >= 0;
}

double MaxFlow::augment(uint32_t source, uint32_t sink, double limit) {
  // Iterative DFS along level-increasing arcs; `path` holds arc indices.
  std::vector<uint32_t> path;
  double total = 0;
  uint32_t node = source;
  while (true) {
    if (node == sink) {
      double bottleneck = limit - total;
      for (uint32_t a : path)
        bottleneck = std::min(bottleneck, arcs[a].capacity);
      for (uint32_t a : path)
        push(a, bottleneck);
      total += bottleneck;
      if (total >= limit)
        return total;
      path.clear();
      node = source;
      continue;
    }
    uint32_t &a = cursor[node];
    while (a < firstArc[node + 1] &&
           (arcs[a].capacity <= kEpsilon || level[arcs[a].to] != level[node] + 1))
      ++a;
    if (a < firstArc[node + 1]) {
      path.push_back(a);
      node = arcs[a].to;
      continue;
    }
    // Dead end: retreat and never try this node again in this phase.
    if (node == source)
      return total;
    level[node] = -1;
    uint32_t back = path.back();
    path.pop_back();
    node = arcs[arcs[back].twin].to;
    ++cursor[node];
  }
}

double MaxFlow::run(uint32_t source, uint32_t sink) {
  buildArcs();
  // Paths s -> v -> t of length two (a node's costs on either side) are
  // saturated up front: in placement graphs that is most of the flow, and
  // it leaves Dinic only the transfers to resolve.
  double flow = 0;
  std::vector<uint32_t> toSink(nodes, kNone);
  for (uint32_t a = firstArc[sink]; a < firstArc[sink + 1]; ++a)
    toSink[arcs[a].to] = arcs[a].twin; // The forward arc v -> sink.
  for (uint32_t a = firstArc[source]; a < firstArc[source + 1]; ++a) {
    uint32_t v = arcs[a].to, back = toSink[v];
    if (back == kNone || arcs[a].capacity <= kEpsilon)
      continue;
    double amount = std::min(arcs[a].capacity, arcs[back].capacity);
    if (amount <= kEpsilon || amount >= kInfinity)
      continue;
    push(a, amount);
    push(back, amount);
    flow += amount;
  }
  cursor.resize(nodes);
  while (buildLevels(source, sink)) {
    std::copy(firstArc.begin(), firstArc.end() - 1, cursor.begin());
    double pushed = augment(source, sink, kInfinity);
    flow += pushed;
    if (flow >= kInfinity || pushed <= kEpsilon)
      break;
  }
  buildLevels(source, sink); // Final residual reachability for the cut.
  return flow;
}
