//===- GpuSection.h - The kernel list of GPU artifact sections ----*- C++ -*-===//
//
// `kernels.spirv` and `kernels.ptx` describe their kernels alike: per
// kernel, its dispatches (module, entry point, bound arguments, workgroup
// size, grid, constants); docs/artifact-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_GPUSECTION_H
#define FUEL_LIB_CODEGEN_GPUSECTION_H

#include "fuel/Codegen/GpuKernels.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace fuel::codegen {

/// The `kernels` member; `moduleOf` gives a dispatch's module index and
/// entry point name in it.
nlohmann::ordered_json describeGpuKernels(
    const std::vector<GpuKernel> &kernels,
    const std::function<std::pair<unsigned, std::string>(const GpuDispatch &)> &moduleOf);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_GPUSECTION_H
