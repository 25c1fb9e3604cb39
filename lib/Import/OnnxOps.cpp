//===- OnnxOps.cpp - Mapping ONNX operators to IR ops ---------------------===//
//
// One handler per ONNX op type (opsets 11-21, reading the signatures that
// changed: Split's num_outputs and Pad's axes (18), AveragePool's dilations
// (19), GroupNormalization's per-channel scale (21), the bitwise ops (18,
// on and, or and not, which are bitwise on integers); some ops from older
// opsets, firstOpset). A handler builds the IR for
// the current node through the Importer, or reports what it cannot import
// (an attribute value, a non-constant shape input, an unused-but-requested
// output) and returns false.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include "fuel/IR/Graph.h"
#include "fuel/Support/Float16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace fuel;
using namespace fuel::onnximport;

namespace {

/// Variadic Sum/Max/Min as a chain of binary ops.
bool chain(Importer &im, OpKind kind) {
  if (im.numInputs() == 1) {
    im.bind(0, im.input(0));
    return true;
  }
  ValueRef acc = im.input(0);
  for (size_t i = 1; i < im.numInputs(); ++i) {
    std::optional<NodeId> n = im.add(kind, {acc, im.input(i)}, {},
                                     i + 1 == im.numInputs() ? "" : "." + std::to_string(i));
    if (!n)
      return false;
    acc = {*n, 0};
  }
  im.bind(0, acc);
  return true;
}

bool reduce(Importer &im, OpKind kind) {
  // ReduceSum takes axes as an input from opset 13; the others keep the
  // attribute through opset 17.
  std::optional<std::vector<int64_t>> axes = axesOf(im, 1);
  if (!axes)
    return false;
  bool keep = im.attrInt("keepdims", 1) != 0;
  if (axes->empty() && im.attrInt("noop_with_empty_axes", 0)) {
    im.bind(0, im.input(0));
    return true;
  }
  return emit(im, kind, {im.input(0)}, [&](Graph &g) {
    if (!axes->empty())
      g.addIntsAttr(AttrName::Axes, *axes);
    g.addBoolAttr(AttrName::KeepDims, keep);
  });
}

bool argReduce(Importer &im, OpKind kind) {
  int64_t axis = im.attrInt("axis", 0);
  bool keep = im.attrInt("keepdims", 1) != 0;
  auto attrs = [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, axis);
    g.addBoolAttr(AttrName::KeepDims, keep);
  };
  if (!im.attrInt("select_last_index", 0))
    return direct(im, kind, attrs);
  // The last extreme is the first one of the reversed axis: n - 1 - that.
  ShapeRef shape = im.graph.shape(im.input(0));
  std::optional<unsigned> a = normalizeAxis(axis, shape.size());
  if (!a || !shape[*a].isStatic())
    return im.unsupported("select_last_index=1 needs a static extent on the axis");
  int64_t last = shape[*a].size() - 1; // (Adding nodes invalidates `shape`.)
  Composer k(im);
  ValueRef reversed = k.op(OpKind::Slice, {k.x}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{-1});
    g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
    g.addIntsAttr(AttrName::Steps, std::vector<int64_t>{-1});
    g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{static_cast<int64_t>(*a)});
  });
  ValueRef first = k.op(kind, {reversed}, attrs);
  return k.finish(k.op(OpKind::Sub, {k.c(static_cast<double>(last), DType::I64), first}));
}

/// One where x is the first maximum along `axis`, else 0: the argmax
/// compared with the axis's indices.
bool hardmax(Importer &im) {
  ShapeRef shape = im.graph.shape(im.input(0));
  std::optional<unsigned> a = normalizeAxis(im.attrInt("axis", -1), shape.size());
  if (!a || !shape[*a].isStatic())
    return im.unsupported("the axis must exist and have a static extent");
  Composer k(im);
  int64_t n = shape[*a].size();
  KnownTensor indices = positions(n, shape.size() - *a - 1, DType::I64);
  ValueRef first = k.op(OpKind::ArgMax, {k.x}, [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, *a);
    g.addBoolAttr(AttrName::KeepDims, true);
  });
  return k.finish(k.cast(k.op(OpKind::Eq, {first, k.constant(indices)}), k.type));
}

bool softmax(Importer &im, OpKind kind) {
  size_t rank = im.graph.shape(im.input(0)).size();
  int64_t axis = im.attrInt("axis", im.opset >= 13 ? -1 : 1);
  if (axis < 0)
    axis += static_cast<int64_t>(rank);
  // Before opset 13 the input is flattened to 2-D at `axis`; that equals a
  // softmax over one axis only when it is the last.
  if (im.opset < 13 && axis != static_cast<int64_t>(rank) - 1)
    return im.unsupported("opset < 13 softmax over axes " + std::to_string(axis) +
                          ".. (flattened) is not supported");
  return direct(im, kind, [&](Graph &g) { g.addIntAttr(AttrName::Axis, axis); });
}

bool reshapeTo(Importer &im, ValueRef x, std::vector<Dim> target) {
  return emit(im, OpKind::Reshape, {x},
                                   [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, target); });
}

