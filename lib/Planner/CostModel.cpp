//===- CostModel.cpp - Roofline cost of kernels and transfers -------------===//

#include "fuel/Planner/CostModel.h"

#include "fuel/IR/OpCost.h"

#include <algorithm>

using namespace fuel;

SymbolPricing::SymbolPricing(
    const Graph &graph, const std::map<std::string, int64_t, std::less<>> &dims) {
  const SymbolTable &symbols = graph.symbols();
  for (uint32_t s = 0; s < symbols.size(); ++s) {
    std::string_view name = symbols.name(s);
    auto it = dims.find(name);
    if (it != dims.end() && !symbols.isDerived(s)) {
      extents.push_back(it->second);
    } else {
      extents.push_back(1);
      if (!symbols.isDerived(s))
        unbound.emplace_back(name);
    }
  }
  symbols.evaluate(extents); // Products are priced from their factors.
}

double SymbolPricing::elements(ShapeRef shape) const {
  double n = 1;
  for (Dim d : shape)
    n *= static_cast<double>(extent(d));
  return n;
}

double SymbolPricing::bytes(const Graph &graph, ValueRef value) const {
  return elements(graph.shape(value)) * dtypeByteSize(graph.dtype(value));
}

NodeWork fuel::estimateWork(const Graph &graph, NodeId node,
                            const SymbolPricing &pricing) {
  NodeWork work;
  OpKind kind = graph.kind(node);
  for (ValueRef v : graph.operands(node))
    work.bytes += pricing.bytes(graph, v);
  double outElements = 0;
  for (uint32_t r = 0; r < graph.numResults(node); ++r) {
    work.bytes += pricing.bytes(graph, {node, r});
    outElements += pricing.elements(graph.shape({node, r}));
  }
  std::span<const ValueRef> operands = graph.operands(node);
  work.dtype = operands.empty() ? graph.dtype({node, 0})
                                : graph.dtype(operands[0]);
  work.op = kind;
  work.resultElements = outElements;
  switch (kind) {
  case OpKind::MatMul: {
    // 2 * (output elements) * K.
    ShapeRef a = graph.shape(operands[0]);
    bool transA = graph.getBool(node, AttrName::TransposeA, false);
    Dim k = a.size() == 1 ? a[0] : transA ? a[a.size() - 2] : a.back();
    work.flops = 2 * outElements * static_cast<double>(pricing.extent(k));
    break;
  }
  case OpKind::Linear: {
    Dim k = graph.shape(operands[0]).back();
    work.flops = 2 * outElements * static_cast<double>(pricing.extent(k));
    break;
  }
  case OpKind::Conv2D: {
    ShapeRef w = graph.shape(operands[1]);
    double perOutput = 2.0 * pricing.extent(w[1]) * pricing.extent(w[2]) *
                       pricing.extent(w[3]);
    work.flops = outElements * perOutput;
    break;
  }
  case OpKind::MaxPool2D:
  case OpKind::AvgPool2D: {
    std::span<const int64_t> kernel =
        graph.intsAttr(*graph.findAttr(node, AttrName::Kernel));
    work.flops = outElements * static_cast<double>(kernel[0] * kernel[1]);
    break;
  }
  default:
    if (opFamily(kind) == OpFamily::Reduction && !operands.empty())
      work.flops = pricing.elements(graph.shape(operands[0])) *
                   opsPerElement(kind);
    else
      work.flops = outElements * opsPerElement(kind);
  }
  return work;
}

double fuel::kernelTime(const Capsule &capsule, const DeviceSpec &device,
                        const NodeWork &work,
                        const CalibrationTable *calibration) {
  if (calibration)
    if (std::optional<double> measured =
            calibration->lookup(work.op, work.dtype, capsule.backend,
                                capsule.provider, work.resultElements))
      return device.launchOverhead + *measured;
  double peak = device.peakFlops[static_cast<unsigned>(work.dtype)];
  double compute = peak > 0 ? work.flops / (peak * capsule.efficiency) : 0;
  double memory = work.bytes / (device.memoryBandwidth * capsule.efficiency);
  return device.launchOverhead + capsule.fixedOverhead +
         std::max(compute, memory);
}
