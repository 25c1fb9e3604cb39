//===- PreserveInfNan.cpp - Declare NaN and Inf preserved in SPIR-V --------===//
//
// Without float controls a Vulkan driver may assume no operand is NaN or
// Inf: NVIDIA's folds unordered comparisons to ordered ones, so relu(NaN)
// came out 0 and clamp, exp, sigmoid and tanh lost their NaNs too (the H200,
// driver 580). Every module declares the SignedZeroInfNanPreserve execution
// mode for 32-bit floats on each entry point, which the runtime checks the
// device supports (shaderSignedZeroInfNanPreserveFloat32) at load.
//
//===----------------------------------------------------------------------===//

#include "SpirvCodegen.h"

#include <cstring>

using namespace fuel;

namespace {
constexpr uint32_t kOpExtension = 10;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kSignedZeroInfNanPreserveCapability = 4466;
constexpr uint32_t kSignedZeroInfNanPreserveMode = 4461;
constexpr size_t kHeaderWords = 5;

uint32_t opWord(uint32_t opcode, size_t words) {
  return static_cast<uint32_t>(words) << 16 | opcode;
}

/// OpExtension `name`: the string NUL-terminated, padded to whole words.
void appendExtension(std::vector<uint32_t> &out, const char *name) {
  size_t length = std::strlen(name), words = length / 4 + 1;
  out.push_back(opWord(kOpExtension, 1 + words));
  size_t at = out.size();
  out.resize(at + words, 0);
  std::memcpy(out.data() + at, name, length);
}
} // namespace

void fuel::preserveInfNan(std::vector<uint32_t> &words) {
  // Where the capabilities end, where the entry points end, and the
  // entry points' ids.
  size_t capabilitiesEnd = kHeaderWords, entryPointsEnd = 0;
  std::vector<uint32_t> entryPoints;
  for (size_t i = kHeaderWords, count; i < words.size(); i += count) {
    count = words[i] >> 16;
    // A malformed module is left as it is, for the validator to report.
    if (count == 0 || i + count > words.size())
      return;
    uint32_t opcode = words[i] & 0xFFFF;
    if (opcode == kOpCapability && count == 2) {
      if (words[i + 1] == kSignedZeroInfNanPreserveCapability)
        return;
      capabilitiesEnd = i + count;
    }
    if (opcode == kOpEntryPoint && count >= 3) {
      entryPoints.push_back(words[i + 2]);
      entryPointsEnd = i + count;
    }
  }
  if (entryPoints.empty())
    return;
  std::vector<uint32_t> out(words.begin(), words.begin() + capabilitiesEnd);
  out.push_back(opWord(kOpCapability, 2));
  out.push_back(kSignedZeroInfNanPreserveCapability);
  // Core in SPIR-V 1.4; modules here are 1.3 at most.
  appendExtension(out, "SPV_KHR_float_controls");
  out.insert(out.end(), words.begin() + capabilitiesEnd, words.begin() + entryPointsEnd);
  for (uint32_t id : entryPoints)
    out.insert(out.end(), {opWord(kOpExecutionMode, 4), id, kSignedZeroInfNanPreserveMode, 32});
  out.insert(out.end(), words.begin() + entryPointsEnd, words.end());
  words = std::move(out);
}
