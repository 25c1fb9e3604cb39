//===- Backend.cpp - Choosing the backend of a device ---------------------===//

#include "Backend.h"

using namespace fuel;
using namespace fuel::runtime;

std::unique_ptr<Backend> runtime::createBackend(const artifact::Device &device,
                                                unsigned threads,
                                                std::string &why) {
  if (device.kind == "cpu")
    return createCpuBackend(device, threads, why);
  if (device.kind == "vulkan")
    return createVulkanBackend(device, why);
  if (device.kind == "cuda")
    return createCudaBackend(device, why);
  why = "this runtime has no backend for devices of kind '" + device.kind + "'";
  return nullptr;
}
