//===- AttentionFusion.h - Attention as one library kernel ------*- C++ -*-===//
//
// Fusion groups end at a matmul or a softmax (Fusion.h): scaled dot-product
// attention runs as three kernels, its scores written to memory by one,
// read and written by the next, read by the last. Where the two products
// of an attention chain (Attention.h) are placed on one CPU device on a
// library capsule that computes the whole chain (Capsule::attentionSymbol),
// and nothing else reads its intermediate values, the chain becomes one
// kernel group rooted at the weighted sum, its steps' times booked on the
// root. Placement priced the chain unfused; the fused kernel is faster, so
// the plan's cost stays an upper bound.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_ATTENTIONFUSION_H
#define FUEL_PLANNER_ATTENTIONFUSION_H

#include "fuel/IR/Graph.h"

namespace fuel {

struct ExecutionPlan;

/// Fuses the attention chains of `plan` (whose steps and fusion roots are
/// final) into single kernel groups; returns how many.
unsigned fuseAttention(const Graph &graph, ExecutionPlan &plan);

} // namespace fuel

#endif // FUEL_PLANNER_ATTENTIONFUSION_H
