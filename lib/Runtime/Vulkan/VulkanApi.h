//===- VulkanApi.h - The Vulkan loader, opened at run time --------*- C++ -*-===//
//
// The runtime does not link libvulkan: it opens the loader with dlopen when
// an artifact needs a Vulkan device, so it builds and starts on machines
// without Vulkan (a plan that needs it then fails at load, saying why).
// Every entry point the backend uses is listed once below and resolved
// through vkGetInstanceProcAddr / vkGetDeviceProcAddr.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_VULKAN_VULKANAPI_H
#define FUEL_LIB_RUNTIME_VULKAN_VULKANAPI_H

#define VK_NO_PROTOTYPES
#include "fuel/Support/Expected.h"

#include <vulkan/vulkan.h>

#include <memory>
#include <string>

namespace fuel::runtime {

#define FUEL_VULKAN_GLOBAL_FUNCTIONS(X)                                        \
  X(vkCreateInstance)                                                          \
  X(vkEnumerateInstanceLayerProperties)

#define FUEL_VULKAN_INSTANCE_FUNCTIONS(X)                                      \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceFeatures)                                               \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkEnumerateDeviceExtensionProperties)                                      \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

#define FUEL_VULKAN_DEVICE_FUNCTIONS(X)                                        \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdDispatch)                                                             \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkQueueSubmit)                                                             \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkWaitForFences)                                                           \
  X(vkResetFences)                                                             \
  X(vkDeviceWaitIdle)                                                          \
  X(vkCreateQueryPool)                                                         \
  X(vkDestroyQueryPool)                                                        \
  X(vkCmdResetQueryPool)                                                       \
  X(vkCmdWriteTimestamp)                                                       \
  X(vkGetQueryPoolResults)

struct VulkanApi {
#define FUEL_VULKAN_MEMBER(name) PFN_##name name = nullptr;
  FUEL_VULKAN_GLOBAL_FUNCTIONS(FUEL_VULKAN_MEMBER)
  FUEL_VULKAN_INSTANCE_FUNCTIONS(FUEL_VULKAN_MEMBER)
  FUEL_VULKAN_DEVICE_FUNCTIONS(FUEL_VULKAN_MEMBER)
#undef FUEL_VULKAN_MEMBER
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
  /// Of VK_EXT_calibrated_timestamps, where the device has it.
  PFN_vkGetCalibratedTimestampsEXT vkGetCalibratedTimestampsEXT = nullptr;

  ~VulkanApi();
  /// Opens the loader, or says why there is none.
  static Expected<std::unique_ptr<VulkanApi>> open();
  /// Resolves the instance-level (then device-level) entry points.
  Expected<void> loadInstance(VkInstance instance);
  Expected<void> loadDevice(VkDevice device);

private:
  void *library = nullptr;
};

/// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for error messages.
const char *vulkanResultName(VkResult result);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_VULKAN_VULKANAPI_H
