//===- PlannerTest.cpp - Whole-graph planning invariants ------------------===//
//
// Random DAGs planned on every built-in machine: every step runs on a device
// where its capsule's backend lives, every cross-device read has exactly one
// copy per destination, costs add up, and no two buffers of one device share
// memory while both are live.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Planner.h"
#include "fuel/Codegen/TargetKernels.h"
#include "fuel/IR/Verifier.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace fuel;

namespace {
Graph randomGraph(std::mt19937 &rng, unsigned n) {
  Graph g;
  NodeId x = g.createNode(OpKind::Input, "x");
  g.addResults(1);
  Shape act{Dim::symbol(g.symbols().intern("B")), Dim::fixed(128)};
  g.setResultType({x, 0}, DType::F32, act);
  NodeId w = g.createNode(OpKind::Constant, "w");
  g.addResults(1);
  Shape ws{Dim::fixed(128), Dim::fixed(128)};
  g.setResultType({w, 0}, DType::F32, ws);
  g.setConstantData(w, ConstantData{FileBuffer::fromBytes(std::string(128 * 128 * 4, '\0')),
                                    0, 128 * 128 * 4, {}});
  std::vector<ValueRef> values{{x, 0}};
  for (unsigned i = 0; i < n; ++i) {
    ValueRef a = values[rng() % values.size()], b = values[rng() % values.size()];
    unsigned pick = rng() % 6;
    OpKind kind = pick == 0 ? OpKind::Linear : pick == 1 ? OpKind::Add
                : pick == 2 ? OpKind::Exp : pick == 3 ? OpKind::Transpose
                : pick == 4 ? OpKind::Mul : OpKind::Relu;
    if (kind == OpKind::Transpose && g.shape(a)[0] != g.shape(a)[1])
      kind = OpKind::Relu; // Keep shapes square-compatible for the binaries.
    NodeId node = g.createNode(kind, "n" + std::to_string(i));
    g.addOperand(a);
    if (kind == OpKind::Linear)
      g.addOperand({w, 0});
    if (kind == OpKind::Add || kind == OpKind::Mul)
      g.addOperand(b);
    if (rng() % 10 == 0) // Some pins.
      g.setPlacement(node, DeviceRef{rng() % 2 ? DeviceKind::CPU : DeviceKind::CUDA, 0});
    g.addResults(1);
    values.push_back({node, 0});
  }
  g.addOutput(values.back());
  g.addOutput(values[values.size() / 2]);
  return g;
}
} // namespace

