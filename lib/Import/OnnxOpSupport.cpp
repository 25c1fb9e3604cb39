//===- OnnxOpSupport.cpp - What the ONNX op handlers share ----------------===//

#include "OnnxOpSupport.h"

#include "fuel/Support/Float16.h"

using namespace fuel;
using namespace fuel::onnximport;

bool onnximport::emit(Importer &im, OpKind kind, const std::vector<ValueRef> &operands,
                      const std::function<void(Graph &)> &attrs) {
  std::optional<NodeId> n = im.add(kind, operands, attrs);
  if (n)
    im.bind(0, {*n, 0});
  return n.has_value();
}

bool onnximport::direct(Importer &im, OpKind kind, const std::function<void(Graph &)> &attrs) {
  std::vector<ValueRef> operands;
  for (size_t i = 0; i < im.numInputs(); ++i)
    if (im.hasInput(i))
      operands.push_back(im.input(i));
  return emit(im, kind, operands, attrs);
}

void onnximport::appendScalar(KnownTensor &t, double value) {
  auto append = [&](const auto &v, size_t size) {
    t.bytes.append(reinterpret_cast<const char *>(&v), size);
  };
  switch (t.dtype) {
  case DType::F64:
    append(value, 8);
    break;
  case DType::F32:
    append(static_cast<float>(value), 4);
    break;
  case DType::F16:
    append(floatToHalfBits(static_cast<float>(value)), 2);
    break;
  case DType::BF16:
    append(floatToBFloat16Bits(static_cast<float>(value)), 2);
    break;
  default:
    append(static_cast<int64_t>(value), dtypeByteSize(t.dtype));
  }
}

KnownTensor onnximport::scalar(double value, DType dtype) {
  KnownTensor t{dtype, {}, {}};
  appendScalar(t, value);
  return t;
}

KnownTensor onnximport::intTensor(const std::vector<int64_t> &values, std::vector<int64_t> shape,
                                  DType dtype) {
  KnownTensor t{dtype, std::move(shape), {}};
  for (int64_t v : values) { // Exact: shape arithmetic holds values such as INT64_MAX.
    if (dtype == DType::I64)
      t.bytes.append(reinterpret_cast<const char *>(&v), 8);
    else // Narrower: i32, bool.
      appendScalar(t, static_cast<double>(v));
  }
  return t;
}

KnownTensor onnximport::positions(int64_t n, size_t trailing, DType dtype) {
  KnownTensor t{dtype, {n}, {}};
  t.shape.resize(trailing + 1, 1);
  for (int64_t i = 0; i < n; ++i)
    appendScalar(t, static_cast<double>(i));
  return t;
}

const KnownTensor *onnximport::constInts(Importer &im, size_t i, const char *what) {
  const KnownTensor *t = im.constantInput(i);
  if (!t)
    im.unsupported(std::string(what) + " (input " + std::to_string(i) + ", '" +
                   im.current().input(static_cast<int>(i)) + "') must be a constant");
  return t;
}

std::optional<double> onnximport::constScalar(Importer &im, size_t i, const char *what) {
  const KnownTensor *t = constInts(im, i, what);
  if (!t)
    return std::nullopt;
  std::vector<double> values = t->reals();
  if (values.size() != 1) {
    im.unsupported(std::string(what) + " (input " + std::to_string(i) + ") must hold one value, " +
                   "not " + std::to_string(values.size()));
    return std::nullopt;
  }
  return values[0];
}

std::optional<std::vector<int64_t>> onnximport::axesOf(Importer &im, size_t inputIndex) {
  if (im.attr("axes"))
    return im.attrInts("axes");
  if (!im.hasInput(inputIndex))
    return std::vector<int64_t>();
  const KnownTensor *t = constInts(im, inputIndex, "axes");
  if (!t)
    return std::nullopt;
  return t->ints();
}
