//===- KernelFormation.cpp - Kernel arguments and thread splitting --------===//
//
// A kernel's arguments are the values its group reads from memory and the
// results of its root. The split analysis decides whether slices of one
// axis of the root result can be computed independently (the first, or for
// a single image's convolution and a short, wide matrix product the output
// channels or columns, so that threads share the weights instead of each
// packing all of them), and which axis of each argument follows that
// slice: it must be an axis the argument is indexed by in lockstep with the
// result's (never a broadcast or a reduced axis).
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/KernelFormation.h"

#include "fuel/IR/ValueLayout.h"
#include "fuel/Support/Buckets.h"
#include "fuel/Transforms/Attention.h"
#include "fuel/Transforms/ConvEpilogue.h"
#include "fuel/Transforms/Fusion.h"

#include <algorithm>

using namespace fuel;

namespace {
/// Split axes of the arguments of one kernel, keyed by value (a handful of
/// entries: a list, searched in order).
class SplitAxes {
public:
  /// The axis entered for `v`, entering axis 0 when there is none.
  int &operator[](ValueRef v) {
    if (int *axis = find(v))
      return *axis;
    return entries.emplace_back(v, 0).second;
  }
  /// The axis entered for `v`, or null.
  int *find(ValueRef v) {
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const std::pair<ValueRef, int> &e) { return e.first == v; });
    return it == entries.end() ? nullptr : &it->second;
  }

private:
  std::vector<std::pair<ValueRef, int>> entries;
};

/// The axis of `operand`, broadcast into `domain`, that lines up with the
/// domain's axis `axis`, or -1 (absent or broadcast there).
int alignedAxis(const Graph &graph, ValueRef operand, ShapeRef domain, int axis) {
  ShapeRef shape = graph.shape(operand);
  int d = axis - static_cast<int>(domain.size() - shape.size());
  if (d < 0 || (shape[d] == Dim::fixed(1) && domain[axis] != Dim::fixed(1)))
    return -1;
  return d;
}

/// Columns of a matrix product worth splitting instead of its rows: a
/// static width of at least this, over rows that are fewer or unknown.
constexpr int64_t kMinSplitColumns = 256;

/// Output channels below which a pointwise convolution splits its rows:
/// halves of fewer channels leave the library's register tiles part empty.
constexpr int64_t kMinSplitChannels = 128;

/// Whether `node` (a convolution) is pointwise: a 1x1 window, stride 1,
/// no padding, so that output row r reads input row r alone.
bool isPointwise(const Graph &graph, NodeId node) {
  auto allOnes = [&](AttrName name) {
    const Attribute *a = graph.findAttr(node, name);
    return !a || std::ranges::all_of(graph.intsAttr(*a), [](int64_t v) { return v == 1; });
  };
  const Attribute *pads = graph.findAttr(node, AttrName::Pads);
  ShapeRef w = graph.shape(graph.operands(node)[1]);
  return w[2] == Dim::fixed(1) && w[3] == Dim::fixed(1) && allOnes(AttrName::Strides) &&
         (!pads || std::ranges::all_of(graph.intsAttr(*pads), [](int64_t v) { return v == 0; }));
}

/// Output rows below which a window's slices would mostly read halo.
constexpr int64_t kMinSplitRows = 4;

/// Whether a library convolution of one image (`node`, groups of 1, not
/// pointwise) splits its output rows, each slice reading its rows of the
/// whole input (halo included, KernelSpec::takesSliceOrigin), rather than
/// its output channels, where every thread reads all of the input and copies
/// it into stride phases: when the input is at least half the size of the
/// weights, which a row split has every thread read. On ResNet-18 at two
/// threads, its stem, 1x1 stride-2 and 28x28 layers ran 5-50% faster so;
/// its 14x14 and 7x7 layers, of larger weights, 4-25% slower.
bool splitsRowsWithHalo(const Graph &graph, NodeId node) {
  if (graph.getInt(node, AttrName::Groups, 1) != 1 || isPointwise(graph, node))
    return false;
  ShapeRef x = graph.shape(graph.operands(node)[0]), w = graph.shape(graph.operands(node)[1]);
  ShapeRef y = graph.shape({node, 0});
  // The batch may be symbolic (an exported model's, bound to 1).
  if (!isFullyStatic(x.subspan(1)) || !isFullyStatic(w) || !y[2].isStatic() ||
      y[2].size() < kMinSplitRows || graph.dtype({node, 0}) != DType::F32)
    return false;
  return 2 * x[1].size() * x[2].size() * x[3].size() >=
         w[0].size() * w[1].size() * w[2].size() * w[3].size();
}

