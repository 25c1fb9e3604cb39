//===- ValueLayout.cpp - Concrete layouts of values over buffers ----------===//

#include "fuel/IR/ValueLayout.h"

using namespace fuel;

std::vector<int64_t> fuel::concreteShape(ShapeRef shape,
                                         std::span<const int64_t> symbolValues) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (Dim d : shape)
    out.push_back(d.isStatic() ? d.size() : symbolValues[d.symbolId()]);
  return out;
}

static std::vector<int64_t> intsOr(const Graph &graph, NodeId node,
                                   AttrName name, std::vector<int64_t> dflt) {
  const Attribute *a = graph.findAttr(node, name);
  if (!a)
    return dflt;
  std::span<const int64_t> v = graph.intsAttr(*a);
  return {v.begin(), v.end()};
}

Layout fuel::viewLayout(const Graph &graph, NodeId view, const Layout &operand,
                        std::span<const int64_t> resultSizes) {
  switch (graph.kind(view)) {
  case OpKind::Transpose: {
    std::vector<int64_t> reversed(operand.sizes.size());
    for (size_t i = 0; i < reversed.size(); ++i)
      reversed[i] = static_cast<int64_t>(reversed.size() - 1 - i);
    return transposeView(operand, intsOr(graph, view, AttrName::Perm, reversed));
  }
  case OpKind::Slice: {
    std::vector<int64_t> starts = intsOr(graph, view, AttrName::Starts, {});
    std::vector<int64_t> defaultAxes(starts.size());
    for (size_t i = 0; i < starts.size(); ++i)
      defaultAxes[i] = static_cast<int64_t>(i);
    return sliceView(operand, intsOr(graph, view, AttrName::Axes, defaultAxes),
                     starts, intsOr(graph, view, AttrName::Ends, {}),
                     intsOr(graph, view, AttrName::Steps,
                            std::vector<int64_t>(starts.size(), 1)));
  }
  case OpKind::BroadcastTo:
  case OpKind::Expand:
    return broadcastView(operand, resultSizes);
  default: // reshape, squeeze, unsqueeze: verified to be expressible.
    if (std::optional<Layout> l = reshapeView(operand, resultSizes))
      return *l;
    // Unreachable for verified graphs; keep the elements in order.
    return Layout::contiguous(resultSizes);
  }
}

Layout fuel::valueLayout(const Graph &graph, ValueRef value,
                         std::span<const int64_t> symbolValues) {
  std::vector<int64_t> sizes = concreteShape(graph.shape(value), symbolValues);
  if (!isViewOp(graph.kind(value.node)))
    return Layout::contiguous(sizes);
  Layout operand =
      valueLayout(graph, graph.operands(value.node)[0], symbolValues);
  return viewLayout(graph, value.node, operand, sizes);
}

bool fuel::isAlwaysContiguous(const Graph &graph, ValueRef value) {
  while (isViewOp(graph.kind(value.node))) {
    OpKind k = graph.kind(value.node);
    if (k != OpKind::Reshape && k != OpKind::Squeeze && k != OpKind::Unsqueeze)
      return false;
    value = graph.operands(value.node)[0];
  }
  return true;
}
