//===- ProgramReader.cpp - Reading a route from an artifact ---------------===//
//
// The sections were written by fuelc and their hashes verified, so a
// malformed one means a damaged or foreign artifact: it is reported with the
// section and what was wrong, never trusted.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "fuel/IR/Device.h"

#include <nlohmann/json.hpp>

#include <map>

using namespace fuel;
using namespace fuel::runtime;
using nlohmann::json;

LogicalResult runtime::readMeta(std::string_view meta,
                                std::vector<DeviceInfo> &devices,
                                std::vector<Route> &routes,
                                std::string &error) {
  try {
    json j = json::parse(meta);
    if (j.at("format") != "fuel.artifact-meta" || j.at("version") != 1) {
      error = "section 'meta' is not fuel.artifact-meta version 1";
      return failure();
    }
    for (const json &d : j.at("machine").at("devices")) {
      std::optional<DeviceRef> ref = parseDevice(d.at("id").get<std::string>());
      if (!ref) {
        error = "section 'meta' names an unknown device '" +
                d.at("id").get<std::string>() + "'";
        return failure();
      }
      DeviceInfo info{d.at("id"), ref->kind, d.at("name"), d.at("target"), {}};
      if (d.contains("cpu_features"))
        info.cpuFeatures = d.at("cpu_features").get<std::vector<std::string>>();
      devices.push_back(std::move(info));
    }
    for (const json &r : j.at("routes")) {
      Route route{r.at("section"), r.at("devices"), {}};
      if (r.contains("kernels"))
        route.kernelSections =
            r.at("kernels").get<std::map<std::string, std::string>>();
      routes.push_back(std::move(route));
    }
  } catch (const json::exception &e) {
    error = std::string("section 'meta' is malformed: ") + e.what();
    return failure();
  }
  return success();
}

namespace {
class PlanReader {
public:
  PlanReader(const Graph &graph, const std::vector<DeviceInfo> &devices)
      : graph(graph), devices(devices) {
    for (NodeId n = 0; n < graph.numNodes(); ++n) {
      nodes.emplace(std::string(graph.name(n)), n);
      for (uint32_t r = 0; r < graph.numResults(n); ++r) {
        std::string name(graph.name(n));
        if (graph.numResults(n) != 1)
          name += "#" + std::to_string(r);
        values.emplace(std::move(name), ValueRef{n, r});
      }
    }
  }

  void read(const json &j, Program &p);

private:
  [[noreturn]] void fail(const std::string &what) {
    throw std::runtime_error(what);
  }
  ValueRef value(const json &name) {
    auto it = values.find(name.get<std::string>());
    if (it == values.end())
      fail("unknown value '" + name.get<std::string>() + "'");
    return it->second;
  }
  NodeId node(const json &name) {
    auto it = nodes.find(name.get<std::string>());
    if (it == nodes.end())
      fail("unknown node '" + name.get<std::string>() + "'");
    return it->second;
  }
  unsigned device(const json &id) {
    for (unsigned d = 0; d < devices.size(); ++d)
      if (devices[d].id == id.get<std::string>())
        return d;
    fail("unknown device '" + id.get<std::string>() + "'");
  }
  Binding binding(const json &b, size_t numBuffers) {
    Binding out{value(b.at("value")), std::nullopt};
    if (b.contains("buffer")) {
      size_t index = b.at("buffer").get<size_t>();
      if (index >= numBuffers)
        fail("buffer index " + std::to_string(index) + " out of range");
      out.buffer = index;
    } else if (!b.contains("constant")) {
      fail("value '" + b.at("value").get<std::string>() +
           "' is bound to no buffer and no constant");
    }
    return out;
  }

  const Graph &graph;
  const std::vector<DeviceInfo> &devices;
  std::map<std::string, ValueRef> values;
  std::map<std::string, NodeId> nodes;
};
} // namespace

