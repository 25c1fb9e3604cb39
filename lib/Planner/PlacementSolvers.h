//===- PlacementSolvers.h - The placement algorithms ------------*- C++ -*-===//
//
// The solvers behind solvePlacement (Placement.h), one file each: the seeds'
// baselines, the exact minimum-cut constructions, and alpha-expansion.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_PLANNER_PLACEMENTSOLVERS_H
#define FUEL_LIB_PLANNER_PLACEMENTSOLVERS_H

#include "fuel/Planner/Placement.h"

#include <algorithm>
#include <cmath>

namespace fuel {

/// Improvements smaller than this (relative) are rounding, not progress.
inline bool lessThan(double a, double b) {
  constexpr double kRelativeTolerance = 1e-12;
  return a < b - kRelativeTolerance * std::max(std::fabs(b), 1e-30);
}

// Baselines (PlacementBaselines.cpp).
std::vector<uint16_t> placeGreedy(const PlacementProblem &p,
                                  const std::vector<uint32_t> &order);
std::vector<uint16_t> placeChainDp(const PlacementProblem &p,
                                   const std::vector<uint32_t> &order);

// Exact solvers (PlacementExact.cpp).
PlacementResult placeTwoDevices(const PlacementProblem &p);
PlacementResult placeOnLine(const PlacementProblem &p);

// Three or more fully linked devices (PlacementExpansion.cpp).
PlacementResult placeByExpansion(const PlacementProblem &p,
                                 const std::vector<uint32_t> &order);

} // namespace fuel

#endif // FUEL_LIB_PLANNER_PLACEMENTSOLVERS_H
