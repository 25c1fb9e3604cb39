//===- InferenceContext.h - Per-node view for type inference ----*- C++ -*-===//
//
// What an op's inference rule sees: its operand types, attributes with
// defaults, and error reporting that points at the node, an operand or an
// attribute. Rules append result types to `results` and return failure after
// reporting.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_IR_INFERENCECONTEXT_H
#define FUEL_LIB_IR_INFERENCECONTEXT_H

#include "fuel/IR/Verifier.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fuel {

class InferenceContext {
public:
  InferenceContext(const Graph &graph, NodeId node, DiagnosticEngine &diag,
                   const SourceLocator &locator)
      : graph(graph), node(node), diag(diag), locator(locator) {}

  const Graph &graph;
  const NodeId node;
  std::vector<TensorType> results;

  OpKind kind() const { return graph.kind(node); }
  size_t numOperands() const { return graph.operands(node).size(); }
  DType dtype(unsigned i) const { return graph.dtype(graph.operands(node)[i]); }
  ShapeRef shape(unsigned i) const {
    return graph.shape(graph.operands(node)[i]);
  }
  size_t rank(unsigned i) const { return shape(i).size(); }

  const Attribute *attr(AttrName name) const {
    return graph.findAttr(node, name);
  }
  int64_t intAttr(AttrName name, int64_t dflt) const {
    return graph.getInt(node, name, dflt);
  }
  double floatAttr(AttrName name, double dflt) const {
    return graph.getFloat(node, name, dflt);
  }
  bool boolAttr(AttrName name, bool dflt) const {
    return graph.getBool(node, name, dflt);
  }
  /// The attribute's integers, or `dflt` when absent.
  std::vector<int64_t> intsAttr(AttrName name,
                                std::vector<int64_t> dflt = {}) const;

  LogicalResult error(std::string message) const {
    return report(NodeSite::node(), std::move(message));
  }
  LogicalResult operandError(unsigned i, std::string message) const {
    return report(NodeSite::ofOperand(i), std::move(message));
  }
  LogicalResult attrError(AttrName name, std::string message) const {
    return report(NodeSite::ofAttr(name), std::move(message));
  }

  std::string fmt(ShapeRef shape) const {
    return formatShape(shape, graph.symbols());
  }
  /// One extent without brackets: `64` or `B`.
  std::string fmt(Dim d) const {
    std::string s = fmt(ShapeRef(&d, 1));
    return s.substr(1, s.size() - 2);
  }
  std::string operandDesc(unsigned i) const;

  /// Requires every operand in [first, numOperands) to have operand `first`'s
  /// dtype.
  LogicalResult requireSameDType(unsigned first = 0) const;
  /// Requires operand i's dtype to satisfy `pred`, naming `what` otherwise.
  LogicalResult requireDType(unsigned i, bool (*pred)(DType),
                             const char *what) const;
  LogicalResult requireRank(unsigned i, size_t rank) const;
  /// Normalizes an axis attribute against `rank`, reporting when out of range.
  std::optional<unsigned> axis(AttrName name, int64_t value,
                               size_t rank) const;
  /// Normalizes a list of axes (unique, in range) against `rank`.
  std::optional<std::vector<unsigned>>
  axes(AttrName name, std::span<const int64_t> values, size_t rank) const;

private:
  LogicalResult report(NodeSite site, std::string message) const;

  DiagnosticEngine &diag;
  const SourceLocator &locator;
};

bool isNumeric(DType t); // Anything but bool.

// One inference entry point per op family (see Ops.def).
LogicalResult inferElementwise(InferenceContext &ctx);
LogicalResult inferLinalg(InferenceContext &ctx);
LogicalResult inferReduction(InferenceContext &ctx);
LogicalResult inferShapeOp(InferenceContext &ctx);
LogicalResult inferStructural(InferenceContext &ctx);

} // namespace fuel

#endif // FUEL_LIB_IR_INFERENCECONTEXT_H
