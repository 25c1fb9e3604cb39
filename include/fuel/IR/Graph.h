//===- Graph.h - The compact graph IR used for planning ---------*- C++ -*-===//
//
// A dataflow graph stored as parallel arrays (struct of arrays) indexed by a
// dense NodeId: operands, attributes, result types and names live in shared
// pools addressed by per-node offset arrays (CSR). A node costs a few dozen
// bytes and no heap allocation of its own, so 1M-node graphs are cheap to
// build, copy and walk.
//
// Nodes are built one at a time: createNode() opens a node, and operands,
// attributes and results are appended to the most recently created node.
// Every value is a result of a node; graph inputs and constants are nodes of
// kind Input and Constant.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_GRAPH_H
#define FUEL_IR_GRAPH_H

#include "fuel/IR/Attribute.h"
#include "fuel/IR/Constant.h"
#include "fuel/Support/DType.h"
#include "fuel/IR/Device.h"
#include "fuel/IR/OpKind.h"
#include "fuel/IR/Shape.h"

#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

using NodeId = uint32_t;

/// One result of one node.
struct ValueRef {
  NodeId node = 0;
  uint32_t result = 0;
  bool operator==(const ValueRef &o) const {
    return node == o.node && result == o.result;
  }
  bool operator<(const ValueRef &o) const {
    return node != o.node ? node < o.node : result < o.result;
  }
};

/// A tensor type as seen by shape inference: dtype plus extents.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType &o) const {
    return dtype == o.dtype && shape == o.shape;
  }
};

class Graph {
public:
  Graph();

  //===--- Building -------------------------------------------------------===//

  /// Opens a new node; later add* calls append to it.
  NodeId createNode(OpKind kind, std::string_view name);
  void addOperand(ValueRef value);
  void setOperand(NodeId node, unsigned index, ValueRef value);
  void setPlacement(NodeId node, DeviceRef device);
  /// Gives the open node `count` results with unknown types.
  void addResults(unsigned count);

  void addIntAttr(AttrName name, int64_t value);
  void addFloatAttr(AttrName name, double value);
  void addBoolAttr(AttrName name, bool value);
  void addStringAttr(AttrName name, std::string_view value);
  void addIntsAttr(AttrName name, std::span<const int64_t> values);
  void addDimsAttr(AttrName name, ShapeRef dims);
  void addDimAttr(AttrName name, Dim dim);
  void addDTypeAttr(AttrName name, DType dtype);
  void addDeviceAttr(AttrName name, DeviceRef device);
  /// Gives the open node every attribute of `node` (sharing pooled values).
  void copyAttrs(NodeId node);

  /// Records the type of one result (set by import for sources, by shape
  /// inference for every other node).
  void setResultType(ValueRef value, DType dtype, ShapeRef shape);
  void setResultType(ValueRef value, const TensorType &type) {
    setResultType(value, type.dtype, type.shape);
  }
  void setConstantData(NodeId node, ConstantData data);

  void addOutput(ValueRef value) { graphOutputs.push_back(value); }
  void setName(std::string_view n) { graphName = n; }
  SymbolTable &symbols() { return symbolTable; }

  //===--- Queries --------------------------------------------------------===//

  size_t numNodes() const { return kinds.size(); }
  OpKind kind(NodeId node) const { return kinds[node]; }
  std::string_view name(NodeId node) const {
    return std::string_view(namePool).substr(
        nameOffsets[node], nameOffsets[node + 1] - nameOffsets[node]);
  }
  std::span<const ValueRef> operands(NodeId node) const {
    return {operandPool.data() + operandOffsets[node],
            operandOffsets[node + 1] - operandOffsets[node]};
  }
  std::span<const Attribute> attrs(NodeId node) const {
    return {attrPool.data() + attrOffsets[node],
            attrOffsets[node + 1] - attrOffsets[node]};
  }
  unsigned numResults(NodeId node) const {
    return resultOffsets[node + 1] - resultOffsets[node];
  }
  std::optional<DeviceRef> placement(NodeId node) const {
    return DeviceRef::decode(placements[node]);
  }

