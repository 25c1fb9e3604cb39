//===- DType.h - Tensor element types ---------------------------*- C++ -*-===//
#ifndef FUEL_SUPPORT_DTYPE_H
#define FUEL_SUPPORT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace fuel {

enum class DType : uint8_t { F32, F16, BF16, F64, I8, I32, I64, U8, Bool };

inline constexpr unsigned kNumDTypes = 9;

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
/// Storage size of one element in bytes (bool is one byte).
unsigned dtypeByteSize(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // Excludes bool.
bool isSignedInteger(DType t);

} // namespace fuel

#endif // FUEL_SUPPORT_DTYPE_H
