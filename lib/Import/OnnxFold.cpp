//===- OnnxFold.cpp - Folding shape arithmetic at import ------------------===//
//
// Exporters compute shapes with small integer subgraphs (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, Range, ConstantOfShape). When every input
// of such a node is known, the importer computes its output here, so the
// shape reaches the Reshape (or Expand, Slice, ...) as a constant. Only
// integer tensors of rank <= 1 are folded; anything else is imported as
// ops.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::onnximport;

static KnownTensor ints(std::vector<int64_t> values, std::vector<int64_t> shape) {
  KnownTensor t{DType::I64, std::move(shape), {}};
  for (int64_t v : values)
    t.bytes.append(reinterpret_cast<const char *>(&v), 8);
  return t;
}

static KnownTensor narrowToI32(const KnownTensor &t) {
  KnownTensor out{DType::I32, t.shape, {}};
  for (int64_t x : t.ints()) {
    int32_t narrow = static_cast<int32_t>(x);
    out.bytes.append(reinterpret_cast<const char *>(&narrow), 4);
  }
  return out;
}

static bool isSmallInt(const KnownTensor &t) {
  return (t.dtype == DType::I64 || t.dtype == DType::I32) && t.shape.size() <= 1;
}

/// numpy broadcasting of two rank <= 1 integer tensors.
static std::optional<KnownTensor> arithmetic(const std::string &op,
                                             const KnownTensor &a,
                                             const KnownTensor &b) {
  std::vector<int64_t> x = a.ints(), y = b.ints(), out;
  size_t n = std::max(x.size(), y.size());
  if ((x.size() != n && x.size() != 1) || (y.size() != n && y.size() != 1))
    return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    int64_t l = x[x.size() == 1 ? 0 : i], r = y[y.size() == 1 ? 0 : i];
    if (op == "Div" && r == 0)
      return std::nullopt;
    out.push_back(op == "Add" ? l + r : op == "Sub" ? l - r : op == "Mul" ? l * r : l / r);
  }
  std::vector<int64_t> shape = a.shape.size() >= b.shape.size() ? a.shape : b.shape;
  if (!shape.empty())
    shape[0] = static_cast<int64_t>(n);
  return ints(out, shape);
}

/// numpy slicing of a vector (Slice's inputs; axes must be {0}).
static std::optional<KnownTensor> slice1D(const KnownTensor &data, std::vector<int64_t> starts,
                                          std::vector<int64_t> ends, std::vector<int64_t> axes,
                                          std::vector<int64_t> steps) {
  std::vector<int64_t> values = data.ints(), picked;
  int64_t n = static_cast<int64_t>(values.size());
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
      (axes[0] != 0 && axes[0] != -1) || steps[0] == 0)
    return std::nullopt;
  int64_t step = steps[0];
  auto clampIndex = [&](int64_t i, int64_t lo, int64_t hi) {
    i = i < 0 ? (i < -n ? lo : i + n) : i;
    return std::clamp(i, lo, hi);
  };
  // Forward slices clamp to [0, n], backward ones to [-1, n - 1].
  int64_t begin = step > 0 ? clampIndex(starts[0], 0, n) : clampIndex(starts[0], -1, n - 1);
  int64_t end = step > 0 ? clampIndex(ends[0], 0, n) : clampIndex(ends[0], -1, n - 1);
  for (int64_t i = begin; step > 0 ? i < end : i > end; i += step)
    picked.push_back(values[i]);
  return ints(picked, {static_cast<int64_t>(picked.size())});
}

