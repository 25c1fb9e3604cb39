//===- FoldChannelScales.cpp - Input scales folded into conv weights ------===//

#include "fuel/Transforms/FoldChannelScales.h"

#include <algorithm>

using namespace fuel;

/// Whether `s` is one scale per channel of `x` ([N, C, 1, 1] or [C, 1, 1]
/// against an image x of C channels), the same for every image: N is 1 or a
/// symbol bounded by 1.
static bool scalesChannels(ShapeRef s, ShapeRef x, std::span<const int64_t> symbolBounds) {
  auto one = [](Dim d) { return d == Dim::fixed(1); };
  if (x.size() != 4 || !x[1].isStatic() || (s.size() != 4 && s.size() != 3))
    return false;
  size_t channel = s.size() - 3;
  bool sameForAll = s.size() == 3 || one(s[0]) ||
                    (s[0].isSymbolic() && s[0].symbolId() < symbolBounds.size() &&
                     symbolBounds[s[0].symbolId()] <= 1);
  return sameForAll && s[channel] == x[1] && one(s[channel + 1]) && one(s[channel + 2]);
}

/// Whether scaling w (a convolution's [O, C, KH, KW] weights) costs less
/// than scaling one image x. Weights that are not constant are packed for
/// the x86 library at every call, which costs about as much per weight as
/// the product per pixel 8 times over: EfficientNet-B0's projections of
/// 28x28 (20 pixels per weight) gain (the product's 19-32 us for 3-7 us
/// more packing), those of 14x14 (1.7) lost 1.5x their time.
static bool weightsSmaller(ShapeRef w, ShapeRef x) {
  constexpr int64_t kPixelsPerWeight = 8;
  if (!w[0].isStatic() || !w[2].isStatic() || !w[3].isStatic() || !x[2].isStatic() ||
      !x[3].isStatic())
    return false;
  return w[0].size() * w[2].size() * w[3].size() * kPixelsPerWeight < x[2].size() * x[3].size();
}

unsigned fuel::foldChannelScales(Graph &graph, std::span<const int64_t> symbolBounds) {
  // Readers per value of a single-result node; outputs count as readers.
  std::vector<unsigned> readers(graph.numNodes(), 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    for (ValueRef v : graph.operands(n))
      ++readers[v.node];
  for (ValueRef v : graph.outputs())
    ++readers[v.node];
  unsigned folded = 0;
  for (NodeId conv = 0; conv < graph.numNodes(); ++conv) {
    if (graph.kind(conv) != OpKind::Conv2D || graph.getInt(conv, AttrName::Groups, 1) != 1)
      continue;
    auto operands = graph.operands(conv);
    NodeId mul = operands[0].node;
    if (graph.kind(mul) != OpKind::Mul || graph.numResults(mul) != 1 || readers[mul] != 1)
      continue;
    auto factors = graph.operands(mul);
    ValueRef w = operands[1];
    // The image is the factor of the product's shape; the other scales it.
    unsigned image = std::ranges::equal(graph.shape(factors[0]), graph.shape({mul, 0})) ? 0 : 1;
    ValueRef x = factors[image], s = factors[1 - image];
    auto isF32 = [&](ValueRef v) { return graph.dtype(v) == DType::F32; };
    if (x == s || !std::ranges::equal(graph.shape(x), graph.shape({mul, 0})) ||
        !std::ranges::all_of(std::initializer_list<ValueRef>{x, s, w}, isF32) ||
        !scalesChannels(graph.shape(s), graph.shape(x), symbolBounds) ||
        !weightsSmaller(graph.shape(w), graph.shape(x)))
      continue;
    // w * s has w's shape: s's channels are w's input channels (axis 1). A
    // symbolic batch of s (at most one image) is summed away first, so that
    // s broadcasts over w's output channels.
    // (A copy: building the node may move the graph's shape pool.)
    if (Shape one(graph.shape(s).begin(), graph.shape(s).end());
        one.size() == 4 && one[0].isSymbolic()) {
      one[0] = Dim::fixed(1);
      std::string name = std::string(graph.name(mul)) + ".scales";
      NodeId sum = graph.createNode(OpKind::ReduceSum, name);
      graph.addOperand(s);
      graph.addIntsAttr(AttrName::Axes, std::initializer_list<int64_t>{0});
      graph.addBoolAttr(AttrName::KeepDims, true);
      graph.addResults(1);
      graph.setResultType({sum, 0}, DType::F32, one);
      graph.setOperand(mul, 1 - image, {sum, 0});
    }
    graph.setOperand(mul, image, w);
    graph.setResultType({mul, 0}, graph.type(w));
    graph.setOperand(conv, 0, x);
    graph.setOperand(conv, 1, {mul, 0});
    ++folded;
  }
  return folded;
}
