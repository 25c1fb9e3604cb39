//===- GraphTest.cpp - Building and querying the compact graph ------------===//

#include "fuel/IR/Graph.h"
#include "fuel/IR/GraphStats.h"
#include "fuel/IR/Verifier.h"

#include <catch2/catch.hpp>

using namespace fuel;

TEST_CASE("nodes store operands, attributes and results in pools", "[graph]") {
  Graph g;
  g.setName("g");
  uint32_t b = g.symbols().intern("B");
  NodeId x = g.createNode(OpKind::Input, "x");
  g.addResults(1);
  Shape xs{Dim::symbol(b), Dim::fixed(8)};
  g.setResultType({x, 0}, DType::F32, xs);
  NodeId s = g.createNode(OpKind::Split, "s");
  g.addOperand({x, 0});
  g.addIntAttr(AttrName::Axis, 1);
  std::vector<int64_t> sizes{3, 5};
  g.addIntsAttr(AttrName::Sizes, sizes);
  g.setPlacement(s, DeviceRef{DeviceKind::CUDA, 0});
  g.addResults(expectedResultCount(g, s));
  NodeId c = g.createNode(OpKind::Clamp, "c");
  g.addOperand({s, 1});
  g.addFloatAttr(AttrName::MinValue, -0.5);
  g.addResults(1);
  g.addOutput({c, 0});

  CHECK(g.numNodes() == 3);
  CHECK(g.name(s) == "s");
  CHECK(g.numResults(s) == 2);
  CHECK(g.operands(c)[0] == ValueRef{s, 1});
  CHECK(g.getInt(s, AttrName::Axis, 0) == 1);
  CHECK(g.getInt(s, AttrName::Num, 42) == 42);
  CHECK(g.getFloat(c, AttrName::MinValue, 0) == -0.5);
  CHECK(std::vector<int64_t>(g.intsAttr(*g.findAttr(s, AttrName::Sizes)).begin(),
                             g.intsAttr(*g.findAttr(s, AttrName::Sizes)).end()) ==
        sizes);
  CHECK(g.placement(s)->kind == DeviceKind::CUDA);
  CHECK_FALSE(g.placement(x));
  CHECK_FALSE(g.hasType({s, 0}));

  DiagnosticEngine diag;
  std::vector<NodeId> order;
  REQUIRE(succeeded(verifyGraph(g, diag, SourceLocator(), &order)));
  CHECK(order == std::vector<NodeId>{0, 1, 2});
  CHECK(formatShape(g.shape({s, 1}), g.symbols()) == "[B, 5]");
  CHECK(g.dtype({c, 0}) == DType::F32);

  GraphStats stats = computeGraphStats(g);
  CHECK(stats.numInputs == 1);
  CHECK(stats.nodesByOp[static_cast<unsigned>(OpKind::Split)] == 1);
}

TEST_CASE("a million-node graph stays compact", "[graph]") {
  // A residual chain: y_i = add(y_{i-1}, relu(y_{i-1})), 1M nodes in all.
  Graph g;
  const size_t n = 1000000;
  g.reserve(n, 2);
  NodeId x = g.createNode(OpKind::Input, "x");
  g.addResults(1);
  Shape shape{Dim::fixed(64)};
  g.setResultType({x, 0}, DType::F32, shape);
  ValueRef prev{x, 0};
  std::string name;
  for (size_t i = 1; i + 1 < n; i += 2) {
    name = "r" + std::to_string(i);
    NodeId r = g.createNode(OpKind::Relu, name);
    g.addOperand(prev);
    g.addResults(1);
    name = "a" + std::to_string(i);
    NodeId a = g.createNode(OpKind::Add, name);
    g.addOperand(prev);
    g.addOperand({r, 0});
    g.addResults(1);
    prev = {a, 0};
  }
  g.addOutput(prev);
  DiagnosticEngine diag;
  REQUIRE(succeeded(verifyGraph(g, diag)));
  CHECK(g.numNodes() == n - 1);
  // Structure plus inferred types, names included: well under 100 B/node.
  CHECK(g.memoryFootprint() / g.numNodes() < 100);
}