/// The -1 extent of a reshape of `in` to `target`: the input's element
/// count over the others', when that is a product (`4*B`).
std::optional<Dim> inferredExtent(SymbolTable &symbols, ShapeRef in, ShapeRef target) {
  SymbolProduct total{1, {}};
  for (Dim d : in) {
    SymbolProduct p = symbols.expand(d);
    total.factor *= p.factor;
    total.symbols.insert(total.symbols.end(), p.symbols.begin(), p.symbols.end());
  }
  for (Dim d : target) {
    if (d.isInferred())
      continue;
    SymbolProduct p = symbols.expand(d);
    if (p.factor == 0 || total.factor % p.factor != 0)
      return std::nullopt;
    total.factor /= p.factor;
    for (uint32_t s : p.symbols) {
      auto it = std::find(total.symbols.begin(), total.symbols.end(), s);
      if (it == total.symbols.end())
        return std::nullopt;
      total.symbols.erase(it);
    }
  }
  return symbols.product(total);
}

bool reshape(Importer &im) {
  std::optional<std::vector<Dim>> target = im.shapeInput(1, "the target shape");
  if (!target)
    return false;
  // Opset 14's allowzero: a 0 is an empty extent, not a copy.
  bool allowZero = im.attrInt("allowzero", 0) != 0;
  std::vector<Dim> in(im.graph.shape(im.input(0)).begin(), im.graph.shape(im.input(0)).end());
  for (size_t i = 0; i < target->size(); ++i)
    if ((*target)[i] == Dim::fixed(0) && i < in.size() && !allowZero)
      (*target)[i] = in[i]; // 0 copies the input's extent.
  auto inferred =
      std::find_if(target->begin(), target->end(), [](Dim d) { return d.isInferred(); });
  if (inferred != target->end())
    if (std::optional<Dim> d = inferredExtent(im.graph.symbols(), in, *target))
      *inferred = *d;
  return reshapeTo(im, im.input(0), *target);
}

bool flatten(Importer &im) {
  ShapeRef in = im.graph.shape(im.input(0));
  int64_t axis = im.attrInt("axis", 1);
  if (axis < 0)
    axis += static_cast<int64_t>(in.size());
  int64_t outer = 1, inner = 1;
  bool outerStatic = true, innerStatic = true;
  for (size_t d = 0; d < in.size(); ++d) {
    bool isOuter = static_cast<int64_t>(d) < axis;
    if (!in[d].isStatic())
      (isOuter ? outerStatic : innerStatic) = false;
    else
      (isOuter ? outer : inner) *= in[d].size();
  }
  if (!outerStatic && !innerStatic)
    return im.unsupported("both sides of the flatten axis have symbolic extents");
  return reshapeTo(im, im.input(0),
                   {outerStatic ? Dim::fixed(outer) : Dim::inferred(),
                    innerStatic ? Dim::fixed(inner) : Dim::inferred()});
}

bool squeezeLike(Importer &im, OpKind kind) {
  std::optional<std::vector<int64_t>> axes = axesOf(im, 1);
  if (!axes)
    return false;
  return emit(im, kind, {im.input(0)}, [&](Graph &g) {
    if (!axes->empty())
      g.addIntsAttr(AttrName::Axes, *axes);
  });
}

bool slice(Importer &im) {
  const KnownTensor *starts = constInts(im, 1, "starts");
  const KnownTensor *ends = starts ? constInts(im, 2, "ends") : nullptr;
  if (!ends)
    return false;
  std::vector<int64_t> axes, steps;
  if (im.hasInput(3)) {
    const KnownTensor *t = constInts(im, 3, "axes");
    if (!t)
      return false;
    axes = t->ints();
  }
  if (im.hasInput(4)) {
    const KnownTensor *t = constInts(im, 4, "steps");
    if (!t)
      return false;
    steps = t->ints();
  }
  return emit(im, OpKind::Slice, {im.input(0)}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Starts, starts->ints());
    g.addIntsAttr(AttrName::Ends, ends->ints());
    if (!axes.empty())
      g.addIntsAttr(AttrName::Axes, axes);
    if (!steps.empty())
      g.addIntsAttr(AttrName::Steps, steps);
  });
}

bool split(Importer &im) {
  std::vector<int64_t> sizes = im.attrInts("split");
  if (im.hasInput(1)) {
    const KnownTensor *t = constInts(im, 1, "split");
    if (!t)
      return false;
    sizes = t->ints();
  }
  unsigned parts = static_cast<unsigned>(im.current().output_size());
  // Opset 18: `num_outputs` chunks of ceil(extent / n), the last smaller.
  if (int64_t n = im.attrInt("num_outputs", 0); n > 0 && sizes.empty()) {
    if (n != parts)
      return im.unsupported("num_outputs is " + std::to_string(n) + " but the node has " +
                            std::to_string(parts) + " outputs");
    ShapeRef shape = im.graph.shape(im.input(0));
    std::optional<unsigned> axis = normalizeAxis(im.attrInt("axis", 0), shape.size());
    if (!axis)
      return im.unsupported("axis is out of range");
    if (shape[*axis].isStatic() && shape[*axis].size() % n) {
      int64_t extent = shape[*axis].size(), chunk = (extent + n - 1) / n;
      if (chunk * (n - 1) >= extent)
        return im.unsupported("an extent of " + std::to_string(extent) +
                              " cannot be split into " + std::to_string(n) + " chunks");
      sizes.assign(static_cast<size_t>(n - 1), chunk);
      sizes.push_back(extent - chunk * (n - 1));
    }
  }
  std::optional<NodeId> n = im.add(OpKind::Split, {im.input(0)}, [&](Graph &g) {
    g.addIntAttr(AttrName::Axis, im.attrInt("axis", 0));
    if (sizes.empty())
      g.addIntAttr(AttrName::Num, parts);
    else
      g.addIntsAttr(AttrName::Sizes, sizes);
  }, "", parts);
  if (!n)
    return false;
  for (unsigned r = 0; r < parts; ++r)
    im.bind(r, {*n, r});
  return true;
}

