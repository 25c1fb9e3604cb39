//===- DType.h - Tensor element types ---------------------------*- C++ -*-===//
#ifndef FUEL_SUPPORT_DTYPE_H
#define FUEL_SUPPORT_DTYPE_H

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace fuel {

// Appended in order: the values are the C API's (include/fuel-c/Runtime.h).
enum class DType : uint8_t { F32, F16, BF16, F64, I8, I32, I64, U8, Bool, I16, U16, U32, U64 };

inline constexpr unsigned kNumDTypes = 13;

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
/// Storage size of one element in bytes (bool is one byte).
unsigned dtypeByteSize(DType t);
bool isFloat(DType t);
bool isInteger(DType t); // Excludes bool.
bool isSignedInteger(DType t);
bool isUnsignedInteger(DType t);

/// A set of dtypes as a bit mask (bit i: DType i).
constexpr uint32_t dtypeMask(std::initializer_list<DType> dtypes) {
  uint32_t mask = 0;
  for (DType t : dtypes)
    mask |= 1u << static_cast<unsigned>(t);
  return mask;
}

/// The element of type `t` at `p` (unaligned, little-endian) as a double:
/// 64-bit integers beyond 2^53 are rounded.
double loadElement(DType t, const char *p);
/// Stores `v` at `p` as an element of type `t`: floats rounded to nearest,
/// integers truncated toward zero and wrapped (as C's and numpy's casts;
/// NaN and values beyond 64 bits store 0), bool as v != 0.
void storeElement(DType t, double v, char *p);

} // namespace fuel

#endif // FUEL_SUPPORT_DTYPE_H
