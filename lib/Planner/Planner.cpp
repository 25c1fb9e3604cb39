//===- Planner.cpp - Placement planning of a verified graph ---------------===//

#include "fuel/Planner/Planner.h"

#include "FusionPricing.h"
#include "fuel/Planner/AttentionFusion.h"
#include "fuel/Planner/InPlaceConcat.h"
#include "fuel/Planner/KernelFormation.h"
#include "fuel/Planner/PoolFusion.h"
#include "fuel/Support/Buckets.h"
#include "fuel/Transforms/Fusion.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

using namespace fuel;

/// Orders copies by the step they follow; those of inputs (~0) come first.
static bool copiesBefore(const PlannedCopy &a, const PlannedCopy &b) {
  return a.afterStep + 1 < b.afterStep + 1;
}

namespace {

constexpr uint32_t kNotPlaced = ~uint32_t(0);

class PlanBuilder {
public:
  PlanBuilder(const Graph &graph, const Machine &machine,
              const CapsuleRegistry &registry, const ExecutionConfig &config,
              DiagnosticEngine &diag, const SourceLocator &locator,
              ExecutionPlan &plan)
      : graph(graph), machine(machine), registry(registry), config(config),
        diag(diag), locator(locator), plan(plan),
        pricing(graph, config.dims), k(static_cast<unsigned>(machine.devices.size())) {}

  LogicalResult run();

private:
  void error(NodeId node, NodeSite site, std::string message,
             std::vector<std::string> notes = {}) {
    Diagnostic d;
    d.location = locator.locate(graph, node, site);
    d.message = std::move(message);
    d.notes = std::move(notes);
    diag.report(std::move(d));
  }
  LogicalResult resolveDevices();
  std::optional<unsigned> deviceIndex(DeviceRef ref, NodeId node,
                                      const char *what);
  LogicalResult collectCandidates();
  /// `penalty[d]` (seconds per byte) is added to running a node on device
  /// d, per byte of its results: the Lagrangian of a memory cap.
  PlacementProblem buildProblem(const std::vector<double> &penalty);
  /// Places, inserts copies, schedules and plans memory; false if no
  /// placement exists at all.
  bool attempt(const std::vector<double> &penalty);
  /// Places once; if a device's memory overflows, prices its bytes until
  /// the plan fits (or fails, saying which devices do not fit).
  LogicalResult placeWithinCapacity();
  /// Devices whose arena plus constants exceed their capacity.
  std::vector<unsigned> overCapacity() const;
  void fillPlan(const PlacementProblem &problem,
                const PlacementResult &placement);
  void schedule();
  /// Runs `phase`, adding its wall time to the plan's phase named `name`.
  template <typename Fn> auto timed(const char *name, Fn phase) {
    auto start = std::chrono::steady_clock::now();
    struct Record {
      std::vector<std::pair<std::string, double>> &phases;
      const char *name;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        auto it = std::find_if(phases.begin(), phases.end(),
                               [&](const auto &p) { return p.first == name; });
        if (it == phases.end())
          phases.emplace_back(name, seconds); // In the order phases first run.
        else
          it->second += seconds;
      }
    } record{phaseSeconds, name, start};
    return phase();
  }

  const Graph &graph;
  const Machine &machine;
  const CapsuleRegistry &registry;
  const ExecutionConfig &config;
  DiagnosticEngine &diag;
  const SourceLocator &locator;
  ExecutionPlan &plan;
  SymbolPricing pricing;
  unsigned k;

  std::vector<NodeId> order;
  std::vector<bool> deviceAllowed;
  std::vector<int> pinOf; // Device index a node is pinned to, or -1.
  unsigned inputDevice = 0, outputDevice = 0;
  std::vector<NodeCandidates> candidates; // By NodeId (kernel nodes).
  std::optional<FusionPricing> fusion;
  std::vector<uint32_t> placementIndex;   // NodeId -> problem node.
  /// Problem values: (root value, problem value index).
  std::vector<ValueRef> valueOf;
  /// Wall time per phase over every attempt (ExecutionPlan::phaseSeconds).
  std::vector<std::pair<std::string, double>> phaseSeconds;
};
} // namespace

std::optional<unsigned> PlanBuilder::deviceIndex(DeviceRef ref, NodeId node,
                                                 const char *what) {
  std::optional<unsigned> index = machine.indexOf(ref);
  if (!index)
    error(node, NodeSite::node(),
          std::string(what) + " device '" + formatDevice(ref) +
              "', which machine '" + machine.name + "' does not have");
  else if (!deviceAllowed[*index])
    error(node, NodeSite::node(),
          std::string(what) + " device '" + formatDevice(ref) +
              "', which the configuration does not allow");
  return index;
}

