//===- Fusion.h - Grouping planned steps into kernels -----------*- C++ -*-===//
//
// After placement, the steps of a plan are grouped into kernels:
//   - chains and trees of elementwise ops (with numpy broadcasting, through
//     views of their inputs) whose intermediate values have no other reader
//     fuse into their consumer, so intermediates never reach memory;
//   - elementwise consumers of a contraction, convolution or normalization
//     fuse into it as an epilogue (bias + activation after linear/matmul/
//     conv2d) when the contraction's result has no other reader.
// Fusion never crosses devices (both ends must be placed on the same device
// and run by fuelc's own code generator there), and a fused value is
// internal to its kernel: it gets no buffer in the memory plan.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_FUSION_H
#define FUEL_TRANSFORMS_FUSION_H

#include "fuel/Transforms/KernelSpec.h"

#include <vector>

namespace fuel {

struct ExecutionPlan;

/// For each step of `plan`, the index of the step whose kernel computes it
/// (itself for kernel roots).
std::vector<size_t> fuseSteps(const Graph &graph, const ExecutionPlan &plan);

/// Builds the kernel of every group: its nodes, arguments (inputs in first
/// use order, then the root's results) and how it can be split across
/// threads. `rootOf` comes from fuseSteps.
std::vector<KernelSpec> formKernels(const Graph &graph,
                                    const ExecutionPlan &plan,
                                    const std::vector<size_t> &rootOf);

} // namespace fuel

#endif // FUEL_TRANSFORMS_FUSION_H