/// Whether a convolution (`node`) of few output channels and a pointwise
/// window splits its rows, which its input shares row for row: halves of
/// so few channels leave the library's register tiles part empty.
bool pointwiseSplitsRows(const Graph &graph, NodeId node) {
  ShapeRef y = graph.shape({node, 0});
  return graph.getInt(node, AttrName::Groups, 1) == 1 && y[1].isStatic() &&
         y[1].size() < kMinSplitChannels && y[2].isStatic() && y[2].size() > 1 &&
         isPointwise(graph, node);
}

/// Whether `value` is the result of a convolution of one image that splits
/// its rows, of an elementwise epilogue of one, or a concat of such results
/// (SqueezeNet's fire modules).
bool producedByRowSplit(const Graph &graph, ValueRef value) {
  for (int depth = 0; depth < 4 && isElementwiseOp(graph.kind(value.node)); ++depth)
    value = graph.operands(value.node)[0];
  switch (graph.kind(value.node)) {
  case OpKind::Conv2D:
    return pointwiseSplitsRows(graph, value.node) || splitsRowsWithHalo(graph, value.node);
  case OpKind::Concat:
    return std::ranges::all_of(graph.operands(value.node), [&](ValueRef part) {
      return part.node != value.node && graph.kind(part.node) != OpKind::Concat &&
             producedByRowSplit(graph, part);
    });
  default:
    return false;
  }
}

/// The axis of a head's result to split when not axis 0, or -1: the output
/// channels of a convolution (groups of 1, or depthwise; the rows of a
/// pointwise one of few channels) or of a pooling of one image, the columns of a matrix product or
/// linear by one matrix (weights) whose rows are fewer than its columns or unknown. Operands that
/// follow it are entered in `axes`.
int innerSplitAxis(const Graph &graph, NodeId node, bool library, SplitAxes &axes,
                   bool &takesSliceOrigin) {
  auto operands = graph.operands(node);
  ShapeRef y = graph.shape({node, 0});
  OpKind kind = graph.kind(node);
  if (kind == OpKind::MaxPool2D || kind == OpKind::AvgPool2D) {
    if (y[0].isStatic() && y[0].size() > 1)
      return -1;
    // The library's pooling of a convolution that splits its rows splits
    // its rows too, so that each thread reads the rows it wrote.
    if (library && y[2].isStatic() && y[2].size() >= kMinSplitRows &&
        producedByRowSplit(graph, operands[0])) {
      axes[operands[0]] = -1;
      takesSliceOrigin = true;
      return 2;
    }
    axes[operands[0]] = 1;
    return 1;
  }
  // The unsplit operand must be a value of its own (not matmul(x, x)).
  for (size_t i = 1; i < operands.size(); ++i)
    if (operands[i] == operands[0])
      return -1;
  if (kind == OpKind::Conv2D) {
    // Images split better (each padded once), when there are enough.
    int64_t groups = graph.getInt(node, AttrName::Groups, 1);
    if (y[0].isStatic() && y[0].size() > 1)
      return -1;
    // A depthwise layer (one input and one output channel per group) splits
    // its channels: the library reads the groups from the slice.
    bool depthwise = groups > 1 && graph.shape(operands[0])[1] == Dim::fixed(groups) &&
                     y[1] == Dim::fixed(groups);
    if (groups != 1 && !depthwise)
      return -1;
    // A pointwise layer of few channels (MobileNet's projections) splits
    // its rows instead.
    if (pointwiseSplitsRows(graph, node)) {
      for (size_t i = 1; i < operands.size(); ++i)
        axes[operands[i]] = -1;
      axes[operands[0]] = 2;
      return 2;
    }
    if (library && splitsRowsWithHalo(graph, node)) {
      for (ValueRef v : operands)
        axes[v] = -1;
      takesSliceOrigin = true;
      return 2;
    }
    for (size_t i = 1; i < operands.size(); ++i) // Weights and bias.
      axes[operands[i]] = 0;
    axes[operands[0]] = depthwise ? 1 : -1;
    return 1;
  }
  bool matmul = kind == OpKind::MatMul;
  if ((!matmul && kind != OpKind::Linear) || y.size() < 2 ||
      graph.shape(operands[1]).size() != 2 ||
      (matmul && graph.getBool(node, AttrName::TransposeA, false)))
    return -1;
  Dim columns = y.back();
  std::optional<int64_t> rows = staticElementCount(y.first(y.size() - 1));
  if (!columns.isStatic() || columns.size() < kMinSplitColumns ||
      (isFullyStatic(y.first(y.size() - 1)) && rows && *rows >= columns.size()))
    return -1;
  bool rowsOfB = !matmul || graph.getBool(node, AttrName::TransposeB, false);
  axes[operands[1]] = rowsOfB ? 0 : 1;
  if (operands.size() > 2) // Linear's bias.
    axes[operands[2]] = 0;
  axes[operands[0]] = -1;
  return static_cast<int>(y.size()) - 1;
}

