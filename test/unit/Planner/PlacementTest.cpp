//===- PlacementTest.cpp - Placement solvers against brute force ----------===//
//
// Random small DAGs with fan-out, diamonds, pins and inadmissible devices:
// the two-device solver must equal the exhaustive optimum; with three devices
// the expansion solver must never be worse than the baselines and its gap to
// the optimum is reported. Metamorphic properties are checked on the side.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Placement.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <random>

using namespace fuel;

namespace {
/// Everything that defines a placement problem, so tests can alter it.
struct DagSpec {
  unsigned k = 2;
  std::vector<double> latency, inverse;
  std::vector<std::vector<double>> costs;
  struct Value {
    uint32_t producer;
    double bytes;
    std::vector<uint32_t> consumers;
  };
  std::vector<Value> values;

  PlacementProblem build() const {
    PlacementProblem p(k, latency, inverse);
    for (const auto &c : costs)
      p.addNode(c);
    for (const Value &v : values)
      p.addValue(v.producer, v.bytes, v.consumers);
    return p;
  }
  std::vector<uint32_t> order() const {
    std::vector<uint32_t> o(costs.size());
    for (uint32_t i = 0; i < o.size(); ++i)
      o[i] = i; // Values only flow to later nodes.
    return o;
  }
};

/// A random DAG of `n` nodes on `k` fully linked devices: some devices
/// inadmissible per node, some nodes pinned, values with fan-out 0-4 (so
/// diamonds abound).
DagSpec randomDag(unsigned k, unsigned n, std::mt19937 &rng) {
  DagSpec spec;
  spec.k = k;
  std::uniform_real_distribution<double> lat(0.5, 3.0), ibw(0.01, 0.2),
      cost(0.5, 10.0), bytes(1, 40);
  std::uniform_int_distribution<int> percent(0, 99);
  spec.latency.assign(k * k, 0);
  spec.inverse.assign(k * k, 0);
  for (unsigned a = 0; a < k; ++a)
    for (unsigned b = 0; b < k; ++b) {
      if (a == b)
        continue;
      spec.latency[a * k + b] = lat(rng);
      spec.inverse[a * k + b] = ibw(rng);
    }
  for (unsigned i = 0; i < n; ++i) {
    std::vector<double> costs(k);
    for (double &c : costs)
      c = percent(rng) < 12 ? kInfiniteCost : cost(rng);
    costs[rng() % k] = cost(rng); // At least one admissible device.
    if (percent(rng) < 10) {      // A pin.
      unsigned pin = rng() % k;
      for (unsigned d = 0; d < k; ++d)
        if (d != pin)
          costs[d] = kInfiniteCost;
      if (!std::isfinite(costs[pin]))
        costs[pin] = cost(rng);
    }
    spec.costs.push_back(costs);
  }
  for (unsigned i = 0; i + 1 < n; ++i) {
    std::vector<uint32_t> consumers;
    unsigned fanOut = rng() % 5;
    for (unsigned c = 0; c < fanOut; ++c)
      consumers.push_back(i + 1 + rng() % (n - i - 1));
    if (!consumers.empty())
      spec.values.push_back({i, bytes(rng), consumers});
  }
  return spec;
}

bool near(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

/// The exact solver's plan equals the exhaustive optimum, costs what it
/// claims, and beats both baselines.
void requireExactOptimum(const DagSpec &spec, const PlacementProblem &problem) {
  PlacementResult best = solvePlacementBruteForce(problem);
  PlacementResult cut = solvePlacement(problem, spec.order(), PlacerKind::Optimal);
  REQUIRE(cut.exact);
  REQUIRE(near(cut.cost, best.cost));
  REQUIRE(near(problem.evaluate(cut.labels), cut.cost));
  for (PlacerKind baseline : {PlacerKind::Greedy, PlacerKind::ChainDp})
    REQUIRE(cut.cost <= solvePlacement(problem, spec.order(), baseline).cost + 1e-9);
}

PlacementResult optimal(const DagSpec &spec) {
  return solvePlacement(spec.build(), spec.order(), PlacerKind::Optimal);
}
} // namespace

TEST_CASE("two devices: the minimum cut is the exhaustive optimum",
          "[placement]") {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 1000; ++trial) {
    unsigned n = 2 + rng() % 13; // Up to 14 nodes.
    DagSpec spec = randomDag(2, n, rng);
    INFO("trial " << trial << ", " << n << " nodes");
    requireExactOptimum(spec, spec.build());
  }
}

TEST_CASE("devices in a line: the layered minimum cut is the exhaustive "
          "optimum",
          "[placement]") {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 1000; ++trial) {
    unsigned k = 3 + trial % 2; // Three or four devices in a chain.
    unsigned n = 2 + rng() % (k == 3 ? 9 : 6);
    DagSpec spec = randomDag(k, n, rng);
    // Link the devices in a chain 0 - 1 - ... - (k-1), nothing else.
    for (unsigned a = 0; a < k; ++a)
      for (unsigned b = 0; b < k; ++b)
        if (a != b && (a > b ? a - b : b - a) != 1) {
          spec.latency[a * k + b] = kInfiniteCost;
          spec.inverse[a * k + b] = kInfiniteCost;
        }
    PlacementProblem problem = spec.build();
    REQUIRE(problem.isLine());
    INFO("trial " << trial << ", " << k << " devices, " << n << " nodes");
    requireExactOptimum(spec, problem);
  }
}

