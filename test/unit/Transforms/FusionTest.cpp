//===- FusionTest.cpp - Fusion groups on their own ------------------------===//
//
// fusionGroups on small graphs read from fuel.graph text: what joins a
// group (single-consumer elementwise chains, a head's epilogue, a value all
// of whose readers are in one elementwise group, a reduction's prologue)
// and what never does (a value read by two groups or by the host, nodes
// pinned to different devices, a transcendental broadcast into its reader).
//
//===----------------------------------------------------------------------===//

#include "fuel/Transforms/Fusion.h"
#include "fuel/IR/Verifier.h"
#include "fuel/Import/GraphJson.h"

#include <catch2/catch.hpp>

#include <set>

using namespace fuel;

namespace {
/// An inline data array of `n` zeros.
std::string zeros(int n) {
  std::string out = "[0";
  for (int i = 1; i < n; ++i)
    out += ", 0";
  return out + "]";
}

/// The fusion root of every node, by name.
std::map<std::string, std::string> groupsOf(const std::string &nodes, const std::string &outputs) {
  std::string text = R"({"format": "fuel.graph", "version": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 8]}],
    "constants": [{"name": "w", "dtype": "f32", "shape": [8, 8], "data": )" +
                     zeros(64) + R"(},
                  {"name": "b", "dtype": "f32", "shape": [8], "data": )" +
                     zeros(8) + R"(}],
    "nodes": )" + nodes +
                     R"(, "outputs": )" + outputs + "}";
  DiagnosticEngine diag;
  std::optional<Graph> g = parseGraphJson(text, "g.json", {}, diag);
  REQUIRE(g);
  std::vector<NodeId> order;
  REQUIRE(topologicalOrder(*g, order));
  std::vector<int> pinOf(g->numNodes(), -1);
  for (NodeId n = 0; n < g->numNodes(); ++n)
    if (g->placement(n))
      pinOf[n] = g->placement(n)->kind == DeviceKind::CPU ? 0 : 1;
  std::vector<NodeId> roots = fusionGroups(*g, order, pinOf);
  std::map<std::string, std::string> out;
  for (NodeId n = 0; n < g->numNodes(); ++n)
    out[std::string(g->name(n))] = std::string(g->name(roots[n]));
  return out;
}
} // namespace

TEST_CASE("a linear and its activation chain are one group", "[fusion]") {
  auto groups = groupsOf(R"([{"id": "l", "op": "linear", "inputs": ["x", "w", "b"]},
                             {"id": "g", "op": "gelu", "inputs": ["l"]},
                             {"id": "e", "op": "exp", "inputs": ["g"]}])",
                         R"(["e"])");
  CHECK(groups["l"] == "e");
  CHECK(groups["g"] == "e");
  CHECK(groups["e"] == "e");
}

TEST_CASE("a value read twice is not fused into its readers", "[fusion]") {
  auto groups = groupsOf(R"([{"id": "r", "op": "relu", "inputs": ["x"]},
                             {"id": "a", "op": "exp", "inputs": ["r"]},
                             {"id": "c", "op": "neg", "inputs": ["r"]}])",
                         R"(["a", "c"])");
  CHECK(groups["r"] == "r");
  CHECK(groups["a"] == "a");
  CHECK(groups["c"] == "c");
}

TEST_CASE("a value read twice by one group joins it", "[fusion]") {
  // SiLU after a linear: l * sigmoid(l), both readers in the mul's group.
  auto groups = groupsOf(R"([{"id": "l", "op": "linear", "inputs": ["x", "w", "b"]},
                             {"id": "s", "op": "sigmoid", "inputs": ["l"]},
                             {"id": "m", "op": "mul", "inputs": ["l", "s"]}])",
                         R"(["m"])");
  CHECK(groups["l"] == "m");
  CHECK(groups["s"] == "m");
  // A reader in another group, or the host reading it, keeps it apart.
  auto split = groupsOf(R"([{"id": "l", "op": "linear", "inputs": ["x", "w", "b"]},
                            {"id": "s", "op": "sigmoid", "inputs": ["l"]},
                            {"id": "m", "op": "mul", "inputs": ["l", "s"]},
                            {"id": "t", "op": "reduce_sum", "inputs": ["l"],
                             "attrs": {"axes": [1]}}])",
                        R"(["m", "t"])");
  CHECK(split["l"] == "l");
  auto output = groupsOf(R"([{"id": "l", "op": "linear", "inputs": ["x", "w", "b"]},
                             {"id": "s", "op": "sigmoid", "inputs": ["l"]},
                             {"id": "m", "op": "mul", "inputs": ["l", "s"]}])",
                         R"(["m", "l"])");
  CHECK(output["l"] == "l");
}

