//===- LowerProgram.h - A planned route as an executable program -*- C++ -*-===//
//
// The last compiler step before serialization: a placed, fused and
// memory-planned route becomes the explicit program the runtime executes
// (fuel/Artifact/Program.h), with no graph left to interpret.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_LOWERPROGRAM_H
#define FUEL_PLANNER_LOWERPROGRAM_H

#include "fuel/Artifact/Program.h"
#include "fuel/Planner/Planner.h"

namespace fuel {

/// The name of route `routeIndex`'s section `base`: `base` for route 0,
/// `base.N` for route N (`program.1`, `kernels.x86.1`).
std::string routeSectionName(std::string_view base, size_t routeIndex);

/// Route `routeIndex` of an artifact (its kernel sections are named after
/// it: `kernels.x86`, `kernels.x86.1`, ...).
artifact::Program lowerProgram(const Graph &graph, const PlannedRoute &route,
                               size_t routeIndex);

} // namespace fuel

#endif // FUEL_PLANNER_LOWERPROGRAM_H