LogicalResult PlanBuilder::resolveDevices() {
  deviceAllowed.assign(k, config.allowedDevices.empty());
  for (DeviceRef ref : config.allowedDevices)
    if (std::optional<unsigned> i = machine.indexOf(ref))
      deviceAllowed[*i] = true;
  unsigned errorsBefore = diag.errorCount();
  auto residency = [&](DeviceRef ref, const char *what) -> unsigned {
    std::optional<unsigned> i = machine.indexOf(ref);
    if (!i || !deviceAllowed[*i]) {
      diag.error({}, std::string(what) + " residency '" + formatDevice(ref) +
                         "' is not a usable device of machine '" +
                         machine.name + "'");
      return 0;
    }
    return *i;
  };
  inputDevice = residency(config.inputResidency, "input");
  outputDevice = residency(config.outputResidency, "output");

  pinOf.assign(graph.numNodes(), -1);
  std::map<std::string_view, NodeId> byName;
  for (NodeId n = 0; !config.pins.empty() && n < graph.numNodes(); ++n)
    byName.emplace(graph.name(n), n);
  for (const auto &[name, ref] : config.pins) {
    auto it = byName.find(name);
    if (it == byName.end()) {
      diag.error({}, "--pin names node '" + name + "', which the graph does "
                                                   "not have");
      continue;
    }
    if (std::optional<unsigned> i = deviceIndex(ref, it->second, "pinned to"))
      pinOf[it->second] = static_cast<int>(*i);
  }
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    OpKind kind = graph.kind(n);
    std::optional<DeviceRef> pin = graph.placement(n);
    if (pin && pinOf[n] < 0)
      if (std::optional<unsigned> i = deviceIndex(*pin, n, "placed on"))
        pinOf[n] = static_cast<int>(*i);
    // Explicit residency ops live on the device they name.
    if (kind == OpKind::Copy || kind == OpKind::Move || kind == OpKind::Alloc) {
      DeviceRef target = graph.deviceAttr(*graph.findAttr(n, AttrName::Device));
      if (std::optional<unsigned> i = deviceIndex(target, n, "moves data to"))
        pinOf[n] = static_cast<int>(*i);
    }
  }
  return success(diag.errorCount() == errorsBefore);
}

LogicalResult PlanBuilder::collectCandidates() {
  candidates.resize(graph.numNodes());
  bool ok = true;
  for (NodeId n : order) {
    OpKind kind = graph.kind(n);
    if (!isKernelOp(kind) || kind == OpKind::Copy || kind == OpKind::Move ||
        kind == OpKind::Alloc)
      continue;
    std::vector<bool> allowed = deviceAllowed;
    if (pinOf[n] >= 0)
      for (unsigned d = 0; d < k; ++d)
        allowed[d] = allowed[d] && static_cast<int>(d) == pinOf[n];
    candidates[n] = enumerateCandidates(graph, n, machine, registry, config,
                                        pricing, allowed, /*explain=*/false);
    if (!candidates[n].frontier.empty())
      continue;
    ok = false;
    candidates[n] = enumerateCandidates(graph, n, machine, registry, config,
                                        pricing, allowed, /*explain=*/true);
    std::vector<std::string> notes;
    for (const Rejection &r : candidates[n].rejections)
      notes.push_back(r.capsule->id + " on " +
                      formatDevice(machine.devices[r.device].ref) + ": " +
                      r.reason);
    if (notes.empty())
      notes.push_back("no capsule in the registry implements '" +
                      std::string(opName(kind)) + "' on any device of machine '" +
                      machine.name + "'");
    error(n, NodeSite::node(),
          "NoBackendForOp: no kernel can run '" + std::string(opName(kind)) +
              "' here; every candidate was rejected",
          std::move(notes));
  }
  return success(ok);
}