/// The axis a kernel splits among axes [0, end) of `shape` but `skipped`
/// (a normalized axis): 0, unless its extent may be 1 (a batch of one, or
/// an exported model's symbolic batch bound to 1) and a later one is static
/// and wider; then the first such (an image's channels, which the
/// convolution that wrote them split too; an attention's heads, whose
/// softmax and products ran whole splitting a batch of one).
int wideAxis(ShapeRef shape, size_t end, size_t skipped) {
  if (shape[0].isStatic() && shape[0].size() > 1)
    return 0;
  for (size_t d = 1; d < end; ++d)
    if (d != skipped && shape[d].isStatic() && shape[d].size() > 1)
      return static_cast<int>(d);
  return 0;
}

/// wideAxis over all of an elementwise kernel's domain.
int wideAxis(ShapeRef domain) { return wideAxis(domain, domain.size(), domain.size()); }

/// Split axes for a single non-elementwise head node, and the axis its
/// result splits, or -1 when it cannot be split.
int splitHead(const Graph &graph, NodeId node, SplitAxes &axes) {
  auto operands = graph.operands(node);
  ValueRef y{node, 0};
  size_t rank = graph.shape(y).size();
  if (rank == 0)
    return -1;
  auto axisAttr = [&](int64_t dflt, size_t r) {
    return *normalizeAxis(graph.getInt(node, AttrName::Axis, dflt), r);
  };
  switch (graph.kind(node)) {
  case OpKind::Linear:
  case OpKind::Conv2D:
  case OpKind::MaxPool2D:
  case OpKind::AvgPool2D:
  case OpKind::Copy:
  case OpKind::Move:
  case OpKind::Contiguous:
    axes[operands[0]] = 0;
    return 0;
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm: { // Rows are independent unless the axis is 0.
    size_t axis = axisAttr(-1, rank);
    if (axis == 0)
      return -1;
    bool softmax = graph.kind(node) == OpKind::Softmax || graph.kind(node) == OpKind::LogSoftmax;
    int rows = wideAxis(graph.shape(y), softmax ? rank : axis, axis);
    axes[operands[0]] = rows;
    return rows;
  }
  case OpKind::MatMul: {
    ValueRef a = operands[0], b = operands[1];
    size_t ra = graph.shape(a).size(), rb = graph.shape(b).size();
    size_t batch = rank - (ra >= 2) - (rb >= 2);
    if (batch > 0) {
      int split = wideAxis(graph.shape(y), batch, batch);
      // Operands with the full batch rank and a real (unpinned) split axis.
      for (ValueRef v : {a, b}) {
        size_t matrix = graph.shape(v).size() >= 2 ? 2 : 1;
        ShapeRef s = graph.shape(v);
        if (s.size() - matrix == batch &&
            !(s[split] == Dim::fixed(1) && graph.shape(y)[split] != Dim::fixed(1)))
          axes[v] = split;
      }
      return split;
    }
    if (ra < 2)
      return -1; // Axis 0 of the result is n.
    axes[a] = graph.getBool(node, AttrName::TransposeA, false) ? 1 : 0;
    return 0;
  }
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ArgMax:
  case OpKind::ArgMin: {
    ValueRef x = operands[0];
    size_t inRank = graph.shape(x).size();
    std::vector<bool> reduced(inRank, true);
    OpKind k = graph.kind(node);
    if (k == OpKind::ArgMax || k == OpKind::ArgMin) {
      reduced.assign(inRank, false);
      reduced[axisAttr(0, inRank)] = true;
    } else if (const Attribute *a = graph.findAttr(node, AttrName::Axes)) {
      reduced.assign(inRank, false);
      for (int64_t axis : graph.intsAttr(*a))
        reduced[*normalizeAxis(axis, inRank)] = true;
    }
    // The result's axes are x's that are kept (all of them, the reduced
    // ones of extent 1, with keepdims). Its wide axis: a global pooling of
    // one image splits its channels, as the layer that wrote them did
    // (EfficientNet-B0's squeeze-and-excitation means ran whole, reading
    // half their input from the other core: 3x as long as on one thread).
    bool keepDims = graph.getBool(node, AttrName::KeepDims, false);
    std::vector<int> kept;
    for (size_t d = 0; d < inRank; ++d)
      if (keepDims || !reduced[d])
        kept.push_back(static_cast<int>(d));
    int axis = wideAxis(graph.shape(y));
    if (reduced[kept[axis]])
      return -1;
    axes[x] = kept[axis];
    return axis;
  }
  default: // Data movement reads at computed positions.
    return -1;
  }
}