bool pad(Importer &im) {
  const KnownTensor *pads = constInts(im, 1, "pads");
  if (!pads)
    return false;
  std::vector<int64_t> p = pads->ints();
  if (im.hasInput(3)) { // Opset 18: pads for these axes only.
    const KnownTensor *axes = constInts(im, 3, "axes");
    if (!axes)
      return false;
    size_t rank = im.graph.shape(im.input(0)).size();
    std::vector<int64_t> listed = axes->ints(), full(2 * rank, 0);
    if (p.size() != 2 * listed.size())
      return im.unsupported("pads has " + std::to_string(p.size()) + " values for " +
                            std::to_string(listed.size()) + " axes");
    for (size_t i = 0; i < listed.size(); ++i) {
      std::optional<unsigned> axis = normalizeAxis(listed[i], rank);
      if (!axis)
        return im.unsupported("axis " + std::to_string(listed[i]) + " is out of range");
      full[*axis] = p[i];
      full[rank + *axis] = p[listed.size() + i];
    }
    p = full;
  }
  double value = 0;
  if (im.hasInput(2)) {
    std::optional<double> v = constScalar(im, 2, "the constant value");
    if (!v)
      return false;
    value = *v;
  }
  for (int64_t v : p)
    if (v < 0)
      return im.unsupported("negative pads (cropping) are not supported");
  std::string mode = im.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return im.unsupported("mode '" + mode + "' is not supported");
  return emit(im, OpKind::Pad, {im.input(0)}, [&](Graph &g) {
    g.addIntsAttr(AttrName::Pads, p);
    g.addStringAttr(AttrName::Mode, mode);
    if (mode == "constant")
      g.addFloatAttr(AttrName::Value, value);
  });
}

bool expand(Importer &im) {
  std::optional<std::vector<Dim>> dims = im.shapeInput(1, "the shape");
  if (!dims)
    return false;
  return emit(im, OpKind::Expand, {im.input(0)},
              [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, *dims); });
}

/// Of symbolic extents (OnnxFold.cpp computes known ones): the value
/// broadcast to them.
bool constantOfShape(Importer &im) {
  std::optional<std::vector<Dim>> dims = im.shapeInput(0, "the shape");
  if (!dims)
    return false;
  KnownTensor value{DType::F32, {}, std::string(4, '\0')};
  if (const onnx::AttributeProto *a = im.attr("value")) {
    Expected<KnownTensor> decoded = decodeTensor(a->t());
    if (!decoded)
      return im.unsupported(decoded.error());
    value = std::move(*decoded);
  }
  value.shape.clear();
  value.bytes.resize(dtypeByteSize(value.dtype));
  // No Composer: input 0 has no IR value, only extents.
  return emit(im, OpKind::BroadcastTo, {im.addConstant(value, ".value")},
              [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, *dims); });
}

bool constant(Importer &im) {
  KnownTensor t;
  if (const onnx::AttributeProto *a = im.attr("value")) {
    Expected<KnownTensor> decoded = decodeTensor(a->t());
    if (!decoded)
      return im.unsupported(decoded.error());
    t = std::move(*decoded);
  } else if (const onnx::AttributeProto *a = im.attr("value_float")) {
    t = scalar(a->f(), DType::F32);
  } else if (const onnx::AttributeProto *a = im.attr("value_int")) {
    t = scalar(static_cast<double>(a->i()), DType::I64);
  } else if (const onnx::AttributeProto *a = im.attr("value_floats")) {
    t = {DType::F32, {a->floats_size()}, {}};
    for (float v : a->floats())
      t.bytes.append(reinterpret_cast<const char *>(&v), 4);
  } else if (const onnx::AttributeProto *a = im.attr("value_ints")) {
    t = {DType::I64, {a->ints_size()}, {}};
    for (int64_t v : a->ints())
      t.bytes.append(reinterpret_cast<const char *>(&v), 8);
  } else {
    return im.unsupported("only tensor, float(s) and int(s) constants are supported");
  }
  im.bindConstant(std::move(t));
  return true;
}

bool matMul(Importer &im) {
  if (std::optional<ValueRef> product = quantizedProduct(im, false)) {
    im.bind(0, *product);
    return true;
  }
  return direct(im, OpKind::MatMul);
}

