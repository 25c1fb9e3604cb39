//===- Candidates.cpp - Per-node kernel candidates ------------------------===//

#include "fuel/Planner/Candidates.h"

#include <algorithm>
#include <bitset>
#include <cstdio>

using namespace fuel;

double NodeCandidates::bestTime(unsigned device) const {
  const Candidate *c = best(device);
  return c ? c->time : kInfiniteCost;
}

const Candidate *NodeCandidates::best(unsigned device) const {
  for (const Candidate &c : frontier)
    if (c.device == device)
      return &c; // Groups are sorted best first.
  return nullptr;
}

static std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

/// The dtypes a node's kernel must handle (its data operands and results),
/// as a set indexed by dtype.
static std::bitset<kNumDTypes> kernelDTypes(const Graph &graph, NodeId node) {
  std::bitset<kNumDTypes> dtypes;
  for (ValueRef v : graph.operands(node))
    dtypes.set(static_cast<unsigned>(graph.dtype(v)));
  for (uint32_t r = 0; r < graph.numResults(node); ++r)
    dtypes.set(static_cast<unsigned>(graph.dtype({node, r})));
  return dtypes;
}

/// The first hard filter `capsule` fails on `device`, or "".
static std::string hardFilter(const Graph &graph, NodeId node,
                              std::bitset<kNumDTypes> dtypes,
                              const Capsule &capsule, const DeviceSpec &device,
                              const ExecutionConfig &config,
                              const SymbolPricing &pricing,
                              const NodeWork &work) {
  for (unsigned t = 0; t < kNumDTypes; ++t)
    if (dtypes[t] && !capsule.acceptsDType(static_cast<DType>(t)))
      return "dtype " + std::string(dtypeName(static_cast<DType>(t))) + " not supported";
  for (ValueRef v : graph.operands(node))
    if (!capsule.acceptsOperandDType(graph.dtype(v)))
      return "operand dtype " + std::string(dtypeName(graph.dtype(v))) + " not supported";
  if (!capsule.cpuFeatures.empty()) {
    static const std::vector<std::string> kNone;
    const std::vector<std::string> *target = x86TargetFeatures(device.target);
    const std::vector<std::string> &have = target ? *target : kNone;
    for (const std::string &f : capsule.cpuFeatures)
      if (std::find(have.begin(), have.end(), f) == have.end())
        return "needs CPU feature " + f + ", which target '" + device.target +
               "' lacks";
  }
  if (device.peakFlops[static_cast<unsigned>(work.dtype)] <= 0)
    return "device has no " + std::string(dtypeName(work.dtype)) +
           " arithmetic";
  if (capsule.trust > config.minimumTrust)
    return "trust '" + std::string(trustLevelName(capsule.trust)) +
           "' is below the policy's '" +
           std::string(trustLevelName(config.minimumTrust)) + "'";
  if (capsule.maxRelativeError > config.maxRelativeError)
    return "precision: relative error up to " +
           formatNumber(capsule.maxRelativeError) + " exceeds the floor " +
           formatNumber(config.maxRelativeError);
  auto checkShape = [&](ValueRef v) -> std::string {
    ShapeRef shape = graph.shape(v);
    if (shape.size() > capsule.predicate.maxRank)
      return "shape predicate: rank " + std::to_string(shape.size()) +
             " exceeds " + std::to_string(capsule.predicate.maxRank);
    if (pricing.elements(shape) > double(capsule.predicate.maxElements))
      return "shape predicate: " + formatNumber(pricing.elements(shape)) +
             " elements exceed " +
             std::to_string(capsule.predicate.maxElements);
    return "";
  };
  for (ValueRef v : graph.operands(node))
    if (std::string why = checkShape(v); !why.empty())
      return why;
  for (uint32_t r = 0; r < graph.numResults(node); ++r)
    if (std::string why = checkShape({node, r}); !why.empty())
      return why;
  return "";
}

/// Whether an operand reaches the node through a view that is not
/// contiguous in general (transposes, slices, broadcasts): kernels that read
/// strided inputs avoid a copy there.
static bool hasStridedOperand(const Graph &graph, NodeId node) {
  for (ValueRef v : graph.operands(node)) {
    for (ValueRef at = v; isViewOp(graph.kind(at.node));
         at = graph.operands(at.node)[0]) {
      OpKind kind = graph.kind(at.node);
      if (kind == OpKind::Transpose || kind == OpKind::Slice ||
          kind == OpKind::BroadcastTo || kind == OpKind::Expand)
        return true;
    }
  }
  return false;
}

