//===- PlanPrinter.cpp - Text and JSON dumps of an execution plan ---------===//

#include "fuel/Planner/Planner.h"

#include "Format.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <tuple>

using namespace fuel;

std::string fuel::formatTime(double seconds) {
  char buf[32];
  if (seconds >= 1e-3)
    std::snprintf(buf, sizeof(buf), "%.3g ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.3g us", seconds * 1e6);
  return buf;
}

std::string fuel::formatBytes(double bytes) {
  char buf[32];
  if (bytes >= 1 << 20)
    std::snprintf(buf, sizeof(buf), "%.3g MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(buf, sizeof(buf), "%.3g KiB", bytes / (1 << 10));
  else
    std::snprintf(buf, sizeof(buf), "%.0f B", bytes);
  return buf;
}

static std::string pad(std::string s, size_t width) {
  if (s.size() < width)
    s.resize(width, ' ');
  return s;
}

static std::string deviceName(const ExecutionPlan &plan, unsigned device) {
  return formatDevice(plan.machine->devices[device].ref);
}

std::string fuel::printPlanText(const Graph &graph, const ExecutionPlan &plan) {
  std::string out;
  std::string name(graph.graphNameText());
  out += "plan for graph" + (name.empty() ? "" : " '" + name + "'") +
         " on machine '" + plan.machine->name + "' (placer " +
         std::string(placerName(plan.placer)) +
         (plan.exact ? "; proven optimal" : "") + ")\n";
  out += "cost " + formatTime(plan.cost) + " = compute " +
         formatTime(plan.computeTime) + " + transfers " +
         formatTime(plan.transferTime) + "; predicted makespan " +
         formatTime(plan.makespan) + "\n";
  if (plan.memoryCapped)
    out += "memory caps: placement moved data to fit device memory; without "
           "caps the cost would be " +
           formatTime(plan.lowerBound) + "\n";
  else if (!plan.exact && plan.placer == PlacerKind::Optimal)
    out += "lower bound " + formatTime(plan.lowerBound) +
           " (more than two devices: the optimum lies in between)\n";
  if (!plan.defaultedSymbols.empty()) {
    out += "symbols priced at 1 (use --dim NAME=N):";
    for (const std::string &s : plan.defaultedSymbols)
      out += " " + s;
    out += "\n";
  }
  for (unsigned d = 0; d < plan.memory.devices.size(); ++d) {
    const DeviceMemory &m = plan.memory.devices[d];
    if (m.arenaBytes == 0 && m.constantBytes == 0)
      continue;
    out += "memory " + pad(deviceName(plan, d), 9) + " arena " +
           formatBytes(double(m.arenaBytes)) + " (" +
           formatBytes(double(m.naiveBytes)) + " without reuse) + constants " +
           formatBytes(double(m.constantBytes)) + "\n";
  }
  out += "steps:\n";
  auto printCopies = [&](size_t step) {
    for (const PlannedCopy &c : plan.copiesAfter(step))
      out += "        copy " + pad(valueName(graph, c.value), 14) + " " +
               deviceName(plan, c.from) + " -> " + deviceName(plan, c.to) +
               "  " + formatBytes(c.bytes) + "  " + formatTime(c.time) + "\n";
  };
  printCopies(~size_t(0));
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep &step = plan.steps[s];
    char index[32];
    std::snprintf(index, sizeof(index), "  %4zu  ", s);
    std::string runBy = step.inPlace   ? "(in place)"
                        : step.capsule ? step.capsule->id
                                       : "(data movement)";
    std::string time =
        step.inPlace ? "operands written as slices of its result"
        : !plan.rootOf.empty() && plan.rootOf[s] != s
            ? "fused into " + std::string(graph.name(plan.steps[plan.rootOf[s]].node))
            : formatTime(step.time);
    out += index + pad(std::string(graph.name(step.node)), 14) + " " +
           pad(std::string(opName(graph.kind(step.node))), 12) + " " +
           pad(deviceName(plan, step.device), 9) + " " + pad(runBy, 28) + " " + time + "\n";
    printCopies(s);
  }
  size_t fused = 0;
  for (const KernelSpec &k : plan.kernels)
    fused += k.nodes.size() > 1;
  out += "kernels: " + std::to_string(plan.kernels.size()) + " for " +
         std::to_string(plan.steps.size()) + " steps";
  out += fused ? ", fused:\n" : "\n";
  for (const KernelSpec &k : plan.kernels) {
    if (k.nodes.size() < 2)
      continue;
    std::string names, ops;
    for (NodeId n : k.nodes) {
      names += (names.empty() ? "" : "+") + std::string(graph.name(n));
      ops += (ops.empty() ? "" : "+") + std::string(opName(graph.kind(n)));
    }
    out += "  " + pad(k.symbol, 9) + " " + names + " (" + ops + ")\n";
  }
  return out;
}

