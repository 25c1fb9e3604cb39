//===- AttentionFusion.cpp - Attention as one library kernel --------------===//

#include "fuel/Planner/AttentionFusion.h"

#include "fuel/Planner/Planner.h"
#include "fuel/Transforms/Attention.h"

using namespace fuel;

unsigned fuel::fuseAttention(const Graph &graph, ExecutionPlan &plan) {
  constexpr size_t kNone = ~size_t(0);
  std::vector<size_t> stepOf(graph.numNodes(), kNone);
  std::vector<uint32_t> groupSize(plan.steps.size(), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    stepOf[plan.steps[s].node] = s;
    ++groupSize[plan.rootOf[s]];
  }
  // Readers of each node's first result (a graph output counts as two, so
  // it is never read once), and the last of them.
  std::vector<uint32_t> readers(graph.numNodes(), 0);
  std::vector<NodeId> reader(graph.numNodes(), 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      if (v.result == 0) {
        ++readers[v.node];
        reader[v.node] = n;
      }
  for (ValueRef out : graph.outputs())
    readers[out.node] += 2;

  unsigned fused = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    NodeId softmax = plan.steps[s].node;
    if (graph.kind(softmax) != OpKind::Softmax || readers[softmax] != 1)
      continue;
    std::optional<AttentionChain> chain = matchAttention(graph, softmax, reader[softmax]);
    if (!chain)
      continue;
    std::vector<NodeId> nodes = chain->nodes();
    size_t root = stepOf[chain->weighted], head = stepOf[chain->scores];
    if (root == kNone || head == kNone)
      continue;
    const PlannedStep &first = plan.steps[head], &last = plan.steps[root];
    bool fusable = first.capsule && last.capsule && !first.capsule->attentionSymbol.empty() &&
                   first.capsule->attentionSymbol == last.capsule->attentionSymbol &&
                   plan.machine->devices[first.device].ref.kind == DeviceKind::CPU &&
                   plan.rootOf[root] == root && plan.rootOf[head] == head;
    // Each value before the weighted sum is read once, by the next node;
    // the chain's groups hold only chain nodes: the scale and mask are
    // alone or in the softmax's group, the products alone.
    size_t members = 0;
    for (NodeId n : nodes) {
      size_t step = stepOf[n];
      fusable &= step != kNone && plan.steps[step].device == first.device;
      if (!fusable)
        break;
      size_t groupRoot = plan.rootOf[step];
      members += groupRoot == step ? groupSize[step] : 0;
      fusable &= groupRoot == step || groupRoot == stepOf[softmax];
      if (n != chain->weighted)
        fusable &= readers[n] == 1 && graph.numResults(n) == 1;
    }
    fusable &= members == nodes.size();
    if (!fusable)
      continue;
    for (NodeId n : nodes)
      if (size_t step = stepOf[n]; step != root) {
        plan.steps[root].time += plan.steps[step].time;
        plan.steps[step].time = 0;
        plan.rootOf[step] = root;
      }
    ++fused;
  }
  return fused;
}
