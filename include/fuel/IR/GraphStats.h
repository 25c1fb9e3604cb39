//===- GraphStats.h - Summary figures of a graph ----------------*- C++ -*-===//
#ifndef FUEL_IR_GRAPHSTATS_H
#define FUEL_IR_GRAPHSTATS_H

#include "fuel/IR/Graph.h"

#include <array>
#include <cstdint>

namespace fuel {

struct GraphStats {
  std::array<size_t, kNumOpKinds> nodesByOp{};
  size_t numInputs = 0;
  size_t numConstants = 0;
  /// Elements and bytes of all constants (the model's parameters).
  uint64_t parameterElements = 0;
  uint64_t parameterBytes = 0;
};

GraphStats computeGraphStats(const Graph &graph);

} // namespace fuel

#endif // FUEL_IR_GRAPHSTATS_H
