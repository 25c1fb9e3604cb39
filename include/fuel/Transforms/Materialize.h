//===- Materialize.h - Copies that views cannot express ---------*- C++ -*-===//
//
// Views are metadata over their source's buffer, but not every view of a
// view has strides: flattening a transposed tensor (the `[B, H, T, D] ->
// [B, T, H*D]` of attention) reorders elements. Before planning, fuelc
// inserts a `contiguous` node in front of every reshape of a value that is
// not always dense (a transpose, slice or broadcast upstream), so every
// remaining view is exactly a layout.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_MATERIALIZE_H
#define FUEL_TRANSFORMS_MATERIALIZE_H

#include "fuel/IR/Graph.h"

namespace fuel {

/// Returns the number of `contiguous` nodes inserted into the verified
/// `graph` (named `<reshape>.contiguous`).
unsigned materializeStridedReshapes(Graph &graph);

} // namespace fuel

#endif // FUEL_TRANSFORMS_MATERIALIZE_H
