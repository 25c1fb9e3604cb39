//===- Attention.cpp - Scaled dot-product attention in a graph ------------===//

#include "fuel/Transforms/Attention.h"

#include <algorithm>

using namespace fuel;

std::vector<NodeId> AttentionChain::nodes() const {
  std::vector<NodeId> chain{scores};
  if (scale)
    chain.push_back(*scale);
  if (mask)
    chain.push_back(*mask);
  chain.push_back(softmax);
  chain.push_back(weighted);
  return chain;
}

/// A matmul of f32 matrices (operands of rank 2 or more).
static bool isMatrixProduct(const Graph &graph, NodeId n) {
  if (graph.kind(n) != OpKind::MatMul || graph.dtype({n, 0}) != DType::F32)
    return false;
  auto operands = graph.operands(n);
  return graph.shape(operands[0]).size() >= 2 && graph.shape(operands[1]).size() >= 2;
}

static bool isOneElement(const Graph &graph, ValueRef v) {
  ShapeRef shape = graph.shape(v);
  return graph.dtype(v) == DType::F32 &&
         std::all_of(shape.begin(), shape.end(), [](Dim d) { return d == Dim::fixed(1); });
}

/// The node reading `v` as operand `index`, if `candidate` is one.
static bool readsAt(const Graph &graph, NodeId candidate, ValueRef v, size_t index) {
  auto operands = graph.operands(candidate);
  return operands.size() > index && operands[index] == v;
}

std::optional<AttentionChain> fuel::matchAttention(const Graph &graph, NodeId softmax,
                                                   NodeId weighted) {
  if (graph.kind(softmax) != OpKind::Softmax || graph.dtype({softmax, 0}) != DType::F32 ||
      !isMatrixProduct(graph, weighted) || !readsAt(graph, weighted, {softmax, 0}, 0) ||
      graph.getBool(weighted, AttrName::TransposeA, false))
    return std::nullopt;
  ShapeRef scores = graph.shape({softmax, 0});
  if (scores.size() < 2 ||
      *normalizeAxis(graph.getInt(softmax, AttrName::Axis, -1), scores.size()) != scores.size() - 1)
    return std::nullopt;
  AttentionChain chain;
  chain.softmax = softmax;
  chain.weighted = weighted;
  chain.v = graph.operands(weighted)[1];
  ValueRef x = graph.operands(softmax)[0];
  if (graph.kind(x.node) == OpKind::Add) {
    // The mask is the operand that is not the scores' chain.
    auto operands = graph.operands(x.node);
    auto inChain = [&](ValueRef v) {
      OpKind k = graph.kind(v.node);
      return k == OpKind::Div || k == OpKind::Mul || isMatrixProduct(graph, v.node);
    };
    int chained = inChain(operands[0]) ? 0 : inChain(operands[1]) ? 1 : -1;
    if (chained < 0 || graph.dtype(operands[1 - chained]) != DType::F32 ||
        !std::ranges::equal(graph.shape(operands[chained]), scores))
      return std::nullopt;
    chain.mask = x.node;
    chain.maskValue = operands[1 - chained];
    x = operands[chained];
  }
  OpKind kind = graph.kind(x.node);
  if (kind == OpKind::Div || kind == OpKind::Mul) {
    auto operands = graph.operands(x.node);
    int scaled = kind == OpKind::Div || isOneElement(graph, operands[1]) ? 0 : 1;
    if (!isOneElement(graph, operands[1 - scaled]) ||
        !std::ranges::equal(graph.shape(operands[scaled]), scores))
      return std::nullopt;
    chain.scale = x.node;
    chain.scaleDivides = kind == OpKind::Div;
    chain.scaleValue = operands[1 - scaled];
    x = operands[scaled];
  }
  if (!isMatrixProduct(graph, x.node) || !std::ranges::equal(graph.shape(x), scores))
    return std::nullopt;
  chain.scores = x.node;
  chain.q = graph.operands(x.node)[0];
  chain.k = graph.operands(x.node)[1];
  return chain;
}

std::optional<AttentionChain> fuel::attentionOfKernel(const Graph &graph,
                                                      std::span<const NodeId> nodes) {
  auto softmax = std::find_if(nodes.begin(), nodes.end(),
                              [&](NodeId n) { return graph.kind(n) == OpKind::Softmax; });
  if (nodes.size() < 3 || softmax == nodes.end())
    return std::nullopt;
  // The weighted sum: the kernel's node that reads the probabilities.
  for (NodeId n : nodes)
    if (std::optional<AttentionChain> chain = matchAttention(graph, *softmax, n)) {
      std::vector<NodeId> members = chain->nodes(), sorted(nodes.begin(), nodes.end());
      std::ranges::sort(members);
      std::ranges::sort(sorted);
      return members == sorted ? chain : std::nullopt;
    }
  return std::nullopt;
}
