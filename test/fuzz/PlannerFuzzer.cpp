//===- PlannerFuzzer.cpp - libFuzzer target for parse + verify + plan -----===//
//
// Every graph that verifies must plan on each built-in machine, or fail with
// a diagnostic (e.g. NoBackendForOp); a plan must place every node on a
// device of the machine, cost what its parts add up to, and never give two
// live buffers the same memory (a slice lies inside the buffer it is a slice
// of, and nowhere else).
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuel/Codegen/TargetKernels.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Planner/Planner.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diag;
  std::unique_ptr<SourceLocator> locator;
  std::optional<Graph> graph = fuzz::parseFuzzGraph(data, size, diag, &locator);
  if (!graph || graph->numNodes() > 2000)
    return 0;
  static const CapsuleRegistry registry = builtinCapsules();
  for (std::string_view name : machinePresetNames()) {
    DiagnosticEngine planDiag;
    std::optional<Machine> machine = loadMachine(std::string(name), planDiag);
    ExecutionConfig config;
    config.dims["B"] = 4;
    ExecutionPlan plan;
    if (failed(planGraph(*graph, *machine, registry, config, planDiag,
                         *locator, plan))) {
      if (!planDiag.hadErrors())
        std::abort();
      continue;
    }
    for (const PlannedStep &step : plan.steps)
      if (step.device >= machine->devices.size())
        std::abort();
    // No two live buffers of one device may share memory, but for a slice
    // (an in-place concat's operand) and the buffer it lies in, whose range
    // and lifetime hold the slice's.
    const std::vector<PlannedBuffer> &buffers = plan.memory.buffers;
    auto inside = [&](size_t inner, size_t outer) {
      for (int64_t b = buffers[inner].sliceOf; b >= 0; b = buffers[b].sliceOf)
        if (static_cast<size_t>(b) == outer)
          return true;
      return false;
    };
    for (size_t i = 0; i < buffers.size(); ++i) {
      const PlannedBuffer &slice = buffers[i];
      if (slice.sliceOf < 0)
        continue;
      if (static_cast<size_t>(slice.sliceOf) >= buffers.size() ||
          static_cast<size_t>(slice.sliceOf) == i)
        std::abort();
      const PlannedBuffer &whole = buffers[slice.sliceOf];
      if (slice.device != whole.device || slice.offset < whole.offset ||
          slice.offset + slice.size > whole.offset + whole.size ||
          slice.firstUse < whole.firstUse || slice.lastUse > whole.lastUse) {
        std::fprintf(stderr, "buffer %zu lies outside buffer %lld, its whole\n", i,
                     static_cast<long long>(slice.sliceOf));
        std::abort();
      }
    }
    for (size_t i = 0; i < buffers.size(); ++i)
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const PlannedBuffer &a = buffers[i], &b = buffers[j];
        if (inside(i, j) || inside(j, i))
          continue;
        if (a.device == b.device && a.size && b.size &&
            a.firstUse <= b.lastUse && b.firstUse <= a.lastUse &&
            a.offset < b.offset + b.size && b.offset < a.offset + a.size) {
          std::fprintf(stderr, "buffers %zu and %zu overlap\n", i, j);
          std::abort();
        }
      }
    double sum = plan.computeTime + plan.transferTime;
    if (!(std::fabs(sum - plan.cost) <= 1e-9 * std::max(1.0, plan.cost)) ||
        plan.makespan > plan.cost * (1 + 1e-9) + 1e-12) {
      std::fprintf(stderr, "plan cost %g != compute %g + transfers %g, or "
                           "makespan %g > cost\n",
                   plan.cost, plan.computeTime, plan.transferTime,
                   plan.makespan);
      std::abort();
    }
  }
  return 0;
}
