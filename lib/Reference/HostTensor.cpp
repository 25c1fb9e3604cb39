//===- HostTensor.cpp - Dense host tensors for the reference interpreter --===//

#include "fuel/Reference/Interpreter.h"

#include "fuel/Support/Float16.h"

#include <cmath>
#include <cstring>

using namespace fuel;

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double fuel::roundToDType(double value, DType dtype) {
  switch (dtype) {
  case DType::F64:
    return value;
  case DType::F32:
    return static_cast<double>(static_cast<float>(value));
  case DType::F16:
    return halfBitsToFloat(floatToHalfBits(static_cast<float>(value)));
  case DType::BF16:
    return bfloat16BitsToFloat(floatToBFloat16Bits(static_cast<float>(value)));
  case DType::Bool:
    return value != 0 ? 1 : 0;
  default:
    break;
  }
  // Integers: truncate toward zero (as C and numpy's astype), then wrap.
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  if (std::fabs(truncated) >= 9.2e18)
    return 0;
  int64_t v = static_cast<int64_t>(truncated);
  switch (dtype) {
  case DType::I8:
    return static_cast<int8_t>(static_cast<uint8_t>(v));
  case DType::U8:
    return static_cast<uint8_t>(v);
  case DType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(v));
  default:
    return static_cast<double>(v);
  }
}

std::string HostTensor::toBytes() const {
  std::string out;
  out.reserve(values.size() * dtypeByteSize(dtype));
  auto append = [&](auto v) {
    char buf[sizeof(v)];
    std::memcpy(buf, &v, sizeof(v));
    out.append(buf, sizeof(v));
  };
  for (double v : values) {
    switch (dtype) {
    case DType::F32:
      append(static_cast<float>(v));
      break;
    case DType::F64:
      append(v);
      break;
    case DType::F16:
      append(floatToHalfBits(static_cast<float>(v)));
      break;
    case DType::BF16:
      append(floatToBFloat16Bits(static_cast<float>(v)));
      break;
    case DType::I8:
      append(static_cast<int8_t>(v));
      break;
    case DType::U8:
    case DType::Bool:
      append(static_cast<uint8_t>(v));
      break;
    case DType::I32:
      append(static_cast<int32_t>(v));
      break;
    case DType::I64:
      append(static_cast<int64_t>(v));
      break;
    }
  }
  return out;
}

HostTensor HostTensor::fromBytes(DType dtype, std::vector<int64_t> shape,
                                 std::string_view bytes) {
  HostTensor t{dtype, std::move(shape), {}};
  size_t width = dtypeByteSize(dtype);
  t.values.resize(bytes.size() / width);
  for (size_t i = 0; i < t.values.size(); ++i) {
    const char *p = bytes.data() + i * width;
    auto load = [&](auto v) {
      std::memcpy(&v, p, sizeof(v));
      return v;
    };
    double v = 0;
    switch (dtype) {
    case DType::F32:
      v = load(float());
      break;
    case DType::F64:
      v = load(double());
      break;
    case DType::F16:
      v = halfBitsToFloat(load(uint16_t()));
      break;
    case DType::BF16:
      v = bfloat16BitsToFloat(load(uint16_t()));
      break;
    case DType::I8:
      v = load(int8_t());
      break;
    case DType::U8:
      v = load(uint8_t());
      break;
    case DType::Bool:
      v = load(uint8_t()) != 0;
      break;
    case DType::I32:
      v = load(int32_t());
      break;
    case DType::I64:
      v = static_cast<double>(load(int64_t()));
      break;
    }
    t.values[i] = v;
  }
  return t;
}