uint64_t fuel::constantOffsets(const Graph &graph,
                               std::vector<uint64_t> &offsets) {
  offsets.assign(graph.numNodes(), ~uint64_t(0));
  uint64_t end = 0;
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const ConstantData *data = graph.constantData(n);
    if (!data)
      continue;
    end = (end + 63) / 64 * 64;
    offsets[n] = end;
    end += data->size;
  }
  return end;
}

std::string fuel::printPlanJson(const Graph &graph, const ExecutionPlan &plan) {
  // Operand bindings: the buffer holding a value on a device, by root value.
  std::map<std::tuple<NodeId, uint32_t, unsigned>, size_t> bufferIndex;
  std::map<NodeId, size_t> workspaceIndex;
  for (size_t b = 0; b < plan.memory.buffers.size(); ++b) {
    const PlannedBuffer &buffer = plan.memory.buffers[b];
    if (buffer.workspace)
      workspaceIndex[buffer.value.node] = b;
    else
      bufferIndex[{buffer.value.node, buffer.value.result, buffer.device}] = b;
  }
  std::vector<uint64_t> weightOffsets;
  constantOffsets(graph, weightOffsets);
  auto binding = [&](ValueRef v, unsigned device) {
    ValueRef root = bufferRoot(graph, v);
    nlohmann::ordered_json b;
    b["value"] = valueName(graph, v);
    if (graph.kind(root.node) == OpKind::Constant) {
      b["constant"] = std::string(graph.name(root.node));
    } else if (auto it = bufferIndex.find({root.node, root.result, device});
               it != bufferIndex.end()) {
      b["buffer"] = it->second;
    } else {
      b["fused"] = true; // Never in memory: computed inside a kernel.
    }
    return b;
  };
  // Kernel k is the k-th kernel-launching step in step order.
  std::vector<size_t> kernelOfRoot(plan.steps.size(), 0);
  for (size_t s = 0, k = 0; s < plan.rootOf.size(); ++s)
    if (plan.launchesKernel(s))
      kernelOfRoot[s] = k++;
  nlohmann::ordered_json j;
  j["format"] = "fuel.plan";
  j["version"] = 1;
  j["graph"] = std::string(graph.graphNameText());
  j["machine"] = plan.machine->name;
  j["placer"] = std::string(placerName(plan.placer));
  j["exact"] = plan.exact;
  j["memory_capped"] = plan.memoryCapped;
  j["cost"] = plan.cost;
  j["compute_time"] = plan.computeTime;
  j["transfer_time"] = plan.transferTime;
  j["lower_bound"] = plan.lowerBound;
  j["makespan"] = plan.makespan;
  j["defaulted_symbols"] = plan.defaultedSymbols;
  nlohmann::ordered_json bounds = nlohmann::ordered_json::object();
  for (const auto &[name, extent] : plan.symbolBounds)
    bounds[name] = extent;
  j["symbol_bounds"] = std::move(bounds);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const PlannedStep &step : plan.steps) {
    nlohmann::ordered_json s;
    s["node"] = std::string(graph.name(step.node));
    s["op"] = std::string(opName(graph.kind(step.node)));
    s["device"] = deviceName(plan, step.device);
    s["capsule"] = step.capsule ? step.capsule->id : "";
    s["time"] = step.time;
    if (step.capsule)
      s["revision"] = step.capsule->revision;
    if (step.inPlace)
      s["in_place"] = true;
    else if (!plan.rootOf.empty())
      s["kernel"] = kernelOfRoot[plan.rootOf[&step - plan.steps.data()]];
    nlohmann::ordered_json operands = nlohmann::ordered_json::array();
    for (ValueRef v : graph.operands(step.node))
      operands.push_back(binding(v, step.device));
    s["operands"] = std::move(operands);
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (uint32_t r = 0; r < graph.numResults(step.node); ++r)
      results.push_back(binding({step.node, r}, step.device));
    s["results"] = std::move(results);
    if (auto it = workspaceIndex.find(step.node); it != workspaceIndex.end())
      s["workspace_buffer"] = it->second;
    nlohmann::ordered_json alternatives = nlohmann::ordered_json::array();
    for (const Candidate &c : plan.alternativesOf(step))
      alternatives.push_back({{"device", deviceName(plan, c.device)},
                              {"capsule", c.capsule->id},
                              {"time", c.time}});
    s["alternatives"] = std::move(alternatives);
    steps.push_back(std::move(s));
  }
  j["steps"] = std::move(steps);
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelSpec &spec : plan.kernels) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (NodeId n : spec.nodes)
      nodes.push_back(std::string(graph.name(n)));
    unsigned device = plan.deviceOf[spec.nodes.back()];
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (const KernelArg &arg : spec.args) {
      nlohmann::ordered_json a = binding(arg.value, device);
      a["result"] = arg.isResult;
      a["split_axis"] = arg.splitAxis;
      a["contiguous"] = arg.contiguous;
      args.push_back(std::move(a));
    }
    nlohmann::ordered_json symbols = nlohmann::ordered_json::array();
    for (uint32_t id : spec.symbols)
      symbols.push_back(std::string(graph.symbols().name(id)));
    kernels.push_back({{"symbol", spec.symbol},
                       {"device", deviceName(plan, device)},
                       {"nodes", std::move(nodes)},
                       {"splittable", spec.splittable},
                       {"args", std::move(args)},
                       {"symbols", std::move(symbols)},
                       {"slice_origin", spec.takesSliceOrigin}});
  }
  j["kernels"] = std::move(kernels);
  nlohmann::ordered_json copies = nlohmann::ordered_json::array();
  for (const PlannedCopy &c : plan.copies)
    copies.push_back(
        {{"value", valueName(graph, c.value)},
         {"from", deviceName(plan, c.from)},
         {"to", deviceName(plan, c.to)},
         {"source_buffer", bufferIndex.at({c.value.node, c.value.result, c.from})},
         {"target_buffer", bufferIndex.at({c.value.node, c.value.result, c.to})},
         {"after_step", c.afterStep == ~size_t(0) ? -1 : int64_t(c.afterStep)},
         {"bytes", c.bytes},
         {"time", c.time}});
  j["copies"] = std::move(copies);
  nlohmann::ordered_json devices = nlohmann::ordered_json::object();
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (plan.deviceOf[n] != ~0u)
      devices[std::string(graph.name(n))] = deviceName(plan, plan.deviceOf[n]);
  j["placement"] = std::move(devices);
  nlohmann::ordered_json memory = nlohmann::ordered_json::object();
  for (unsigned d = 0; d < plan.memory.devices.size(); ++d) {
    const DeviceMemory &m = plan.memory.devices[d];
    nlohmann::ordered_json buffers = nlohmann::ordered_json::array();
    for (size_t i = 0; i < plan.memory.buffers.size(); ++i) {
      const PlannedBuffer &b = plan.memory.buffers[i];
      if (b.device != d)
        continue;
      buffers.push_back({{"index", i},
                         {"value", b.workspace ? valueName(graph, b.value) + " (workspace)"
                                               : valueName(graph, b.value)},
                         {"offset", b.offset},
                         {"size", b.size},
                         {"live", {b.firstUse, b.lastUse}}});
      if (b.sliceOf >= 0)
        buffers.back()["slice_of"] = b.sliceOf;
    }
    memory[deviceName(plan, d)] = {{"alignment", m.alignment},
                                   {"arena_bytes", m.arenaBytes},
                                   {"constant_bytes", m.constantBytes},
                                   {"buffers", std::move(buffers)}};
  }
  j["memory"] = std::move(memory);
  nlohmann::ordered_json constants = nlohmann::ordered_json::array();
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (const ConstantData *data = graph.constantData(n))
      constants.push_back({{"name", std::string(graph.name(n))},
                           {"dtype", std::string(dtypeName(graph.dtype({n, 0})))},
                           {"shape", formatShape(graph.shape({n, 0}), graph.symbols())},
                           {"weights_offset", weightOffsets[n]},
                           {"size", data->size}});
  j["constants"] = std::move(constants);
  nlohmann::ordered_json io = nlohmann::ordered_json::object();
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      inputs.push_back(binding({n, 0}, plan.inputDevice));
  io["inputs"] = std::move(inputs);
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (ValueRef out : graph.outputs())
    outputs.push_back(binding(out, plan.outputDevice));
  io["outputs"] = std::move(outputs);
  j["io"] = std::move(io);
  return j.dump(2) + "\n";
}

