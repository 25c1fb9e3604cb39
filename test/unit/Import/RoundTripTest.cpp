//===- RoundTripTest.cpp - parse -> print -> parse is the identity --------===//

#include "../TestUtil.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

using namespace fuel;
using namespace fuel::test;

namespace {
std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string refName(const Graph &g, ValueRef v) {
  return std::string(g.name(v.node)) + "#" + std::to_string(v.result);
}

/// Graph equality through everything the format can express. Nodes are
/// matched by name: printing groups inputs, constants and nodes, so ids of a
/// non-canonical file change on the way.
void requireSameGraph(const Graph &a, const Graph &b) {
  REQUIRE(a.numNodes() == b.numNodes());
  REQUIRE(a.graphNameText() == b.graphNameText());
  std::map<std::string_view, NodeId> byName;
  for (NodeId n = 0; n < b.numNodes(); ++n)
    byName[b.name(n)] = n;
  for (NodeId n = 0; n < a.numNodes(); ++n) {
    INFO("node " << a.name(n));
    REQUIRE(byName.count(a.name(n)));
    NodeId m = byName[a.name(n)];
    REQUIRE(a.kind(n) == b.kind(m));
    REQUIRE(a.operands(n).size() == b.operands(m).size());
    for (size_t i = 0; i < a.operands(n).size(); ++i)
      REQUIRE(refName(a, a.operands(n)[i]) == refName(b, b.operands(m)[i]));
    REQUIRE(a.placement(n).has_value() == b.placement(m).has_value());
    REQUIRE(a.attrs(n).size() == b.attrs(m).size());
    REQUIRE(a.numResults(n) == b.numResults(m));
    for (uint32_t r = 0; r < a.numResults(n); ++r) {
      REQUIRE(a.dtype({n, r}) == b.dtype({m, r}));
      REQUIRE(formatShape(a.shape({n, r}), a.symbols()) ==
              formatShape(b.shape({m, r}), b.symbols()));
    }
    const ConstantData *ca = a.constantData(n), *cb = b.constantData(m);
    REQUIRE((ca == nullptr) == (cb == nullptr));
    if (ca)
      REQUIRE(ca->bytes() == cb->bytes());
  }
  REQUIRE(a.outputs().size() == b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i)
    REQUIRE(refName(a, a.outputs()[i]) == refName(b, b.outputs()[i]));
}

void checkRoundTrip(const std::string &text, const std::string &baseDir) {
  ParseResult first = parseText(text, baseDir);
  INFO(first.firstMessage());
  REQUIRE(first.graph);
  std::string printed = printGraphJson(*first.graph);
  ParseResult second = parseText(printed, baseDir);
  INFO(second.firstMessage());
  REQUIRE(second.graph);
  requireSameGraph(*first.graph, *second.graph);
  CHECK(printGraphJson(*second.graph) == printed);
}
} // namespace

TEST_CASE("the examples round-trip", "[roundtrip]") {
  for (const char *example :
       {"mlp/mlp.json", "transformer/encoder_block.json", "cnn/small_cnn.json"}) {
    std::string path = std::string(FUEL_EXAMPLES_DIR) + "/" + example;
    INFO(path);
    std::string dir = path.substr(0, path.rfind('/'));
    checkRoundTrip(readFile(path), dir);
  }
}

TEST_CASE("every attribute type, dtype and reference form round-trips",
          "[roundtrip]") {
  std::string text = R"({
    "version": 1, "format": "fuel.graph", "name": "all \"kinds\"",
    "outputs": ["s#1", "c", "w", "z"],
    "nodes": [
      {"placement": "vulkan:2", "inputs": ["x"], "op": "split", "id": "s",
       "attrs": {"num": 2, "axis": 1}},
      {"id": "c", "op": "clamp", "inputs": ["s#0"], "attrs": {"max": 1e300, "min": -0.1}},
      {"id": "r", "op": "reshape", "inputs": ["x"], "attrs": {"shape": ["B", -1]}},
      {"id": "w", "op": "write_slice", "inputs": ["kv", "x"], "attrs": {"offset": "P", "axis": 1}},
      {"id": "z", "op": "alloc", "attrs": {"dtype": "bf16", "shape": [2, "B"], "device": "cuda:0"}},
      {"id": "g", "op": "gelu", "inputs": ["h"], "attrs": {"approximate": "tanh"}}
    ],
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4]},
               {"name": "kv", "dtype": "f32", "shape": ["B", 16]},
               {"name": "p", "dtype": "i64", "shape": ["P"]},
               {"name": "h", "dtype": "f16", "shape": [3]}],
    "constants": [
      {"name": "f64", "dtype": "f64", "shape": [3], "data": [0.1, "inf", "nan"]},
      {"name": "f16", "dtype": "f16", "shape": [2], "data": [0.1, 65504]},
      {"name": "bf16", "dtype": "bf16", "shape": [1], "data": [3.14159]},
      {"name": "i8", "dtype": "i8", "shape": [2], "data": [-128, 127]},
      {"name": "i64", "dtype": "i64", "shape": [1], "data": [-9223372036854775808]},
      {"name": "b", "dtype": "bool", "shape": [2, 1], "data": [true, false]},
      {"name": "empty", "dtype": "f32", "shape": [0, 3], "data": []}
    ]
  })";
  checkRoundTrip(text, ".");
  ParseResult r = parseText(text);
  REQUIRE(r.graph);
  std::string printed = printGraphJson(*r.graph);
  CHECK(printed.find(R"("name": "all \"kinds\"")") != std::string::npos);
  CHECK(printed.find(R"({"id": "s", "op": "split", "inputs": ["x"], "attrs": {"axis": 1, "num": 2}, "placement": "vulkan:2"})") !=
        std::string::npos);
  CHECK(printed.find(R"("data": [0.1, "inf", "nan"])") != std::string::npos);
  CHECK(printed.find(R"("data": [0.099975586, 65504])") != std::string::npos);
  CHECK(printed.find(R"("outputs": ["s#1", "c", "w", "z"])") !=
        std::string::npos);
}
