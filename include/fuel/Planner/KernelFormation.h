//===- KernelFormation.h - The kernels of a placed plan ---------*- C++ -*-===//
//
// After placement, each fusion group (Transforms/Fusion.h) becomes one
// kernel (Transforms/KernelSpec.h). It lives in the Planner because it reads
// the placed plan; Transforms never depends on the Planner.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_KERNELFORMATION_H
#define FUEL_PLANNER_KERNELFORMATION_H

#include "fuel/Planner/Planner.h"

namespace fuel {

/// Builds the kernel of every group of a placed plan: its nodes, arguments
/// (inputs in first use order, then the root's results) and how it can be
/// split across threads. `plan.rootOf` gives each step's kernel root step.
std::vector<KernelSpec> formKernels(const Graph &graph,
                                    const ExecutionPlan &plan);

} // namespace fuel

#endif // FUEL_PLANNER_KERNELFORMATION_H
