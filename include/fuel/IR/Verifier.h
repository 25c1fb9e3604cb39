//===- Verifier.h - Graph verification and type inference -------*- C++ -*-===//
//
// verifyGraph checks structure (operand counts and references, unique names,
// required attributes, outputs, acyclicity), then infers every node's result
// types in topological order, checking each op's operand dtypes, ranks,
// shapes, broadcasting and attribute values. Errors are reported per node and
// the walk goes on, so one run lists every independent problem; nodes fed by
// an already-broken node are skipped rather than reported again.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_VERIFIER_H
#define FUEL_IR_VERIFIER_H

#include "fuel/IR/Graph.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"

#include <vector>

namespace fuel {

/// The part of a node a diagnostic points at.
struct NodeSite {
  enum class Kind : uint8_t { Node, Operand, Attribute };
  Kind kind = Kind::Node;
  unsigned operand = 0;
  AttrName attr = AttrName::Axis;

  static NodeSite node() { return {}; }
  static NodeSite ofOperand(unsigned i) { return {Kind::Operand, i, {}}; }
  static NodeSite ofAttr(AttrName a) { return {Kind::Attribute, 0, a}; }
};

/// Turns IR positions into source locations. The default names the node only;
/// importers override it to add file, line, column and JSON pointer.
class SourceLocator {
public:
  virtual ~SourceLocator() = default;
  virtual SourceLocation locate(const Graph &graph, NodeId node,
                                NodeSite site) const;
  /// Location of the graph's output list entry `index`.
  virtual SourceLocation locateOutput(const Graph &graph, unsigned index) const;
  /// Location of the graph's output list as a whole.
  virtual SourceLocation locateOutputs(const Graph &graph) const;
};

/// Verifies `graph` and sets the type of every result. On success `order`
/// (if given) receives a topological order of all nodes.
LogicalResult verifyGraph(Graph &graph, DiagnosticEngine &diag,
                          const SourceLocator &locator = SourceLocator(),
                          std::vector<NodeId> *order = nullptr);

/// Infers and sets the result types of one node whose operands are typed
/// (importers building a graph node by node); reports to `diag` on failure.
LogicalResult inferNodeTypes(Graph &graph, NodeId node, DiagnosticEngine &diag);

/// Kahn's algorithm, stable in node id order. On a cycle returns false and
/// fills `cycle` with the nodes of one cycle, in edge order.
bool topologicalOrder(const Graph &graph, std::vector<NodeId> &order,
                      std::vector<NodeId> *cycle = nullptr);

/// How many results `node` has, from its kind and attributes (split has one
/// per part; every other op has one).
unsigned expectedResultCount(const Graph &graph, NodeId node);

} // namespace fuel

#endif // FUEL_IR_VERIFIER_H
