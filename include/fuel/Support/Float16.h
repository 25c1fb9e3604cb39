//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
//
// Bit-exact conversions with round-to-nearest-even, used to store and print
// f16/bf16 constants without depending on compiler _Float16 support.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_FLOAT16_H
#define FUEL_SUPPORT_FLOAT16_H

#include <cstdint>

namespace fuel {

uint16_t floatToHalfBits(float value);
float halfBitsToFloat(uint16_t bits);
uint16_t floatToBFloat16Bits(float value);
float bfloat16BitsToFloat(uint16_t bits);

} // namespace fuel

#endif // FUEL_SUPPORT_FLOAT16_H
