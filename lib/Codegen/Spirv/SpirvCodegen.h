//===- SpirvCodegen.h - Kernels as SPIR-V for Vulkan --------------*- C++ -*-===//
//
// The Vulkan backend: kernels are emitted as gpu.func (GpuKernels.h),
// lowered in-process through MLIR's gpu and spirv dialects for the device's
// Vulkan version, serialized, validated with SPIRV-Tools (an invalid module
// is a compiler error, never an artifact) and optimized with its
// performance passes. Library kernels (kernels/vulkan/*.comp, compiled by
// glslc at build time) are validated the same way and carried alongside.
//
// MLIR-free header: only the backend's translation unit includes MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_SPIRV_SPIRVCODEGEN_H
#define FUEL_LIB_CODEGEN_SPIRV_SPIRVCODEGEN_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"
#include "fuel/Transforms/KernelSpec.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fuel {

struct SpirvOutput {
  /// The `kernels.spirv` artifact section (docs/artifact-format.md).
  std::string section;
  /// Each kernel's revision by symbol (GpuKernel::revision).
  std::map<std::string, std::string> revisions;
  /// The gpu.module as emitted (for --emit=mlir).
  std::string mlir;
  /// Each SPIR-V binary by file name (`generated.spv`, `<library>.spv`),
  /// for --emit=spirv-dir.
  std::map<std::string, std::string> modules;
};

/// Compiles `kernels` for a Vulkan device of `target` (`vulkan1.1`,
/// `vulkan1.2` or `vulkan1.3`) with workgroups of `workgroupSize` threads;
/// `libraryDir` holds the library kernels'
/// SPIR-V (`<symbol>.spv`).
LogicalResult compileSpirv(const Graph &graph, const std::vector<KernelSpec> &kernels,
                           const std::string &target, unsigned workgroupSize,
                           const std::string &libraryDir, SpirvOutput &out, DiagnosticEngine &diag);

/// Declares every entry point of the SPIR-V module `words` to keep signed
/// zeros, Infs and NaNs of 32-bit floats (SignedZeroInfNanPreserve), which
/// drivers may otherwise assume absent.
void preserveInfNan(std::vector<uint32_t> &words);

} // namespace fuel

#endif // FUEL_LIB_CODEGEN_SPIRV_SPIRVCODEGEN_H
