//===- DType.cpp - Tensor element types -----------------------------------===//

#include "fuel/Support/DType.h"

#include "fuel/Support/Float16.h"

#include <cmath>
#include <cstring>

using namespace fuel;

namespace {
struct DTypeInfo {
  std::string_view name;
  unsigned bytes;
};
} // namespace

static constexpr DTypeInfo kDTypes[kNumDTypes] = {
    {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}, {"i8", 1},  {"i32", 4}, {"i64", 8},
    {"u8", 1},  {"bool", 1}, {"i16", 2}, {"u16", 2}, {"u32", 4}, {"u64", 8}};

std::string_view fuel::dtypeName(DType t) {
  return kDTypes[static_cast<unsigned>(t)].name;
}

std::optional<DType> fuel::parseDType(std::string_view name) {
  for (unsigned i = 0; i < kNumDTypes; ++i)
    if (kDTypes[i].name == name)
      return static_cast<DType>(i);
  return std::nullopt;
}

unsigned fuel::dtypeByteSize(DType t) {
  return kDTypes[static_cast<unsigned>(t)].bytes;
}

bool fuel::isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F64;
}

bool fuel::isInteger(DType t) { return isSignedInteger(t) || isUnsignedInteger(t); }

bool fuel::isSignedInteger(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

bool fuel::isUnsignedInteger(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}

namespace {
template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T> void store(char *p, T v) { std::memcpy(p, &v, sizeof v); }
} // namespace

double fuel::loadElement(DType t, const char *p) {
  switch (t) {
  case DType::F32:
    return load<float>(p);
  case DType::F16:
    return halfBitsToFloat(load<uint16_t>(p));
  case DType::BF16:
    return bfloat16BitsToFloat(load<uint16_t>(p));
  case DType::F64:
    return load<double>(p);
  case DType::I8:
    return load<int8_t>(p);
  case DType::I16:
    return load<int16_t>(p);
  case DType::I32:
    return load<int32_t>(p);
  case DType::I64:
    return static_cast<double>(load<int64_t>(p));
  case DType::U8:
    return load<uint8_t>(p);
  case DType::U16:
    return load<uint16_t>(p);
  case DType::U32:
    return load<uint32_t>(p);
  case DType::U64:
    return static_cast<double>(load<uint64_t>(p));
  case DType::Bool:
    return load<uint8_t>(p) != 0;
  }
  return 0;
}

void fuel::storeElement(DType t, double v, char *p) {
  switch (t) {
  case DType::F32:
    return store(p, static_cast<float>(v));
  case DType::F16:
    return store(p, floatToHalfBits(static_cast<float>(v)));
  case DType::BF16:
    return store(p, floatToBFloat16Bits(static_cast<float>(v)));
  case DType::F64:
    return store(p, v);
  case DType::Bool:
    return store(p, static_cast<uint8_t>(v != 0));
  default:
    break;
  }
  // Integers: truncate, then wrap through the 64-bit pattern.
  double truncated = std::trunc(v);
  uint64_t bits = 0;
  if (truncated >= 0 && truncated < 18446744073709551616.0)
    bits = static_cast<uint64_t>(truncated);
  else if (truncated < 0 && truncated >= -9223372036854775808.0)
    bits = static_cast<uint64_t>(static_cast<int64_t>(truncated));
  std::memcpy(p, &bits, dtypeByteSize(t)); // Little-endian: the low bytes.
}
