//===- GpuKernels.h - Kernels as GPU dispatches -------------------*- C++ -*-===//
//
// The GPU backends (SPIR-V for Vulkan, and PTX for CUDA) share one kernel
// form: a kernel is one or more dispatches of a compute function over flat
// storage buffers. The runtime computes each dispatch's grid from the bound
// shapes, so one binary serves every binding of the symbolic dims.
//
// Dispatch ABI: binding i (i < args.size()) is the storage buffer of kernel
// argument args[i], bound at an aligned offset at or below the argument's
// first element; the last binding is the parameter buffer of 32-bit words:
// the dispatch's `constants`, then for each bound argument its element
// offset from the binding, its sizes[rank] and its strides[rank] (in
// elements).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_CODEGEN_GPUKERNELS_H
#define FUEL_CODEGEN_GPUKERNELS_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"
#include "fuel/Transforms/KernelSpec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fuel {

/// Workgroups = ceil(product of argument `arg`'s sizes, skipping the axes
/// in `skipAxes`, / perGroup), at most `maxGroups`; kernels loop over what
/// a smaller grid leaves (grid-stride), so any count is correct.
struct GpuGrid {
  unsigned arg = 0;
  std::vector<unsigned> skipAxes;
  int64_t perGroup = 1;
};

struct GpuDispatch {
  /// The compute function: generated, or a library kernel's symbol.
  std::string entry;
  bool isLibrary = false;
  /// Kernel arguments bound, in binding order.
  std::vector<unsigned> args;
  unsigned workgroupSize = 256;
  GpuGrid grid;
  std::vector<int32_t> constants;
};

struct GpuKernel {
  std::string symbol;
  /// "sha256:<hex>" of the kernel's generated code (its provenance).
  std::string revision;
  /// What it takes (artifact::kernelSignature), which the runtime compares
  /// with the arguments the program passes it.
  std::string signature;
  std::vector<GpuDispatch> dispatches;
};

/// How a GPU target spells the parts of a gpu.func that differ.
struct GpuDialectTarget {
  /// The memory spaces of workgroup-shared and of thread-private arrays.
  std::string workgroupSpace, privateSpace;
  /// Extra attributes of a kernel function of workgroup size N, with `%N`
  /// standing for N.
  std::string kernelAttributes;
  /// Workgroup arrays are gpu.func workgroup attributions (NVVM), or
  /// memref.alloc in the workgroup space (SPIR-V).
  bool workgroupAttributions = false;
  /// Threads per workgroup (a power of two; the machine description's).
  int64_t workgroupSize = 256;
};

/// Writes the `gpu.module @kernels` of `kernels` (one gpu.func per generated
/// dispatch) and describes their dispatches; fails naming the node a GPU
/// backend cannot generate.
LogicalResult emitGpuModule(const Graph &graph, const std::vector<KernelSpec> &kernels,
                            const GpuDialectTarget &target, std::string &module,
                            std::vector<GpuKernel> &described, DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_CODEGEN_GPUKERNELS_H
