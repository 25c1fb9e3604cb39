//===- DistributePoolingTest.cpp - Pooling of a concat, per part ----------===//

#include "../TestUtil.h"

#include "fuel/IR/Verifier.h"
#include "fuel/Transforms/DistributePooling.h"

#include <catch2/catch.hpp>

using namespace fuel;
using namespace fuel::test;

namespace {
/// Two fire-like stages: the first pooling's concat joins two convolutions,
/// the second's joins the first pooling and a convolution of it, and a
/// ReLU reads each pooling.
const char *kNested = R"([
  {"id": "a", "op": "conv2d", "inputs": ["x", "wa"], "attrs": {"pads": [1, 1, 1, 1]}},
  {"id": "b", "op": "conv2d", "inputs": ["x", "wb"]},
  {"id": "ar", "op": "relu", "inputs": ["a"]},
  {"id": "cat1", "op": "concat", "inputs": ["ar", "b"], "attrs": {"axis": 1}},
  {"id": "p1", "op": "max_pool2d", "inputs": ["cat1"], "attrs": {"kernel": [2, 2], "strides": [2, 2]}},
  {"id": "c", "op": "conv2d", "inputs": ["p1", "wc"]},
  {"id": "cr", "op": "relu", "inputs": ["c"]},
  {"id": "cat2", "op": "concat", "inputs": ["p1", "cr"], "attrs": {"axis": -3}},
  {"id": "p2", "op": "max_pool2d", "inputs": ["cat2"], "attrs": {"kernel": [3, 3], "strides": [2, 2], "ceil_mode": true}},
  {"id": "y", "op": "relu", "inputs": ["p1"]},
  {"id": "z", "op": "relu", "inputs": ["p2"]}
])";
const char *kInputs = R"([{"name": "x", "dtype": "f32", "shape": [2, 4, 20, 20]},
  {"name": "wa", "dtype": "f32", "shape": [6, 4, 3, 3]},
  {"name": "wb", "dtype": "f32", "shape": [3, 4, 1, 1]},
  {"name": "wc", "dtype": "f32", "shape": [5, 9, 1, 1]}])";

NodeId nodeNamed(const Graph &g, std::string_view name) {
  for (NodeId n = 0; n < g.numNodes(); ++n)
    if (g.name(n) == name)
      return n;
  FAIL("no node " << name);
  return 0;
}

std::string operandName(const Graph &g, std::string_view node, unsigned i) {
  return std::string(g.name(g.operands(nodeNamed(g, node))[i].node));
}
} // namespace

TEST_CASE("pooling a concat pools each part, nested stages too", "[transforms]") {
  ParseResult r = parseText(document(kInputs, kNested, R"(["z", "y"])"));
  REQUIRE(r.graph);
  Graph &g = *r.graph;
  std::string p1Type = typeOf(g, "p1"), p2Type = typeOf(g, "p2");
  REQUIRE(distributePooling(g) == 2);

  CHECK(operandName(g, "p1", 0) == "ar");
  CHECK(operandName(g, "p1.part1", 0) == "b");
  CHECK(typeOf(g, "p1") == "f32[2, 6, 10, 10]");
  CHECK(typeOf(g, "p1.part1") == "f32[2, 3, 10, 10]");
  CHECK(operandName(g, "cat1", 0) == "p1");
  CHECK(operandName(g, "cat1", 1) == "p1.part1");
  CHECK(typeOf(g, "cat1") == p1Type);
  // Every reader of the first pooling reads its concat, the second stage's
  // pooling of its first part included.
  CHECK(operandName(g, "c", 0) == "cat1");
  CHECK(operandName(g, "y", 0) == "cat1");
  CHECK(operandName(g, "p2", 0) == "cat1");
  CHECK(typeOf(g, "p2") == "f32[2, 9, 5, 5]");
  CHECK(operandName(g, "p2.part1", 0) == "cr");
  CHECK(typeOf(g, "cat2") == p2Type);
  CHECK(operandName(g, "z", 0) == "cat2");
  CHECK(g.getBool(nodeNamed(g, "p2.part1"), AttrName::CeilMode, false));

  // Verifying infers every type again: the rewrite's must agree.
  std::string cat1 = typeOf(g, "cat1"), part = typeOf(g, "p2.part1");
  DiagnosticEngine diag;
  REQUIRE(succeeded(verifyGraph(g, diag)));
  CHECK(typeOf(g, "cat1") == cat1);
  CHECK(typeOf(g, "p2.part1") == part);
}

TEST_CASE("a pooling stays whole where its concat must", "[transforms]") {
  // The concats are outputs: neither stage changes. The first pooling is
  // an output: only the second stage pools per part.
  ParseResult concats = parseText(document(kInputs, kNested, R"(["z", "y", "cat1", "cat2"])"));
  REQUIRE(concats.graph);
  CHECK(distributePooling(*concats.graph) == 0);
  ParseResult pooled = parseText(document(kInputs, kNested, R"(["z", "p1"])"));
  REQUIRE(pooled.graph);
  CHECK(distributePooling(*pooled.graph) == 1);
  CHECK(operandName(*pooled.graph, "p1", 0) == "cat1");
  CHECK(operandName(*pooled.graph, "p2", 0) == "p1");
  // No part is a convolution's result.
  ParseResult r = parseText(
      document(R"([{"name": "x", "dtype": "f32", "shape": [1, 4, 8, 8]}])",
               R"([{"id": "cat", "op": "concat", "inputs": ["x", "x"], "attrs": {"axis": 1}},
          {"id": "p", "op": "max_pool2d", "inputs": ["cat"], "attrs": {"kernel": [2, 2]}}])",
               R"(["p"])"));
  REQUIRE(r.graph);
  CHECK(distributePooling(*r.graph) == 0);
}
