//===- Window.cpp - The window of conv2d and pooling nodes ----------------===//

#include "fuel/IR/Window.h"

using namespace fuel;

Window fuel::windowOf(const Graph &graph, NodeId node) {
  Window w;
  auto read = [&](AttrName name, int64_t *out, size_t n) {
    if (const Attribute *a = graph.findAttr(node, name))
      for (size_t i = 0; i < n; ++i)
        out[i] = graph.intsAttr(*a)[i];
  };
  read(AttrName::Kernel, w.kernel, 2);
  read(AttrName::Strides, w.strides, 2);
  read(AttrName::Pads, w.pads, 4);
  read(AttrName::Dilations, w.dilations, 2);
  return w;
}
