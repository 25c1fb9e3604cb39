//===- Candidates.h - Per-node kernel candidates ----------------*- C++ -*-===//
//
// For one node: every (device, capsule) pair the machine and registry offer,
// run through the filter chain (hard: device allowed, dtype, device dtype
// support, trust, precision floor, shape predicate; soft, never emptying the
// set: strided-input and bit-stable preferences), priced, and cut to the
// per-device Pareto frontier over (time, workspace memory, precision) with a
// crowding cap. Every rejection is
// kept with its reason, so "no backend for this op" explains itself.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_CANDIDATES_H
#define FUEL_PLANNER_CANDIDATES_H

#include "fuel/Planner/CostModel.h"
#include "fuel/Planner/ExecutionConfig.h"

#include <string>
#include <vector>

namespace fuel {

struct Candidate {
  const Capsule *capsule;
  unsigned device; // Index into Machine::devices.
  double time;
};

struct Rejection {
  const Capsule *capsule;
  unsigned device;
  std::string reason;
};

struct NodeCandidates {
  /// Survivors, grouped by device, each group sorted by time (best first).
  std::vector<Candidate> frontier;
  std::vector<Rejection> rejections;

  /// The cheapest surviving time on `device`, or infinity.
  double bestTime(unsigned device) const;
  const Candidate *best(unsigned device) const;
};

/// Enumerates and filters the candidates of a kernel node. `allowed[d]`
/// says whether device d may run it (config, pins). Rejections (and their
/// reasons, which take time to format) are recorded only with `explain`.
NodeCandidates enumerateCandidates(const Graph &graph, NodeId node,
                                   const Machine &machine,
                                   const CapsuleRegistry &registry,
                                   const ExecutionConfig &config,
                                   const SymbolPricing &pricing,
                                   const std::vector<bool> &allowed,
                                   bool explain);

} // namespace fuel

#endif // FUEL_PLANNER_CANDIDATES_H
