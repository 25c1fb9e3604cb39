//===- SpirvSection.cpp - Reading an artifact's SPIR-V kernels -------------===//

#include "SpirvSection.h"

#include "fuel/Support/Base64.h"

#include <nlohmann/json.hpp>

#include <cstring>

using namespace fuel;
using namespace fuel::runtime;
using nlohmann::json;

static constexpr uint32_t kSpirvMagic = 0x07230203;
static constexpr uint32_t kOpCapability = 17;

/// Checks the module's framing and collects its capabilities.
static bool scanModule(SpirvModule &m, std::string &why) {
  const std::vector<uint32_t> &w = m.words;
  if (w.size() < 5 || w[0] != kSpirvMagic) {
    why = "is not a SPIR-V module";
    return false;
  }
  for (size_t i = 5; i < w.size();) {
    uint32_t count = w[i] >> 16, opcode = w[i] & 0xFFFF;
    if (count == 0 || i + count > w.size()) {
      why = "has a truncated instruction at word " + std::to_string(i);
      return false;
    }
    if (opcode == kOpCapability && count == 2)
      m.capabilities.push_back(w[i + 1]);
    i += count;
  }
  return true;
}

LogicalResult runtime::readSpirvSection(std::string_view text,
                                        SpirvSection &section,
                                        std::string &error) {
  try {
    json j = json::parse(text);
    if (j.at("format") != "fuel.spirv-kernels" || j.at("version") != 1) {
      error = "is not fuel.spirv-kernels version 1";
      return failure();
    }
    section.target = j.at("target");
    for (const json &m : j.at("modules")) {
      SpirvModule module;
      module.name = m.at("name");
      std::optional<std::string> bytes = decodeBase64(m.at("spirv").get<std::string>());
      if (!bytes || bytes->size() % 4 != 0) {
        error = "module '" + module.name + "' is not base64 SPIR-V words";
        return failure();
      }
      module.words.resize(bytes->size() / 4);
      std::memcpy(module.words.data(), bytes->data(), bytes->size());
      std::string why;
      if (!scanModule(module, why)) {
        error = "module '" + module.name + "' " + why;
        return failure();
      }
      section.modules.push_back(std::move(module));
    }
    if (failed(readGpuKernels(j.at("kernels"), section.modules.size(),
                              section.kernels, error)))
      return failure();
  } catch (const json::exception &e) {
    error = std::string("is malformed: ") + e.what();
    return failure();
  }
  return success();
}
