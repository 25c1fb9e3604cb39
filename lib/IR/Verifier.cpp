//===- Verifier.cpp - Graph verification and type inference ---------------===//

#include "fuel/IR/Verifier.h"

#include "InferenceContext.h"

#include "fuel/Support/StringIndex.h"

#include <algorithm>

using namespace fuel;

SourceLocation SourceLocator::locate(const Graph &graph, NodeId node,
                                     NodeSite) const {
  SourceLocation loc;
  loc.node = graph.name(node);
  return loc;
}

SourceLocation SourceLocator::locateOutput(const Graph &, unsigned) const {
  return {};
}

SourceLocation SourceLocator::locateOutputs(const Graph &) const { return {}; }

unsigned fuel::expectedResultCount(const Graph &graph, NodeId node) {
  if (graph.kind(node) != OpKind::Split)
    return 1;
  if (const Attribute *sizes = graph.findAttr(node, AttrName::Sizes))
    return std::max<unsigned>(sizes->count, 1);
  int64_t num = graph.getInt(node, AttrName::Num, 1);
  // An out-of-range count is reported by inference; keep one result meanwhile.
  return num >= 1 && num <= 65535 ? static_cast<unsigned>(num) : 1;
}

/// Consumers of each node, as CSR arrays.
namespace {
struct UserLists {
  std::vector<uint32_t> offsets;
  std::vector<NodeId> users;
};
} // namespace

static UserLists buildUserLists(const Graph &graph) {
  size_t n = graph.numNodes();
  UserLists lists;
  lists.offsets.assign(n + 1, 0);
  for (NodeId node = 0; node < n; ++node)
    for (ValueRef v : graph.operands(node))
      ++lists.offsets[v.node + 1];
  for (size_t i = 0; i < n; ++i)
    lists.offsets[i + 1] += lists.offsets[i];
  lists.users.resize(lists.offsets[n]);
  std::vector<uint32_t> fill(lists.offsets.begin(), lists.offsets.end() - 1);
  for (NodeId node = 0; node < n; ++node)
    for (ValueRef v : graph.operands(node))
      lists.users[fill[v.node]++] = node;
  return lists;
}

bool fuel::topologicalOrder(const Graph &graph, std::vector<NodeId> &order,
                            std::vector<NodeId> *cycle) {
  size_t n = graph.numNodes();
  UserLists lists = buildUserLists(graph);
  std::vector<uint32_t> pending(n);
  for (NodeId node = 0; node < n; ++node)
    pending[node] = static_cast<uint32_t>(graph.operands(node).size());
  order.clear();
  order.reserve(n);
  for (NodeId node = 0; node < n; ++node)
    if (pending[node] == 0)
      order.push_back(node);
  // `order` doubles as the worklist: nodes are appended once ready.
  for (size_t head = 0; head < order.size(); ++head) {
    NodeId node = order[head];
    for (uint32_t u = lists.offsets[node]; u < lists.offsets[node + 1]; ++u)
      if (--pending[lists.users[u]] == 0)
        order.push_back(lists.users[u]);
  }
  if (order.size() == n)
    return true;
  if (cycle) {
    // Every node left has a pending operand that is itself left; walking
    // such operands must revisit a node, closing a cycle.
    NodeId start = 0;
    while (pending[start] == 0)
      ++start;
    std::vector<int64_t> visitIndex(n, -1);
    std::vector<NodeId> path;
    NodeId node = start;
    while (visitIndex[node] < 0) {
      visitIndex[node] = static_cast<int64_t>(path.size());
      path.push_back(node);
      for (ValueRef v : graph.operands(node)) {
        if (pending[v.node] != 0) {
          node = v.node;
          break;
        }
      }
    }
    cycle->assign(path.begin() + visitIndex[node], path.end());
    std::reverse(cycle->begin(), cycle->end()); // Producer before consumer.
    // Start at the lowest id so the report does not depend on the walk.
    std::rotate(cycle->begin(),
                std::min_element(cycle->begin(), cycle->end()), cycle->end());
  }
  return false;
}