/// An attention kernel's split: its result's first batch axis wider than 1
/// (an attention's heads), every operand with that axis along it; else its
/// query rows, Q's and the mask's with them (K and V read whole).
void splitAttention(const Graph &graph, const AttentionChain &chain, KernelSpec &spec) {
  ShapeRef out = graph.shape({chain.weighted, 0});
  size_t rank = out.size();
  int axis = rank > 2 ? wideAxis(out, rank - 2, rank - 2) : 0;
  bool rows = rank == 2 || out[axis] == Dim::fixed(1);
  if (rows) {
    axis = static_cast<int>(rank) - 2;
    if (chain.q == chain.k || chain.q == chain.v || chain.q == chain.maskValue)
      return; // Its rows would be split for Q and read whole for the other.
  }
  for (KernelArg &arg : spec.args) {
    ShapeRef shape = graph.shape(arg.value);
    int aligned = axis - static_cast<int>(rank - shape.size());
    bool mask = chain.mask && arg.value == chain.maskValue;
    if (arg.isResult) {
      arg.splitAxis = axis;
    } else if (!rows &&
               (arg.value == chain.q || arg.value == chain.k || arg.value == chain.v || mask)) {
      bool batchAxis = aligned >= 0 && aligned < static_cast<int>(shape.size()) - 2;
      arg.splitAxis = batchAxis && shape[aligned] == out[axis] ? aligned : -1;
    } else if (rows && arg.value == chain.q) {
      bool transposed = graph.getBool(chain.scores, AttrName::TransposeA, false);
      arg.splitAxis = static_cast<int>(shape.size()) - (transposed ? 1 : 2);
    } else if (rows && mask) {
      arg.splitAxis = aligned >= 0 && shape[aligned] == out[axis] ? aligned : -1;
    }
  }
  spec.splittable = true;
}

/// A pooled convolution's split: a batch's images, or one image's pooled
/// rows, each slice reading the whole image (its convolution rows and
/// their halo) from its slice origin; too few rows do not split.
void splitPooledConv(const Graph &graph, const PooledConv &pooled, KernelSpec &spec) {
  ShapeRef y = graph.shape({pooled.pool, 0});
  ValueRef x = graph.operands(pooled.conv)[0];
  bool images = y[0].isStatic() && y[0].size() > 1;
  if (!images && (!y[2].isStatic() || y[2].size() < kMinSplitRows))
    return;
  for (KernelArg &arg : spec.args)
    arg.splitAxis = arg.isResult ? (images ? 0 : 2) : images && arg.value == x ? 0 : -1;
  spec.takesSliceOrigin = !images;
  spec.splittable = true;
}

