//===- MaxFlow.h - s-t maximum flow / minimum cut ---------------*- C++ -*-===//
//
// Dinic's algorithm on arcs grouped by node (CSR), with real capacities. The planner
// reduces placement to minimum cuts (Stone's construction); `minCutSourceSide`
// then tells which nodes ended on the source side.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_MAXFLOW_H
#define FUEL_PLANNER_MAXFLOW_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuel {

class MaxFlow {
public:
  /// Capacities at or above this are treated as unbounded.
  static constexpr double kInfinity = 1e30;

  explicit MaxFlow(uint32_t numNodes) : nodes(numNodes) {}

  /// Pre-sizes for `edges` edges (avoids regrowing million-edge arrays).
  void reserve(size_t edges);
  uint32_t addNode() { return nodes++; }
  uint32_t numNodes() const { return nodes; }
  /// Adds a directed edge (and its residual twin); zero capacities are
  /// dropped.
  void addEdge(uint32_t from, uint32_t to, double capacity);

  /// The maximum flow from `source` to `sink` (>= kInfinity when no finite
  /// cut exists).
  double run(uint32_t source, uint32_t sink);
  /// After run(): whether `node` is reachable from the source in the residual
  /// graph (the source side of a minimum cut).
  bool onSourceSide(uint32_t node) const { return level[node] >= 0; }

private:
  static constexpr uint32_t kNone = ~uint32_t(0);
  struct Edge {
    uint32_t from, to;
    double capacity;
  };
  /// A residual arc; a node's arcs are contiguous (arcs[firstArc[v] ..
  /// firstArc[v + 1]]), which keeps the searches' reads sequential.
  struct Arc {
    uint32_t to;
    uint32_t twin; // The reverse arc.
    double capacity;
  };
  /// Turns the added edges into arcs, grouped by tail.
  void buildArcs();
  bool buildLevels(uint32_t source, uint32_t sink);
  double augment(uint32_t source, uint32_t sink, double limit);
  void push(uint32_t arc, double amount);

  uint32_t nodes;
  std::vector<Edge> edges; // As added, until run().
  std::vector<uint32_t> firstArc;
  std::vector<Arc> arcs;
  std::vector<int32_t> level;
  std::vector<uint32_t> cursor;
  std::vector<uint32_t> queue;
};

} // namespace fuel

#endif // FUEL_PLANNER_MAXFLOW_H
