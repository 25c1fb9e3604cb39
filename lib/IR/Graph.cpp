//===- Graph.cpp - The compact graph IR used for planning -----------------===//

#include "fuel/IR/Graph.h"

#include <algorithm>
#include <cstring>

using namespace fuel;

Graph::Graph() {
  // Offset arrays hold numNodes + 1 entries: node i spans [off[i], off[i+1]).
  nameOffsets.push_back(0);
  operandOffsets.push_back(0);
  attrOffsets.push_back(0);
  resultOffsets.push_back(0);
}

void Graph::reserve(size_t nodes, size_t operandsPerNode) {
  kinds.reserve(nodes);
  placements.reserve(nodes);
  nameOffsets.reserve(nodes + 1);
  operandOffsets.reserve(nodes + 1);
  attrOffsets.reserve(nodes + 1);
  resultOffsets.reserve(nodes + 1);
  resultPool.reserve(nodes);
  operandPool.reserve(nodes * operandsPerNode);
  namePool.reserve(nodes * 8);
  dimPool.reserve(nodes * 3);
}

NodeId Graph::createNode(OpKind kind, std::string_view name) {
  kinds.push_back(kind);
  placements.push_back(0);
  namePool.append(name);
  nameOffsets.push_back(static_cast<uint32_t>(namePool.size()));
  operandOffsets.push_back(operandOffsets.back());
  attrOffsets.push_back(attrOffsets.back());
  resultOffsets.push_back(resultOffsets.back());
  return static_cast<NodeId>(kinds.size() - 1);
}

void Graph::addOperand(ValueRef value) {
  openNode();
  operandPool.push_back(value);
  ++operandOffsets.back();
}

void Graph::setOperand(NodeId node, unsigned index, ValueRef value) {
  assert(index < operands(node).size() && "operand index out of range");
  operandPool[operandOffsets[node] + index] = value;
}

void Graph::setPlacement(NodeId node, DeviceRef device) {
  placements[node] = device.encode();
}

void Graph::addResults(unsigned count) {
  openNode();
  resultPool.resize(resultPool.size() + count);
  resultOffsets.back() += count;
}

void Graph::addAttr(Attribute a) {
  openNode();
  attrPool.push_back(a);
  ++attrOffsets.back();
}

void Graph::copyAttrs(NodeId node) {
  assert(node != openNode() && "copying the open node's own attributes");
  // By index: appending may move the pool under a span of it.
  for (uint32_t a = attrOffsets[node]; a < attrOffsets[node + 1]; ++a)
    addAttr(attrPool[a]);
}

void Graph::addIntAttr(AttrName name, int64_t value) {
  addAttr({name, AttrType::Int, 0, value});
}

void Graph::addFloatAttr(AttrName name, double value) {
  int64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  addAttr({name, AttrType::Float, 0, bits});
}

void Graph::addBoolAttr(AttrName name, bool value) {
  addAttr({name, AttrType::Bool, 0, value ? 1 : 0});
}

void Graph::addStringAttr(AttrName name, std::string_view value) {
  int64_t offset = static_cast<int64_t>(stringPool.size());
  stringPool.append(value);
  addAttr({name, AttrType::String, static_cast<uint32_t>(value.size()),
           offset});
}

void Graph::addIntsAttr(AttrName name, std::span<const int64_t> values) {
  int64_t offset = static_cast<int64_t>(intPool.size());
  intPool.insert(intPool.end(), values.begin(), values.end());
  addAttr({name, AttrType::Ints, static_cast<uint32_t>(values.size()),
           offset});
}

void Graph::addDimsAttr(AttrName name, ShapeRef dims) {
  int64_t offset = static_cast<int64_t>(dimPool.size());
  dimPool.insert(dimPool.end(), dims.begin(), dims.end());
  addAttr({name, AttrType::Dims, static_cast<uint32_t>(dims.size()), offset});
}

void Graph::addDimAttr(AttrName name, Dim dim) {
  int64_t offset = static_cast<int64_t>(dimPool.size());
  dimPool.push_back(dim);
  addAttr({name, AttrType::Dim, 1, offset});
}

void Graph::addDTypeAttr(AttrName name, DType dtype) {
  addAttr({name, AttrType::DType, 0, static_cast<int64_t>(dtype)});
}

void Graph::addDeviceAttr(AttrName name, DeviceRef device) {
  addAttr({name, AttrType::Device, 0, device.encode()});
}

void Graph::setResultType(ValueRef value, DType dtype, ShapeRef shape) {
  ResultSlot &s = resultPool[resultOffsets[value.node] + value.result];
  assert(shape.size() <= UINT16_MAX && "rank too large");
  s.dtype = dtype;
  s.rank = static_cast<uint16_t>(shape.size());
  s.dimsOffset = static_cast<uint32_t>(dimPool.size());
  s.known = true;
  dimPool.insert(dimPool.end(), shape.begin(), shape.end());
}

void Graph::setConstantData(NodeId node, ConstantData data) {
  auto it = std::lower_bound(
      constants.begin(), constants.end(), node,
      [](const auto &entry, NodeId n) { return entry.first < n; });
  if (it != constants.end() && it->first == node)
    it->second = std::move(data); // Replaced (e.g. moved to another file).
  else
    constants.insert(it, {node, std::move(data)});
}

const ConstantData *Graph::constantData(NodeId node) const {
  auto it = std::lower_bound(
      constants.begin(), constants.end(), node,
      [](const auto &entry, NodeId n) { return entry.first < n; });
  if (it == constants.end() || it->first != node)
    return nullptr;
  return &it->second;
}

const Attribute *Graph::findAttr(NodeId node, AttrName name) const {
  for (const Attribute &a : attrs(node))
    if (a.name == name)
      return &a;
  return nullptr;
}

double Graph::floatAttr(const Attribute &a) const {
  double value;
  std::memcpy(&value, &a.payload, sizeof(value));
  return value;
}

int64_t Graph::getInt(NodeId node, AttrName name, int64_t dflt) const {
  const Attribute *a = findAttr(node, name);
  return a ? a->payload : dflt;
}

double Graph::getFloat(NodeId node, AttrName name, double dflt) const {
  const Attribute *a = findAttr(node, name);
  return a ? floatAttr(*a) : dflt;
}

bool Graph::getBool(NodeId node, AttrName name, bool dflt) const {
  const Attribute *a = findAttr(node, name);
  return a ? a->payload != 0 : dflt;
}

size_t Graph::memoryFootprint() const {
  auto bytes = [](const auto &v) {
    return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type);
  };
  return bytes(kinds) + bytes(placements) + bytes(nameOffsets) +
         namePool.capacity() + bytes(operandOffsets) + bytes(operandPool) +
         bytes(attrOffsets) + bytes(attrPool) + bytes(resultOffsets) +
         bytes(resultPool) + bytes(dimPool) + bytes(intPool) +
         stringPool.capacity() + bytes(constants) + bytes(graphOutputs);
}

ValueRef fuel::bufferRoot(const Graph &graph, ValueRef value) {
  while (isViewOp(graph.kind(value.node)))
    value = graph.operands(value.node)[0];
  return value;
}

std::string fuel::valueName(const Graph &graph, ValueRef value) {
  std::string name(graph.name(value.node));
  if (graph.numResults(value.node) != 1)
    name += "#" + std::to_string(value.result);
  return name;
}
