//===- PoolFusion.h - Convolution and pooling as one kernel -----*- C++ -*-===//
//
// Fusion groups end at their tail (Fusion.h): a convolution whose result a
// max pooling reads (the stems of ResNet, SqueezeNet and GoogLeNet) writes
// it to memory, 3 MiB for a 64-channel stem of 112x112, and the pooling
// reads it back. Where the convolution's group (the convolution and the
// epilogue its library applies, without a residual: ConvEpilogue.h) runs on
// a CPU library capsule with a pooled entry (Capsule::pooledSymbol), and
// nothing but the pooling reads its result, the group and the pooling
// become one kernel group rooted at the pooling: the library computes a
// band of convolution rows at a time into scratch that stays in L2 and
// pools it from there. The steps' times are booked on the root as
// placement priced them (unfused: the plan's cost stays an upper bound).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_POOLFUSION_H
#define FUEL_PLANNER_POOLFUSION_H

#include "fuel/IR/Graph.h"

namespace fuel {

struct ExecutionPlan;

/// Fuses the pooled convolutions of `plan` (whose steps and fusion roots
/// are final) into single kernel groups; returns how many.
unsigned fusePooling(const Graph &graph, ExecutionPlan &plan);

} // namespace fuel

#endif // FUEL_PLANNER_POOLFUSION_H
