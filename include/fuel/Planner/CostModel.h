//===- CostModel.h - Roofline cost of kernels and transfers -----*- C++ -*-===//
//
// A kernel's time is its device's launch overhead plus the capsule's fixed
// cost plus max(flops / peak, bytes / bandwidth), both derated by the
// capsule's efficiency. Work is estimated from the node's types, with symbolic
// dims priced at the configured extents.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_COSTMODEL_H
#define FUEL_PLANNER_COSTMODEL_H

#include "fuel/IR/Graph.h"
#include "fuel/Planner/Capsule.h"
#include "fuel/Planner/Machine.h"

#include <map>
#include <string>

namespace fuel {

/// Extents for pricing symbolic dims.
class SymbolPricing {
public:
  SymbolPricing(const Graph &graph,
                const std::map<std::string, int64_t, std::less<>> &dims);
  /// The extent `d` is priced at.
  int64_t extent(Dim d) const {
    return d.isStatic() ? d.size() : extents[d.symbolId()];
  }
  double elements(ShapeRef shape) const;
  double bytes(const Graph &graph, ValueRef value) const;
  /// Symbols that had no configured extent (priced at 1).
  const std::vector<std::string> &defaulted() const { return unbound; }

private:
  std::vector<int64_t> extents;
  std::vector<std::string> unbound;
};

struct NodeWork {
  double flops = 0;
  double bytes = 0; // Read and written.
  double resultElements = 0;
  OpKind op = OpKind::Add;
  DType dtype = DType::F32;
};

NodeWork estimateWork(const Graph &graph, NodeId node,
                      const SymbolPricing &pricing);

/// The device's launch overhead plus either the calibrated latency (when
/// `calibration` has a matching entry) or the capsule's roofline time.
double kernelTime(const Capsule &capsule, const DeviceSpec &device,
                  const NodeWork &work,
                  const CalibrationTable *calibration = nullptr);

} // namespace fuel

#endif // FUEL_PLANNER_COSTMODEL_H
