//===- Float16.cpp - IEEE half and bfloat16 conversions -------------------===//

#include "fuel/Support/Float16.h"

#include <cstring>

using namespace fuel;

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

static float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint16_t fuel::floatToHalfBits(float value) {
  uint32_t f = floatBits(value);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t absBits = f & 0x7FFFFFFFu;
  if (absBits >= 0x7F800000u) // Inf or NaN; keep NaN quiet.
    return static_cast<uint16_t>(sign | 0x7C00u |
                                 (absBits > 0x7F800000u ? 0x200u : 0u));
  if (absBits >= 0x477FF000u) // Rounds to a value above the largest half.
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (absBits < 0x38800000u) {
    // Subnormal half: scale so that the float adder rounds to nearest even.
    float scaled = bitsToFloat(absBits) + 0.5f;
    return static_cast<uint16_t>(sign | (floatBits(scaled) - 0x3F000000u));
  }
  uint32_t mantissaOdd = (absBits >> 13) & 1u;
  absBits += 0xC8000FFFu + mantissaOdd; // Re-bias exponent and round.
  return static_cast<uint16_t>(sign | (absBits >> 13));
}

float fuel::halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)
    return bitsToFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal: value = mantissa * 2^-24.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t fuel::floatToBFloat16Bits(float value) {
  uint32_t f = floatBits(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((f >> 16) | 0x40u); // Quiet NaN.
  uint32_t roundingBias = 0x7FFFu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + roundingBias) >> 16);
}

float fuel::bfloat16BitsToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}
