//===- Fusion.cpp - Grouping nodes into fused kernels ---------------------===//

#include "fuel/Transforms/Fusion.h"

#include "fuel/IR/OpCost.h"

#include <algorithm>

using namespace fuel;

/// Reductions and normalizations: they can compute their input as they
/// read it (a prologue) or be the head of an epilogue.
static bool isReduction(OpKind kind) {
  return opFamily(kind) == OpFamily::Reduction && kind != OpKind::ArgMax &&
         kind != OpKind::ArgMin;
}

/// Ops whose result can take an elementwise epilogue.
static bool takesEpilogue(OpKind kind) {
  return isReduction(kind) || kind == OpKind::MatMul ||
         kind == OpKind::Linear || kind == OpKind::Conv2D;
}

/// The most buffers (operands read from outside and results) one fused
/// kernel binds. A Vulkan device binds at least 24 storage buffers per
/// shader stage in practice (Mesa's lavapipe 32, Adreno 24; the spec's
/// floor is 4), and a kernel streaming more operands gains little from
/// growing further. Scalar constants count: kernels read them as buffers.
constexpr size_t kMaxKernelBuffers = 24;

std::vector<NodeId> fuel::fusionGroups(const Graph &graph,
                                       const std::vector<NodeId> &order,
                                       const std::vector<int> &pinOf) {
  // The single node reading each single-result value, or kShared when it is
  // read by several nodes or by the host (outputs).
  constexpr NodeId kShared = ~NodeId(0), kNone = ~NodeId(0) - 1;
  std::vector<NodeId> onlyUser(graph.numNodes(), kNone);
  auto addUser = [&](ValueRef v, NodeId user) {
    NodeId &u = onlyUser[v.node];
    u = u == kNone || u == user ? user : kShared;
  };
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      addUser(v, n);
  std::vector<bool> isOutput(graph.numNodes(), false);
  for (ValueRef v : graph.outputs()) {
    addUser(v, kShared);
    isOutput[v.node] = true;
  }
  // Readers of each node (CSR), for values read by several nodes.
  std::vector<size_t> firstReader(graph.numNodes() + 1, 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      ++firstReader[v.node + 1];
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    firstReader[n + 1] += firstReader[n];
  std::vector<NodeId> readers(firstReader.back());
  std::vector<size_t> filled(firstReader.begin(), firstReader.end() - 1);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      readers[filled[v.node]++] = n;

  std::vector<NodeId> root(graph.numNodes());
  std::vector<bool> hasHead(graph.numNodes(), false);
  // Per group root with members, the values they read from outside the
  // group (filled when the first member joins: most nodes stay alone).
  std::vector<std::vector<ValueRef>> external(graph.numNodes());
  auto readsOutside = [&](const std::vector<ValueRef> &group, ValueRef v) {
    return std::find(group.begin(), group.end(), v) != group.end();
  };
  auto addOperands = [&](std::vector<ValueRef> &group, NodeId n) {
    for (ValueRef v : graph.operands(n))
      if (!readsOutside(group, v))
        group.push_back(v);
  };
  // n joins r's group unless the kernel would bind too many buffers.
  auto join = [&](NodeId n, NodeId r) {
    std::vector<ValueRef> &group = external[r];
    if (group.empty())
      addOperands(group, r);
    ValueRef joining{n, 0};
    size_t buffers = group.size() - (readsOutside(group, joining) ? 1 : 0) + graph.numResults(r);
    auto operands = graph.operands(n);
    for (auto it = operands.begin(); it != operands.end(); ++it)
      buffers += !readsOutside(group, *it) && std::find(operands.begin(), it, *it) == it;
    if (buffers > kMaxKernelBuffers)
      return false;
    group.erase(std::remove(group.begin(), group.end(), joining), group.end());
    addOperands(group, n);
    root[n] = r;
    return true;
  };
  for (size_t i = order.size(); i-- > 0;) {
    NodeId n = order[i];
    root[n] = n;
    NodeId user = onlyUser[n];
    OpKind kind = graph.kind(n);
    if (user == kShared && !isOutput[n] && graph.numResults(n) == 1) {
      // Read by several nodes of one elementwise group (x * sigmoid(x)
      // after a convolution): n may join it as if read once. The readers'
      // groups are known: they come later in `order`.
      NodeId group = kNone;
      for (size_t i = firstReader[n]; i < firstReader[n + 1] && group != kShared; ++i) {
        NodeId r = readers[i];
        group = !isElementwiseOp(graph.kind(r)) || (group != kNone && group != root[r])
                    ? kShared
                    : root[r];
      }
      if (group < kNone && isElementwiseOp(graph.kind(group)))
        user = group;
    }
    if (user >= kNone || graph.numResults(n) != 1 || pinOf[n] != pinOf[user])
      continue;
    if (isElementwiseOp(kind) && isReduction(graph.kind(user)) &&
        root[user] == user && graph.operands(user)[0] == ValueRef{n, 0} &&
        std::count(graph.operands(user).begin(), graph.operands(user).end(),
                   ValueRef{n, 0}) == 1) {
      // The reduction reads its input computed in place (a prologue).
      join(n, user);
      continue;
    }
    if (!isElementwiseOp(graph.kind(user)))
      continue;
    // Fused, a value broadcast into its reader is computed again at every
    // position of the reader: a per-channel sigmoid scaling an image
    // (squeeze-and-excitation) cost ten times the product it feeds.
    if (isTranscendental(kind) && !std::ranges::equal(graph.shape({n, 0}), graph.shape({user, 0})))
      continue;
    NodeId r = root[user];
    bool prologue = isReduction(graph.kind(r));
    if (!isElementwiseOp(graph.kind(r)) && !prologue)
      continue; // Epilogues are the tail of a group: nothing fuses past them.
    if (prologue) {
      if (isElementwiseOp(kind))
        join(n, r); // A longer prologue.
    } else if (isElementwiseOp(kind)) {
      join(n, r);
    } else if (takesEpilogue(kind) && !hasHead[r] &&
               graph.type({n, 0}) == graph.type({r, 0})) {
      // The head writes the group's result buffer, which the elementwise
      // tail then updates in place: it must have the result's type.
      hasHead[r] = join(n, r);
    }
  }
  return root;
}

void fuel::moveHeadFirst(const Graph &graph, std::span<NodeId> nodes) {
  // The head reads only values from outside its group, so it can go first.
  // A non-elementwise root (a reduction with a prologue) stays last.
  auto head = std::find_if(nodes.begin(), nodes.end(), [&](NodeId n) {
    return !isElementwiseOp(graph.kind(n));
  });
  if (head != nodes.end() && head + 1 != nodes.end())
    std::rotate(nodes.begin(), head, head + 1);
}
