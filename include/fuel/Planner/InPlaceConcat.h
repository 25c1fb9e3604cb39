//===- InPlaceConcat.h - Concats computed by their producers ----*- C++ -*-===//
//
// A concat copies its operands into one buffer. Where each operand is a
// kernel's result that could as well be written straight into its slice of
// that buffer, the copy is wasted: an Inception or Fire module spends a
// pass over its output on it. Such a concat is marked in place
// (PlannedStep::inPlace): it gets no kernel, the memory plan makes each
// operand's buffer a slice of the result's, and the program's dependences
// follow the slices. It applies where a slice is one contiguous run (every
// dim before the axis is 1, as in batch-1 channel concats), on CPU devices
// (a GPU binds buffers at aligned offsets), with static shapes, and for
// operands that are results of kernel groups on the concat's device, read by
// no graph output and given to no other in-place concat.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_INPLACECONCAT_H
#define FUEL_PLANNER_INPLACECONCAT_H

#include "fuel/IR/Graph.h"

namespace fuel {

struct ExecutionPlan;

/// Marks the concats of `plan` (whose steps, fusion roots and copies are
/// final) that run in place, and takes their time out of the plan's cost.
void markInPlaceConcats(const Graph &graph, ExecutionPlan &plan);

} // namespace fuel

#endif // FUEL_PLANNER_INPLACECONCAT_H