TEST_CASE("an elementwise prologue joins the reduction it feeds", "[fusion]") {
  auto groups = groupsOf(R"([{"id": "m", "op": "mul", "inputs": ["x", "x"]},
                             {"id": "s", "op": "reduce_sum", "inputs": ["m"],
                              "attrs": {"axes": [1]}}])",
                         R"(["s"])");
  CHECK(groups["m"] == "s");
}

TEST_CASE("a transcendental broadcast into its reader stays apart", "[fusion]") {
  // Squeeze-and-excitation: a per-row sigmoid scales x. Fused, the sigmoid
  // would be computed again for every element of x; a cheap op still joins.
  auto groups = groupsOf(R"([{"id": "r", "op": "reduce_mean", "inputs": ["x"],
                              "attrs": {"axes": [1], "keepdims": true}},
                             {"id": "s", "op": "sigmoid", "inputs": ["r"]},
                             {"id": "m", "op": "mul", "inputs": ["x", "s"]},
                             {"id": "n", "op": "neg", "inputs": ["r"]},
                             {"id": "a", "op": "add", "inputs": ["m", "n"]}])",
                         R"(["a"])");
  CHECK(groups["s"] == "s");
  CHECK(groups["m"] == "a");
  CHECK(groups["n"] == "a");
  // Of the reader's own shape, it joins.
  auto same = groupsOf(R"([{"id": "s", "op": "sigmoid", "inputs": ["x"]},
                            {"id": "m", "op": "mul", "inputs": ["x", "s"]}])",
                       R"(["m"])");
  CHECK(same["s"] == "m");
}

TEST_CASE("nodes pinned to different devices never share a group", "[fusion]") {
  auto groups = groupsOf(R"([{"id": "r", "op": "relu", "inputs": ["x"], "placement": "cpu:0"},
                             {"id": "e", "op": "exp", "inputs": ["r"], "placement": "cuda:0"}])",
                         R"(["e"])");
  CHECK(groups["r"] == "r");
  CHECK(groups["e"] == "e");
}

TEST_CASE("a group binds at most 24 buffers", "[fusion]") {
  // a_i = a_(i-1) + r_i over 30 reductions r_i, which stay apart (a group
  // takes one head): one group would read 31 buffers, more than a GPU
  // shader stage binds.
  std::map<std::string, std::vector<std::string>> inputs;
  std::string nodes = "[";
  for (int i = 0; i < 30; ++i) {
    std::string r = "r" + std::to_string(i), a = "a" + std::to_string(i);
    inputs[a] = {i == 0 ? "x" : "a" + std::to_string(i - 1), r};
    nodes += R"({"id": ")" + r +
             R"(", "op": "reduce_sum", "inputs": ["x"], "attrs": {"axes": [1], "keepdims": true}},
               {"id": ")" +
             a + R"(", "op": "add", "inputs": [")" + inputs[a][0] + R"(", ")" + r + R"("]})" +
             (i + 1 < 30 ? "," : "]");
  }
  auto groups = groupsOf(nodes, R"(["a29"])");
  std::map<std::string, std::set<std::string>> external;
  for (const auto &[node, reads] : inputs)
    for (const std::string &v : reads)
      if (groups[v] != groups[node])
        external[groups[node]].insert(v);
  for (const auto &[root, reads] : external)
    CHECK(reads.size() + 1 <= 24);
  CHECK(groups["a0"] != groups["a29"]); // Split...
  CHECK(groups["a1"] == groups["a2"]);  // ...into groups of many adds.
}
