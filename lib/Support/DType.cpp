//===- DType.cpp - Tensor element types -----------------------------------===//

#include "fuel/Support/DType.h"

using namespace fuel;

namespace {
struct DTypeInfo {
  std::string_view name;
  unsigned bytes;
};
} // namespace

static constexpr DTypeInfo kDTypes[kNumDTypes] = {
    {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}, {"i8", 1},
    {"i32", 4}, {"i64", 8}, {"u8", 1},   {"bool", 1}};

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

bool fuel::isInteger(DType t) {
  return t == DType::I8 || t == DType::I32 || t == DType::I64 ||
         t == DType::U8;
}

bool fuel::isSignedInteger(DType t) {
  return t == DType::I8 || t == DType::I32 || t == DType::I64;
}
