//===- PtxCodegen.h - Kernels as PTX for CUDA ---------------------*- C++ -*-===//
//
// The CUDA backend: kernels are emitted as gpu.func (GpuKernels.h), the
// same as for Vulkan, lowered in-process through MLIR's gpu and nvvm
// dialects and serialized to PTX for the device's SM architecture
// (libdevice for f64 math). Library kernels (kernels/cuda/*.cu, compiled to
// PTX by nvcc at build time) are carried alongside. When ptxas is present,
// every PTX module is assembled for the target (a failure is a compiler
// diag); when it is absent the caller is told the PTX was not verified.
//
// MLIR-free header: only the backend's translation unit includes MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_PTX_PTXCODEGEN_H
#define FUEL_LIB_CODEGEN_PTX_PTXCODEGEN_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"
#include "fuel/Transforms/KernelSpec.h"

#include <map>
#include <string>
#include <vector>

namespace fuel {

struct PtxOutput {
  /// The `kernels.ptx` artifact section (docs/artifact-format.md).
  std::string section;
  /// Each kernel's revision by symbol (GpuKernel::revision).
  std::map<std::string, std::string> revisions;
  /// The gpu.module as emitted (for --emit=mlir) and the generated PTX.
  std::string mlir, ptx;
  /// Whether ptxas assembled the PTX (false: no ptxas on this machine).
  bool verified = false;
};

/// Compiles `kernels` for a CUDA device of `target` (`sm_80`, `sm_90`, ...)
/// with blocks of `workgroupSize` threads;
/// `libraryDir` holds the library kernels' PTX (`<symbol>.ptx`).
LogicalResult compilePtx(const Graph &graph, const std::vector<KernelSpec> &kernels,
                         const std::string &target, unsigned workgroupSize,
                         const std::string &libraryDir, PtxOutput &out, DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_LIB_CODEGEN_PTX_PTXCODEGEN_H
