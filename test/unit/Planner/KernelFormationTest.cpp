//===- KernelFormationTest.cpp - Kernels of a placed plan, on their own ---===//
//
// formKernels on a placed plan: a fused group is one kernel whose arguments
// are what it reads from memory (in first-use order) then its root's
// results; fused intermediates are no argument; the split axis follows the
// result's rows.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/KernelFormation.h"
#include "fuel/Codegen/TargetKernels.h"
#include "fuel/Import/GraphJson.h"

#include <catch2/catch.hpp>

using namespace fuel;

TEST_CASE("a fused group is one kernel over what it reads and writes", "[kernels]") {
  const char *text = R"({"format": "fuel.graph", "version": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 3]}],
    "constants": [{"name": "w", "dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]}],
    "nodes": [{"id": "l", "op": "linear", "inputs": ["x", "w"]},
              {"id": "g", "op": "gelu", "inputs": ["l"]},
              {"id": "s", "op": "softmax", "inputs": ["g"]}],
    "outputs": ["s", "g"]})";
  DiagnosticEngine diag;
  std::unique_ptr<SourceLocator> locator;
  std::optional<Graph> g = parseGraphJson(text, "g.json", {}, diag, &locator);
  REQUIRE(g);
  std::optional<Machine> host = loadMachine("host", diag);
  REQUIRE(host);
  CapsuleRegistry registry = builtinCapsules();
  ExecutionPlan plan;
  REQUIRE(succeeded(planGraph(*g, *host, registry, {}, diag, *locator, plan)));
  std::vector<KernelSpec> kernels = formKernels(*g, plan);
  REQUIRE(kernels.size() == 2);
  auto name = [&](ValueRef v) { return std::string(g->name(v.node)); };
  // linear+gelu: reads x and w, writes g (read by softmax and the host).
  const KernelSpec &head = kernels[0];
  REQUIRE(head.nodes.size() == 2);
  CHECK(g->name(head.nodes[0]) == "l");
  CHECK(g->name(head.nodes[1]) == "g");
  REQUIRE(head.args.size() == 3);
  CHECK(name(head.args[0].value) == "x");
  CHECK(name(head.args[1].value) == "w");
  CHECK(name(head.args[2].value) == "g");
  CHECK_FALSE(head.args[0].isResult);
  CHECK(head.args[2].isResult);
  // Rows of the result follow rows of x; the weight is read whole.
  CHECK(head.args[0].splitAxis == 0);
  CHECK(head.args[1].splitAxis == -1);
  CHECK(head.args[2].splitAxis == 0);
  const KernelSpec &softmax = kernels[1];
  REQUIRE(softmax.args.size() == 2);
  CHECK(name(softmax.args[0].value) == "g");
  CHECK(name(softmax.args[1].value) == "s");
  // The same as the planner's own kernels: formation is a function of the plan.
  REQUIRE(plan.kernels.size() == kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k)
    CHECK(plan.kernels[k].nodes == kernels[k].nodes);
}
