//===- MaterializeTest.cpp - contiguous before strided reshapes -----------===//

#include "fuel/IR/ValueLayout.h"
#include "fuel/IR/Verifier.h"
#include "fuel/Transforms/Materialize.h"

#include <catch2/catch.hpp>

using namespace fuel;

namespace {
/// x[4, 6] -> view -> reshape [24].
Graph viewThenReshape(OpKind view) {
  Graph g;
  NodeId x = g.createNode(OpKind::Input, "x");
  g.addResults(1);
  Shape s{Dim::fixed(4), Dim::fixed(6)};
  g.setResultType({x, 0}, DType::F32, s);
  NodeId v = g.createNode(view, "v");
  g.addOperand({x, 0});
  g.addResults(1);
  NodeId r = g.createNode(OpKind::Reshape, "r");
  g.addOperand({v, 0});
  Shape flat{Dim::fixed(24)};
  g.addDimsAttr(AttrName::ShapeAttr, flat);
  g.addResults(1);
  g.addOutput({r, 0});
  return g;
}
} // namespace

TEST_CASE("a reshape of a transpose reads a dense copy", "[transforms]") {
  Graph g = viewThenReshape(OpKind::Transpose);
  DiagnosticEngine diag;
  REQUIRE(succeeded(verifyGraph(g, diag)));
  REQUIRE(materializeStridedReshapes(g) == 1);
  NodeId r = 2;
  ValueRef source = g.operands(r)[0];
  CHECK(g.kind(source.node) == OpKind::Contiguous);
  CHECK(g.name(source.node) == "r.contiguous");
  CHECK(g.type(source) == g.type({1, 0}));
  CHECK(isAlwaysContiguous(g, {r, 0}));
  REQUIRE(succeeded(verifyGraph(g, diag))); // Still a valid graph.
}

TEST_CASE("a reshape of a dense value stays a view", "[transforms]") {
  Graph g = viewThenReshape(OpKind::Relu);
  DiagnosticEngine diag;
  REQUIRE(succeeded(verifyGraph(g, diag)));
  CHECK(materializeStridedReshapes(g) == 0);
  CHECK(g.numNodes() == 3);
}