KernelSpec formKernel(const Graph &graph, const std::vector<NodeId> &nodes, std::string symbol,
                      std::string librarySymbol) {
  KernelSpec spec;
  spec.symbol = std::move(symbol);
  spec.librarySymbol = std::move(librarySymbol);
  spec.nodes = nodes;
  auto inGroup = [&](NodeId n) {
    return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
  };
  NodeId root = nodes.back();
  size_t maxArgs = graph.numResults(root);
  for (NodeId n : nodes)
    maxArgs += graph.operands(n).size();
  spec.args.reserve(maxArgs);
  for (NodeId n : nodes)
    for (ValueRef v : graph.operands(n)) {
      bool seen = std::any_of(spec.args.begin(), spec.args.end(),
                              [&](const KernelArg &a) { return a.value == v; });
      if (!inGroup(v.node) && !seen)
        spec.args.push_back({v, false, -1, isAlwaysContiguous(graph, v)});
    }
  for (NodeId n : nodes)
    if (graph.kind(n) == OpKind::WriteSlice)
      if (Dim offset = graph.dimsAttr(*graph.findAttr(n, AttrName::Offset))[0];
          offset.isSymbolic())
        spec.symbols.push_back(offset.symbolId());
  for (uint32_t r = 0; r < graph.numResults(root); ++r)
    spec.args.push_back({{root, r}, true, -1, true});

  if (std::optional<AttentionChain> chain = attentionOfKernel(graph, nodes)) {
    splitAttention(graph, *chain, spec);
    return spec;
  }
  if (std::optional<PooledConv> pooled = pooledConvOfKernel(graph, nodes)) {
    splitPooledConv(graph, *pooled, spec);
    return spec;
  }
  SplitAxes axes;
  NodeId head = nodes.front();
  if (nodes.size() > 1 && !isElementwiseOp(graph.kind(root))) {
    // Only a prologue puts a non-elementwise node last.
    // A reduction with a prologue: its input is computed from the prologue's
    // inputs, which follow the input's split axis where they align with it.
    int axis = graph.numResults(root) != 1 || graph.shape({root, 0}).empty()
                   ? -1
                   : splitHead(graph, root, axes);
    if (axis < 0)
      return spec;
    ValueRef x = graph.operands(root)[0];
    for (KernelArg &arg : spec.args) {
      int *entered = axes.find(arg.value);
      arg.splitAxis = arg.isResult ? axis
                      : entered    ? *entered
                                   : alignedAxis(graph, arg.value, graph.shape(x), axes[x]);
    }
    spec.splittable = true;
    return spec;
  }
  bool elementwiseHead = isElementwiseOp(graph.kind(head));
  ShapeRef domain = graph.shape({root, 0});
  if (domain.empty() || graph.numResults(root) != 1)
    return spec;
  // An epilogue keeps the head's shape for an inner split to carry over.
  bool sameShape = std::ranges::equal(graph.shape({head, 0}), domain);
  int axis =
      elementwiseHead || !sameShape
          ? -1
          : innerSplitAxis(graph, head, !spec.librarySymbol.empty(), axes, spec.takesSliceOrigin);
  if (axis < 0) {
    axis = elementwiseHead ? wideAxis(domain) : splitHead(graph, head, axes);
    // An epilogue of another shape splits axis 0 or nothing.
    if (axis < 0 || (axis > 0 && !elementwiseHead && !sameShape))
      return spec;
  }
  for (KernelArg &arg : spec.args) {
    if (arg.isResult) {
      arg.splitAxis = axis;
    } else if (int *entered = axes.find(arg.value)) {
      arg.splitAxis = *entered;
    } else if (elementwiseHead || arg.value.node != head) {
      // Operands of the elementwise part broadcast into the result.
      bool readByHead = false;
      if (!elementwiseHead)
        for (ValueRef v : graph.operands(head))
          readByHead |= v == arg.value;
      arg.splitAxis = readByHead ? -1 : alignedAxis(graph, arg.value, domain, axis);
    }
  }
  spec.splittable = true;
  return spec;
}
} // namespace

std::vector<KernelSpec> fuel::formKernels(const Graph &graph,
                                          const ExecutionPlan &plan) {
  // Steps by their group's root step, in plan order.
  Buckets<size_t> members(
      plan.steps.size(), plan.steps.size(), [&](size_t s) { return plan.rootOf[s]; },
      [](size_t s) { return s; });
  size_t numKernels = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    numKernels += plan.launchesKernel(s);
  std::vector<KernelSpec> kernels;
  kernels.reserve(numKernels);
  std::vector<NodeId> nodes;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (!plan.launchesKernel(s))
      continue;
    nodes.clear();
    for (size_t m : members[s])
      nodes.push_back(plan.steps[m].node);
    moveHeadFirst(graph, nodes);
    // A library kernel can only be the group's first node (its head), an
    // attention chain's first product (its library's attention entry), or
    // a pooled convolution's (its library's pooled entry).
    std::string librarySymbol;
    bool attention = attentionOfKernel(graph, nodes).has_value();
    bool pooled = !attention && pooledConvOfKernel(graph, nodes).has_value();
    for (size_t m : members[s])
      if (const PlannedStep &step = plan.steps[m]; step.node == nodes.front() && step.capsule)
        librarySymbol = attention ? step.capsule->attentionSymbol
                        : pooled  ? step.capsule->pooledSymbol
                                  : step.capsule->symbol;
    kernels.push_back(formKernel(graph, nodes, "fuel_k" + std::to_string(kernels.size()),
                                 std::move(librarySymbol)));
  }
  return kernels;
}