bool gemm(Importer &im) {
  float alpha = im.attrFloat("alpha", 1), beta = im.attrFloat("beta", 1);
  bool transA = im.attrInt("transA", 0) != 0, transB = im.attrInt("transB", 0) != 0;
  std::optional<ValueRef> product;
  if (!transA)
    product = quantizedProduct(im, transB);
  if (!product) {
    std::optional<NodeId> mm = im.add(
        OpKind::MatMul, {im.input(0), im.input(1)},
        [&](Graph &g) {
          g.addBoolAttr(AttrName::TransposeA, transA);
          g.addBoolAttr(AttrName::TransposeB, transB);
        },
        im.hasInput(2) || alpha != 1 ? ".matmul" : "");
    if (!mm)
      return false;
    product = ValueRef{*mm, 0};
  }
  ValueRef y = *product;
  DType t = im.graph.dtype(y);
  if (alpha != 1) {
    std::optional<NodeId> s = im.add(OpKind::Mul, {y, im.addConstant(scalar(alpha, t), ".alpha")},
                                     {}, im.hasInput(2) ? ".scaled" : "");
    if (!s)
      return false;
    y = {*s, 0};
  }
  if (im.hasInput(2)) {
    ValueRef c = im.input(2);
    if (beta != 1) {
      std::optional<NodeId> s = im.add(OpKind::Mul, {c, im.addConstant(scalar(beta, t), ".beta")},
                                       {}, ".c");
      if (!s)
        return false;
      c = {*s, 0};
    }
    std::optional<NodeId> sum = im.add(OpKind::Add, {y, c});
    if (!sum)
      return false;
    y = {*sum, 0};
  }
  im.bind(0, y);
  return true;
}

bool clip(Importer &im) {
  double lo = -INFINITY, hi = INFINITY;
  if (im.attr("min") || im.attr("max")) { // opset < 11 style attributes
    lo = im.attrFloat("min", -INFINITY);
    hi = im.attrFloat("max", INFINITY);
  }
  if ((im.hasInput(1) && !im.constantInput(1)) || (im.hasInput(2) && !im.constantInput(2))) {
    // Bounds computed at run time: max(x, min), then min(that, max).
    Composer k(im);
    ValueRef y = k.x;
    if (im.hasInput(1))
      y = k.op(OpKind::Max, {y, im.input(1)});
    if (im.hasInput(2))
      y = k.op(OpKind::Min, {y, im.input(2)});
    return k.finish(y);
  }
  for (size_t i : {1, 2}) {
    if (!im.hasInput(i))
      continue;
    std::optional<double> bound = constScalar(im, i, i == 1 ? "min" : "max");
    if (!bound)
      return false;
    (i == 1 ? lo : hi) = *bound;
  }
  if (std::isinf(lo) && std::isinf(hi)) {
    im.bind(0, im.input(0));
    return true;
  }
  return emit(im, OpKind::Clamp, {im.input(0)}, [&](Graph &g) {
    if (!std::isinf(lo))
      g.addFloatAttr(AttrName::MinValue, lo);
    if (!std::isinf(hi))
      g.addFloatAttr(AttrName::MaxValue, hi);
  });
}

bool cast(Importer &im) {
  std::optional<DType> to = dtypeOfOnnx(im.attrInt("to", 0));
  if (!to)
    return im.unsupported("cast to element type " + std::to_string(im.attrInt("to", 0)) +
                          " is not supported");
  return direct(im, OpKind::Cast, [&](Graph &g) { g.addDTypeAttr(AttrName::To, *to); });
}

bool shapeOf(Importer &im) {
  ShapeRef s = im.graph.shape(im.input(0));
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = im.attrInt("start", 0), end = im.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SymbolicInts extents{DType::I64, false, {}};
  for (int64_t d = start; d < end; ++d)
    extents.elements.push_back(s[d]);
  im.bindSymbolic(std::move(extents)); // A constant when every extent is static.
  return true;
}

bool size(Importer &im) { // The element count, as an int64 scalar.
  SymbolProduct count{1, {}};
  for (Dim d : im.graph.shape(im.input(0))) {
    SymbolProduct p = im.graph.symbols().expand(d);
    count.factor *= p.factor;
    count.symbols.insert(count.symbols.end(), p.symbols.begin(), p.symbols.end());
  }
  std::optional<Dim> d = im.graph.symbols().product(count);
  if (!d) // An empty tensor with symbols: 0 elements, whatever they are.
    d = Dim::fixed(0);
  im.bindSymbolic({DType::I64, true, {*d}});
  return true;
}

bool identity(Importer &im) {
  im.bind(0, im.input(0));
  return true;
}

