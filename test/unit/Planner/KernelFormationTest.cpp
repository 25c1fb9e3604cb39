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

namespace {
/// The graph of `text`, its plan for the host (with the library kernels of
/// kernels/) and that plan's kernels.
struct PlannedKernels {
  std::optional<Graph> graph;
  ExecutionPlan plan;
  std::vector<KernelSpec> kernels;
};

PlannedKernels planKernels(const std::string &text) {
  PlannedKernels p;
  DiagnosticEngine diag;
  std::unique_ptr<SourceLocator> locator;
  std::string errors;
  diag.setHandler([&](const Diagnostic &d) { errors += d.message + "\n"; });
  p.graph = parseGraphJson(text, "g.json", {}, diag, &locator);
  INFO(errors);
  REQUIRE(p.graph);
  std::optional<Machine> host = loadMachine("host", diag);
  REQUIRE(host);
  CapsuleRegistry registry = builtinCapsules();
  REQUIRE(succeeded(registry.addManifestDirectory(FUEL_KERNELS_DIR, diag)));
  REQUIRE(succeeded(planGraph(*p.graph, *host, registry, {}, diag, *locator, p.plan)));
  p.kernels = formKernels(*p.graph, p.plan);
  return p;
}

/// The split axis of each argument of the one kernel `text` plans to, and
/// whether it takes its slice's origin.
std::vector<int> splitAxesOfOnlyKernel(const std::string &text, bool *takesSliceOrigin = nullptr) {
  std::vector<KernelSpec> kernels = planKernels(text).kernels;
  REQUIRE(kernels.size() == 1);
  REQUIRE(kernels[0].splittable);
  std::vector<int> axes;
  for (const KernelArg &arg : kernels[0].args)
    axes.push_back(arg.splitAxis);
  if (takesSliceOrigin)
    *takesSliceOrigin = kernels[0].takesSliceOrigin;
  return axes;
}
} // namespace

TEST_CASE("a fused group is one kernel over what it reads and writes", "[kernels]") {
  const char *text = R"({"format": "fuel.graph", "version": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 3]}],
    "constants": [{"name": "w", "dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]}],
    "nodes": [{"id": "l", "op": "linear", "inputs": ["x", "w"]},
              {"id": "g", "op": "gelu", "inputs": ["l"]},
              {"id": "s", "op": "softmax", "inputs": ["g"]}],
    "outputs": ["s", "g"]})";
  PlannedKernels planned = planKernels(text);
  const std::optional<Graph> &g = planned.graph;
  const std::vector<KernelSpec> &kernels = planned.kernels;
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
  REQUIRE(planned.plan.kernels.size() == kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k)
    CHECK(planned.plan.kernels[k].nodes == kernels[k].nodes);
}

