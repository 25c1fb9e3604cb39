//===- PreserveInfNanTest.cpp - SPIR-V modules declare NaN and Inf kept ---===//

#include "../../../lib/Codegen/Spirv/SpirvCodegen.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace fuel;

namespace {
constexpr uint32_t op(uint32_t opcode, uint32_t words) { return words << 16 | opcode; }

// Opcodes and operands of the SPIR-V specification.
constexpr uint32_t kExtension = 10, kMemoryModel = 14, kEntryPoint = 15, kExecutionMode = 16,
                   kCapability = 17, kTypeVoid = 19;
constexpr uint32_t kShader = 1, kGLCompute = 5, kLocalSize = 17;
constexpr uint32_t kPreserveCapability = 4466, kPreserveMode = 4461;

/// "SPV_KHR_float_controls" as OpExtension's operand words (22 characters,
/// NUL-padded to 6 words, little-endian).
const std::vector<uint32_t> kFloatControls = {0x5f565053, 0x5f52484b, 0x616f6c66,
                                              0x6f635f74, 0x6f72746e, 0x0000736c};

/// A module of two compute entry points (ids 7 and 9, named "a" and "b"),
/// an instruction per line.
std::vector<uint32_t> twoEntryPoints() {
  // clang-format off
  return {0x07230203, 0x00010300, 0, 20, 0,               // Header.
          op(kCapability, 2), kShader,                     // OpCapability Shader
          op(kMemoryModel, 3), 0, 1,                       // Logical GLSL450
          op(kEntryPoint, 4), kGLCompute, 7, 0x61,         // "a"
          op(kEntryPoint, 4), kGLCompute, 9, 0x62,         // "b"
          op(kExecutionMode, 6), 7, kLocalSize, 64, 1, 1,  // LocalSize 64 1 1
          op(kTypeVoid, 2), 3};
  // clang-format on
}
} // namespace

TEST_CASE("preserveInfNan declares the capability, extension and a mode per entry point",
          "[codegen][spirv]") {
  std::vector<uint32_t> words = twoEntryPoints();
  preserveInfNan(words);
  // clang-format off
  std::vector<uint32_t> expected = {0x07230203, 0x00010300, 0, 20, 0,
                                    op(kCapability, 2), kShader,
                                    op(kCapability, 2), kPreserveCapability,
                                    op(kExtension, 7)};
  expected.insert(expected.end(), kFloatControls.begin(), kFloatControls.end());
  expected.insert(expected.end(), {op(kMemoryModel, 3), 0, 1,
                                   op(kEntryPoint, 4), kGLCompute, 7, 0x61,
                                   op(kEntryPoint, 4), kGLCompute, 9, 0x62,
                                   op(kExecutionMode, 4), 7, kPreserveMode, 32,
                                   op(kExecutionMode, 4), 9, kPreserveMode, 32,
                                   op(kExecutionMode, 6), 7, kLocalSize, 64, 1, 1,
                                   op(kTypeVoid, 2), 3});
  // clang-format on
  CHECK(words == expected);

  // Declared once: a module that has the capability is left as it is.
  std::vector<uint32_t> again = words;
  preserveInfNan(again);
  CHECK(again == words);
}

TEST_CASE("preserveInfNan leaves malformed modules and modules without entry points alone",
          "[codegen][spirv]") {
  std::vector<uint32_t> truncated = twoEntryPoints();
  truncated.resize(truncated.size() - 1); // OpTypeVoid loses its result id.
  std::vector<uint32_t> before = truncated;
  preserveInfNan(truncated);
  CHECK(truncated == before);

  std::vector<uint32_t> zeroCount = twoEntryPoints();
  zeroCount[7] = 0; // An instruction of no words.
  before = zeroCount;
  preserveInfNan(zeroCount);
  CHECK(zeroCount == before);

  std::vector<uint32_t> library = {0x07230203, 0x00010300, 0, 4, 0, op(kCapability, 2), kShader};
  before = library;
  preserveInfNan(library);
  CHECK(library == before);

  std::vector<uint32_t> headerOnly = {0x07230203, 0x00010300};
  preserveInfNan(headerOnly);
  CHECK(headerOnly.size() == 2);
}