/// Drops the candidates `keep` rejects, unless that would drop them all.
template <typename Keep>
static void preferWhereAny(std::vector<Candidate> &survivors, Keep keep,
                           const char *reason, unsigned device,
                           std::vector<Rejection> *rejections) {
  if (!std::any_of(survivors.begin(), survivors.end(), keep))
    return;
  for (const Candidate &c : survivors)
    if (!keep(c) && rejections)
      rejections->push_back({c.capsule, device, reason});
  std::erase_if(survivors, [&](const Candidate &c) { return !keep(c); });
}

static unsigned providerRank(const ExecutionConfig &config,
                             const Capsule &capsule) {
  auto it = std::find(config.preferredProviders.begin(),
                      config.preferredProviders.end(), capsule.provider);
  return static_cast<unsigned>(it - config.preferredProviders.begin());
}

NodeCandidates fuel::enumerateCandidates(const Graph &graph, NodeId node,
                                         const Machine &machine,
                                         const CapsuleRegistry &registry,
                                         const ExecutionConfig &config,
                                         const SymbolPricing &pricing,
                                         const std::vector<bool> &allowed,
                                         bool explain) {
  NodeCandidates result;
  NodeWork work = estimateWork(graph, node, pricing);
  std::bitset<kNumDTypes> dtypes = kernelDTypes(graph, node);
  bool strided = hasStridedOperand(graph, node);
  auto reject = [&](const Capsule *capsule, unsigned d, auto &&reason) {
    if (explain)
      result.rejections.push_back({capsule, d, std::string(reason)});
  };
  std::vector<Candidate> survivors;
  for (unsigned d = 0; d < machine.devices.size(); ++d) {
    const DeviceSpec &device = machine.devices[d];
    survivors.clear();
    for (uint32_t index : registry.forOp(graph.kind(node))) {
      const Capsule *capsule = &registry.all()[index];
      if (capsule->backend != device.ref.kind)
        continue;
      if (!allowed[d]) {
        reject(capsule, d, "device not allowed for this node");
        continue;
      }
      std::string why = hardFilter(graph, node, dtypes, *capsule, device,
                                   config, pricing, work);
      if (!why.empty()) {
        reject(capsule, d, std::move(why));
        continue;
      }
      survivors.push_back(
          {capsule, d,
           kernelTime(*capsule, device, work,
                      machine.calibration ? &*machine.calibration : nullptr)});
    }
    // Soft preferences: they narrow the set but never empty it.
    std::vector<Rejection> *log = explain ? &result.rejections : nullptr;
    if (strided)
      preferWhereAny(
          survivors, [](const Candidate &c) { return c.capsule->stridedInputs; },
          "reads only contiguous inputs (a strided view feeds this node)", d,
          log);
    if (config.preferBitStable)
      preferWhereAny(
          survivors, [](const Candidate &c) { return c.capsule->bitStable; },
          "not bit-stable (bit-stable preferred)", d, log);
    // Best first; ties broken by provider preference, then id (stable plans).
    std::sort(survivors.begin(), survivors.end(),
              [&](const Candidate &a, const Candidate &b) {
                if (a.time != b.time)
                  return a.time < b.time;
                unsigned ra = providerRank(config, *a.capsule),
                         rb = providerRank(config, *b.capsule);
                if (ra != rb)
                  return ra < rb;
                return a.capsule->id < b.capsule->id;
              });
    // Pareto frontier over (time, workspace, relative error): walking by
    // time, keep a candidate unless a faster kept one is at least as good on
    // both other terms; at most frontierCap per device.
    size_t firstKept = result.frontier.size();
    for (const Candidate &c : survivors) {
      bool dominated = std::any_of(
          result.frontier.begin() + firstKept, result.frontier.end(),
          [&](const Candidate &k) {
            return k.capsule->workspaceBytes <= c.capsule->workspaceBytes &&
                   k.capsule->maxRelativeError <= c.capsule->maxRelativeError;
          });
      if (!dominated &&
          result.frontier.size() - firstKept < config.frontierCap)
        result.frontier.push_back(c);
      else
        reject(c.capsule, d,
               "dominated on (time, workspace, precision) or past the "
               "frontier cap");
    }
  }
  return result;
}