TEST_CASE("a convolution of one image splits its channels, or its rows where the input is "
          "large",
          "[kernels]") {
  // conv2d(img, w, b) + residual for each layer: its kernel's arguments
  // are img, w, b, residual, result.
  bool origin = false;
  auto splitAxes = [&](int64_t outChannels, int64_t window) {
    int64_t pad = window / 2;
    auto values = [](int64_t count) {
      std::string list = "[0";
      for (int64_t i = 1; i < count; ++i)
        list += ", 0";
      return list + "]";
    };
    std::string text = R"({"format": "fuel.graph", "version": 1, "name": "g",
      "inputs": [{"name": "img", "dtype": "f32", "shape": [1, 48, 30, 30]},
                 {"name": "r", "dtype": "f32", "shape": [1, )" +
                       std::to_string(outChannels) + R"(, 30, 30]}],
      "constants": [{"name": "w", "dtype": "f32", "shape": [)" +
                       std::to_string(outChannels) + ", 48, " + std::to_string(window) + ", " +
                       std::to_string(window) + R"(], "data": )" +
                       values(outChannels * 48 * window * window) + R"(},
                    {"name": "b", "dtype": "f32", "shape": [)" +
                       std::to_string(outChannels) + R"(], "data": )" + values(outChannels) +
                       R"(}],
      "nodes": [{"id": "c", "op": "conv2d", "inputs": ["img", "w", "b"],
                 "attrs": {"pads": [)" +
                       std::to_string(pad) + ", " + std::to_string(pad) + ", " +
                       std::to_string(pad) + ", " + std::to_string(pad) + R"(]}},
                {"id": "y", "op": "add", "inputs": ["c", "r"]}],
      "outputs": ["y"]})";
    return splitAxesOfOnlyKernel(text, &origin);
  };
  // Output channels: the image is read whole, weights and bias by channel.
  CHECK(splitAxes(160, 1) == std::vector<int>{-1, 0, 0, 1, 1});
  CHECK_FALSE(origin);
  // Few channels, 1x1: rows of the image, the residual and the result.
  CHECK(splitAxes(40, 1) == std::vector<int>{2, -1, -1, 2, 2});
  CHECK_FALSE(origin);
  // 3x3, weights (40 x 48 x 9) under twice the image (48 x 30 x 30): rows of
  // the residual and the result; each slice reads its rows of the whole
  // image, and so takes its first row.
  CHECK(splitAxes(40, 3) == std::vector<int>{-1, -1, -1, 2, 2});
  CHECK(origin);
  // 3x3, weights (256 x 48 x 9) over twice the image: channels.
  CHECK(splitAxes(256, 3) == std::vector<int>{-1, 0, 0, 1, 1});
  CHECK_FALSE(origin);
}

TEST_CASE("a max pooling of one image splits its rows where its convolution does", "[kernels]") {
  // pool(relu(conv(img))), pool(concat(relu(conv(img)), conv(img))) and
  // pool(img): the first two read the rows each thread's slice of the
  // convolutions wrote; the third splits its channels.
  std::string weights = "[0";
  for (int i = 1; i < 40 * 48 * 9; ++i)
    weights += ", 0";
  weights += "]";
  std::string text = R"({"format": "fuel.graph", "version": 1, "name": "g",
    "inputs": [{"name": "img", "dtype": "f32", "shape": [1, 48, 30, 30]}],
    "constants": [{"name": "w", "dtype": "f32", "shape": [40, 48, 3, 3], "data": )" +
                     weights + R"(}],
    "nodes": [{"id": "c", "op": "conv2d", "inputs": ["img", "w"],
               "attrs": {"pads": [1, 1, 1, 1]}},
              {"id": "r", "op": "relu", "inputs": ["c"]},
              {"id": "p", "op": "max_pool2d", "inputs": ["r"],
               "attrs": {"kernel": [2, 2], "strides": [2, 2]}},
              {"id": "d", "op": "conv2d", "inputs": ["img", "w"],
               "attrs": {"pads": [1, 1, 1, 1]}},
              {"id": "k", "op": "concat", "inputs": ["r", "d"], "attrs": {"axis": 1}},
              {"id": "pk", "op": "max_pool2d", "inputs": ["k"],
               "attrs": {"kernel": [2, 2], "strides": [2, 2]}},
              {"id": "q", "op": "max_pool2d", "inputs": ["img"],
               "attrs": {"kernel": [2, 2], "strides": [2, 2]}}],
    "outputs": ["p", "pk", "q"]})";
  PlannedKernels planned = planKernels(text);
  auto pooling = [&](const char *name) -> const KernelSpec & {
    for (const KernelSpec &k : planned.kernels)
      if (planned.graph->name(k.nodes.back()) == name)
        return k;
    FAIL("no kernel computes " << name);
    return planned.kernels[0];
  };
  const KernelSpec &p = pooling("p");
  REQUIRE(p.args.size() == 2);
  CHECK(p.args[0].splitAxis == -1);
  CHECK(p.args[1].splitAxis == 2);
  CHECK(p.takesSliceOrigin);
  const KernelSpec &pk = pooling("pk");
  REQUIRE(pk.args.size() == 2);
  CHECK(pk.args[1].splitAxis == 2);
  CHECK(pk.takesSliceOrigin);
  const KernelSpec &q = pooling("q");
  REQUIRE(q.args.size() == 2);
  CHECK(q.args[0].splitAxis == 1);
  CHECK(q.args[1].splitAxis == 1);
  CHECK_FALSE(q.takesSliceOrigin);
}

TEST_CASE("an elementwise kernel splits its first axis wider than one", "[kernels]") {
  // x * s (a squeeze-and-excitation scale: s broadcast over the image).
  auto splitAxes = [](const std::string &shape) {
    std::string text = R"({"format": "fuel.graph", "version": 1, "name": "g",
      "inputs": [{"name": "x", "dtype": "f32", "shape": )" +
                       shape + R"(},
                 {"name": "s", "dtype": "f32", "shape": [1, 24, 1, 1]}],
      "nodes": [{"id": "y", "op": "mul", "inputs": ["x", "s"]}],
      "outputs": ["y"]})";
    return splitAxesOfOnlyKernel(text);
  };
  // Images: x, s and y by image.
  CHECK(splitAxes(R"([4, 24, 7, 7])") == std::vector<int>{0, -1, 0});
  // One image, or a symbolic batch (bound to 1 by exported models): by
  // channel, which s follows.
  CHECK(splitAxes(R"([1, 24, 7, 7])") == std::vector<int>{1, 1, 1});
  CHECK(splitAxes(R"(["B", 24, 7, 7])") == std::vector<int>{1, 1, 1});
}
