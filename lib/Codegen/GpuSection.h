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
#include <map>
#include <string>

namespace fuel::codegen {

/// Each kernel's revision by symbol, for the target's output.
std::map<std::string, std::string> revisionsOf(const std::vector<GpuKernel> &kernels);

/// Whether any dispatch runs generated code (otherwise only library kernels
/// run, and there is no generated module to lower).
bool hasGeneratedDispatch(const std::vector<GpuKernel> &kernels);

/// The `kernels` member; `moduleOf` gives a dispatch's module index and
/// entry point name in it.
nlohmann::ordered_json describeGpuKernels(
    const std::vector<GpuKernel> &kernels,
    const std::function<std::pair<unsigned, std::string>(const GpuDispatch &)> &moduleOf);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_GPUSECTION_H