TEST_CASE("plans of random graphs are consistent", "[planner]") {
  std::mt19937 rng(5);
  CapsuleRegistry registry = builtinCapsules();
  DiagnosticEngine quiet;
  std::optional<Machine> h200 = loadMachine("h200", quiet);
  REQUIRE(h200);
  for (int trial = 0; trial < 60; ++trial) {
    Graph g = randomGraph(rng, 5 + rng() % 40);
    DiagnosticEngine diag;
    REQUIRE(succeeded(verifyGraph(g, diag)));
    ExecutionConfig config;
    config.dims["B"] = 1 + rng() % 64;
    config.placer = static_cast<PlacerKind>(trial % 3);
    ExecutionPlan plan;
    REQUIRE(succeeded(planGraph(g, *h200, registry, config, diag, SourceLocator(), plan)));
    INFO("trial " << trial);

    double compute = 0;
    for (const PlannedStep &step : plan.steps) {
      REQUIRE(step.capsule);
      CHECK(step.capsule->backend == h200->devices[step.device].ref.kind);
      if (std::optional<DeviceRef> pin = g.placement(step.node))
        CHECK(h200->devices[step.device].ref == *pin);
      compute += step.time;
    }
    CHECK(compute == Approx(plan.computeTime));
    CHECK(plan.computeTime + plan.transferTime == Approx(plan.cost));
    CHECK(plan.makespan <= plan.cost * (1 + 1e-9));

    // Exactly one copy per (value, destination) that needs one.
    std::set<std::tuple<NodeId, uint32_t, unsigned>> copies;
    for (const PlannedCopy &c : plan.copies) {
      CHECK(c.from != c.to);
      CHECK(copies.insert({c.value.node, c.value.result, c.to}).second);
    }
    for (const PlannedStep &step : plan.steps)
      for (ValueRef v : g.operands(step.node)) {
        ValueRef root = bufferRoot(g, v);
        if (g.kind(root.node) == OpKind::Constant)
          continue;
        bool local = plan.deviceOf[root.node] == step.device;
        CHECK((local || copies.count({root.node, root.result, step.device})));
      }

    // No two live buffers of one device overlap.
    const auto &buffers = plan.memory.buffers;
    for (size_t i = 0; i < buffers.size(); ++i)
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const PlannedBuffer &a = buffers[i], &b = buffers[j];
        if (a.device != b.device || a.size == 0 || b.size == 0)
          continue;
        bool timeOverlap = a.firstUse <= b.lastUse && b.firstUse <= a.lastUse;
        bool spaceOverlap = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
        INFO("buffers " << i << " and " << j);
        CHECK_FALSE((timeOverlap && spaceOverlap));
      }
    for (const DeviceMemory &m : plan.memory.devices)
      CHECK(m.arenaBytes <= m.naiveBytes + 256 * buffers.size());

    // Fusion: a fused step runs on its root's device, later in the plan,
    // and its result never gets a buffer; every kernel argument does.
    REQUIRE(plan.rootOf.size() == plan.steps.size());
    std::set<std::pair<NodeId, unsigned>> buffered;
    for (const PlannedBuffer &b : buffers)
      buffered.insert({b.value.node, b.device});
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      size_t root = plan.rootOf[s];
      CHECK(root >= s);
      CHECK(plan.rootOf[root] == root);
      CHECK(plan.steps[root].device == plan.steps[s].device);
      if (root != s)
        CHECK_FALSE(buffered.count({plan.steps[s].node, plan.steps[s].device}));
    }
    size_t roots = 0;
    for (size_t s = 0; s < plan.steps.size(); ++s)
      roots += plan.rootOf[s] == s;
    REQUIRE(plan.kernels.size() == roots);
    for (const KernelSpec &k : plan.kernels) {
      unsigned device = plan.deviceOf[k.nodes.back()];
      for (const KernelArg &arg : k.args) {
        ValueRef root = bufferRoot(g, arg.value);
        if (g.kind(root.node) != OpKind::Constant)
          CHECK(buffered.count({root.node, device}));
      }
    }
  }
}

TEST_CASE("a plan that does not fit a device is rejected", "[planner]") {
  DiagnosticEngine diag;
  std::vector<std::string> messages;
  diag.setHandler([&](const Diagnostic &d) { messages.push_back(d.message); });
  std::optional<Machine> tiny = parseMachineJson(
      R"({"format": "fuel.machine", "version": 1, "name": "tiny",
          "devices": [{"id": "cpu:0", "peak_flops": {"f32": 1e9},
                       "memory_bandwidth": 1e9, "memory_capacity": 4096}]})",
      "tiny.json", diag);
  REQUIRE(tiny);
  Graph g;
  NodeId x = g.createNode(OpKind::Input, "x");
  g.addResults(1);
  Shape s{Dim::fixed(1024)};
  g.setResultType({x, 0}, DType::F32, s);
  NodeId y = g.createNode(OpKind::Relu, "y");
  g.addOperand({x, 0});
  g.addResults(1);
  g.addOutput({y, 0});
  REQUIRE(succeeded(verifyGraph(g, diag)));
  ExecutionPlan plan;
  CHECK(failed(
      planGraph(g, *tiny, builtinCapsules(), ExecutionConfig(), diag, SourceLocator(), plan)));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == "the plan needs 8192 bytes on cpu:0 (arena 8192 + "
                       "constants 0), which has 4096, and no placement fits");
}
