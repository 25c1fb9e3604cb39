//===- ValueLayout.h - Concrete layouts of values over buffers --*- C++ -*-===//
//
// Once symbolic dims are bound (at run time, from the inputs' shapes), every
// value has concrete extents and a Layout over its buffer root: contiguous
// for values that own their buffer, derived through the view chain for
// views. The reference interpreter, code generation and the runtime all use
// this one definition of what a view means.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_VALUELAYOUT_H
#define FUEL_IR_VALUELAYOUT_H

#include "fuel/IR/Graph.h"
#include "fuel/Support/Layout.h"

namespace fuel {

/// `shape` with every symbol replaced by its value in `symbolValues`
/// (indexed by symbol id).
std::vector<int64_t> concreteShape(ShapeRef shape,
                                   std::span<const int64_t> symbolValues);

/// The parameters of a transpose (`perm`) or slice (`axes`, `starts`,
/// `ends`, `steps`) view node, with the attributes' defaults filled in.
struct ViewParams {
  std::vector<int64_t> perm, axes, starts, ends, steps;
};
ViewParams viewParams(const Graph &graph, NodeId view);

/// The layout of view node `view`'s result over its operand's layout
/// `operand`; `resultSizes` are the result's concrete extents.
Layout viewLayout(const Graph &graph, NodeId view, const Layout &operand,
                  std::span<const int64_t> resultSizes);

/// The layout of `value` over the buffer of bufferRoot(graph, value).
Layout valueLayout(const Graph &graph, ValueRef value,
                   std::span<const int64_t> symbolValues);

/// Whether every view between `value` and its buffer root keeps elements in
/// row-major order (reshape, squeeze, unsqueeze), so the value is contiguous
/// at offset 0 for every binding of the symbols.
bool isAlwaysContiguous(const Graph &graph, ValueRef value);

} // namespace fuel

#endif // FUEL_IR_VALUELAYOUT_H