/// Inference, or training with a ratio of 0 (a positive ratio drops values
/// at random): the output is the input, the mask (when read) all true.
bool dropout(Importer &im) {
  if (im.hasInput(2)) {
    std::optional<double> training = constScalar(im, 2, "training_mode");
    if (!training)
      return false;
    std::optional<double> ratio = 0.5; // The default.
    if (*training != 0 && im.hasInput(1) && !(ratio = constScalar(im, 1, "the ratio")))
      return false;
    if (*training != 0 && *ratio != 0)
      return im.unsupported("training mode with a ratio above 0 (random dropout) is not "
                            "supported");
  }
  im.bind(0, im.input(0));
  if (!im.outputUsed(1))
    return true;
  ShapeRef shape = im.graph.shape(im.input(0));
  std::vector<Dim> dims(shape.begin(), shape.end());
  Composer k(im);
  ValueRef mask = k.op(OpKind::BroadcastTo, {k.c(1, DType::Bool)},
                       [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, dims); });
  return k.finish(mask, 1);
}

/// Pow of mixed dtypes has the base's: an integer exponent is cast to a
/// float base's dtype; an integer base with a float exponent is raised in
/// the exponent's dtype and truncated back, as the ONNX reference does.
bool power(Importer &im) {
  DType base = im.graph.dtype(im.input(0)), exponent = im.graph.dtype(im.input(1));
  if (base == exponent)
    return direct(im, OpKind::Pow);
  Composer k(im);
  if (isFloat(base) || !isFloat(exponent))
    return k.finish(k.op(OpKind::Pow, {k.x, k.cast(im.input(1), base)}));
  ValueRef raised = k.op(OpKind::Pow, {k.cast(k.x, exponent), im.input(1)});
  return k.finish(k.cast(raised, base));
}

/// fmod=1: C's fmod (the dividend's sign); fmod=0: Python's % (the
/// divisor's sign), which ONNX defines on integers only.
bool mod(Importer &im) {
  bool truncated = im.attrInt("fmod", 0) != 0;
  if (!truncated && isFloat(im.graph.dtype(im.input(0))))
    return im.unsupported("fmod=0 on floats is not defined (ONNX requires fmod=1)");
  return direct(im, truncated ? OpKind::Fmod : OpKind::Mod);
}

/// Shape-computing ops whose inputs are not known at import (OnnxFold.cpp
/// computes them when they are).
bool needsConstantInputs(Importer &im) {
  for (size_t i = 0; i < im.numInputs(); ++i)
    if (im.hasInput(i) && !constInts(im, i, "the shape arithmetic's input"))
      return false;
  return im.unsupported("this " + im.current().op_type() + " cannot be computed at import");
}

/// The reductions ONNX derives from a sum: ReduceL1 (of |x|), ReduceL2
/// (sqrt of the sum of squares), ReduceSumSquare, ReduceLogSum (log of the
/// sum) and ReduceLogSumExp (log of the sum of exp(x); as the definition
/// reads, without max-shifting).
bool derivedReduce(Importer &im) {
  const std::string &type = im.current().op_type();
  Composer k(im);
  bool needsFloat = type == "ReduceL2" || type == "ReduceLogSum" || type == "ReduceLogSumExp";
  if (needsFloat && !k.floatInput())
    return false;
  std::optional<std::vector<int64_t>> axes = axesOf(im, 1);
  if (!axes)
    return false;
  bool keep = im.attrInt("keepdims", 1) != 0;
  ValueRef v = k.x;
  if (type == "ReduceL1")
    v = k.op(OpKind::Abs, {v});
  else if (type == "ReduceL2" || type == "ReduceSumSquare")
    v = k.op(OpKind::Mul, {v, v});
  else if (type == "ReduceLogSumExp")
    v = k.op(OpKind::Exp, {v});
  v = k.op(OpKind::ReduceSum, {v}, [&](Graph &g) {
    if (!axes->empty())
      g.addIntsAttr(AttrName::Axes, *axes);
    g.addBoolAttr(AttrName::KeepDims, keep);
  });
  if (type == "ReduceL2")
    v = k.op(OpKind::Sqrt, {v});
  else if (type == "ReduceLogSum" || type == "ReduceLogSumExp")
    v = k.op(OpKind::Log, {v});
  return k.finish(v);
}

/// x where (row, column) lies in the kept triangle (columns - rows >= k
/// for the upper one, <= k for the lower one), else 0: a constant mask
/// over the last two (static) extents.
bool trilu(Importer &im) {
  ValueRef x = im.input(0);
  ShapeRef s = im.graph.shape(x);
  if (s.size() < 2 || !s[s.size() - 2].isStatic() || !s.back().isStatic())
    return im.unsupported("the last two extents must be static");
  int64_t k = 0;
  if (im.hasInput(1)) {
    std::optional<double> t = constScalar(im, 1, "k");
    if (!t)
      return false;
    k = static_cast<int64_t>(std::clamp(*t, -1e15, 1e15));
  }
  bool upper = im.attrInt("upper", 1) != 0;
  int64_t rows = s[s.size() - 2].size(), cols = s.back().size();
  KnownTensor mask{DType::Bool, {rows, cols}, {}};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.bytes += static_cast<char>(upper ? j - i >= k : j - i <= k);
  ValueRef zero = im.addConstant(scalar(0, im.graph.dtype(x)), ".zero");
  return emit(im, OpKind::Where, {im.addConstant(mask, ".mask"), x, zero});
}

