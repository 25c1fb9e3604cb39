//===- PoolFusion.cpp - Convolution and pooling as one kernel -------------===//

#include "fuel/Planner/PoolFusion.h"

#include "fuel/Planner/Planner.h"
#include "fuel/Support/Buckets.h"
#include "fuel/Transforms/ConvEpilogue.h"
#include "fuel/Transforms/Fusion.h"

using namespace fuel;

/// The most bytes of weights a pooled convolution reads: the library reads
/// them again for each band of rows, which they must not push out of L2.
/// (GoogLeNet's 64 -> 192 layer of 56x56, whose transformed Winograd
/// weights are 1.8 MB, took 1.14x as long fused, in bands of 4 rows, as
/// convolution and pooling apart; the stems' weights are 7-37 KiB.)
constexpr int64_t kMaxWeightBytes = 64 << 10;

/// Whether the weights of `conv` are static and at most kMaxWeightBytes.
static bool smallWeights(const Graph &graph, NodeId conv) {
  ValueRef w = graph.operands(conv)[1];
  std::optional<int64_t> count = staticElementCount(graph.shape(w));
  return count && *count * dtypeByteSize(graph.dtype(w)) <= kMaxWeightBytes;
}

unsigned fuel::fusePooling(const Graph &graph, ExecutionPlan &plan) {
  constexpr size_t kNone = ~size_t(0);
  std::vector<size_t> stepOf(graph.numNodes(), kNone);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    stepOf[plan.steps[s].node] = s;
  // Readers of each node's results (a graph output counts as two, so it is
  // never read once).
  std::vector<uint32_t> readers(graph.numNodes(), 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      ++readers[v.node];
  for (ValueRef out : graph.outputs())
    readers[out.node] += 2;
  Buckets<size_t> members(
      plan.steps.size(), plan.steps.size(), [&](size_t s) { return plan.rootOf[s]; },
      [](size_t s) { return s; });

  unsigned fused = 0;
  std::vector<NodeId> nodes;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    NodeId pool = plan.steps[s].node;
    if (graph.kind(pool) != OpKind::MaxPool2D || members[s].size() != 1)
      continue;
    ValueRef input = graph.operands(pool)[0];
    size_t root = stepOf[input.node];
    if (root == kNone || plan.rootOf[root] != root || readers[input.node] != 1 ||
        plan.steps[root].device != plan.steps[s].device ||
        plan.machine->devices[plan.steps[s].device].ref.kind != DeviceKind::CPU)
      continue;
    nodes.clear();
    for (size_t m : members[root])
      nodes.push_back(plan.steps[m].node);
    nodes.push_back(pool);
    moveHeadFirst(graph, nodes);
    size_t head = stepOf[nodes.front()];
    const Capsule *capsule = plan.steps[head].capsule;
    if (!capsule || capsule->pooledSymbol.empty() || !pooledConvOfKernel(graph, nodes) ||
        !smallWeights(graph, nodes.front()))
      continue;
    for (size_t m : members[root]) {
      plan.steps[s].time += plan.steps[m].time;
      plan.steps[m].time = 0;
      plan.rootOf[m] = s;
    }
    ++fused;
  }
  return fused;
}
