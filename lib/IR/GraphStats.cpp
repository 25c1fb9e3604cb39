//===- GraphStats.cpp - Summary figures of a graph ------------------------===//

#include "fuel/IR/GraphStats.h"

using namespace fuel;

GraphStats fuel::computeGraphStats(const Graph &graph) {
  GraphStats stats;
  for (NodeId node = 0; node < graph.numNodes(); ++node) {
    OpKind kind = graph.kind(node);
    ++stats.nodesByOp[static_cast<unsigned>(kind)];
    if (kind == OpKind::Input)
      ++stats.numInputs;
    if (kind != OpKind::Constant)
      continue;
    ++stats.numConstants;
    ValueRef v{node, 0};
    uint64_t elements =
        static_cast<uint64_t>(staticElementCount(graph.shape(v)).value_or(0));
    stats.parameterElements += elements;
    stats.parameterBytes += elements * dtypeByteSize(graph.dtype(v));
  }
  return stats;
}