std::string fuel::printPlanDot(const Graph &graph, const ExecutionPlan &plan) {
  static constexpr const char *kColors[] = {"lightblue", "palegreen", "khaki",
                                            "lightpink", "plum", "lightsalmon"};
  auto color = [](unsigned device) { return kColors[device % 6]; };
  std::string out = "digraph plan {\n  rankdir=TB;\n  node [style=filled, "
                    "fontname=\"monospace\"];\n";
  out += "  label=\"";
  for (unsigned d = 0; d < plan.machine->devices.size(); ++d)
    out += std::string(d ? "   " : "") + deviceName(plan, d) + " = " +
           color(d);
  out += "\";\n";
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    OpKind kind = graph.kind(n);
    std::string shape = kind == OpKind::Input      ? "invhouse"
                        : kind == OpKind::Constant ? "note"
                        : isViewOp(kind)           ? "box, style=\"filled,dashed\""
                                                   : "box";
    std::string fill = plan.deviceOf[n] == ~0u ? "white" : color(plan.deviceOf[n]);
    out += "  n" + std::to_string(n) + " [label=\"" +
           std::string(graph.name(n)) + "\\n" + std::string(opName(kind)) +
           "\", shape=" + shape + ", fillcolor=" + fill + "];\n";
  }
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n)) {
      unsigned from = plan.deviceOf[v.node], to = plan.deviceOf[n];
      bool crosses = from != ~0u && to != ~0u && from != to;
      out += "  n" + std::to_string(v.node) + " -> n" + std::to_string(n);
      if (crosses)
        out += " [color=red, penwidth=2, label=\"copy " + deviceName(plan, from) +
               " -> " + deviceName(plan, to) + "\"]";
      out += ";\n";
    }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    ValueRef v = graph.outputs()[i];
    out += "  out" + std::to_string(i) + " [label=\"" + valueName(graph, v) +
           "\", shape=house, fillcolor=" + color(plan.outputDevice) + "];\n";
    out += "  n" + std::to_string(v.node) + " -> out" + std::to_string(i);
    if (plan.deviceOf[v.node] != plan.outputDevice)
      out += " [color=red, penwidth=2, label=\"copy\"]";
    out += ";\n";
  }
  out += "}\n";
  return out;
}
