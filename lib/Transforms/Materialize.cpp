//===- Materialize.cpp - Copies that views cannot express -----------------===//

#include "fuel/Transforms/Materialize.h"

#include "fuel/IR/ValueLayout.h"

using namespace fuel;

unsigned fuel::materializeStridedReshapes(Graph &graph) {
  unsigned inserted = 0;
  size_t numNodes = graph.numNodes(); // Nodes added below are not revisited.
  for (NodeId n = 0; n < numNodes; ++n) {
    if (graph.kind(n) != OpKind::Reshape)
      continue;
    ValueRef source = graph.operands(n)[0];
    if (isAlwaysContiguous(graph, source))
      continue;
    TensorType type = graph.type(source);
    NodeId copy = graph.createNode(OpKind::Contiguous,
                                   std::string(graph.name(n)) + ".contiguous");
    graph.addOperand(source);
    graph.addResults(1);
    graph.setResultType({copy, 0}, type);
    graph.setOperand(n, 0, {copy, 0});
    ++inserted;
  }
  return inserted;
}
