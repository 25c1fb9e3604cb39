//===- InPlaceConcat.cpp - Concats computed by their producers ------------===//

#include "fuel/Planner/InPlaceConcat.h"

#include "fuel/Planner/Planner.h"

#include <algorithm>
#include <set>

using namespace fuel;

void fuel::markInPlaceConcats(const Graph &graph, ExecutionPlan &plan) {
  std::vector<size_t> stepOf(graph.numNodes(), ~size_t(0));
  std::vector<uint32_t> groupSize(plan.steps.size(), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    stepOf[plan.steps[s].node] = s;
    ++groupSize[plan.rootOf[s]];
  }
  std::vector<bool> readByOutput(graph.numNodes(), false);
  for (ValueRef out : graph.outputs())
    readByOutput[bufferRoot(graph, out).node] = true;
  std::set<ValueRef> claimed; // Slices of some concat already.
  // Whether the elements of `shape` from dim `axis` on are one contiguous
  // run: the dims before it are 1 (fixed, or symbols bound to 1) and the
  // others fixed.
  auto contiguousFrom = [&](ShapeRef shape, unsigned axis) {
    for (unsigned i = 0; i < shape.size(); ++i) {
      Dim d = shape[i];
      if (i >= axis ? !d.isStatic()
                    : (d.isStatic() ? d.size() : plan.symbolBounds[d.symbolId()].second) != 1)
        return false;
    }
    return true;
  };

  // Whether operand v of a concat on device d may be written into its slice.
  auto writable = [&](ValueRef v, unsigned d, unsigned axis) {
    size_t producer = stepOf[v.node];
    return producer != ~size_t(0) && plan.rootOf[producer] == producer &&
           plan.steps[producer].device == d && !plan.steps[producer].inPlace &&
           !readByOutput[v.node] && !claimed.count(v) && contiguousFrom(graph.shape(v), axis);
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlannedStep &step = plan.steps[s];
    if (graph.kind(step.node) != OpKind::Concat || plan.rootOf[s] != s || groupSize[s] != 1 ||
        plan.machine->devices[step.device].ref.kind != DeviceKind::CPU)
      continue;
    ShapeRef shape = graph.shape({step.node, 0});
    std::optional<unsigned> axis =
        normalizeAxis(graph.getInt(step.node, AttrName::Axis, 0), shape.size());
    if (!axis || !contiguousFrom(shape, *axis))
      continue;
    auto operands = graph.operands(step.node);
    std::set<ValueRef> distinct(operands.begin(), operands.end());
    if (distinct.size() != operands.size() ||
        !std::all_of(operands.begin(), operands.end(),
                     [&](ValueRef v) { return writable(v, step.device, *axis); }))
      continue;
    claimed.insert(operands.begin(), operands.end());
    step.inPlace = true;
    plan.computeTime -= step.time;
    plan.cost -= step.time;
    plan.lowerBound -= step.time;
    step.time = 0;
  }
}
