//===- VerifierTest.cpp - Structural checks and topological order ---------===//
//
// Graphs built through the API can be malformed in ways the JSON reader
// rejects early (dangling operands, wrong operand counts, duplicate ids); the
// verifier must catch all of them on its own.
//
//===----------------------------------------------------------------------===//

#include "fuel/IR/Verifier.h"

#include <catch2/catch.hpp>

#include <numeric>
#include <random>

using namespace fuel;

namespace {
struct Collected {
  DiagnosticEngine diag;
  std::vector<Diagnostic> list;
  Collected() {
    diag.setHandler([this](const Diagnostic &d) { list.push_back(d); });
  }
};

NodeId addInput(Graph &g, std::string_view name) {
  NodeId n = g.createNode(OpKind::Input, name);
  g.addResults(1);
  Shape s{Dim::fixed(4)};
  g.setResultType({n, 0}, DType::F32, s);
  return n;
}

NodeId addUnary(Graph &g, OpKind kind, std::string_view name, ValueRef in) {
  NodeId n = g.createNode(kind, name);
  g.addOperand(in);
  g.addResults(1);
  return n;
}
} // namespace

TEST_CASE("structural errors are all reported", "[verifier]") {
  Graph g;
  NodeId x = addInput(g, "x");
  addUnary(g, OpKind::Relu, "x", {x, 0});        // Duplicate id.
  addUnary(g, OpKind::Exp, "e", {77, 0});        // Dangling node.
  addUnary(g, OpKind::Exp, "f", {x, 3});         // Dangling result.
  NodeId add = addUnary(g, OpKind::Add, "g", {x, 0}); // One operand short.
  NodeId cast = addUnary(g, OpKind::Cast, "h", {x, 0}); // Missing 'to'.
  g.addOutput({add, 0});
  g.addOutput({cast, 5});
  Collected c;
  CHECK(failed(verifyGraph(g, c.diag)));
  std::vector<std::string> messages;
  for (const Diagnostic &d : c.list)
    messages.push_back(d.message);
  CHECK(messages == std::vector<std::string>{
                        "relu: duplicate id 'x'",
                        "exp: operand 0 refers to a value that does not exist",
                        "exp: operand 0 refers to a value that does not exist",
                        "add: expects 2 operand(s), got 1",
                        "cast: missing required attribute 'to'",
                        "graph output 1 refers to a value that does not exist"});
}

TEST_CASE("attributes of the wrong type or op are rejected", "[verifier]") {
  Graph g;
  NodeId x = addInput(g, "x");
  NodeId r = g.createNode(OpKind::Relu, "r");
  g.addOperand({x, 0});
  g.addIntAttr(AttrName::Axis, 0);
  g.addResults(1);
  NodeId s = g.createNode(OpKind::Softmax, "s");
  g.addOperand({r, 0});
  g.addFloatAttr(AttrName::Axis, 0.5);
  g.addIntAttr(AttrName::Axis, 0);
  g.addResults(1);
  g.addOutput({s, 0});
  Collected c;
  CHECK(failed(verifyGraph(g, c.diag)));
  REQUIRE(c.list.size() == 3);
  CHECK(c.list[0].message == "relu: unexpected attribute 'axis'");
  CHECK(c.list[1].message == "softmax: attribute 'axis' must be an integer");
  CHECK(c.list[2].message == "softmax: attribute 'axis' is given twice");
}

TEST_CASE("a graph without outputs is rejected", "[verifier]") {
  Graph g;
  addInput(g, "x");
  Collected c;
  CHECK(failed(verifyGraph(g, c.diag)));
  REQUIRE(c.list.size() == 1);
  CHECK(c.list[0].message == "graph has no outputs");
}

TEST_CASE("cycles are found and named in edge order", "[verifier]") {
  Graph g;
  NodeId x = addInput(g, "x");
  NodeId a = g.createNode(OpKind::Add, "a");
  g.addOperand({x, 0});
  g.addOperand({0, 0}); // Patched below to close a -> b -> c -> a.
  g.addResults(1);
  NodeId b = addUnary(g, OpKind::Relu, "b", {a, 0});
  NodeId cc = addUnary(g, OpKind::Neg, "c", {b, 0});
  g.setOperand(a, 1, {cc, 0});
  g.addOutput({cc, 0});
  std::vector<NodeId> order, cycle;
  CHECK_FALSE(topologicalOrder(g, order, &cycle));
  CHECK(cycle == std::vector<NodeId>{a, b, cc});
  Collected c;
  CHECK(failed(verifyGraph(g, c.diag)));
  REQUIRE(c.list.size() == 1);
  CHECK(c.list[0].message == "graph has a cycle: 'a' -> 'b' -> 'c' -> 'a'");
}

TEST_CASE("topological order respects every edge of random DAGs",
          "[verifier]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    // Create nodes in a shuffled order so ids are not already topological.
    const size_t n = 300;
    std::vector<size_t> rank(n);
    std::iota(rank.begin(), rank.end(), 0);
    std::shuffle(rank.begin(), rank.end(), rng);
    // Node id i has rank[i]; it may only use nodes of lower rank.
    std::vector<NodeId> byRank(n);
    for (size_t i = 0; i < n; ++i)
      byRank[rank[i]] = static_cast<NodeId>(i);
    Graph g;
    for (size_t i = 0; i < n; ++i) {
      g.createNode(OpKind::Add, "n" + std::to_string(i));
      for (int k = 0; rank[i] != 0 && k < 2; ++k)
        g.addOperand({byRank[rng() % rank[i]], 0});
      g.addResults(1);
    }
    std::vector<NodeId> order;
    REQUIRE(topologicalOrder(g, order));
    REQUIRE(order.size() == n);
    std::vector<size_t> position(n);
    for (size_t p = 0; p < n; ++p)
      position[order[p]] = p;
    for (NodeId node = 0; node < n; ++node)
      for (ValueRef v : g.operands(node))
        REQUIRE(position[v.node] < position[node]);
  }
}
