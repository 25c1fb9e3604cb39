//===- SpirvSectionFuzzer.cpp - libFuzzer target for kernels.spirv ---------===//
//
// Arbitrary bytes as an artifact's `kernels.spirv` section, read by the
// Vulkan backend's section reader (JSON, base64 modules, SPIR-V framing,
// dispatch descriptions): no crash, no sanitizer report; a refusal always
// says why.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Vulkan/SpirvSection.h"

#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  runtime::SpirvSection section;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  // A refusal must say why.
  if (Expected<void> read = runtime::readSpirvSection(text, section); !read && read.error().empty())
    std::abort();
  return 0;
}
