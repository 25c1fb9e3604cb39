//===- InterpretShapeOps.cpp - Reference views and data movement ----------===//
//
// Views through IR/Layout.h, concat, split, gather, pad and write_slice.
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

using namespace fuel;
using namespace fuel::detail;

//===----------------------------------------------------------------------===//
// Views and data movement
//===----------------------------------------------------------------------===//

HostTensor Interpreter::view(NodeId node) {
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  OpKind kind = graph.kind(node);
  if (kind == OpKind::Reshape || kind == OpKind::Squeeze ||
      kind == OpKind::Unsqueeze) { // The same elements in order.
    out.values = in.values;
    return out;
  }
  Layout layout =
      viewLayout(graph, node, Layout::contiguous(in.shape), out.shape);
  Extents index;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    out.values[i] = in.values[layout.elementOffset(index)];
  }
  return out;
}

HostTensor Interpreter::concat(NodeId node) {
  HostTensor out = result(node);
  unsigned axis = axisAttr(node, 0, out.shape.size());
  int64_t outer = product(out.shape, 0, axis);
  int64_t inner = product(out.shape, axis + 1);
  int64_t at = 0; // Position along the axis.
  for (unsigned i = 0; i < graph.operands(node).size(); ++i) {
    const HostTensor &in = operand(node, i);
    int64_t extent = in.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(in.values.begin() + o * extent * inner, extent * inner,
                  out.values.begin() + (o * out.shape[axis] + at) * inner);
    at += extent;
  }
  return out;
}

std::vector<HostTensor> Interpreter::split(NodeId node) {
  const HostTensor &in = operand(node, 0);
  unsigned axis = axisAttr(node, 0, in.shape.size());
  int64_t outer = product(in.shape, 0, axis), inner = product(in.shape, axis + 1);
  std::vector<HostTensor> parts;
  int64_t at = 0;
  for (uint32_t r = 0; r < graph.numResults(node); ++r) {
    HostTensor part = result(node, r);
    int64_t extent = part.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(in.values.begin() + (o * in.shape[axis] + at) * inner,
                  extent * inner, part.values.begin() + o * extent * inner);
    at += extent;
    parts.push_back(std::move(part));
  }
  return parts;
}

LogicalResult Interpreter::gather(NodeId node, HostTensor &out) {
  const HostTensor &data = operand(node, 0), &indices = operand(node, 1);
  out = result(node);
  unsigned axis = axisAttr(node, 0, data.shape.size());
  int64_t outer = product(data.shape, 0, axis);
  int64_t inner = product(data.shape, axis + 1), extent = data.shape[axis];
  int64_t count = indices.numElements();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = static_cast<int64_t>(indices.values[i]);
      if (index < -extent || index >= extent)
        return error(node, "gather index " + std::to_string(index) +
                               " is out of range for extent " +
                               std::to_string(extent));
      if (index < 0)
        index += extent;
      std::copy_n(data.values.begin() + (o * extent + index) * inner, inner,
                  out.values.begin() + (o * count + i) * inner);
    }
  return success();
}

HostTensor Interpreter::pad(NodeId node) {
  const HostTensor &in = operand(node, 0);
  HostTensor out = result(node);
  std::vector<int64_t> pads = ints(node, AttrName::Pads);
  std::string_view mode = "constant";
  if (const Attribute *a = graph.findAttr(node, AttrName::Mode))
    mode = graph.stringAttr(*a);
  double value = graph.getFloat(node, AttrName::Value, 0);
  size_t rank = in.shape.size();
  Extents index;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    unravel(i, out.shape, index);
    bool outside = false;
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t at = index[d] - pads[d], extent = in.shape[d];
      if (at < 0 || at >= extent) {
        outside = true;
        if (mode == "reflect")
          at = at < 0 ? -at : 2 * (extent - 1) - at;
        else if (mode == "edge")
          at = std::clamp<int64_t>(at, 0, extent - 1);
      }
      offset = offset * extent + at;
    }
    out.values[i] = outside && mode == "constant" ? value : in.values[offset];
  }
  return out;
}

LogicalResult Interpreter::writeSlice(NodeId node, HostTensor &out) {
  out = operand(node, 0);
  const HostTensor &src = operand(node, 1);
  unsigned axis = axisAttr(node, 0, out.shape.size());
  Dim offsetDim = graph.dimsAttr(*graph.findAttr(node, AttrName::Offset))[0];
  int64_t offset = offsetDim.isStatic() ? offsetDim.size()
                                        : symbolValues[offsetDim.symbolId()];
  if (offset < 0 || offset + src.shape[axis] > out.shape[axis])
    return error(node, "write_slice offset " + std::to_string(offset) +
                           " puts a slice of extent " +
                           std::to_string(src.shape[axis]) +
                           " outside the destination extent " +
                           std::to_string(out.shape[axis]));
  Extents index;
  for (int64_t i = 0; i < src.numElements(); ++i) {
    unravel(i, src.shape, index);
    index[axis] += offset;
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d)
      o = o * out.shape[d] + index[d];
    out.values[o] = src.values[i];
  }
  return success();
}
