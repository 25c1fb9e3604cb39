//===- InterpreterImpl.h - The reference interpreter's evaluator -*- C++ -*-===//
//
// Shared by the interpreter's files: Interpreter.cpp (inputs, driver),
// InterpretElementwise.cpp, InterpretLinalg.cpp (contractions, convolution,
// pooling, reductions, normalizations) and InterpretShapeOps.cpp (views and
// data movement).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_REFERENCE_INTERPRETERIMPL_H
#define FUEL_LIB_REFERENCE_INTERPRETERIMPL_H

#include "fuel/Reference/Interpreter.h"

#include "fuel/IR/ValueLayout.h"
#include "fuel/IR/Verifier.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fuel::detail {
using Extents = std::vector<int64_t>;

inline int64_t product(const Extents &e, size_t from = 0, size_t to = ~size_t(0)) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, e.size()); ++i)
    n *= e[i];
  return n;
}

/// Row-major multi-index of `linear` in `shape`.
/// max and min as numpy.maximum/minimum and ONNX Max/Min/Relu: a NaN on
/// either side is the result (std::max keeps its first operand instead).
inline double maxOrNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::max(a, b);
}
inline double minOrNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                        : std::min(a, b);
}

inline void unravel(int64_t linear, const Extents &shape, Extents &index) {
  index.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? linear % shape[d] : 0;
    linear = shape[d] ? linear / shape[d] : 0;
  }
}

/// Element offset, in a tensor of `shape`, of `index` into a (numpy-)
/// broadcast of it to a larger rank: leading axes dropped, unit axes pinned.
inline int64_t broadcastOffset(const Extents &index, const Extents &shape) {
  int64_t offset = 0;
  size_t lead = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    offset = offset * shape[d] + (shape[d] == 1 ? 0 : index[lead + d]);
  return offset;
}

class Interpreter {
public:
  Interpreter(const Graph &graph, DiagnosticEngine &diag)
      : graph(graph), diag(diag), symbolValues(graph.symbols().size(), -1),
        values(graph.numNodes()) {}

  LogicalResult run(const std::map<std::string, HostTensor> &inputs,
                    std::vector<HostTensor> &outputs);

private:
  LogicalResult error(NodeId node, std::string message) {
    SourceLocation loc;
    loc.node = graph.name(node);
    diag.error(std::move(loc), std::move(message));
    return failure();
  }
  LogicalResult bindInput(NodeId node, const HostTensor &t);
  Extents concrete(ShapeRef shape) const {
    Extents out;
    for (Dim d : shape)
      out.push_back(d.isStatic() ? d.size() : symbolValues[d.symbolId()]);
    return out;
  }
  const HostTensor &operand(NodeId node, unsigned i) const {
    ValueRef v = graph.operands(node)[i];
    return values[v.node][v.result];
  }
  /// A zero tensor of result `r`'s type.
  HostTensor result(NodeId node, uint32_t r = 0) const {
    HostTensor t{graph.dtype({node, r}), concrete(graph.shape({node, r})), {}};
    t.values.assign(t.numElements(), 0);
    return t;
  }
  std::vector<int64_t> ints(NodeId node, AttrName name,
                            std::vector<int64_t> dflt = {}) const {
    const Attribute *a = graph.findAttr(node, name);
    if (!a)
      return dflt;
    std::span<const int64_t> v = graph.intsAttr(*a);
    return {v.begin(), v.end()};
  }
  unsigned axisAttr(NodeId node, int64_t dflt, size_t rank) const {
    return *normalizeAxis(graph.getInt(node, AttrName::Axis, dflt), rank);
  }

  LogicalResult evalNode(NodeId node, std::vector<HostTensor> &out);
  HostTensor unary(NodeId node);
  HostTensor binary(NodeId node);
  HostTensor matmul(NodeId node);
  HostTensor linear(NodeId node);
  HostTensor conv2d(NodeId node);
  HostTensor pool2d(NodeId node);
  HostTensor reduce(NodeId node);
  HostTensor softmax(NodeId node);
  HostTensor normalize(NodeId node);
  HostTensor view(NodeId node);
  HostTensor concat(NodeId node);
  std::vector<HostTensor> split(NodeId node);
  LogicalResult gather(NodeId node, HostTensor &out);
  HostTensor pad(NodeId node);
  LogicalResult writeSlice(NodeId node, HostTensor &out);

  const Graph &graph;
  DiagnosticEngine &diag;
  std::vector<int64_t> symbolValues;
  std::vector<std::vector<HostTensor>> values;
};

} // namespace fuel::detail

#endif // FUEL_LIB_REFERENCE_INTERPRETERIMPL_H
