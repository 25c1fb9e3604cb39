//===- Fusion.h - Grouping nodes into fused kernels -------------*- C++ -*-===//
//
// Fusion groups are formed on the graph, before placement, so the planner
// places and prices each group as one kernel (not its parts):
//   - an elementwise node (unary, binary, where, cast, clamp) whose result is
//     read by exactly one node, itself elementwise, joins that node's group;
//     chains and trees fuse, with numpy broadcasting and through views of
//     their inputs, so intermediates never touch memory;
//   - a matmul, linear, conv2d, reduction, layer_norm, rms_norm or softmax
//     whose result feeds only an elementwise group of the same result type
//     becomes that group's head (its epilogue: bias + activation, a residual
//     add); one head per group;
//   - an elementwise group whose result is only the input (operand 0) of a
//     reduction, softmax or normalization that has no epilogue becomes that
//     node's prologue: the reduction computes its input as it reads it.
// Nodes pinned to different devices never share a group, and a group binds
// at most 24 buffers (operands and results: GPU shader stages bind few). The planner then
// places a group on one device and fuses it where every member has a kernel
// fuelc emits there (Planner.h); fused values get no buffer.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_FUSION_H
#define FUEL_TRANSFORMS_FUSION_H

#include "fuel/Transforms/KernelSpec.h"

#include <span>
#include <vector>

namespace fuel {

/// For every node, the root (last node) of its fusion group: itself when it
/// is not fused into another. `order` is a topological order; `pinOf` the
/// device each node is pinned to, or -1.
std::vector<NodeId> fusionGroups(const Graph &graph,
                                 const std::vector<NodeId> &order,
                                 const std::vector<int> &pinOf);

/// Moves a group's head (its one non-elementwise node, if any, unless it is
/// the root of a prologue group) to the front of `nodes` (a group's members
/// in topological order): it is computed first.
void moveHeadFirst(const Graph &graph, std::span<NodeId> nodes);

} // namespace fuel

#endif // FUEL_TRANSFORMS_FUSION_H