bool castLike(Importer &im) { // A cast to the dtype of input 1.
  DType to = im.graph.dtype(im.input(1));
  return emit(im, OpKind::Cast, {im.input(0)}, [&](Graph &g) { g.addDTypeAttr(AttrName::To, to); });
}

const HandlerTable &handlers() {
  static const HandlerTable table = [] {
    HandlerTable t = {
        {"Add", [](Importer &im) { return direct(im, OpKind::Add); }},
        {"Sub", [](Importer &im) { return direct(im, OpKind::Sub); }},
        {"Mul", [](Importer &im) { return direct(im, OpKind::Mul); }},
        {"Div", [](Importer &im) { return direct(im, OpKind::Div); }},
        {"Pow", power},
        {"Max", [](Importer &im) { return chain(im, OpKind::Max); }},
        {"Min", [](Importer &im) { return chain(im, OpKind::Min); }},
        {"Sum", [](Importer &im) { return chain(im, OpKind::Add); }},
        {"Equal", [](Importer &im) { return direct(im, OpKind::Eq); }},
        {"Less", [](Importer &im) { return direct(im, OpKind::Lt); }},
        {"LessOrEqual", [](Importer &im) { return direct(im, OpKind::Le); }},
        {"Greater", [](Importer &im) { return direct(im, OpKind::Gt); }},
        {"GreaterOrEqual", [](Importer &im) { return direct(im, OpKind::Ge); }},
        {"And", [](Importer &im) { return direct(im, OpKind::And); }},
        {"Or", [](Importer &im) { return direct(im, OpKind::Or); }},
        {"Not", [](Importer &im) { return direct(im, OpKind::Not); }},
        {"Where", [](Importer &im) { return direct(im, OpKind::Where); }},
        {"Neg", [](Importer &im) { return direct(im, OpKind::Neg); }},
        {"Abs", [](Importer &im) { return direct(im, OpKind::Abs); }},
        {"Exp", [](Importer &im) { return direct(im, OpKind::Exp); }},
        {"Log", [](Importer &im) { return direct(im, OpKind::Log); }},
        {"Sqrt", [](Importer &im) { return direct(im, OpKind::Sqrt); }},
        {"Reciprocal", [](Importer &im) { return direct(im, OpKind::Recip); }},
        {"Tanh", [](Importer &im) { return direct(im, OpKind::Tanh); }},
        {"Sigmoid", [](Importer &im) { return direct(im, OpKind::Sigmoid); }},
        {"Relu", [](Importer &im) { return direct(im, OpKind::Relu); }},
        {"Erf", [](Importer &im) { return direct(im, OpKind::Erf); }},
        {"Sin", [](Importer &im) { return direct(im, OpKind::Sin); }},
        {"Cos", [](Importer &im) { return direct(im, OpKind::Cos); }},
        {"Floor", [](Importer &im) { return direct(im, OpKind::Floor); }},
        {"Ceil", [](Importer &im) { return direct(im, OpKind::Ceil); }},
        {"Round", [](Importer &im) { return direct(im, OpKind::Round); }},
        {"Mod", mod},
        {"ReduceL1", derivedReduce},
        {"ReduceL2", derivedReduce},
        {"ReduceSumSquare", derivedReduce},
        {"ReduceLogSum", derivedReduce},
        {"ReduceLogSumExp", derivedReduce},
        {"CastLike", castLike},
        {"Trilu", trilu},
        {"Size", size},
        {"Cast", cast},
        {"Clip", clip},
        {"Identity", identity},
        {"Dropout", dropout},
        {"ConstantOfShape", constantOfShape},
        {"Range", needsConstantInputs},
        {"Hardmax", hardmax},
        {"MatMul", matMul},
        {"Gemm", gemm},
        {"Softmax", [](Importer &im) { return softmax(im, OpKind::Softmax); }},
        {"LogSoftmax", [](Importer &im) { return softmax(im, OpKind::LogSoftmax); }},
        {"ReduceSum", [](Importer &im) { return reduce(im, OpKind::ReduceSum); }},
        {"ReduceMean", [](Importer &im) { return reduce(im, OpKind::ReduceMean); }},
        {"ReduceMax", [](Importer &im) { return reduce(im, OpKind::ReduceMax); }},
        {"ReduceMin", [](Importer &im) { return reduce(im, OpKind::ReduceMin); }},
        {"ReduceProd", [](Importer &im) { return reduce(im, OpKind::ReduceProd); }},
        {"ArgMax", [](Importer &im) { return argReduce(im, OpKind::ArgMax); }},
        {"ArgMin", [](Importer &im) { return argReduce(im, OpKind::ArgMin); }},
        {"Reshape", reshape},
        {"Flatten", flatten},
        {"Transpose",
         [](Importer &im) {
           std::vector<int64_t> perm = im.attrInts("perm");
           if (deferTranspose(im, perm))
             return true;
           return direct(im, OpKind::Transpose, [&](Graph &g) {
             if (!perm.empty())
               g.addIntsAttr(AttrName::Perm, perm);
           });
         }},
        {"Squeeze", [](Importer &im) { return squeezeLike(im, OpKind::Squeeze); }},
        {"Unsqueeze", [](Importer &im) { return squeezeLike(im, OpKind::Unsqueeze); }},
        {"Concat",
         [](Importer &im) {
           return direct(im, OpKind::Concat,
                         [&](Graph &g) { g.addIntAttr(AttrName::Axis, im.attrInt("axis", 0)); });
         }},
        {"Split", split},
        {"Gather",
         [](Importer &im) {
           return direct(im, OpKind::Gather,
                         [&](Graph &g) { g.addIntAttr(AttrName::Axis, im.attrInt("axis", 0)); });
         }},
        {"Slice", slice},
        {"Pad", pad},
        {"Expand", expand},
        {"Constant", constant},
        {"Shape", shapeOf},
    };
    addActivationHandlers(t);
    addLossHandlers(t);
    addTensorHandlers(t);
    addResizeHandlers(t);
    addConvTransposeHandlers(t);
    addEinsumHandlers(t);
    addWindowedHandlers(t);
    addQuantizeHandlers(t);
    addNormalizationHandlers(t);
    addRecurrentHandlers(t);
    addOptimizerHandlers(t);
    addScatterHandlers(t);
    addGridSampleHandlers(t);
    addRoiAlignHandlers(t);
    addStaticSelectHandlers(t);
    addDetHandlers(t);
    addSpectralHandlers(t);
    addControlFlowHandlers(t);
    return t;
  }();
  return table;
}

