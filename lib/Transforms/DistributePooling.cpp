//===- DistributePooling.cpp - Pooling of a concat, per part --------------===//

#include "fuel/Transforms/DistributePooling.h"

#include <algorithm>

using namespace fuel;

/// Whether `concat` joins 4-D images along their channels.
static bool joinsChannels(const Graph &graph, NodeId concat) {
  ShapeRef shape = graph.shape({concat, 0});
  return shape.size() == 4 &&
         normalizeAxis(graph.getInt(concat, AttrName::Axis, 0), shape.size()) == 1;
}

/// Whether `v` is the result of a convolution, or of elementwise nodes
/// after one (its activation), that nothing but the next node reads.
static bool convolved(const Graph &graph, ValueRef v, std::span<const unsigned> readers) {
  constexpr int kMaxTail = 4;
  for (int i = 0; i <= kMaxTail && readers[v.node] == 1; ++i) {
    if (graph.kind(v.node) == OpKind::Conv2D)
      return true;
    if (!isElementwiseOp(graph.kind(v.node)) || graph.operands(v.node).empty())
      return false;
    v = graph.operands(v.node)[0];
  }
  return false;
}

unsigned fuel::distributePooling(Graph &graph) {
  size_t numNodes = graph.numNodes(); // Nodes added below are not revisited.
  std::vector<unsigned> readers(numNodes, 0);
  for (NodeId n = 0; n < numNodes; ++n)
    for (ValueRef v : graph.operands(n))
      ++readers[v.node];
  std::vector<bool> isOutput(numNodes, false);
  for (ValueRef v : graph.outputs()) {
    readers[v.node] += 2; // Never read by the pooling alone.
    isOutput[v.node] = true;
  }

  // The concat that replaces each rewritten pooling for its readers; a
  // concat's part may be a pooling rewritten before it.
  constexpr NodeId kNone = ~NodeId(0);
  std::vector<NodeId> replacement(numNodes, kNone);
  auto current = [&](ValueRef v) -> ValueRef {
    return v.node < numNodes && replacement[v.node] != kNone ? ValueRef{replacement[v.node], 0} : v;
  };
  unsigned rewritten = 0;
  for (NodeId pool = 0; pool < numNodes; ++pool) {
    if (graph.kind(pool) != OpKind::MaxPool2D || isOutput[pool])
      continue;
    NodeId concat = graph.operands(pool)[0].node;
    if (graph.kind(concat) != OpKind::Concat || readers[concat] != 1 ||
        !joinsChannels(graph, concat))
      continue;
    std::vector<ValueRef> parts;
    for (ValueRef v : graph.operands(concat))
      parts.push_back(current(v));
    if (std::ranges::none_of(parts, [&](ValueRef v) { return convolved(graph, v, readers); }))
      continue;
    // (Copies: building nodes may move the graph's pools.)
    TensorType pooled = graph.type({pool, 0});
    std::string name(graph.name(pool));
    for (size_t i = 0; i < parts.size(); ++i) {
      TensorType part = pooled;
      part.shape[1] = graph.shape(parts[i])[1];
      NodeId partPool = pool;
      if (i > 0) {
        partPool = graph.createNode(OpKind::MaxPool2D, name + ".part" + std::to_string(i));
        graph.addOperand(parts[i]);
        graph.copyAttrs(pool);
        graph.addResults(1);
      }
      graph.setOperand(partPool, 0, parts[i]);
      graph.setResultType({partPool, 0}, part);
      graph.setOperand(concat, i, {partPool, 0});
    }
    graph.setResultType({concat, 0}, pooled);
    replacement[pool] = concat;
    ++rewritten;
  }
  if (rewritten == 0)
    return 0;
  // Readers of a rewritten pooling read its concat instead, except that
  // concat itself, which reads the pooling of the first part.
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    auto operands = graph.operands(n);
    for (unsigned i = 0; i < operands.size(); ++i) {
      ValueRef v = current(operands[i]);
      if (v != operands[i] && v.node != n)
        graph.setOperand(n, i, v);
    }
  }
  return rewritten;
}