namespace {
class StructureChecker {
public:
  StructureChecker(const Graph &graph, DiagnosticEngine &diag,
                   const SourceLocator &locator)
      : graph(graph), diag(diag), locator(locator) {}

  LogicalResult run() {
    StringIndex names;
    names.reserve(graph.numNodes());
    for (NodeId node = 0; node < graph.numNodes(); ++node) {
      if (diag.reachedErrorLimit())
        return failure();
      checkNode(node, names);
    }
    if (graph.outputs().empty())
      report(locator.locateOutputs(graph), "graph has no outputs");
    for (unsigned i = 0; i < graph.outputs().size(); ++i) {
      ValueRef v = graph.outputs()[i];
      if (!isValid(v)) {
        Diagnostic d;
        d.location = locator.locateOutput(graph, i);
        d.message = "graph output " + std::to_string(i) +
                    " refers to a value that does not exist";
        diag.report(std::move(d));
        ok = false;
      }
    }
    return success(ok);
  }

private:
  bool isValid(ValueRef v) const {
    return v.node < graph.numNodes() && v.result < graph.numResults(v.node);
  }

  void report(SourceLocation loc, std::string message) {
    diag.report({Severity::Error, std::move(loc), std::move(message), {}});
    ok = false;
  }
  void reportAt(NodeId node, NodeSite site, std::string message) {
    report(locator.locate(graph, node, site),
           std::string(opName(graph.kind(node))) + ": " + std::move(message));
  }

  void checkNode(NodeId node,
                 StringIndex &names) {
    OpKind kind = graph.kind(node);
    std::string_view name = graph.name(node);
    if (name.empty())
      reportAt(node, NodeSite::node(), "node has an empty id");
    else if (!names.insert(name, node).second)
      reportAt(node, NodeSite::node(),
               "duplicate id '" + std::string(name) + "'");
    size_t numOperands = graph.operands(node).size();
    if (numOperands < minOperands(kind) || numOperands > maxOperands(kind)) {
      std::string expected =
          minOperands(kind) == maxOperands(kind)
              ? std::to_string(minOperands(kind))
              : std::to_string(minOperands(kind)) + " to " +
                    std::to_string(maxOperands(kind));
      reportAt(node, NodeSite::node(),
               "expects " + expected + " operand(s), got " +
                   std::to_string(numOperands));
    }
    for (unsigned i = 0; i < numOperands; ++i)
      if (!isValid(graph.operands(node)[i]))
        reportAt(node, NodeSite::ofOperand(i),
                 "operand " + std::to_string(i) +
                     " refers to a value that does not exist");
    checkAttrs(node);
    if (graph.numResults(node) != expectedResultCount(graph, node))
      reportAt(node, NodeSite::node(),
               "has " + std::to_string(graph.numResults(node)) +
                   " results, expected " +
                   std::to_string(expectedResultCount(graph, node)));
  }

  void checkAttrs(NodeId node) {
    OpKind kind = graph.kind(node);
    std::span<const AttrSpec> specs = opAttrSpecs(kind);
    std::span<const Attribute> attrs = graph.attrs(node);
    for (size_t i = 0; i < attrs.size(); ++i) {
      const Attribute &a = attrs[i];
      bool allowed = std::any_of(specs.begin(), specs.end(),
                                 [&](const AttrSpec &s) { return s.name == a.name; });
      if (!allowed)
        reportAt(node, NodeSite::ofAttr(a.name),
                 "unexpected attribute '" + std::string(attrName(a.name)) + "'");
      else if (a.type != attrType(a.name))
        reportAt(node, NodeSite::ofAttr(a.name),
                 "attribute '" + std::string(attrName(a.name)) + "' must be " +
                     std::string(attrTypeDescription(attrType(a.name))));
      for (size_t j = 0; j < i; ++j)
        if (attrs[j].name == a.name)
          reportAt(node, NodeSite::ofAttr(a.name),
                   "attribute '" + std::string(attrName(a.name)) +
                       "' is given twice");
    }
    for (const AttrSpec &spec : specs)
      if (spec.required && !graph.findAttr(node, spec.name))
        reportAt(node, NodeSite::node(),
                 "missing required attribute '" +
                     std::string(attrName(spec.name)) + "'");
  }