PlacementProblem PlanBuilder::buildProblem(const std::vector<double> &penalty) {
  std::vector<double> latency, inverseBandwidth;
  machine.linkMatrices(latency, inverseBandwidth);
  PlacementProblem problem(k, latency, inverseBandwidth);
  placementIndex.assign(graph.numNodes(), kNotPlaced);
  std::vector<double> costs(k); // Of the node being added.
  auto pinnedCosts = [&](unsigned device) -> const std::vector<double> & {
    std::fill(costs.begin(), costs.end(), kInfiniteCost);
    costs[device] = 0;
    return costs;
  };
  // One problem node per fusion group (its root), priced as a whole.
  for (NodeId n : order) {
    OpKind kind = graph.kind(n);
    if (kind == OpKind::Constant || isViewOp(kind) || fusion->rootOf(n) != n)
      continue;
    if (kind == OpKind::Input)
      pinnedCosts(inputDevice);
    else if (pinOf[n] >= 0 && candidates[n].frontier.empty())
      pinnedCosts(static_cast<unsigned>(pinOf[n])); // copy, alloc.
    else
      for (unsigned d = 0; d < k; ++d)
        costs[d] = fusion->groupTime(n, d);
    if (kind != OpKind::Input)
      for (unsigned d = 0; d < k; ++d)
        for (uint32_t r = 0; r < graph.numResults(n) && penalty[d] != 0; ++r)
          costs[d] += penalty[d] * pricing.bytes(graph, {n, r});
    placementIndex[n] = problem.addNode(costs);
  }
  for (NodeId n : order)
    if (fusion->rootOf(n) != n)
      placementIndex[n] = placementIndex[fusion->rootOf(n)];
  // Values: every result of a placed node, read directly or through views.
  // A result's slot is firstSlot[node] + result.
  std::vector<uint32_t> firstSlot(graph.numNodes() + 1, 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    firstSlot[n + 1] = firstSlot[n] + graph.numResults(n);
  std::vector<uint32_t> valueIndex(firstSlot.back(), kNotPlaced);
  std::vector<std::pair<uint32_t, uint32_t>> reads; // (value, consumer)
  auto consume = [&](ValueRef read, uint32_t consumer) {
    ValueRef root = bufferRoot(graph, read);
    if (placementIndex[root.node] == kNotPlaced)
      return; // A constant: loaded onto every device that reads it.
    uint32_t &index = valueIndex[firstSlot[root.node] + root.result];
    if (index == kNotPlaced) {
      index = static_cast<uint32_t>(valueOf.size());
      valueOf.push_back(root);
    }
    reads.emplace_back(index, consumer);
  };
  for (NodeId n : order)
    if (placementIndex[n] != kNotPlaced)
      for (ValueRef v : graph.operands(n))
        if (fusion->rootOf(bufferRoot(graph, v).node) != fusion->rootOf(n) ||
            isViewOp(graph.kind(v.node)))
          consume(v, placementIndex[n]); // Not a value inside the group.
  // Outputs are delivered to their residency: one sink per output.
  for (ValueRef out : graph.outputs())
    consume(out, problem.addNode(pinnedCosts(outputDevice)));
  // Each value's consumers, in the order they read it.
  Buckets<uint32_t> readers(
      valueOf.size(), reads.size(), [&](size_t i) { return reads[i].first; },
      [&](size_t i) { return reads[i].second; });
  for (uint32_t v = 0; v < valueOf.size(); ++v)
    problem.addValue(placementIndex[valueOf[v].node], pricing.bytes(graph, valueOf[v]), readers[v]);
  return problem;
}

void PlanBuilder::fillPlan(const PlacementProblem &problem,
                           const PlacementResult &placement) {
  plan.machine = &machine;
  plan.placer = config.placer;
  plan.cost = placement.cost;
  plan.exact = placement.exact;
  plan.lowerBound = placement.lowerBound;
  plan.maxFlowRuns = placement.maxFlowRuns;
  plan.defaultedSymbols = pricing.defaulted();
  plan.symbolBounds.clear();
  for (uint32_t s = 0; s < graph.symbols().size(); ++s)
    plan.symbolBounds.emplace_back(std::string(graph.symbols().name(s)),
                                   pricing.extent(Dim::symbol(s)));
  plan.inputDevice = inputDevice;
  plan.outputDevice = outputDevice;
  plan.deviceOf.assign(graph.numNodes(), ~0u);
  for (NodeId n : order) {
    if (placementIndex[n] != kNotPlaced)
      plan.deviceOf[n] = placement.labels[placementIndex[n]];
    else if (isViewOp(graph.kind(n)))
      plan.deviceOf[n] = plan.deviceOf[bufferRoot(graph, {n, 0}).node];
  }
  std::vector<size_t> stepOf(graph.numNodes(), ~size_t(0));
  plan.steps.reserve(placement.labels.size());
  size_t numAlternatives = 0;
  for (NodeId n : order)
    numAlternatives += candidates[n].frontier.size();
  plan.alternatives.reserve(numAlternatives);
  for (NodeId n : order) {
    if (placementIndex[n] == kNotPlaced || graph.kind(n) == OpKind::Input)
      continue;
    unsigned d = plan.deviceOf[n];
    const Candidate *best = fusion->candidate(n, d);
    NodeId root = fusion->rootOf(n);
    // A fused group's time is its kernel's, booked on the root step.
    double time = !fusion->fuses(root, d) ? (best ? best->time : 0)
                  : n == root             ? fusion->groupTime(root, d)
                                          : 0;
    stepOf[n] = plan.steps.size();
    const std::vector<Candidate> &frontier = candidates[n].frontier;
    plan.steps.push_back({n, d, best ? best->capsule : nullptr, time,
                          static_cast<uint32_t>(plan.alternatives.size()),
                          static_cast<uint32_t>(frontier.size())});
    plan.alternatives.insert(plan.alternatives.end(), frontier.begin(), frontier.end());
    plan.computeTime += time;
  }
  plan.rootOf.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    NodeId root = fusion->rootOf(plan.steps[s].node);
    plan.rootOf[s] = fusion->fuses(root, plan.steps[s].device) ? stepOf[root] : s;
  }
  // One copy per value and destination device; on a line of devices, one per
  // link crossed (staged through the intermediate devices).
  for (uint32_t v = 0; v < valueOf.size(); ++v) {
    unsigned from = plan.deviceOf[valueOf[v].node];
    uint64_t destinations = 0;
    for (uint32_t consumer : problem.consumers(v))
      destinations |= uint64_t(1) << placement.labels[consumer];
    problem.forEachHop(v, from, destinations, [&](const PlacementProblem::Hop &hop) {
      plan.transferTime += hop.cost;
      plan.copies.push_back({valueOf[v], hop.from, hop.to,
                             problem.values()[v].bytes, hop.cost,
                             stepOf[valueOf[v].node]});
    });
  }
  std::stable_sort(plan.copies.begin(), plan.copies.end(), copiesBefore);
}

