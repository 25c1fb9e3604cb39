//===- Attention.h - Scaled dot-product attention in a graph ----*- C++ -*-===//
//
// softmax(scale(Q K) + mask) V, the chain of nodes a library kernel may
// compute as one (kernels/x86/attention.cpp): a matmul of the scores, at
// most a division or product by a one-element scale, then at most an added
// mask, a softmax over the last axis, and a matmul of the probabilities by
// V, all f32. The planner fuses a chain whose intermediate values nothing
// else reads (lib/Planner/AttentionFusion.cpp); code generation and kernel
// formation recognize the fused kernel by its nodes.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_ATTENTION_H
#define FUEL_TRANSFORMS_ATTENTION_H

#include "fuel/IR/Graph.h"

#include <optional>
#include <span>

namespace fuel {

struct AttentionChain {
  NodeId scores, softmax, weighted;
  /// The scale's and the mask's nodes, when the chain has them.
  std::optional<NodeId> scale, mask;
  bool scaleDivides = false;
  ValueRef q, k, v, scaleValue, maskValue;
  /// The nodes in execution order.
  std::vector<NodeId> nodes() const;
};

/// The chain of `softmax` and `weighted` (a node reading the softmax) if
/// their nodes form one, whatever else reads their values.
std::optional<AttentionChain> matchAttention(const Graph &graph, NodeId softmax, NodeId weighted);

/// The chain that exactly `nodes` (a kernel's, in any order) form.
std::optional<AttentionChain> attentionOfKernel(const Graph &graph, std::span<const NodeId> nodes);

} // namespace fuel

#endif // FUEL_TRANSFORMS_ATTENTION_H
