//===- Placement.cpp - Device placement as a labeling problem -------------===//

#include "fuel/Planner/Placement.h"

#include "PlacementSolvers.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace fuel;

std::string_view fuel::placerName(PlacerKind kind) {
  switch (kind) {
  case PlacerKind::Optimal:
    return "optimal";
  case PlacerKind::Greedy:
    return "greedy";
  case PlacerKind::ChainDp:
    return "chain-dp";
  }
  return "optimal";
}

//===----------------------------------------------------------------------===//
// Problem
//===----------------------------------------------------------------------===//

PlacementProblem::PlacementProblem(unsigned numDevices,
                                   std::vector<double> latency,
                                   std::vector<double> inverseBandwidth)
    : devices(numDevices), latency(std::move(latency)),
      inverseBandwidth(std::move(inverseBandwidth)) {
  assert(devices >= 1 && devices <= 64 && "1 to 64 devices");
  assert(this->latency.size() == devices * devices &&
         this->inverseBandwidth.size() == devices * devices);
  detectLine();
}

void PlacementProblem::detectLine() {
  if (devices < 3)
    return;
  auto linked = [&](unsigned a, unsigned b) {
    return std::isfinite(latency[a * devices + b]) &&
           std::isfinite(inverseBandwidth[a * devices + b]) &&
           std::isfinite(latency[b * devices + a]) &&
           std::isfinite(inverseBandwidth[b * devices + a]);
  };
  std::vector<std::vector<unsigned>> neighbours(devices);
  unsigned links = 0;
  for (unsigned a = 0; a < devices; ++a)
    for (unsigned b = a + 1; b < devices; ++b)
      if (linked(a, b)) {
        neighbours[a].push_back(b);
        neighbours[b].push_back(a);
        ++links;
      }
  // A path: k - 1 links, degrees at most 2, one end, all devices reached.
  if (links != devices - 1)
    return;
  unsigned end = devices;
  for (unsigned d = 0; d < devices; ++d) {
    if (neighbours[d].size() > 2)
      return;
    if (neighbours[d].size() == 1 && end == devices)
      end = d;
  }
  if (end == devices)
    return;
  std::vector<unsigned> order{end};
  for (unsigned previous = devices, at = end; order.size() < devices;) {
    unsigned next = devices;
    for (unsigned n : neighbours[at])
      if (n != previous)
        next = n;
    if (next == devices)
      return; // Disconnected.
    previous = at;
    at = next;
    order.push_back(at);
  }
  lineOrder = std::move(order);
  linePosition.assign(devices, 0);
  for (unsigned i = 0; i < devices; ++i)
    linePosition[lineOrder[i]] = i;
}

double PlacementProblem::linkCost(uint32_t value, unsigned from,
                                  unsigned to) const {
  size_t i = from * devices + to;
  return latency[i] + valueList[value].bytes * inverseBandwidth[i];
}

uint32_t PlacementProblem::addNode(const std::vector<double> &costs) {
  assert(costs.size() == devices);
  nodeCosts.insert(nodeCosts.end(), costs.begin(), costs.end());
  return numNodes() - 1;
}

void PlacementProblem::addValue(uint32_t producer, double bytes,
                                std::span<const uint32_t> consumers) {
  uint32_t first = static_cast<uint32_t>(consumerList.size());
  consumerList.insert(consumerList.end(), consumers.begin(), consumers.end());
  std::sort(consumerList.begin() + first, consumerList.end());
  consumerList.erase(std::unique(consumerList.begin() + first, consumerList.end()),
                     consumerList.end());
  valueList.push_back(
      {producer, bytes, first, static_cast<uint32_t>(consumerList.size() - first)});
}

std::vector<std::vector<uint32_t>> PlacementProblem::inputsByNode() const {
  std::vector<std::vector<uint32_t>> inputs(numNodes());
  for (uint32_t v = 0; v < valueList.size(); ++v)
    for (uint32_t c : consumers(v))
      inputs[c].push_back(v);
  return inputs;
}

double PlacementProblem::transferCost(uint32_t value, unsigned from,
                                      unsigned to) const {
  if (from == to)
    return 0;
  if (isLine())
    return hopsCost(value, from, uint64_t(1) << to);
  // Routes with at most one intermediate device (exact closure for up to
  // three devices; e.g. GPU -> host -> GPU staging).
  double best = linkCost(value, from, to);
  for (unsigned via = 0; via < devices; ++via)
    if (via != from && via != to)
      best = std::min(best, linkCost(value, from, via) + linkCost(value, via, to));
  return best;
}

double PlacementProblem::evaluate(const std::vector<uint16_t> &labels) const {
  double total = 0;
  for (uint32_t n = 0; n < numNodes(); ++n)
    total += nodeCost(n, labels[n]);
  for (uint32_t v = 0; v < valueList.size(); ++v) {
    uint64_t destinations = 0;
    for (uint32_t c : consumers(v))
      destinations |= uint64_t(1) << labels[c];
    total += hopsCost(v, labels[valueList[v].producer], destinations);
  }
  return total;
}

PlacementResult fuel::solvePlacement(const PlacementProblem &problem,
                                     const std::vector<uint32_t> &order,
                                     PlacerKind kind) {
  PlacementResult result;
  if (kind != PlacerKind::Optimal) {
    result.labels = kind == PlacerKind::Greedy ? placeGreedy(problem, order)
                                               : placeChainDp(problem, order);
    result.cost = problem.evaluate(result.labels);
    return result;
  }
  if (problem.numDevices() == 1) {
    result.labels.assign(problem.numNodes(), 0);
    result.cost = problem.evaluate(result.labels);
    result.exact = true;
    result.lowerBound = result.cost;
    return result;
  }
  if (problem.numDevices() == 2)
    return placeTwoDevices(problem);
  if (problem.isLine())
    return placeOnLine(problem);
  return placeByExpansion(problem, order);
}

PlacementResult fuel::solvePlacementBruteForce(const PlacementProblem &p) {
  PlacementResult result;
  std::vector<uint16_t> labels(p.numNodes(), 0);
  while (true) {
    double cost = p.evaluate(labels);
    if (cost < result.cost) {
      result.cost = cost;
      result.labels = labels;
    }
    uint32_t i = 0;
    while (i < labels.size() && ++labels[i] == p.numDevices())
      labels[i++] = 0;
    if (i == labels.size())
      break;
  }
  result.exact = true;
  result.lowerBound = result.cost;
  return result;
}