  const Graph &graph;
  DiagnosticEngine &diag;
  const SourceLocator &locator;
  bool ok = true;
};
} // namespace

static LogicalResult inferNode(InferenceContext &ctx) {
  switch (opFamily(ctx.kind())) {
  case OpFamily::Unary:
  case OpFamily::Binary:
    return inferElementwise(ctx);
  case OpFamily::Linalg:
    return inferLinalg(ctx);
  case OpFamily::Reduction:
    return inferReduction(ctx);
  case OpFamily::View:
  case OpFamily::Movement:
    return inferShapeOp(ctx);
  case OpFamily::Source:
  case OpFamily::Structural:
    return inferStructural(ctx);
  }
  return failure();
}

LogicalResult fuel::inferNodeTypes(Graph &graph, NodeId node,
                                   DiagnosticEngine &diag) {
  // Inference assumes the structure checks of verifyGraph: arity first.
  OpKind kind = graph.kind(node);
  size_t count = graph.operands(node).size();
  if (count < minOperands(kind) || count > maxOperands(kind)) {
    SourceLocation loc;
    loc.node = graph.name(node);
    diag.error(std::move(loc), std::string(opName(kind)) + " takes " +
                                   std::to_string(minOperands(kind)) + " to " +
                                   std::to_string(maxOperands(kind)) +
                                   " operands, got " + std::to_string(count));
    return failure();
  }
  SourceLocator locator;
  InferenceContext ctx(graph, node, diag, locator);
  if (failed(inferNode(ctx)))
    return failure();
  for (unsigned r = 0; r < ctx.results.size(); ++r)
    graph.setResultType({node, r}, ctx.results[r]);
  return success();
}

LogicalResult fuel::verifyGraph(Graph &graph, DiagnosticEngine &diag,
                                const SourceLocator &locator,
                                std::vector<NodeId> *orderOut) {
  if (failed(StructureChecker(graph, diag, locator).run()))
    return failure();

  std::vector<NodeId> order, cycle;
  if (!topologicalOrder(graph, order, &cycle)) {
    Diagnostic d;
    d.location = locator.locate(graph, cycle.front(), NodeSite::node());
    d.message = "graph has a cycle: ";
    for (NodeId node : cycle)
      d.message += "'" + std::string(graph.name(node)) + "' -> ";
    d.message += "'" + std::string(graph.name(cycle.front())) + "'";
    diag.report(std::move(d));
    return failure();
  }

  // Nodes that failed (or were fed by a failed node) are skipped downstream
  // so that one root cause yields one diagnostic. Diagnostics are collected
  // and reported in node order, which is file order, not walk order.
  std::vector<bool> broken(graph.numNodes(), false);
  std::vector<std::pair<NodeId, Diagnostic>> found;
  DiagnosticEngine collector;
  NodeId current = 0;
  collector.setHandler(
      [&](const Diagnostic &d) { found.emplace_back(current, d); });
  bool ok = true;
  for (NodeId node : order) {
    if (diag.maxErrorCount() != 0 && found.size() >= diag.maxErrorCount())
      break;
    current = node;
    bool inputsBroken = false;
    for (ValueRef v : graph.operands(node))
      inputsBroken |= broken[v.node];
    if (inputsBroken) {
      broken[node] = true;
      continue;
    }
    InferenceContext ctx(graph, node, collector, locator);
    if (failed(inferNode(ctx))) {
      broken[node] = true;
      ok = false;
      continue;
    }
    for (unsigned r = 0; r < ctx.results.size(); ++r) {
      const TensorType &t = ctx.results[r];
      if (!staticElementCount(t.shape)) {
        (void)ctx.error("result " + ctx.fmt(t.shape) + " has more than 2^59 "
                        "elements");
        broken[node] = true;
        ok = false;
        break;
      }
      if (opFamily(graph.kind(node)) != OpFamily::Source)
        graph.setResultType({node, r}, t);
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &entry : found)
    diag.report(std::move(entry.second));
  if (ok && orderOut)
    *orderOut = std::move(order);
  return success(ok);
}
