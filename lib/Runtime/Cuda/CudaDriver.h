//===- CudaDriver.h - The CUDA driver API, opened at run time -----*- C++ -*-===//
//
// The runtime does not link libcuda (nor needs CUDA headers): it opens the
// driver with dlopen when an artifact needs a CUDA device, so it builds and
// starts on machines without one. The few types and entry points the
// backend uses are declared here, each entry point listed once.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_CUDA_CUDADRIVER_H
#define FUEL_LIB_RUNTIME_CUDA_CUDADRIVER_H

#include "fuel/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace fuel::runtime {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
/// cuDeviceGetAttribute: compute capability major and minor.
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
/// cuEventCreate flag: the event only orders work (no timestamps).
constexpr unsigned kEventDisableTiming = 2;
/// cuModuleLoadDataEx options: the JIT's error log buffer and its size.
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;

#define FUEL_CUDA_FUNCTIONS(X)                                                 \
  X(cuInit, CUresult(unsigned))                                            \
  X(cuDeviceGetCount, CUresult(int *))                                     \
  X(cuDeviceGet, CUresult(CUdevice *, int))                                \
  X(cuDeviceGetName, CUresult(char *, int, CUdevice))                      \
  X(cuDeviceGetAttribute, CUresult(int *, int, CUdevice))                  \
  X(cuDevicePrimaryCtxRetain, CUresult(CUcontext *, CUdevice))             \
  X(cuDevicePrimaryCtxRelease, CUresult(CUdevice))                         \
  X(cuCtxSetCurrent, CUresult(CUcontext))                                  \
  X(cuModuleLoadDataEx,                                                        \
    CUresult(CUmodule *, const void *, unsigned, int *, void **))          \
  X(cuModuleUnload, CUresult(CUmodule))                                    \
  X(cuModuleGetFunction, CUresult(CUfunction *, CUmodule, const char *))  \
  X(cuMemAlloc_v2, CUresult(CUdeviceptr *, size_t))                        \
  X(cuMemFree_v2, CUresult(CUdeviceptr))                                   \
  X(cuMemAllocHost_v2, CUresult(void **, size_t))                          \
  X(cuMemFreeHost, CUresult(void *))                                       \
  X(cuMemcpyHtoDAsync_v2,                                                      \
    CUresult(CUdeviceptr, const void *, size_t, CUstream))                 \
  X(cuMemcpyDtoHAsync_v2, CUresult(void *, CUdeviceptr, size_t, CUstream)) \
  X(cuStreamCreate, CUresult(CUstream *, unsigned))                        \
  X(cuStreamDestroy_v2, CUresult(CUstream))                                \
  X(cuStreamSynchronize, CUresult(CUstream))                               \
  X(cuEventCreate, CUresult(CUevent *, unsigned))                          \
  X(cuEventRecord, CUresult(CUevent, CUstream))                            \
  X(cuEventSynchronize, CUresult(CUevent))                                 \
  X(cuEventDestroy_v2, CUresult(CUevent))                                  \
  X(cuLaunchKernel,                                                            \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned,           \
                 unsigned, unsigned, unsigned, CUstream, void **, void **))    \
  X(cuGetErrorName, CUresult(CUresult, const char **))

struct CudaDriver {
#define FUEL_CUDA_MEMBER(name, type) std::add_pointer_t<type> name = nullptr;
  FUEL_CUDA_FUNCTIONS(FUEL_CUDA_MEMBER)
#undef FUEL_CUDA_MEMBER

  /// cuEventElapsedTime (as `_v2` in newer drivers), or nullptr: only
  /// device timing needs it, so a driver without it still runs plans.
  std::add_pointer_t<CUresult(float *, CUevent, CUevent)> eventElapsedTime = nullptr;

  ~CudaDriver();
  /// Opens the driver, or says why there is none.
  static Expected<std::unique_ptr<CudaDriver>> open();
  /// "CUDA_ERROR_OUT_OF_MEMORY" for error messages.
  std::string errorName(CUresult result) const;

private:
  void *library = nullptr;
};

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_CUDA_CUDADRIVER_H
