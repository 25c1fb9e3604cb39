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

ViewParams fuel::viewParams(const Graph &graph, NodeId view) {
  ViewParams p;
  if (graph.kind(view) == OpKind::Transpose) {
    size_t rank = graph.shape(graph.operands(view)[0]).size();
    std::vector<int64_t> reversed(rank);
    for (size_t i = 0; i < rank; ++i)
      reversed[i] = static_cast<int64_t>(rank - 1 - i);
    p.perm = intsOr(graph, view, AttrName::Perm, reversed);
  } else if (graph.kind(view) == OpKind::Slice) {
    p.starts = intsOr(graph, view, AttrName::Starts, {});
    std::vector<int64_t> defaultAxes(p.starts.size());
    for (size_t i = 0; i < p.starts.size(); ++i)
      defaultAxes[i] = static_cast<int64_t>(i);
    p.axes = intsOr(graph, view, AttrName::Axes, defaultAxes);
    p.ends = intsOr(graph, view, AttrName::Ends, {});
    p.steps = intsOr(graph, view, AttrName::Steps,
                     std::vector<int64_t>(p.starts.size(), 1));
  }
  return p;
}

Layout fuel::viewLayout(const Graph &graph, NodeId view, const Layout &operand,
                        std::span<const int64_t> resultSizes) {
  switch (graph.kind(view)) {
  case OpKind::Transpose:
    return transposeView(operand, viewParams(graph, view).perm);
  case OpKind::Slice: {
    ViewParams p = viewParams(graph, view);
    return sliceView(operand, p.axes, p.starts, p.ends, p.steps);
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