bool onnximport::foldConstant(Importer &im) {
  const onnx::NodeProto &node = im.current();
  const std::string &op = node.op_type();
  std::vector<const KnownTensor *> in;
  for (size_t i = 0; i < im.numInputs(); ++i) {
    if (!im.hasInput(i))
      continue;
    const KnownTensor *t = im.constantInput(i);
    if (!t)
      return false;
    in.push_back(t);
  }
  if (op == "ConstantOfShape" && in.size() == 1 && isSmallInt(*in[0])) {
    KnownTensor value{DType::F32, {}, std::string(4, '\0')};
    std::string why;
    if (const onnx::AttributeProto *a = im.attr("value"); a && !decodeTensor(a->t(), value, why))
      return false;
    std::vector<int64_t> shape = in[0]->ints();
    int64_t count = 1;
    for (int64_t d : shape)
      count = d < 0 || count > (int64_t(1) << 24) ? -1 : count * d;
    if (count < 0 || value.bytes.empty())
      return false;
    KnownTensor out{value.dtype, shape, {}};
    for (int64_t i = 0; i < count; ++i)
      out.bytes += value.bytes.substr(0, dtypeByteSize(value.dtype));
    im.bindConstant(std::move(out));
    return true;
  }
  if (op == "Range" && in.size() == 3) {
    std::vector<int64_t> start = in[0]->ints(), limit = in[1]->ints(), delta = in[2]->ints();
    DType type = in[0]->dtype;
    if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 || delta[0] == 0 ||
        (type != DType::I64 && type != DType::I32))
      return false;
    std::vector<int64_t> out;
    for (int64_t v = start[0]; (delta[0] > 0 ? v < limit[0] : v > limit[0]) && out.size() < 4096;
         v += delta[0])
      out.push_back(v);
    KnownTensor range = ints(out, {static_cast<int64_t>(out.size())});
    if (type == DType::I32)
      range = narrowToI32(range);
    im.bindConstant(std::move(range));
    return true;
  }
  for (const KnownTensor *t : in)
    if (!isSmallInt(*t))
      return false;
  std::optional<KnownTensor> out;
  if ((op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Reshape" ||
       op == "Flatten" || op == "Cast") &&
      !in.empty()) {
    std::vector<int64_t> values = in[0]->ints();
    if (op == "Cast" && im.attrInt("to", 0) != onnx::TensorProto::INT64 &&
        im.attrInt("to", 0) != onnx::TensorProto::INT32)
      return false;
    // Rank <= 1 results: a scalar squeezed, anything else a vector.
    bool scalar = (op == "Squeeze" && values.size() == 1) ||
                  (op != "Unsqueeze" && op != "Reshape" && op != "Flatten" &&
                   in[0]->shape.empty());
    if (op == "Reshape" || op == "Flatten" || (op == "Unsqueeze" && !in[0]->shape.empty()))
      return false; // Rank changes beyond 1: leave them to the ops.
    out = ints(values, scalar ? std::vector<int64_t>{}
                              : std::vector<int64_t>{static_cast<int64_t>(values.size())});
  } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && in.size() == 2) {
    out = arithmetic(op, *in[0], *in[1]);
  } else if (op == "Concat" && !in.empty()) {
    std::vector<int64_t> all;
    for (const KnownTensor *t : in) {
      if (t->shape.size() != 1)
        return false;
      std::vector<int64_t> v = t->ints();
      all.insert(all.end(), v.begin(), v.end());
    }
    out = ints(all, {static_cast<int64_t>(all.size())});
  } else if (op == "Slice" && in.size() >= 3 && in[0]->shape.size() == 1) {
    out = slice1D(*in[0], in[1]->ints(), in[2]->ints(),
                  in.size() > 3 ? in[3]->ints() : std::vector<int64_t>{0},
                  in.size() > 4 ? in[4]->ints() : std::vector<int64_t>{1});
  } else if (op == "Gather" && in.size() == 2 && in[0]->shape.size() == 1 &&
             im.attrInt("axis", 0) == 0) {
    std::vector<int64_t> data = in[0]->ints(), index = in[1]->ints(), picked;
    for (int64_t i : index) {
      int64_t at = i < 0 ? i + static_cast<int64_t>(data.size()) : i;
      if (at < 0 || at >= static_cast<int64_t>(data.size()))
        return false;
      picked.push_back(data[at]);
    }
    out = ints(picked, in[1]->shape.empty()
                           ? std::vector<int64_t>{}
                           : std::vector<int64_t>{static_cast<int64_t>(picked.size())});
  }
  if (!out)
    return false;
  // i32 results: a cast to it, or arithmetic that keeps its input's width.
  bool narrow = op == "Cast" ? im.attrInt("to", 0) == onnx::TensorProto::INT32
                             : in[0]->dtype == DType::I32;
  if (narrow)
    out = narrowToI32(*out);
  im.bindConstant(std::move(*out));
  return true;
}
