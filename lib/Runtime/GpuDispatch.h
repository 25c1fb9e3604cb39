//===- GpuDispatch.h - What GPU backends share about dispatches ---*- C++ -*-===//
//
// The `kernels` list of the `kernels.spirv` and `kernels.ptx` sections
// (docs/artifact-format.md) and the two things every GPU backend computes
// per call from the bound shapes: the workgroup count and the parameter
// words (include/fuel/Codegen/GpuKernels.h has the ABI).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_GPUDISPATCH_H
#define FUEL_LIB_RUNTIME_GPUDISPATCH_H

#include "Backend.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuel::runtime {

struct GpuDispatchInfo {
  unsigned module = 0;
  std::string entry;
  /// A library kernel (plain pointers to the arguments' first elements)
  /// rather than a generated one (memref descriptors).
  bool library = false;
  std::vector<unsigned> args;
  unsigned workgroupSize = 1;
  unsigned gridArg = 0;
  std::vector<unsigned> skipAxes;
  int64_t perGroup = 1;
  std::vector<int32_t> constants;
};

struct GpuKernelInfo {
  std::string symbol;
  /// What the kernel takes (artifact::kernelSignature).
  std::string signature;
  std::vector<GpuDispatchInfo> dispatches;
};

/// Member `key` of `object` as T (an integer type, bool, std::string, or a
/// std::vector of integers), or nullopt when it is absent, of another type
/// or out of T's range. The section readers read through it, so no read of
/// a damaged section throws.
template <typename T>
std::optional<T> jsonMember(const nlohmann::json &object, std::string_view key);

/// Reads a section's `kernels` member; `modules` is how many modules the
/// section has.
Expected<void> readGpuKernels(const nlohmann::json &list, size_t modules,
                              std::vector<GpuKernelInfo> &kernels);

/// Checks the dispatches of program kernel `info` against its arguments.
Expected<void> checkGpuKernel(const GpuKernelInfo &kernel, const artifact::Kernel &info);

/// The number of parameter words of `d` for kernel `info`.
size_t parameterWords(const GpuDispatchInfo &d, const artifact::Kernel &info);

/// Writes `d`'s parameter words for `call`: its constants, then per bound
/// argument `elementOffsets[i]`, sizes and strides.
void writeParameters(const GpuDispatchInfo &d, const artifact::Kernel &info,
                     const KernelCall &call,
                     const std::vector<int64_t> &elementOffsets, int32_t *words);

/// The workgroups of `d` for `call`, at most `maxGroups`.
uint32_t workgroups(const GpuDispatchInfo &d, const artifact::Kernel &info,
                    const KernelCall &call, int64_t maxGroups);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_GPUDISPATCH_H
