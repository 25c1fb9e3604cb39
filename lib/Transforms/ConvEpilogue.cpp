//===- ConvEpilogue.cpp - What the library conv2d applies -----------------===//

#include "fuel/Transforms/ConvEpilogue.h"

#include <algorithm>

using namespace fuel;

std::optional<ConvEpilogue> fuel::matchConvEpilogue(const Graph &graph,
                                                    std::span<const NodeId> nodes) {
  ValueRef value{nodes.front(), 0};
  ConvEpilogue epilogue;
  size_t i = 1;
  if (i < nodes.size() && graph.kind(nodes[i]) == OpKind::Add) {
    auto operands = graph.operands(nodes[i]);
    ValueRef other = operands[0] == value ? operands[1] : operands[0];
    bool inGroup = std::find(nodes.begin(), nodes.end(), other.node) != nodes.end();
    if (operands[0] == operands[1] || (operands[0] != value && operands[1] != value) || inGroup ||
        !std::ranges::equal(graph.shape(other), graph.shape(value)))
      return std::nullopt;
    epilogue.residual = other;
    value = {nodes[i++], 0};
  }
  if (i < nodes.size() && graph.operands(nodes[i])[0] == value) {
    if (graph.kind(nodes[i]) == OpKind::Relu) {
      epilogue.relu = true;
      ++i;
    } else if (graph.kind(nodes[i]) == OpKind::Clamp) {
      epilogue.lo = graph.getFloat(nodes[i], AttrName::MinValue, -INFINITY);
      epilogue.hi = graph.getFloat(nodes[i], AttrName::MaxValue, INFINITY);
      ++i;
    } else if (graph.kind(nodes[i]) == OpKind::Sigmoid && i + 1 < nodes.size() &&
               graph.kind(nodes[i + 1]) == OpKind::Mul) {
      auto product = graph.operands(nodes[i + 1]);
      ValueRef sigmoid{nodes[i], 0};
      if ((product[0] == value && product[1] == sigmoid) ||
          (product[0] == sigmoid && product[1] == value)) {
        epilogue.silu = true;
        i += 2;
      }
    }
  }
  if (i != nodes.size())
    return std::nullopt;
  return epilogue;
}

std::optional<PooledConv> fuel::pooledConvOfKernel(const Graph &graph,
                                                   std::span<const NodeId> nodes) {
  if (nodes.size() < 2 || graph.kind(nodes.front()) != OpKind::Conv2D ||
      graph.kind(nodes.back()) != OpKind::MaxPool2D)
    return std::nullopt;
  NodeId conv = nodes.front(), pool = nodes.back();
  ShapeRef result = graph.shape({conv, 0});
  if (graph.dtype({conv, 0}) != DType::F32 || graph.dtype({pool, 0}) != DType::F32 ||
      result.size() != 4 || !result[2].isStatic() || !result[3].isStatic() ||
      graph.operands(pool)[0] != ValueRef{nodes[nodes.size() - 2], 0})
    return std::nullopt;
  std::optional<ConvEpilogue> epilogue = matchConvEpilogue(graph, nodes.first(nodes.size() - 1));
  if (!epilogue || epilogue->residual)
    return std::nullopt;
  return PooledConv{conv, pool, *epilogue};
}