/// Inputs an op type requires (1 unless listed): handlers rely on them.
size_t requiredInputs(const std::string &opType) {
  static const std::map<std::string, size_t> table = {{"Constant", 0},
                                                      {"Add", 2},
                                                      {"Sub", 2},
                                                      {"Mul", 2},
                                                      {"Div", 2},
                                                      {"Pow", 2},
                                                      {"Equal", 2},
                                                      {"Less", 2},
                                                      {"LessOrEqual", 2},
                                                      {"Greater", 2},
                                                      {"GreaterOrEqual", 2},
                                                      {"And", 2},
                                                      {"Or", 2},
                                                      {"MatMul", 2},
                                                      {"Gemm", 2},
                                                      {"Conv", 2},
                                                      {"Reshape", 2},
                                                      {"Expand", 2},
                                                      {"Gather", 2},
                                                      {"Pad", 2},
                                                      {"LayerNormalization", 2},
                                                      {"GroupNormalization", 3},
                                                      {"Where", 3},
                                                      {"Slice", 3},
                                                      {"BatchNormalization", 5},
                                                      {"PRelu", 2},
                                                      {"Xor", 2},
                                                      {"CastLike", 2},
                                                      {"BitwiseAnd", 2},
                                                      {"BitwiseOr", 2},
                                                      {"BitwiseXor", 2},
                                                      {"Mod", 2},
                                                      {"GatherElements", 2},
                                                      {"CumSum", 2},
                                                      {"Tile", 2},
                                                      {"OneHot", 3},
                                                      {"ConvTranspose", 2},
                                                      {"QuantizeLinear", 2},
                                                      {"DequantizeLinear", 2},
                                                      {"MatMulInteger", 2},
                                                      {"ConvInteger", 2},
                                                      {"QLinearMatMul", 8},
                                                      {"QLinearConv", 8},
                                                      {"Upsample", 2},
                                                      {"InstanceNormalization", 3},
                                                      {"RNN", 3},
                                                      {"GRU", 3},
                                                      {"LSTM", 3},
                                                      {"BitShift", 2},
                                                      {"ScatterND", 3},
                                                      {"ScatterElements", 3},
                                                      {"Scatter", 3},
                                                      {"GatherND", 2},
                                                      {"TopK", 2},
                                                      {"GridSample", 2},
                                                      {"RoiAlign", 3},
                                                      {"Compress", 2},
                                                      {"ReverseSequence", 2},
                                                      {"MaxUnpool", 2},
                                                      {"STFT", 2},
                                                      {"MelWeightMatrix", 5},
                                                      {"NonMaxSuppression", 2},
                                                      {"Loop", 0},
                                                      {"Scan", 0},
                                                      {"NegativeLogLikelihoodLoss", 2},
                                                      {"SoftmaxCrossEntropyLoss", 2}};
  auto it = table.find(opType);
  return it == table.end() ? 1 : it->second;
}
/// The first opset from which an op type means what its handler imports
/// (11 unless listed: the op changed before, e.g. attributes that became
/// inputs). These did not change since, but for added dtypes.
int64_t firstOpset(const std::string &opType) {
  static const std::map<std::string, int64_t> table = {{"Softplus", 1},
                                                       {"Softsign", 1},
                                                       {"Not", 1},
                                                       {"MatMul", 1},
                                                       {"Identity", 1},
                                                       {"Transpose", 1},
                                                       {"Softmax", 1},
                                                       {"LogSoftmax", 1},
                                                       {"Concat", 4},
                                                       {"Abs", 6},
                                                       {"Neg", 6},
                                                       {"Exp", 6},
                                                       {"Log", 6},
                                                       {"Sqrt", 6},
                                                       {"Reciprocal", 6},
                                                       {"Relu", 6},
                                                       {"Sigmoid", 6},
                                                       {"Tanh", 6},
                                                       {"Elu", 6},
                                                       {"Selu", 6},
                                                       {"HardSigmoid", 6},
                                                       {"LeakyRelu", 6},
                                                       {"Cast", 6},
                                                       {"Add", 7},
                                                       {"Sub", 7},
                                                       {"Mul", 7},
                                                       {"Div", 7},
                                                       {"Pow", 7},
                                                       {"Equal", 7},
                                                       {"Less", 7},
                                                       {"Greater", 7},
                                                       {"And", 7},
                                                       {"Or", 7},
                                                       {"Xor", 7},
                                                       {"Sin", 7},
                                                       {"Cos", 7},
                                                       {"Dropout", 7},
                                                       {"Max", 8},
                                                       {"Min", 8},
                                                       {"Sum", 8},
                                                       {"Mean", 8},
                                                       {"Erf", 9},
                                                       {"Sign", 9},
                                                       {"Shrink", 9},
                                                       {"PRelu", 9},
                                                       {"Where", 9},
                                                       {"Flatten", 9},
                                                       {"ThresholdedRelu", 10},
                                                       {"GlobalAveragePool", 1},
                                                       {"GlobalMaxPool", 1},
                                                       {"Size", 1},
                                                       {"Tan", 7},
                                                       {"Sinh", 9},
                                                       {"Cosh", 9},
                                                       {"Asinh", 9},
                                                       {"Acosh", 9},
                                                       {"Atanh", 9},
                                                       {"IsNaN", 9},
                                                       {"IsInf", 10},
                                                       {"Hardmax", 13},
                                                       {"Floor", 6},
                                                       {"Ceil", 6},
                                                       {"Mod", 10},
                                                       {"ConstantOfShape", 9},
                                                       {"EyeLike", 9},
                                                       {"Tile", 6},
                                                       {"Mish", 18},
                                                       {"GroupNormalization", 18},
                                                       {"Gelu", 20},
                                                       {"BitwiseAnd", 18},
                                                       {"BitwiseOr", 18},
                                                       {"BitwiseXor", 18},
                                                       {"BitwiseNot", 18},
                                                       {"Einsum", 12},
                                                       {"QuantizeLinear", 10},
                                                       {"DequantizeLinear", 10},
                                                       {"MatMulInteger", 10},
                                                       {"ConvInteger", 10},
                                                       {"QLinearMatMul", 10},
                                                       {"QLinearConv", 10},
                                                       {"Upsample", 9},
                                                       {"InstanceNormalization", 6},
                                                       {"MeanVarianceNormalization", 9},
                                                       {"LRN", 1},
                                                       {"DepthToSpace", 11},
                                                       {"SpaceToDepth", 1},
                                                       {"RNN", 7},
                                                       {"GRU", 7},
                                                       {"LSTM", 7},
                                                       {"Asin", 7},
                                                       {"Acos", 7},
                                                       {"Atan", 7},
                                                       {"BitShift", 11},
                                                       {"Scatter", 9},
                                                       {"HannWindow", 17},
                                                       {"HammingWindow", 17},
                                                       {"BlackmanWindow", 17},
                                                       {"GridSample", 16},
                                                       {"ReverseSequence", 10},
                                                       {"DFT", 17},
                                                       {"STFT", 17},
                                                       {"MelWeightMatrix", 17},
                                                       {"If", 1},
                                                       {"Loop", 1},
                                                       {"Scan", 8},
                                                       {"RoiAlign", 10},
                                                       {"NonZero", 9},
                                                       {"NonMaxSuppression", 10}};
  auto it = table.find(opType);
  return it == table.end() ? 11 : it->second;
}
} // namespace

