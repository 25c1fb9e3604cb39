//===- CudaBackend.cpp - The CUDA driver, probed at run time ---------------===//
//
// The runtime does not link libcuda: it opens the driver with dlopen when a
// route needs a CUDA device, so it builds and starts on machines without
// one, and such a route is skipped or refused with the reason. Executing
// PTX kernels (module loading, device arena, stream and copies) is not
// implemented yet: a machine with a driver and a device says so.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"

#include <dlfcn.h>

using namespace fuel;
using namespace fuel::runtime;

namespace {
/// The driver entry points the probe uses (CUresult is an int; 0 success).
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int *);

/// Closes the driver when the probe ends.
struct Library {
  void *handle;
  ~Library() {
    if (handle)
      dlclose(handle);
  }
};
} // namespace

std::unique_ptr<Backend> runtime::createCudaBackend(const DeviceInfo &device,
                                                    std::string &why) {
  Library driver{dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)};
  if (!driver.handle) {
    why = "the CUDA driver (libcuda.so.1) is not installed";
    return nullptr;
  }
  auto init = reinterpret_cast<CuInit>(dlsym(driver.handle, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver.handle, "cuDeviceGetCount"));
  int devices = 0;
  if (!init || !count || init(0) != 0 || count(&devices) != 0 || devices == 0) {
    why = "the CUDA driver reports no usable device";
    return nullptr;
  }
  size_t index = std::stoul(device.id.substr(device.id.find(':') + 1));
  if (index >= static_cast<size_t>(devices)) {
    why = "there are " + std::to_string(devices) + " CUDA devices";
    return nullptr;
  }
  why = "this runtime cannot execute PTX kernels yet (the CUDA backend's "
        "execution is not implemented)";
  return nullptr;
}
