//===- Explain.cpp - Why each node runs where it does ---------------------===//
//
// For every kernel node: its work, every (device, capsule) candidate with its
// time or the filter that rejected it, the frontier, the winner, and a
// counterfactual that makes the global decision concrete: the plan's cost had
// the node been pinned to the device where it alone runs fastest.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Planner.h"

#include <algorithm>

#include "Format.h"

#include <cstdio>

using namespace fuel;


static std::string typeOf(const Graph &graph, ValueRef v) {
  return std::string(dtypeName(graph.dtype(v))) +
         formatShape(graph.shape(v), graph.symbols());
}

/// Graphs up to this size get the counterfactual re-plan for every node.
static constexpr size_t kCounterfactualLimit = 2000;

std::string fuel::explainPlan(const Graph &graph, const Machine &machine,
                              const CapsuleRegistry &registry,
                              const ExecutionConfig &config,
                              const ExecutionPlan &plan,
                              std::optional<NodeId> onlyNode) {
  SymbolPricing pricing(graph, config.dims);
  std::vector<bool> allowed(machine.devices.size(), true);
  if (!config.allowedDevices.empty())
    for (unsigned d = 0; d < machine.devices.size(); ++d)
      allowed[d] = std::find(config.allowedDevices.begin(),
                             config.allowedDevices.end(),
                             machine.devices[d].ref) != config.allowedDevices.end();
  bool counterfactuals = onlyNode || graph.numNodes() <= kCounterfactualLimit;
  std::string out = "plan cost " + formatTime(plan.cost) + " on machine '" +
                    machine.name + "' (placer " +
                    std::string(placerName(plan.placer)) + ")\n";
  for (const PlannedStep &step : plan.steps) {
    NodeId n = step.node;
    if (onlyNode && *onlyNode != n)
      continue;
    if (!step.capsule)
      continue; // copy, move, alloc: placed by their device attribute.
    out += "\nnode '" + std::string(graph.name(n)) + "': " +
           std::string(opName(graph.kind(n))) + "(";
    for (size_t i = 0; i < graph.operands(n).size(); ++i)
      out += (i ? ", " : "") + typeOf(graph, graph.operands(n)[i]);
    out += ") -> " + typeOf(graph, {n, 0});
    NodeWork work = estimateWork(graph, n, pricing);
    char buf[96];
    std::snprintf(buf, sizeof(buf), "; %.3g flop, %.3g bytes\n", work.flops,
                  work.bytes);
    out += buf;
    // Candidates under the same restrictions the planner applied.
    std::optional<DeviceRef> pin = graph.placement(n);
    if (auto it = config.pins.find(graph.name(n)); it != config.pins.end())
      pin = it->second;
    std::vector<bool> nodeAllowed = allowed;
    if (pin)
      for (unsigned d = 0; d < machine.devices.size(); ++d)
        nodeAllowed[d] = nodeAllowed[d] && machine.devices[d].ref == *pin;
    NodeCandidates all = enumerateCandidates(graph, n, machine, registry,
                                             config, pricing, nodeAllowed, true);
    out += "  candidates:\n";
    for (const Candidate &c : all.frontier)
      out += "    " + formatDevice(machine.devices[c.device].ref) + "  " +
             c.capsule->id + "  " + formatTime(c.time) + "  (frontier)\n";
    for (const Rejection &r : all.rejections)
      out += "    " + formatDevice(machine.devices[r.device].ref) + "  " +
             r.capsule->id + "  rejected: " + r.reason + "\n";
    out += "  placed on " + formatDevice(machine.devices[step.device].ref) +
           " with " + step.capsule->id;
    // A fused group's time is booked on its root: name the kernel instead.
    size_t index = static_cast<size_t>(&step - plan.steps.data());
    const KernelSpec *kernel = nullptr;
    for (const KernelSpec &k : plan.kernels)
      if (k.nodes.size() > 1 && std::find(k.nodes.begin(), k.nodes.end(), n) != k.nodes.end())
        kernel = &k;
    if (kernel) {
      std::string names;
      for (NodeId m : kernel->nodes)
        names += (names.empty() ? "" : "+") + std::string(graph.name(m));
      out += ", fused into kernel " + names + " (" +
             formatTime(plan.steps[plan.rootOf[index]].time) + ")";
    } else if (step.inPlace) {
      out += ", in place: its operands' kernels write their results as slices of its result";
    } else {
      out += " (" + formatTime(step.time) + ")";
    }
    if (pin) {
      out += ": pinned there (placement or --pin)\n";
      continue;
    }
    // The device where the node alone would be fastest.
    const Candidate *fastest = nullptr;
    for (const Candidate &c : all.frontier)
      if (!fastest || c.time < fastest->time)
        fastest = &c;
    if (!fastest || fastest->device == step.device) {
      out += ": its fastest device\n";
      continue;
    }
    out += "; alone it would be fastest on " +
           formatDevice(machine.devices[fastest->device].ref) + " (" +
           formatTime(fastest->time) + ")";
    if (!counterfactuals) {
      out += "\n";
      continue;
    }
    ExecutionConfig pinned = config;
    pinned.pins[std::string(graph.name(n))] = machine.devices[fastest->device].ref;
    ExecutionPlan alternative;
    DiagnosticEngine quiet;
    if (failed(planGraph(graph, machine, registry, pinned, quiet,
                         SourceLocator(), alternative))) {
      out += ", but no plan exists with it there\n";
      continue;
    }
    out += ", but the whole plan would then cost " +
           formatTime(alternative.cost) + " (" +
           formatTime(alternative.cost - plan.cost) +
           " more: data would have to move)\n";
  }
  return out;
}
