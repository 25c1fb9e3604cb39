//===- PlanArtifact.cpp - Writing a plan as a .fplan artifact -------------===//
//
// Everything in the artifact is a function of the graph, the machine and the
// flags: no timestamps, no paths, no pointer order; JSON members are in a
// fixed order. So the same input gives byte-identical artifacts.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Planner.h"

#include "fuel/Planner/LowerProgram.h"

#include "fuel/Artifact/Artifact.h"
#include "fuel/Import/GraphJson.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace fuel;

static std::string metaSection(const Graph &graph,
                               const std::vector<PlannedRoute> &routes,
                               const ExecutionConfig &config,
                               std::string_view compilerVersion) {
  const ExecutionPlan &plan = routes.front().plan;
  nlohmann::ordered_json j;
  j["format"] = "fuel.artifact-meta";
  j["version"] = artifact::kProgramVersion;
  j["compiler"] = std::string(compilerVersion);
  j["graph"] = std::string(graph.graphNameText());
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const DeviceSpec &d : plan.machine->devices) {
    nlohmann::ordered_json device{{"id", formatDevice(d.ref)},
                                  {"name", d.name},
                                  {"target", d.target}};
    // What the runtime checks on the CPU before loading x86 kernels.
    if (auto features = x86TargetFeatures(d.target))
      device["cpu_features"] = *features;
    devices.push_back(std::move(device));
  }
  j["machine"] = {{"name", plan.machine->name}, {"devices", std::move(devices)}};
  nlohmann::ordered_json policy;
  policy["placer"] = std::string(placerName(config.placer));
  policy["minimum_trust"] = std::string(trustLevelName(config.minimumTrust));
  if (std::isfinite(config.maxRelativeError))
    policy["precision_floor"] = config.maxRelativeError;
  policy["prefer_bit_stable"] = config.preferBitStable;
  policy["preferred_providers"] = config.preferredProviders;
  nlohmann::ordered_json dims = nlohmann::ordered_json::object();
  for (const auto &[name, extent] : config.dims)
    dims[name] = extent;
  policy["dims"] = std::move(dims);
  j["policy"] = std::move(policy);
  nlohmann::ordered_json routeList = nlohmann::ordered_json::array();
  for (size_t r = 0; r < routes.size(); ++r) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (DeviceRef d : routes[r].devices)
      devices.push_back(formatDevice(d));
    routeList.push_back({{"section", routeSectionName("program", r)},
                         {"devices", std::move(devices)},
                         {"cost", routes[r].plan.cost}});
  }
  j["routes"] = std::move(routeList);
  return j.dump(2) + "\n";
}

std::string fuel::buildPlanArtifact(const Graph &graph,
                                    const std::vector<PlannedRoute> &routes,
                                    const ExecutionConfig &config,
                                    std::string_view compilerVersion) {
  std::vector<uint64_t> offsets;
  std::string weights(constantOffsets(graph, offsets), '\0');
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (const ConstantData *data = graph.constantData(n))
      weights.replace(offsets[n], data->size, data->bytes());
  std::vector<ArtifactSection> sections{
      {"meta", metaSection(graph, routes, config, compilerVersion)},
      {"graph", printGraphJson(graph, &offsets)}};
  for (size_t r = 0; r < routes.size(); ++r) {
    sections.push_back({routeSectionName("program", r),
                        artifact::printProgram(routes[r].program)});
    for (const auto &[backend, binary] : routes[r].kernelBinaries)
      sections.push_back({routeSectionName("kernels." + backend, r), binary});
  }
  sections.push_back({"weights", std::move(weights)});
  return writeArtifact(sections);
}
