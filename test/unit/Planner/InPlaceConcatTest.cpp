//===- InPlaceConcatTest.cpp - Concats computed by their producers --------===//
//
// Which concats run in place, and the memory they leave: a concat of kernel
// results along a contiguous axis gets no kernel and its operands become
// consecutive slices of its result's buffer, which lives while any of them
// does; a graph input, a value a graph output reads, a batch above 1, a
// GPU or --no-fusion keep the concat a kernel.
//
//===----------------------------------------------------------------------===//

#include "fuel/Codegen/TargetKernels.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Planner/Planner.h"

#include <catch2/catch.hpp>

using namespace fuel;

namespace {
/// x [N, 4] -> a = exp(x), b = relu(x) -> c = concat(first, b) -> y =
/// linear(c), planned on `machine`; `first` is "a" or "x"; `outputs` the
/// graph's outputs.
struct Planned {
  Graph graph;
  ExecutionPlan plan;

  const PlannedStep &step(std::string_view name) const {
    for (const PlannedStep &s : plan.steps)
      if (graph.name(s.node) == name)
        return s;
    FAIL("no step " << name);
    return plan.steps.front();
  }
  const PlannedBuffer &buffer(std::string_view name) const {
    for (const PlannedBuffer &b : plan.memory.buffers)
      if (graph.name(b.value.node) == name && !b.workspace)
        return b;
    FAIL("no buffer " << name);
    return plan.memory.buffers.front();
  }
};

Planned plan(const char *machine, int batch, const char *first, const char *outputs,
             ExecutionConfig config = {}) {
  std::string text = R"({"format": "fuel.graph", "version": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [)" +
                     std::to_string(batch) + R"(, 4]}],
    "constants": [{"name": "w", "dtype": "f32", "shape": [3, 8], "data": [
      1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8]}],
    "nodes": [{"id": "a", "op": "exp", "inputs": ["x"]},
              {"id": "b", "op": "relu", "inputs": ["x"]},
              {"id": "c", "op": "concat", "inputs": [")" +
                     std::string(first) + R"(", "b"], "attrs": {"axis": 1}},
              {"id": "y", "op": "linear", "inputs": ["c", "w"]}],
    "outputs": [)" + outputs +
                     "]}";
  DiagnosticEngine diag;
  std::unique_ptr<SourceLocator> locator;
  std::optional<Graph> g = parseGraphJson(text, "g.json", {}, diag, &locator);
  REQUIRE(g);
  std::optional<Machine> m = loadMachine(machine, diag);
  REQUIRE(m);
  static CapsuleRegistry registry = builtinCapsules();
  Planned p{std::move(*g), {}};
  REQUIRE(succeeded(planGraph(p.graph, *m, registry, config, diag, *locator, p.plan)));
  return p;
}
} // namespace

TEST_CASE("a concat of kernel results is written in place by its producers", "[planner]") {
  Planned p = plan("host", 1, "a", R"("y")");
  const PlannedStep &concat = p.step("c");
  REQUIRE(concat.inPlace);
  CHECK(concat.time == 0);
  // No kernel runs it: every other step is a kernel (nothing fuses here).
  CHECK(p.plan.kernels.size() == p.plan.steps.size() - 1);
  for (const KernelSpec &k : p.plan.kernels)
    CHECK(p.graph.name(k.nodes.back()) != "c");
  // a and b are consecutive slices of c, which lives as long as they do.
  const PlannedBuffer &a = p.buffer("a"), &b = p.buffer("b"), &c = p.buffer("c");
  int64_t whole = &c - p.plan.memory.buffers.data();
  CHECK(c.sliceOf == -1);
  CHECK(a.sliceOf == whole);
  CHECK(b.sliceOf == whole);
  CHECK(a.offset == c.offset);
  CHECK(b.offset == c.offset + a.size);
  CHECK(a.size + b.size == c.size);
  CHECK(c.firstUse <= std::min(a.firstUse, b.firstUse));
  CHECK(c.lastUse >= std::max(a.lastUse, b.lastUse));
  // Its time left the cost.
  double compute = 0;
  for (const PlannedStep &s : p.plan.steps)
    compute += s.time;
  CHECK(compute == Approx(p.plan.computeTime));
  CHECK(p.plan.computeTime + p.plan.transferTime == Approx(p.plan.cost));
}

TEST_CASE("concats that cannot be written in place stay kernels", "[planner]") {
  auto kernel = [](const Planned &p) {
    CHECK_FALSE(p.step("c").inPlace);
    for (const PlannedBuffer &b : p.plan.memory.buffers)
      CHECK(b.sliceOf == -1);
  };
  SECTION("a graph input is the caller's memory") { kernel(plan("host", 1, "x", R"("y")")); }
  SECTION("a graph output reads an operand") { kernel(plan("host", 1, "a", R"("y", "a")")); }
  SECTION("at batch 2 a slice is two runs") { kernel(plan("host", 2, "a", R"("y")")); }
  SECTION("--no-fusion") {
    ExecutionConfig config;
    config.fusion = false;
    kernel(plan("host", 1, "a", R"("y")", config));
  }
  SECTION("a GPU binds buffers at aligned offsets") {
    ExecutionConfig config;
    config.allowedDevices = {DeviceRef{DeviceKind::CUDA, 0}};
    config.inputResidency = config.outputResidency = DeviceRef{DeviceKind::CUDA, 0};
    kernel(plan("h200", 1, "a", R"("y")", config));
  }
}
