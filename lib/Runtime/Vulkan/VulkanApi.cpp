//===- VulkanApi.cpp - The Vulkan loader, opened at run time ---------------===//

#include "VulkanApi.h"

#include <dlfcn.h>

using namespace fuel;
using namespace fuel::runtime;

VulkanApi::~VulkanApi() {
  if (library)
    dlclose(library);
}

std::unique_ptr<VulkanApi> VulkanApi::open(std::string &why) {
  void *library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = "the Vulkan loader (libvulkan.so.1) is not installed";
    return nullptr;
  }
  auto api = std::make_unique<VulkanApi>();
  api->library = library;
  api->vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
      dlsym(library, "vkGetInstanceProcAddr"));
  if (!api->vkGetInstanceProcAddr) {
    why = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return nullptr;
  }
#define FUEL_VULKAN_LOAD(name)                                                 \
  api->name = reinterpret_cast<PFN_##name>(                                    \
      api->vkGetInstanceProcAddr(nullptr, #name));                             \
  if (!api->name) {                                                            \
    why = "the Vulkan loader lacks " #name;                                    \
    return nullptr;                                                            \
  }
  FUEL_VULKAN_GLOBAL_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  return api;
}

bool VulkanApi::loadInstance(VkInstance instance, std::string &why) {
#define FUEL_VULKAN_LOAD(name)                                                 \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name)); \
  if (!name) {                                                                 \
    why = "the Vulkan instance lacks " #name;                                  \
    return false;                                                              \
  }
  FUEL_VULKAN_INSTANCE_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  // Optional: present with the validation layers' debug-utils extension.
  vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  return true;
}

bool VulkanApi::loadDevice(VkDevice device, std::string &why) {
#define FUEL_VULKAN_LOAD(name)                                                 \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));     \
  if (!name) {                                                                 \
    why = "the Vulkan device lacks " #name;                                    \
    return false;                                                              \
  }
  FUEL_VULKAN_DEVICE_FUNCTIONS(FUEL_VULKAN_LOAD)
#undef FUEL_VULKAN_LOAD
  return true;
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