bool onnximport::importOp(Importer &im) {
  const HandlerTable &table = handlers();
  const std::string &opType = im.current().op_type();
  bool training = im.current().domain() == kTrainingDomain;
  auto it = table.find(training ? std::string(kTrainingDomain) + "." + opType : opType);
  if (it == table.end())
    return im.unsupported("op type '" + opType + "' has no fuelc equivalent yet");
  if (int64_t first = firstOpset(opType); !training && im.opset < first)
    return im.unsupported("fuelc imports " + opType + " from opset " +
                          std::to_string(first) + " (it meant something else before)");
  for (size_t i = 0; i < requiredInputs(opType); ++i)
    if (!im.hasInput(i))
      return im.unsupported("input " + std::to_string(i) + " is required");
  // Extents computed from symbolic dims have no IR value: they can only
  // shape a tensor.
  size_t shapeInput = opType == "ConstantOfShape" ? 0 : opType == "Resize" ? 3 : 1;
  bool takesShape = opType == "Reshape" || opType == "Expand" || opType == "ConstantOfShape" ||
                    opType == "Resize";
  for (size_t i = 0; i < im.numInputs(); ++i)
    if (im.symbolicInput(i) && !(takesShape && i == shapeInput))
      return im.unsupported("input '" + im.current().input(static_cast<int>(i)) +
                            "' holds extents computed from symbolic dims, which fuelc " +
                            "takes only as the shape of Reshape, Expand, ConstantOfShape "
                            "and Resize");
  return it->second(im);
}
