//===- Backend.cpp - Choosing the backend of a device ---------------------===//

#include "Backend.h"

using namespace fuel;
using namespace fuel::runtime;

std::unique_ptr<Backend> runtime::createBackend(const DeviceInfo &device,
                                                unsigned threads,
                                                std::string &why) {
  switch (device.kind) {
  case DeviceKind::CPU:
    return createCpuBackend(device, threads, why);
  case DeviceKind::Vulkan:
    return createVulkanBackend(device, why);
  case DeviceKind::CUDA:
    return createCudaBackend(device, why);
  }
  why = "unknown device kind";
  return nullptr;
}
