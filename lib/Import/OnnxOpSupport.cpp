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

KnownTensor onnximport::scalar(double value, DType dtype) {
  KnownTensor t{dtype, {}, {}};
  switch (dtype) {
  case DType::F64:
    t.bytes.assign(reinterpret_cast<const char *>(&value), 8);
    break;
  case DType::F32: {
    float v = static_cast<float>(value);
    t.bytes.assign(reinterpret_cast<const char *>(&v), 4);
    break;
  }
  case DType::F16:
  case DType::BF16: {
    float f = static_cast<float>(value);
    uint16_t bits = dtype == DType::F16 ? floatToHalfBits(f) : floatToBFloat16Bits(f);
    t.bytes.assign(reinterpret_cast<const char *>(&bits), 2);
    break;
  }
  default: {
    int64_t v = static_cast<int64_t>(value);
    t.bytes.assign(reinterpret_cast<const char *>(&v), dtypeByteSize(dtype));
  }
  }
  return t;
}

KnownTensor onnximport::intTensor(const std::vector<int64_t> &values, std::vector<int64_t> shape,
                                  DType dtype) {
  KnownTensor t{dtype, std::move(shape), {}};
  for (int64_t v : values) { // Exact: shape arithmetic holds values such as INT64_MAX.
    if (dtype == DType::I64)
      t.bytes.append(reinterpret_cast<const char *>(&v), 8);
    else // Narrower: i32, bool.
      t.bytes += scalar(static_cast<double>(v), dtype).bytes;
  }
  return t;
}

KnownTensor onnximport::positions(int64_t n, size_t trailing, DType dtype) {
  KnownTensor t{dtype, {n}, {}};
  t.shape.resize(trailing + 1, 1);
  for (int64_t i = 0; i < n; ++i)
    t.bytes += scalar(static_cast<double>(i), dtype).bytes;
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
