//===- SpirvSection.h - Reading an artifact's SPIR-V kernels -------*- C++ -*-===//
//
// The `kernels.spirv` section (docs/artifact-format.md): SPIR-V modules and,
// per kernel, the dispatches that compute it (include/fuel/Codegen/
// GpuKernels.h has their ABI). Everything is checked before the backend
// uses it: a damaged section is an error naming what is wrong.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H
#define FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H

#include "fuel/Support/LogicalResult.h"

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

struct SpirvDispatch {
  unsigned module = 0;
  std::string entry;
  std::vector<unsigned> args;
  unsigned workgroupSize = 1;
  unsigned gridArg = 0;
  std::vector<unsigned> skipAxes;
  int64_t perGroup = 1;
  std::vector<int32_t> constants;
};

struct SpirvKernel {
  std::string symbol;
  std::vector<SpirvDispatch> dispatches;
};

struct SpirvSection {
  std::string target;
  std::vector<SpirvModule> modules;
  std::vector<SpirvKernel> kernels;
};

LogicalResult readSpirvSection(std::string_view text, SpirvSection &section,
                               std::string &error);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_VULKAN_SPIRVSECTION_H
