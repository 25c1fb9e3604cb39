//===- VulkanApi.cpp - The Vulkan loader, opened at run time ---------------===//

#include "VulkanApi.h"

#include <dlfcn.h>

using namespace fuel;
using namespace fuel::runtime;

VulkanApi::~VulkanApi() {
  if (library)
    dlclose(library);
}

Expected<std::unique_ptr<VulkanApi>> VulkanApi::open() {
  void *library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return Error{"the Vulkan loader (libvulkan.so.1) is not installed"};
  auto api = std::make_unique<VulkanApi>();
  api->library = library;
  api->vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
  if (!api->vkGetInstanceProcAddr)
    return Error{"libvulkan.so.1 has no vkGetInstanceProcAddr"};
#define FUEL_VULKAN_LOAD(name)                                                                     \
  api->name = reinterpret_cast<PFN_##name>(api->vkGetInstanceProcAddr(nullptr, #name));            \
  if (!api->name)                                                                                  \
    return Error{"the Vulkan loader lacks " #name};
  FUEL_VULKAN_GLOBAL_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  return api;
}

Expected<void> VulkanApi::loadInstance(VkInstance instance) {
#define FUEL_VULKAN_LOAD(name)                                                                     \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));                     \
  if (!name)                                                                                       \
    return Error{"the Vulkan instance lacks " #name};
  FUEL_VULKAN_INSTANCE_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  // Optional: present with the validation layers' debug-utils extension.
  vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  return {};
}

Expected<void> VulkanApi::loadDevice(VkDevice device) {
#define FUEL_VULKAN_LOAD(name)                                                                     \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));                         \
  if (!name)                                                                                       \
    return Error{"the Vulkan device lacks " #name};
  FUEL_VULKAN_DEVICE_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  return {};
}

const char *runtime::vulkanResultName(VkResult result) {
  switch (result) {
  case VK_SUCCESS:
    return "VK_SUCCESS";
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED:
    return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST:
    return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_LAYER_NOT_PRESENT:
    return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT:
    return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT:
    return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER:
    return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS:
    return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_INVALID_SHADER_NV:
    return "VK_ERROR_INVALID_SHADER_NV";
  default:
    return "a Vulkan error";
  }
}