void PlanReader::read(const json &j, Program &p) {
  if (j.at("format") != "fuel.plan" || j.at("version") != 1)
    fail("not fuel.plan version 1");
  p.arenaBytes.assign(devices.size(), 0);
  // Buffers by their global index.
  for (const auto &[id, memory] : j.at("memory").items()) {
    unsigned d = device(json(id));
    p.arenaBytes[d] = memory.at("arena_bytes").get<uint64_t>();
    for (const json &b : memory.at("buffers")) {
      size_t index = b.at("index").get<size_t>();
      if (index > 100'000'000)
        fail("buffer index " + std::to_string(index) + " out of range");
      if (p.buffers.size() <= index)
        p.buffers.resize(index + 1);
      uint64_t offset = b.at("offset").get<uint64_t>(),
               size = b.at("size").get<uint64_t>();
      if (offset > p.arenaBytes[d] || size > p.arenaBytes[d] - offset)
        fail("buffer " + std::to_string(index) + " lies outside its arena");
      p.buffers[index] = {d, offset, size};
    }
  }
  size_t numBuffers = p.buffers.size();
  for (const json &k : j.at("kernels")) {
    KernelInfo info;
    info.symbol = k.at("symbol");
    info.device = device(k.at("device"));
    info.splittable = k.at("splittable");
    for (const json &n : k.at("nodes")) {
      info.nodes.push_back(node(n));
      info.label += (info.label.empty() ? "" : "+") +
                    std::string(opName(graph.kind(info.nodes.back())));
    }
    for (const json &a : k.at("args")) {
      KernelArgInfo arg{binding(a, numBuffers), a.at("result"),
                        a.at("split_axis"), a.at("contiguous")};
      int rank = static_cast<int>(graph.shape(arg.binding.value).size());
      arg.rank = static_cast<unsigned>(rank);
      if (arg.splitAxis < -1 || arg.splitAxis >= rank)
        fail("kernel '" + info.symbol + "' splits an argument on a missing axis");
      if (arg.isResult && !arg.binding.buffer)
        fail("kernel '" + info.symbol + "' writes a constant");
      info.args.push_back(arg);
    }
    for (const json &name : k.at("symbols")) {
      std::optional<uint32_t> id = graph.symbols().lookup(name.get<std::string>());
      if (!id)
        fail("kernel '" + info.symbol + "' reads an unknown symbol '" +
             name.get<std::string>() + "'");
      info.symbols.push_back(*id);
    }
    p.kernels.push_back(std::move(info));
  }
  for (const json &c : j.at("copies")) {
    CopyInfo copy{value(c.at("value")), device(c.at("from")), device(c.at("to")),
                  c.at("source_buffer"), c.at("target_buffer")};
    if (copy.source >= numBuffers || copy.target >= numBuffers)
      fail("copy of '" + c.at("value").get<std::string>() + "' names a missing buffer");
    p.copies.push_back(copy);
  }
  // Order: each kernel at its last (root) step; copies after their step.
  const json &steps = j.at("steps");
  std::vector<int64_t> kernelAt(steps.size(), -1);
  for (size_t s = 0; s < steps.size(); ++s) {
    int64_t k = steps[s].at("kernel").get<int64_t>();
    if (k < 0 || static_cast<size_t>(k) >= p.kernels.size())
      fail("step " + std::to_string(s) + " names a missing kernel");
    for (size_t t = 0; t < s; ++t)
      if (kernelAt[t] == k)
        kernelAt[t] = -1;
    kernelAt[s] = k;
    p.kernels[k].capsule = steps[s].at("capsule");
    p.kernels[k].rootName = steps[s].at("node");
  }
  std::vector<std::vector<int64_t>> copiesAfter(steps.size() + 1);
  const json &copies = j.at("copies");
  for (size_t c = 0; c < copies.size(); ++c) {
    int64_t after = copies[c].at("after_step").get<int64_t>();
    if (after < -1 || after >= static_cast<int64_t>(steps.size()))
      fail("copy " + std::to_string(c) + " follows a missing step");
    copiesAfter[after + 1].push_back(~static_cast<int64_t>(c));
  }
  p.order = copiesAfter[0];
  for (size_t s = 0; s < steps.size(); ++s) {
    if (kernelAt[s] >= 0)
      p.order.push_back(kernelAt[s]);
    p.order.insert(p.order.end(), copiesAfter[s + 1].begin(),
                   copiesAfter[s + 1].end());
  }
  p.symbolBounds.assign(graph.symbols().size(), 0);
  for (const auto &[name, bound] : j.at("symbol_bounds").items()) {
    std::optional<uint32_t> id = graph.symbols().lookup(name);
    if (!id)
      fail("unknown symbol '" + name + "'");
    p.symbolBounds[*id] = bound.get<int64_t>();
  }
  for (const json &in : j.at("io").at("inputs"))
    p.inputs.push_back(binding(in, numBuffers));
  for (const json &out : j.at("io").at("outputs"))
    p.outputs.push_back(binding(out, numBuffers));
}

LogicalResult runtime::readProgram(std::string_view plan, const Graph &graph,
                                   const std::vector<DeviceInfo> &devices,
                                   Program &program, std::string &error) {
  try {
    program.devices = devices;
    PlanReader(graph, devices).read(json::parse(plan), program);
  } catch (const std::exception &e) {
    error = e.what();
    return failure();
  }
  return success();
}
