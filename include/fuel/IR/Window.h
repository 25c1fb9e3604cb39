//===- Window.h - The window of conv2d and pooling nodes --------*- C++ -*-===//
#ifndef FUEL_IR_WINDOW_H
#define FUEL_IR_WINDOW_H

#include "fuel/IR/Graph.h"

namespace fuel {

/// A 2-D window with the graph format's defaults; pads are top, left,
/// bottom, right.
struct Window {
  int64_t kernel[2] = {1, 1}, strides[2] = {1, 1}, pads[4] = {0, 0, 0, 0},
          dilations[2] = {1, 1};
};

/// The window attributes of a verified conv2d, max_pool2d or avg_pool2d
/// node (conv2d's kernel extents are its weight's and stay 1 here).
Window windowOf(const Graph &graph, NodeId node);

} // namespace fuel

#endif // FUEL_IR_WINDOW_H