TEST_CASE("three devices: expansion is never worse than the baselines",
          "[placement]") {
  std::mt19937 rng(7);
  double sumGap = 0, maxGap = 0;
  int optimal = 0, trials = 0;
  {
    // Every pair of devices linked (host-staged machines are lines, solved
    // exactly above).
    for (int trial = 0; trial < 1000; ++trial, ++trials) {
      unsigned n = 2 + rng() % 9; // Up to 10 nodes: 3^10 labelings.
      DagSpec spec = randomDag(3, n, rng);
      PlacementProblem problem = spec.build();
      PlacementResult best = solvePlacementBruteForce(problem);
      PlacementResult ours =
          solvePlacement(problem, spec.order(), PlacerKind::Optimal);
      INFO("trial " << trial);
      REQUIRE(near(problem.evaluate(ours.labels), ours.cost));
      REQUIRE(ours.cost >= best.cost - 1e-9);
      REQUIRE(ours.lowerBound <= best.cost + 1e-9);
      for (PlacerKind baseline : {PlacerKind::Greedy, PlacerKind::ChainDp})
        REQUIRE(ours.cost <=
                solvePlacement(problem, spec.order(), baseline).cost + 1e-9);
      double gap = best.cost > 0 ? ours.cost / best.cost - 1 : 0;
      sumGap += gap;
      maxGap = std::max(maxGap, gap);
      optimal += near(ours.cost, best.cost);
    }
  }
  std::cout << "placement, 3 fully linked devices: optimal in " << optimal
            << "/" << trials
            << ", mean gap " << 100 * sumGap / trials << "%, max gap "
            << 100 * maxGap << "%\n";
  // Regression guard on quality (not on time): the documented figures.
  CHECK(optimal >= trials * 95 / 100);
  CHECK(maxGap < 0.25);
}

TEST_CASE("metamorphic properties of the optimum", "[placement]") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    unsigned k = 2 + trial % 2, n = 3 + rng() % 8;
    DagSpec spec = randomDag(k, n, rng);
    PlacementResult base = optimal(spec);
    REQUIRE(base.feasible());
    bool exact = base.exact;
    INFO("trial " << trial << ", " << k << " devices");

    // Pinning a node to its optimal device keeps the optimum.
    uint32_t node = rng() % n;
    DagSpec pinned = spec;
    for (unsigned d = 0; d < k; ++d)
      if (d != base.labels[node])
        pinned.costs[node][d] = kInfiniteCost;
    PlacementResult afterPin = optimal(pinned);
    if (exact)
      CHECK(near(afterPin.cost, base.cost));
    else
      CHECK(afterPin.cost <= base.cost + 1e-9); // A smaller search space.

    // Raising a link cost never lowers the optimum (checked where exact).
    DagSpec dearer = spec;
    unsigned a = rng() % k, b = (a + 1) % k;
    dearer.latency[a * k + b] *= 3;
    dearer.inverse[a * k + b] *= 3;
    if (exact)
      CHECK(optimal(dearer).cost >= base.cost - 1e-9);

    // Adding a constant to one node's costs on every device shifts the
    // optimum by that constant and keeps the placement's cost structure.
    DagSpec shifted = spec;
    for (double &c : shifted.costs[node])
      c += 5;
    PlacementResult afterShift = optimal(shifted);
    if (exact) {
      CHECK(near(afterShift.cost, base.cost + 5));
      CHECK(near(spec.build().evaluate(afterShift.labels), base.cost));
    }
  }
}

TEST_CASE("infeasible pins are reported as infeasible", "[placement]") {
  // Node 0 may only run on device 0, node 1 only on device 1, and the link
  // between them is absent in both directions.
  PlacementProblem p(2, {0, kInfiniteCost, kInfiniteCost, 0}, {0, 0, 0, 0});
  p.addNode({1, kInfiniteCost});
  p.addNode({kInfiniteCost, 1});
  p.addValue(0, 8, std::vector<uint32_t>{1});
  CHECK_FALSE(solvePlacement(p, {0, 1}, PlacerKind::Optimal).feasible());
  PlacementProblem q(2, {0, 1, 1, 0}, {0, 0, 0, 0});
  q.addNode({kInfiniteCost, kInfiniteCost});
  CHECK_FALSE(solvePlacement(q, {0}, PlacerKind::Optimal).feasible());
}

TEST_CASE("fan-out to one device pays one transfer", "[placement]") {
  // A producer pinned to device 0 feeding three consumers that are much
  // cheaper on device 1: one transfer (latency 10) serves all three.
  PlacementProblem p(2, {0, 10, 10, 0}, {0, 0, 0, 0});
  p.addNode({1, kInfiniteCost});
  for (int i = 0; i < 3; ++i)
    p.addNode({8, 1});
  p.addValue(0, 100, std::vector<uint32_t>{1, 2, 3});
  PlacementResult r = solvePlacement(p, {0, 1, 2, 3}, PlacerKind::Optimal);
  CHECK(r.labels == std::vector<uint16_t>{0, 1, 1, 1});
  CHECK(r.cost == 1 + 3 * 1 + 10);
  // The per-consumer greedy walk pays 10 per consumer in its estimate and
  // keeps them on device 0.
  PlacementResult g = solvePlacement(p, {0, 1, 2, 3}, PlacerKind::Greedy);
  CHECK(g.cost == 1 + 3 * 8);
}