  /// Whether shape inference (or import) has typed this value.
  bool hasType(ValueRef value) const { return slot(value).known; }
  DType dtype(ValueRef value) const { return slot(value).dtype; }
  ShapeRef shape(ValueRef value) const {
    const ResultSlot &s = slot(value);
    return {dimPool.data() + s.dimsOffset, s.rank};
  }
  TensorType type(ValueRef value) const {
    ShapeRef s = shape(value);
    return {dtype(value), Shape(s.begin(), s.end())};
  }

  const Attribute *findAttr(NodeId node, AttrName name) const;
  int64_t intAttr(const Attribute &a) const { return a.payload; }
  double floatAttr(const Attribute &a) const;
  bool boolAttr(const Attribute &a) const { return a.payload != 0; }
  std::string_view stringAttr(const Attribute &a) const {
    return std::string_view(stringPool).substr(a.payload, a.count);
  }
  std::span<const int64_t> intsAttr(const Attribute &a) const {
    return {intPool.data() + a.payload, a.count};
  }
  /// Dims and Dim attributes (a Dim is a one-element list).
  std::span<const Dim> dimsAttr(const Attribute &a) const {
    return {dimPool.data() + a.payload, a.count};
  }
  DType dtypeAttr(const Attribute &a) const {
    return static_cast<DType>(a.payload);
  }
  DeviceRef deviceAttr(const Attribute &a) const {
    return *DeviceRef::decode(static_cast<uint32_t>(a.payload));
  }

  /// Typed lookups with a default, for shape inference and later passes.
  int64_t getInt(NodeId node, AttrName name, int64_t dflt) const;
  double getFloat(NodeId node, AttrName name, double dflt) const;
  bool getBool(NodeId node, AttrName name, bool dflt) const;

  const ConstantData *constantData(NodeId node) const;
  std::span<const ValueRef> outputs() const { return graphOutputs; }
  std::string_view graphNameText() const { return graphName; }
  const SymbolTable &symbols() const { return symbolTable; }

  /// Bytes of memory the graph structure uses (not constant payloads).
  size_t memoryFootprint() const;
  /// Pre-sizes the pools for `nodes` nodes with about `operandsPerNode`.
  void reserve(size_t nodes, size_t operandsPerNode);

private:
  struct ResultSlot {
    uint32_t dimsOffset = 0;
    uint16_t rank = 0;
    DType dtype = DType::F32;
    bool known = false;
  };
  const ResultSlot &slot(ValueRef v) const {
    assert(v.result < numResults(v.node) && "result index out of range");
    return resultPool[resultOffsets[v.node] + v.result];
  }
  void addAttr(Attribute a);
  NodeId openNode() const {
    assert(!kinds.empty() && "no open node");
    return static_cast<NodeId>(kinds.size() - 1);
  }

  std::vector<OpKind> kinds;
  std::vector<uint32_t> placements;
  std::vector<uint32_t> nameOffsets;
  std::string namePool;
  std::vector<uint32_t> operandOffsets;
  std::vector<ValueRef> operandPool;
  std::vector<uint32_t> attrOffsets;
  std::vector<Attribute> attrPool;
  std::vector<uint32_t> resultOffsets;
  std::vector<ResultSlot> resultPool;

  std::vector<Dim> dimPool;
  std::vector<int64_t> intPool;
  std::string stringPool;

  /// Sorted by node id (constants are created in id order).
  std::vector<std::pair<NodeId, ConstantData>> constants;
  std::vector<ValueRef> graphOutputs;
  std::string graphName;
  SymbolTable symbolTable;
};

/// The value whose buffer `value` lives in: views are followed to their
/// source (a view is metadata over that buffer).
ValueRef bufferRoot(const Graph &graph, ValueRef value);

/// The node's name, with `#result` for nodes of several results.
std::string valueName(const Graph &graph, ValueRef value);

} // namespace fuel

#endif // FUEL_IR_GRAPH_H
