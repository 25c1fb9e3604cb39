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
static Expected<void> scanModule(SpirvModule &m) {
  const std::vector<uint32_t> &w = m.words;
  if (w.size() < 5 || w[0] != kSpirvMagic)
    return Error{"is not a SPIR-V module"};
  for (size_t i = 5; i < w.size();) {
    uint32_t count = w[i] >> 16, opcode = w[i] & 0xFFFF;
    if (count == 0 || i + count > w.size())
      return Error{"has a truncated instruction at word " + std::to_string(i)};
    if (opcode == kOpCapability && count == 2)
      m.capabilities.push_back(w[i + 1]);
    i += count;
  }
  return {};
}

Expected<void> runtime::readSpirvSection(std::string_view text, SpirvSection &section) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Error{"is not JSON"};
  if (jsonMember<std::string>(j, "format") != "fuel.spirv-kernels" ||
      jsonMember<int>(j, "version") != 1)
    return Error{"is not fuel.spirv-kernels version 1"};
  std::optional<std::string> target = jsonMember<std::string>(j, "target");
  if (!target || !j.contains("modules") || !j["modules"].is_array() || !j.contains("kernels"))
    return Error{"lacks 'target', 'modules' or 'kernels'"};
  section.target = std::move(*target);
  for (const json &m : j["modules"]) {
    SpirvModule module;
    std::optional<std::string> name = jsonMember<std::string>(m, "name");
    std::optional<std::string> spirv = jsonMember<std::string>(m, "spirv");
    if (!name || !spirv)
      return Error{"has a module without 'name' and 'spirv' strings"};
    module.name = std::move(*name);
    std::optional<std::string> bytes = decodeBase64(*spirv);
    if (!bytes || bytes->size() % 4 != 0)
      return Error{"module '" + module.name + "' is not base64 SPIR-V words"};
    module.words.resize(bytes->size() / 4);
    std::memcpy(module.words.data(), bytes->data(), bytes->size());
    if (Expected<void> scanned = scanModule(module); !scanned)
      return Error{"module '" + module.name + "' " + scanned.error()};
    section.modules.push_back(std::move(module));
  }
  return readGpuKernels(j["kernels"], section.modules.size(), section.kernels);
}
