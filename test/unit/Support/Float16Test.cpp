//===- Float16Test.cpp - half and bfloat16 conversions --------------------===//

#include "fuel/Support/Float16.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace fuel;

TEST_CASE("every finite half survives half -> float -> half", "[float16]") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    float f = halfBitsToFloat(h);
    if (std::isnan(f))
      continue;
    REQUIRE(floatToHalfBits(f) == h);
  }
}

TEST_CASE("half conversion rounds to nearest even", "[float16]") {
  CHECK(floatToHalfBits(1.0f) == 0x3C00);
  CHECK(floatToHalfBits(-2.0f) == 0xC000);
  CHECK(floatToHalfBits(65504.0f) == 0x7BFF);
  CHECK(floatToHalfBits(65520.0f) == 0x7C00); // Tie rounds up to infinity.
  CHECK(floatToHalfBits(1e-8f) == 0x0000);    // Below half the least subnormal.
  CHECK(floatToHalfBits(5.9604645e-8f) == 0x0001);
  // 1 + 2^-11 is halfway between 1 and the next half; ties go to even (1).
  CHECK(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  CHECK(std::isnan(halfBitsToFloat(floatToHalfBits(std::nanf("")))));
  CHECK(halfBitsToFloat(floatToHalfBits(INFINITY)) == INFINITY);
}

TEST_CASE("bfloat16 conversion rounds to nearest even", "[float16]") {
  CHECK(floatToBFloat16Bits(1.0f) == 0x3F80);
  CHECK(bfloat16BitsToFloat(0x3F80) == 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to the even mantissa.
  CHECK(floatToBFloat16Bits(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);
  CHECK(floatToBFloat16Bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);
  CHECK(std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(std::nanf("")))));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float f = bfloat16BitsToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(f))
      REQUIRE(floatToBFloat16Bits(f) == bits);
  }
}
