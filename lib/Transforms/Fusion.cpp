//===- Fusion.cpp - Grouping planned steps into kernels -------------------===//

#include "fuel/Transforms/Fusion.h"

#include "fuel/Planner/Planner.h"

using namespace fuel;

static bool isElementwise(OpKind kind) {
  OpFamily f = opFamily(kind);
  return f == OpFamily::Unary || f == OpFamily::Binary;
}

/// Ops whose result can take an elementwise epilogue.
static bool takesEpilogue(OpKind kind) {
  switch (kind) {
  case OpKind::MatMul:
  case OpKind::Linear:
  case OpKind::Conv2D:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::Softmax:
    return true;
  default:
    return false;
  }
}

/// Steps whose code fuelc emits: generated capsules, and library kernels
/// called from a generated kernel.
static bool isGenerated(const PlannedStep &step) {
  return step.capsule && (step.capsule->provider == "fuelc-codegen" ||
                          !step.capsule->symbol.empty());
}

std::vector<size_t> fuel::fuseSteps(const Graph &graph,
                                    const ExecutionPlan &plan) {
  size_t numSteps = plan.steps.size();
  std::vector<size_t> stepOf(graph.numNodes(), ~size_t(0));
  for (size_t s = 0; s < numSteps; ++s)
    stepOf[plan.steps[s].node] = s;
  // The single node reading each single-result value, or ~0 when it is read
  // by several nodes, by the host (outputs) or by a copy.
  constexpr NodeId kShared = ~NodeId(0), kNone = ~NodeId(0) - 1;
  std::vector<NodeId> onlyUser(graph.numNodes(), kNone);
  auto addUser = [&](ValueRef v, NodeId user) {
    NodeId &u = onlyUser[v.node];
    u = u == kNone || u == user ? user : kShared;
  };
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      addUser(v, n);
  for (ValueRef v : graph.outputs())
    addUser(v, kShared);
  for (const PlannedCopy &c : plan.copies)
    addUser(c.value, kShared);

  std::vector<size_t> rootOf(numSteps);
  std::vector<bool> hasHead(numSteps, false);
  for (size_t s = numSteps; s-- > 0;) {
    rootOf[s] = s;
    const PlannedStep &step = plan.steps[s];
    NodeId user = onlyUser[step.node];
    if (user >= kNone || graph.numResults(step.node) != 1 || !isGenerated(step))
      continue;
    size_t u = stepOf[user];
    if (u == ~size_t(0) || !isGenerated(plan.steps[u]) ||
        plan.steps[u].device != step.device || !isElementwise(graph.kind(user)))
      continue;
    OpKind kind = graph.kind(step.node);
    size_t root = rootOf[u];
    bool isLibrary = !step.capsule->symbol.empty();
    if (isElementwise(kind) && !isLibrary) {
      // Only into a group whose root is elementwise: epilogues are the tail.
      if (isElementwise(graph.kind(plan.steps[root].node)))
        rootOf[s] = root;
    } else if (takesEpilogue(kind) && !hasHead[root] &&
               graph.type({step.node, 0}) ==
                   graph.type({plan.steps[root].node, 0})) {
      // The contraction becomes the group's head: it writes the group's
      // result buffer, which the epilogue then updates in place, so it must
      // have the result's type. One head per group.
      rootOf[s] = root;
      hasHead[root] = true;
    }
  }
  return rootOf;
}
