//===- Interpreter.cpp - Naive reference evaluation of graphs -------------===//
//
// One function per op family, each a direct transcription of the op's
// definition in docs/graph-format.md over concrete extents (symbols bound
// from the inputs). Views reuse IR/Layout.h to map indices.
//
//===----------------------------------------------------------------------===//

#include "InterpreterImpl.h"

using namespace fuel;
using namespace fuel::detail;

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult Interpreter::bindInput(NodeId node, const HostTensor &t) {
  ValueRef v{node, 0};
  std::string name(graph.name(node));
  if (t.dtype != graph.dtype(v))
    return error(node, "input '" + name + "' must be " +
                           std::string(dtypeName(graph.dtype(v))) + ", got " +
                           std::string(dtypeName(t.dtype)));
  ShapeRef declared = graph.shape(v);
  auto mismatch = [&] {
    std::string got;
    for (size_t i = 0; i < t.shape.size(); ++i)
      got += (i ? ", " : "") + std::to_string(t.shape[i]);
    return error(node, "input '" + name + "' must have shape " +
                           formatShape(declared, graph.symbols()) + ", got [" +
                           got + "]");
  };
  if (declared.size() != t.shape.size())
    return mismatch();
  for (size_t d = 0; d < declared.size(); ++d) {
    if (declared[d].isStatic()) {
      if (declared[d].size() != t.shape[d])
        return mismatch();
      continue;
    }
    int64_t &bound = symbolValues[declared[d].symbolId()];
    if (bound >= 0 && bound != t.shape[d])
      return error(node, "input '" + name + "' binds symbol '" +
                             std::string(graph.symbols().name(declared[d].symbolId())) +
                             "' to " + std::to_string(t.shape[d]) +
                             ", another input bound it to " +
                             std::to_string(bound));
    bound = t.shape[d];
  }
  graph.symbols().evaluate(symbolValues); // Products of the bound symbols.
  HostTensor rounded = t;
  for (double &x : rounded.values)
    x = roundToDType(x, rounded.dtype);
  values[node] = {std::move(rounded)};
  return success();
}

LogicalResult Interpreter::evalNode(NodeId node, std::vector<HostTensor> &out) {
  OpKind kind = graph.kind(node);
  switch (opFamily(kind)) {
  case OpFamily::Unary:
    out = {unary(node)};
    break;
  case OpFamily::Binary:
    out = {binary(node)};
    break;
  case OpFamily::Linalg:
    out = {kind == OpKind::MatMul   ? matmul(node)
           : kind == OpKind::Linear ? linear(node)
           : kind == OpKind::Conv2D ? conv2d(node)
                                    : pool2d(node)};
    break;
  case OpFamily::Reduction:
    out = {kind == OpKind::Softmax || kind == OpKind::LogSoftmax ? softmax(node)
           : kind == OpKind::LayerNorm || kind == OpKind::RmsNorm
               ? normalize(node)
               : reduce(node)};
    break;
  case OpFamily::View:
    out = {view(node)};
    break;
  case OpFamily::Movement:
    if (kind == OpKind::Concat)
      out = {concat(node)};
    else if (kind == OpKind::Split)
      out = split(node);
    else if (kind == OpKind::Pad)
      out = {pad(node)};
    else if (kind == OpKind::Contiguous) // Values are always dense here.
      out = {operand(node, 0)};
    else {
      out.resize(1);
      return gather(node, out[0]);
    }
    break;
  case OpFamily::Structural:
    if (kind == OpKind::Alloc) {
      out = {result(node)};
    } else if (kind == OpKind::WriteSlice) {
      out.resize(1);
      return writeSlice(node, out[0]);
    } else {
      out = {operand(node, 0)}; // copy, move: same values, other device.
    }
    break;
  case OpFamily::Source: {
    const ConstantData *data = graph.constantData(node);
    out = {HostTensor::fromBytes(graph.dtype({node, 0}),
                                 concrete(graph.shape({node, 0})),
                                 data->bytes())};
    break;
  }
  }
  return success();
}

LogicalResult Interpreter::run(const std::map<std::string, HostTensor> &inputs,
                               std::vector<HostTensor> &outputs) {
  bool ok = true;
  std::map<std::string_view, NodeId> declared;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      declared[graph.name(n)] = n;
  for (const auto &[name, tensor] : inputs) {
    auto it = declared.find(name);
    if (it == declared.end()) {
      diag.error({}, "the graph has no input named '" + name + "'");
      ok = false;
      continue;
    }
    ok &= succeeded(bindInput(it->second, tensor));
  }
  for (const auto &[name, node] : declared)
    if (!inputs.count(std::string(name))) {
      ok = false;
      (void)error(node, "input '" + std::string(name) + "' is not given");
    }
  if (!ok)
    return failure();
  std::vector<NodeId> order;
  topologicalOrder(graph, order);
  for (NodeId node : order) {
    if (graph.kind(node) == OpKind::Input)
      continue;
    std::vector<HostTensor> results;
    if (failed(evalNode(node, results)))
      return failure();
    for (HostTensor &t : results)
      for (double &x : t.values)
        x = roundToDType(x, t.dtype);
    values[node] = std::move(results);
  }
  outputs.clear();
  for (ValueRef v : graph.outputs())
    outputs.push_back(values[v.node][v.result]);
  return success();
}

LogicalResult fuel::interpret(const Graph &graph,
                              const std::map<std::string, HostTensor> &inputs,
                              std::vector<HostTensor> &outputs,
                              DiagnosticEngine &diag) {
  return Interpreter(graph, diag).run(inputs, outputs);
}
