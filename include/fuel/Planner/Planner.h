//===- Planner.h - Placement planning of a verified graph -------*- C++ -*-===//
//
// planGraph decides, for every kernel node of a verified graph, which device
// and which capsule runs it and where values must be copied:
//   1. per node, candidates are enumerated and filtered (Candidates.h); a node
//      with none anywhere fails the plan with NoBackendForOp, explaining every
//      rejected candidate;
//   2. the graph becomes a PlacementProblem: kernel nodes with their cheapest
//      candidate time per device; views ride on the buffer they view (they
//      are placed with it); constants are loaded once onto every device that
//      reads them, so they cost no transfer; inputs and outputs are pinned to
//      their declared residency; pins come from `placement` and the config;
//   3. the placer labels nodes with devices (Placement.h);
//   4. every value read on another device than its producer's gets one copy
//      step per destination device; the plan's predicted makespan comes from
//      list-scheduling steps and copies over devices and links;
//   5. concats whose operands can be written straight into their result's
//      slices become free (InPlaceConcat.h);
//   6. buffers get offsets in one arena per device (MemoryPlan.h); when a
//      device's capacity is exceeded, a Lagrangian price on the bytes placed
//      there is raised and bisected (one placement per step) until the plan
//      fits, or planning fails when no placement fits.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_PLANNER_H
#define FUEL_PLANNER_PLANNER_H

#include "fuel/Artifact/Program.h"
#include "fuel/IR/Verifier.h"
#include "fuel/Planner/Candidates.h"
#include "fuel/Planner/MemoryPlan.h"
#include "fuel/Transforms/KernelSpec.h"
#include "fuel/Support/LogicalResult.h"

#include <map>
#include <span>
#include <string>
#include <vector>

namespace fuel {

struct PlannedStep {
  NodeId node;
  unsigned device;
  const Capsule *capsule;
  double time;
  /// The node's retained alternatives (the frontier on every device):
  /// ExecutionPlan::alternatives[firstAlternative, + numAlternatives).
  uint32_t firstAlternative = 0, numAlternatives = 0;
  /// A concat whose operands are written in place as slices of its result
  /// (InPlaceConcat.h): no kernel runs it.
  bool inPlace = false;
};

struct PlannedCopy {
  ValueRef value;
  unsigned from, to;
  double bytes;
  double time;
  /// The step (index into steps) whose result is copied; copies are ordered
  /// right after it. ~0 for graph inputs, copied before the first step.
  size_t afterStep;
};

struct ExecutionPlan {
  const Machine *machine = nullptr;
  PlacerKind placer = PlacerKind::Optimal;
  /// Kernel steps in execution (topological) order.
  std::vector<PlannedStep> steps;
  /// Every step's alternatives, one run per step (one array: a plan of a
  /// million steps allocates it once).
  std::vector<Candidate> alternatives;
  /// In execution order: sorted by afterStep, inputs' copies first.
  std::vector<PlannedCopy> copies;
  /// Device of every node (views and sources included), by NodeId.
  std::vector<unsigned> deviceOf;
  unsigned inputDevice = 0, outputDevice = 0;
  /// Kernels (Transforms/Fusion.h): for each step the step whose kernel
  /// computes it, and the kernels in execution order. Results of steps fused
  /// into another step's kernel get no buffer.
  std::vector<size_t> rootOf;
  std::vector<KernelSpec> kernels;
  MemoryPlan memory;
  double computeTime = 0, transferTime = 0;
  double cost = 0;       // computeTime + transferTime, the placer's objective.
  double lowerBound = 0; // Equal to cost when `exact`.
  bool exact = false;
  /// Placement was bent by memory caps (a Lagrangian price on bytes);
  /// `lowerBound` is then the cost without caps.
  bool memoryCapped = false;
  double makespan = 0;
  unsigned maxFlowRuns = 0;
  std::vector<std::string> defaultedSymbols;
  /// Wall time of each planning phase (candidates, fusion, problem,
  /// placement, copies, in-place, schedule, form-kernels, plan-memory), summed over
  /// memory-capped re-placements: what --time-passes shows under `place`.
  std::vector<std::pair<std::string, double>> phaseSeconds;
  /// The extent each symbol was priced at: buffers hold values up to these
  /// extents, so they are the run-time upper bounds.
  std::vector<std::pair<std::string, int64_t>> symbolBounds;

  std::span<const Candidate> alternativesOf(const PlannedStep &step) const {
    return {alternatives.data() + step.firstAlternative, step.numAlternatives};
  }
  /// Whether step `s` launches a kernel: the root of its group, unless it
  /// runs in place.
  bool launchesKernel(size_t s) const { return rootOf[s] == s && !steps[s].inPlace; }
  /// The copies that run right after step `step` (~0: before the first).
  std::span<const PlannedCopy> copiesAfter(size_t step) const;
};

LogicalResult planGraph(const Graph &graph, const Machine &machine,
                        const CapsuleRegistry &registry,
                        const ExecutionConfig &config, DiagnosticEngine &diag,
                        const SourceLocator &locator, ExecutionPlan &plan);

/// Human-readable plan (`fuelc plan --emit=text`).
std::string printPlanText(const Graph &graph, const ExecutionPlan &plan);
/// Machine-readable plan (`fuelc plan --emit=plan-json`), also the `plan`
/// section of the artifact.
std::string printPlanJson(const Graph &graph, const ExecutionPlan &plan);

/// A Graphviz picture of the planned graph (`fuelc plan --emit=dot`): nodes
/// filled by device, cross-device edges drawn as labelled copies.
std::string printPlanDot(const Graph &graph, const ExecutionPlan &plan);

/// Why each kernel node (or only `onlyNode`) runs where it does
/// (`fuelc explain`): its work, every candidate with its cost or rejection
/// reason, the frontier, the winner, and what pinning it to its locally
/// cheapest device instead would cost the whole plan.
std::string explainPlan(const Graph &graph, const Machine &machine,
                        const CapsuleRegistry &registry,
                        const ExecutionConfig &config,
                        const ExecutionPlan &plan,
                        std::optional<NodeId> onlyNode);

/// Offsets of every constant in the artifact's weights section (64-byte
/// aligned, in node order; ~0 for non-constants); returns its size.
uint64_t constantOffsets(const Graph &graph, std::vector<uint64_t> &offsets);

/// One planned route: the devices it may use and its plan. An artifact may
/// carry several (e.g. GPU + host, then host alone); the runtime takes the
/// first whose devices are all present.
struct PlannedRoute {
  std::vector<DeviceRef> devices;
  ExecutionPlan plan;
  /// From code generation: the route's kernel binaries by target (`x86`),
  /// the target compiling each device's kernels (by machine device index),
  /// and each generated kernel's revision (by symbol): a hash of its code.
  std::map<std::string, std::string> kernelBinaries;
  std::map<unsigned, std::string> kernelTargets;
  std::map<std::string, std::string> kernelRevisions;
  /// The program the runtime executes (LowerProgram.h), lowered last.
  artifact::Program program;
};

/// The .fplan artifact: `meta` (compiler, machine, policy, routes), `graph`
/// (debug information: the graph, constants referring to `weights`), each
/// route's lowered `program` (`program`, `program.1`, ...; LowerProgram.h)
/// with its kernel binaries (`kernels.x86`, `kernels.x86.1`, ...) and
/// `weights` (docs/artifact-format.md).
std::string buildPlanArtifact(const Graph &graph,
                              const std::vector<PlannedRoute> &routes,
                              const ExecutionConfig &config,
                              std::string_view compilerVersion);

} // namespace fuel

#endif // FUEL_PLANNER_PLANNER_H