void PlanBuilder::schedule() {
  // List scheduling in plan order: a step starts when its device is free and
  // its inputs are on it; a copy starts when its value exists and the link is
  // free. Inputs and constants are ready at time 0.
  std::vector<double> deviceFree(k, 0), linkFree(k * k, 0);
  std::vector<uint32_t> firstSlot(graph.numNodes() + 1, 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    firstSlot[n + 1] = firstSlot[n] + graph.numResults(n);
  std::vector<double> readyAt(size_t(firstSlot.back()) * k, 0);
  auto slot = [&](ValueRef v, unsigned device) {
    return (size_t(firstSlot[v.node]) + v.result) * k + device;
  };
  auto runCopies = [&](size_t step, double finish) {
    for (const PlannedCopy &c : plan.copiesAfter(step)) {
      // A staged copy also waits for the previous hop to land.
      double start = std::max({finish, linkFree[c.from * k + c.to],
                               readyAt[slot(c.value, c.from)]});
      double end = start + c.time;
      linkFree[c.from * k + c.to] = end;
      readyAt[slot(c.value, c.to)] = end;
      plan.makespan = std::max(plan.makespan, end);
    }
  };
  runCopies(~size_t(0), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep &step = plan.steps[s];
    double start = deviceFree[step.device];
    for (ValueRef v : graph.operands(step.node))
      start = std::max(start, readyAt[slot(bufferRoot(graph, v), step.device)]);
    double finish = start + step.time;
    deviceFree[step.device] = finish;
    for (uint32_t r = 0; r < graph.numResults(step.node); ++r)
      readyAt[slot({step.node, r}, step.device)] = finish;
    plan.makespan = std::max(plan.makespan, finish);
    runCopies(s, finish);
  }
}

bool PlanBuilder::attempt(const std::vector<double> &penalty) {
  valueOf.clear();
  plan = ExecutionPlan();
  PlacementProblem problem = timed("problem", [&] { return buildProblem(penalty); });
  std::vector<uint32_t> problemOrder(problem.numNodes());
  // Problem nodes are created in topological order; sinks come last.
  for (uint32_t i = 0; i < problemOrder.size(); ++i)
    problemOrder[i] = i;
  PlacementResult placement = timed(
      "placement", [&] { return solvePlacement(problem, problemOrder, config.placer); });
  if (!placement.feasible())
    return false;
  timed("copies", [&] { fillPlan(problem, placement); });
  if (config.fusion) {
    timed("attention", [&] { fuseAttention(graph, plan); });
    timed("pooling", [&] { fusePooling(graph, plan); });
    timed("in-place", [&] { markInPlaceConcats(graph, plan); });
  }
  timed("schedule", [&] { schedule(); });
  plan.kernels = timed("form-kernels", [&] { return formKernels(graph, plan); });
  plan.memory = timed("plan-memory", [&] { return planMemory(graph, plan, pricing); });
  return true;
}

std::vector<unsigned> PlanBuilder::overCapacity() const {
  std::vector<unsigned> over;
  for (unsigned d = 0; d < k; ++d) {
    const DeviceMemory &m = plan.memory.devices[d];
    if (double(m.arenaBytes) + double(m.constantBytes) >
        machine.devices[d].memoryCapacity)
      over.push_back(d);
  }
  return over;
}

LogicalResult PlanBuilder::run() {
  if (!topologicalOrder(graph, order)) {
    diag.error({}, "internal error: planning an unverified graph with a cycle");
    return failure();
  }
  if (failed(resolveDevices()) ||
      failed(timed("candidates", [&] { return collectCandidates(); })))
    return failure();
  timed("fusion", [&] {
    std::vector<NodeId> groups(graph.numNodes());
    for (NodeId n = 0; n < graph.numNodes(); ++n)
      groups[n] = n;
    if (config.fusion)
      groups = fusionGroups(graph, order, pinOf);
    fusion.emplace(graph, machine, pricing, candidates, std::move(groups), order);
  });
  LogicalResult result = placeWithinCapacity();
  plan.phaseSeconds = phaseSeconds;
  return result;
}

LogicalResult PlanBuilder::placeWithinCapacity() {
  std::vector<double> penalty(k, 0);
  if (!attempt(penalty)) {
    diag.error({}, "no placement satisfies every pin, residency and kernel "
                   "constraint on machine '" + machine.name +
                   "' (a pinned node's value cannot reach its consumers)");
    return failure();
  }
  std::vector<unsigned> over = overCapacity();
  if (over.empty())
    return success();

  // Memory caps: penalize bytes on the devices that overflow, raising the
  // price until the plan fits, then bisect (in log scale) for the smallest
  // price that still fits: each step is one placement (max-flow) and memory
  // plan. The result trades time for memory; it is no longer proven optimal.
  double unconstrained = plan.cost;
  ExecutionPlan firstPlan = plan;
  std::vector<unsigned> capped = over;
  auto tryPrice = [&](double price) {
    std::fill(penalty.begin(), penalty.end(), 0);
    for (unsigned d : capped)
      penalty[d] = price;
    if (!attempt(penalty))
      return false;
    for (unsigned d : overCapacity())
      if (std::find(capped.begin(), capped.end(), d) == capped.end())
        capped.push_back(d); // A device that overflows once moved onto.
    return overCapacity().empty();
  };
  double low = 0, high = 1e-12;
  while (!tryPrice(high) && high < 1e3)
    high *= 8;
  if (high >= 1e3 && !tryPrice(high)) {
    plan = std::move(firstPlan);
    for (unsigned d : over) {
      const DeviceMemory &m = plan.memory.devices[d];
      diag.error({}, "the plan needs " +
                         std::to_string(m.arenaBytes + m.constantBytes) +
                         " bytes on " + formatDevice(machine.devices[d].ref) +
                         " (arena " + std::to_string(m.arenaBytes) +
                         " + constants " + std::to_string(m.constantBytes) +
                         "), which has " +
                         std::to_string(uint64_t(machine.devices[d].memoryCapacity)) +
                         ", and no placement fits");
    }
    return failure();
  }
  ExecutionPlan best = plan;
  for (int step = 0; step < 24; ++step) {
    double middle = low == 0 ? high / 8 : std::sqrt(low * high);
    if (tryPrice(middle)) {
      high = middle;
      best = plan;
    } else {
      low = middle;
    }
  }
  plan = std::move(best);
  // Report the true cost (no penalties) against the unconstrained optimum.
  plan.cost = plan.computeTime + plan.transferTime;
  plan.exact = false;
  plan.lowerBound = unconstrained;
  plan.memoryCapped = true;
  return success();
}

std::span<const PlannedCopy> ExecutionPlan::copiesAfter(size_t step) const {
  PlannedCopy key{};
  key.afterStep = step;
  auto [first, last] = std::equal_range(copies.begin(), copies.end(), key, copiesBefore);
  return {first, last};
}

LogicalResult fuel::planGraph(const Graph &graph, const Machine &machine,
                              const CapsuleRegistry &registry,
                              const ExecutionConfig &config,
                              DiagnosticEngine &diag,
                              const SourceLocator &locator,
                              ExecutionPlan &plan) {
  return PlanBuilder(graph, machine, registry, config, diag, locator, plan)
      .run();
}
