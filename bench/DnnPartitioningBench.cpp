//===- DnnPartitioningBench.cpp - Placement on real operator graphs -------===//
//
// The operator and layer graphs of msr-fiddle/dnn-partitioning (BERT,
// ResNet-50, GNMT, Inception; ../shared/data/dnn-partitioning) with their
// measured per-node CPU and accelerator latencies and per-edge transfer
// costs, placed by the optimal placer, the seeds' greedy walk and chain DP.
// With the published costs every supported op is faster on the accelerator,
// so, as the data's README suggests, CPU latencies are divided by 5 and each
// accelerator kernel costs 10 us more. A value (all edges from one node; they
// carry one cost) is transferred once per destination device.
//
// Usage: dnn-partitioning-bench DATA_DIR
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Placement.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

using namespace fuel;

namespace {
struct OperatorGraph {
  std::vector<double> cpu, accel;
  std::map<uint32_t, std::pair<double, std::vector<uint32_t>>> values;
  std::vector<uint32_t> order;
};

bool load(const std::filesystem::path &path, OperatorGraph &g) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded())
    return false;
  std::map<int64_t, uint32_t> index;
  for (const auto &node : j["nodes"]) {
    index[node["id"].get<int64_t>()] = static_cast<uint32_t>(g.cpu.size());
    g.cpu.push_back(node["cpuLatency"].get<double>() / 5);
    // Operator graphs spell the flag as a boolean, layer graphs as 0/1.
    const auto &supported = node["supportedOnFpga"];
    bool onAccelerator = supported.is_boolean() ? supported.get<bool>()
                                                : supported.get<double>() != 0;
    g.accel.push_back(onAccelerator ? node["fpgaLatency"].get<double>() + 0.01
                                    : kInfiniteCost);
  }
  std::vector<std::vector<uint32_t>> users(g.cpu.size());
  std::vector<uint32_t> pending(g.cpu.size(), 0);
  for (const auto &edge : j["edges"]) {
    uint32_t from = index.at(edge["sourceId"].get<int64_t>());
    uint32_t to = index.at(edge["destId"].get<int64_t>());
    auto &value = g.values[from];
    value.first = edge["cost"].get<double>();
    value.second.push_back(to);
    users[from].push_back(to);
    ++pending[to];
  }
  for (uint32_t n = 0; n < g.cpu.size(); ++n)
    if (pending[n] == 0)
      g.order.push_back(n);
  for (size_t head = 0; head < g.order.size(); ++head)
    for (uint32_t u : users[g.order[head]])
      if (--pending[u] == 0)
        g.order.push_back(u);
  return g.order.size() == g.cpu.size();
}

/// Device 0 is the CPU, 1.. are identical accelerators; every pair of
/// devices is linked (a value's edge cost is its transfer time).
PlacementProblem build(const OperatorGraph &g, unsigned devices) {
  std::vector<double> latency(devices * devices, 0);
  std::vector<double> perByte(devices * devices, 1);
  for (unsigned d = 0; d < devices; ++d)
    perByte[d * devices + d] = 0;
  PlacementProblem p(devices, latency, perByte);
  for (size_t n = 0; n < g.cpu.size(); ++n) {
    std::vector<double> costs(devices, g.accel[n]);
    costs[0] = g.cpu[n];
    p.addNode(costs);
  }
  for (const auto &[producer, value] : g.values)
    p.addValue(producer, value.first, value.second);
  return p;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dnn-partitioning-bench DATA_DIR\n");
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const char *sub : {"OperatorGraphs", "LayerGraphs"})
    for (const auto &entry :
         std::filesystem::directory_iterator(std::filesystem::path(argv[1]) / sub))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::printf("| graph | nodes | devices | optimal cost | exact | planning time | greedy / optimal | chain-dp / optimal | all-CPU / optimal |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto &path : files) {
    OperatorGraph g;
    if (!load(path, g)) {
      std::fprintf(stderr, "%s: cannot read or has a cycle\n", path.c_str());
      return 1;
    }
    for (unsigned devices : {2u, 3u}) {
      PlacementProblem p = build(g, devices);
      auto start = std::chrono::steady_clock::now();
      PlacementResult best = solvePlacement(p, g.order, PlacerKind::Optimal);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start).count();
      double greedy = solvePlacement(p, g.order, PlacerKind::Greedy).cost;
      double chain = solvePlacement(p, g.order, PlacerKind::ChainDp).cost;
      double cpuOnly = p.evaluate(std::vector<uint16_t>(g.cpu.size(), 0));
      std::printf("| %s/%s | %zu | %u | %.4g | %s | %.2f ms | %.3f | %.3f | %.2f |\n",
                  path.parent_path().filename().c_str(),
                  path.stem().c_str(), g.cpu.size(), devices, best.cost,
                  best.exact ? "yes" : "no", seconds * 1e3, greedy / best.cost,
                  chain / best.cost, cpuOnly / best.cost);
    }
  }
  return 0;
}
