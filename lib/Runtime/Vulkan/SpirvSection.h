//===- SpirvSection.h - Reading an artifact's SPIR-V kernels -------*- C++ -*-===//
//
// The `kernels.spirv` section (docs/artifact-format.md): SPIR-V modules and,
// per kernel, the dispatches that compute it (GpuDispatch.h). Everything is checked before the backend
// uses it: a damaged section is an error naming what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H
#define FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H

#include "../GpuDispatch.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fuel::runtime {

struct SpirvModule {
  std::string name;
  std::vector<uint32_t> words;
  /// The SPIR-V capabilities it declares (OpCapability operands).
  std::vector<uint32_t> capabilities;
};

struct SpirvSection {
  std::string target;
  std::vector<SpirvModule> modules;
  std::vector<GpuKernelInfo> kernels;
};

Expected<void> readSpirvSection(std::string_view text, SpirvSection &section);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H
