//===- ConvEpilogue.h - What the library conv2d applies ---------*- C++ -*-===//
//
// The library conv2d (kernels/x86/conv.cpp) applies an elementwise tail as
// it writes its result: a residual of the result's shape added, then at
// most one of ReLU, a clamp, or SiLU (v * sigmoid(v)). A kernel whose nodes
// are a convolution and such a tail calls it with that epilogue. A
// convolution with such a tail (no residual) whose result only a max
// pooling reads runs as one library kernel (lib/Planner/PoolFusion.cpp):
// code generation and kernel formation recognize it by its nodes.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_CONVEPILOGUE_H
#define FUEL_TRANSFORMS_CONVEPILOGUE_H

#include "fuel/IR/Graph.h"

#include <cmath>
#include <optional>
#include <span>

namespace fuel {

struct ConvEpilogue {
  std::optional<ValueRef> residual;
  bool relu = false, silu = false;
  double lo = -INFINITY, hi = INFINITY;
};

/// The epilogue equal to the tail of `nodes` (a convolution, then the
/// elementwise nodes that follow it in execution order), if there is one.
std::optional<ConvEpilogue> matchConvEpilogue(const Graph &graph, std::span<const NodeId> nodes);

/// A convolution, the epilogue it applies, and the max pooling of its
/// result, as one kernel's nodes.
struct PooledConv {
  NodeId conv, pool;
  ConvEpilogue epilogue;
};

/// The pooled convolution that exactly `nodes` (a kernel's, in execution
/// order: the convolution first, the pooling last) form: f32, an epilogue
/// without a residual, the convolution's result rows and columns static.
std::optional<PooledConv> pooledConvOfKernel(const Graph &graph, std::span<const NodeId> nodes);

} // namespace fuel

#endif // FUEL_TRANSFORMS_CONVEPILOGUE_H
