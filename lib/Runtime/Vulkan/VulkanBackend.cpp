//===- VulkanBackend.cpp - Running SPIR-V kernels on a Vulkan device -------===//
//
// - Device: the physical device whose name matches the machine
//   description's, else the N-th of `vulkan:N`; one queue with compute.
// - Memory: the arena is one device-local buffer; the constants the
//   device's kernels read are uploaded once into another. Their addresses
//   are a reserved, inaccessible range of the host's address space, so the
//   runtime's descriptors work unchanged and any host access faults rather
//   than corrupting memory. Transfers go through a host-visible staging
//   buffer, recorded in order with the dispatches.
// - Kernels: shader modules are created (and their capabilities checked
//   against the device) at load; pipelines, descriptor sets and parameter
//   words are made by `prepare` on the runtime's binding thread.
// - Execution: dispatches and copies are recorded into command buffers and
//   submitted when the host is about to compute (flush) or records an
//   event, with a fence per submission: an event is a submission's number,
//   and waiting for it waits for that submission's fence and those before.
//   A global memory barrier orders each dispatch and copy after the
//   previous ones. Downloads copy into a host-visible buffer per slot.
// - Timing (profiles, traces): timestamps before and after each kernel's
//   dispatches, read back at wait() and placed on the host's clock with
//   VK_EXT_calibrated_timestamps: nothing waits between launches.
// - FUEL_VULKAN_VALIDATION=1 enables the Khronos validation layer, whose
//   messages are printed as `vulkan validation: ...`.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"
#include "SpirvSection.h"
#include "VulkanApi.h"

#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

using namespace fuel;
using namespace fuel::runtime;

namespace {
/// Address space reserved for a device's arena and constants.
constexpr size_t kReservedBytes = size_t(1) << 40;

/// A zeroed Vulkan info struct of type `type`.
template <typename T> T make(VkStructureType type) {
  T info{};
  info.sType = type;
  return info;
}

struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  char *mapped = nullptr;
};

/// Prepared state of one dispatch of a program kernel.
struct PreparedDispatch {
  const GpuDispatchInfo *dispatch = nullptr;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  uint64_t paramsOffset = 0, paramsBytes = 0;
  uint32_t groups = 0;
};

struct Batch {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool inFlight = false;
  uint64_t submission = 0; // Its event, once submitted.
};

VKAPI_ATTR VkBool32 VKAPI_CALL
printValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT,
                       VkDebugUtilsMessageTypeFlagsEXT,
                       const VkDebugUtilsMessengerCallbackDataEXT *data, void *) {
  std::fprintf(stderr, "vulkan validation: %s\n", data->pMessage);
  return VK_FALSE;
}

class VulkanBackend final : public Backend {
public:
  ~VulkanBackend() override;
  Expected<void> open(const artifact::Device &info);

  Expected<void> allocateArena(uint64_t bytes) override;
  char *arenaBase() override { return base; }
  bool isHostMemory() const override { return false; }
  Expected<void> importConstants(const std::vector<std::string_view> &data,
                                 std::vector<char *> &addresses) override;
  Expected<void> loadKernels(std::string_view binary, const artifact::Program &program,
                             unsigned device) override;
  void *findKernel(const std::string &symbol) override;
  std::optional<std::string> kernelSignature(const std::string &symbol) override {
    auto *kernel = static_cast<const GpuKernelInfo *>(findKernel(symbol));
    return kernel ? kernel->signature : std::optional<std::string>();
  }
  void prepare(KernelCall &call) override;
  void launch(KernelCall &call) override;
  void upload(char *to, const char *from, size_t bytes) override;
  const char *enqueueDownload(size_t slot, const char *from, size_t bytes) override;
  Event record() override {
    submit();
    return submissions;
  }
  void waitFor(Event event) override;
  void wait() override;
  void flush() override { submit(); }
  bool startDeviceTiming() override;
  std::vector<LaunchSpan> takeLaunchSpans() override { return std::exchange(spans, {}); }
  std::string describe() const override { return properties.deviceName; }
  std::string error() override;

private:
  /// Nothing when `result` is VK_SUCCESS, else an error naming `what`.
  static Expected<void> check(VkResult result, const std::string &what);
  void fail(std::string message);
  Expected<void> createBuffer(uint64_t size, bool hostVisible, Allocation &out);
  void destroy(Allocation &a);
  /// The buffer holding device address `address`, and the byte offset.
  const Allocation *resolve(const char *address, uint64_t &offset) const;
  VkCommandBuffer recording();
  void submit();
  /// Orders everything recorded after it after everything before it.
  void barrier(VkCommandBuffer commands);
  /// Room for `bytes` in the staging buffer (waiting, growing if needed).
  char *stage(size_t bytes, uint64_t &offset);
  VkPipeline pipelineFor(const GpuDispatchInfo &d, VkPipelineLayout layout);
  const char *missingFeature(uint32_t capability) const;
  /// Reads the timestamps of the launches completed so far into `spans`.
  void readTimestamps();

  std::unique_ptr<VulkanApi> vk;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memoryProperties{};
  /// What the device supports, in the order the SPIR-V capabilities of
  /// the kernels are checked against (missingFeature).
  VkPhysicalDeviceFeatures features{};
  VkPhysicalDeviceVulkan11Features features11{};
  VkPhysicalDeviceVulkan12Features features12{};
  VkPhysicalDeviceFloatControlsProperties floatControls{};
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0, timestampBits = 0;
  bool calibrated = false; // VK_EXT_calibrated_timestamps is enabled.

  char *base = nullptr;
  Allocation arena, constants, staging, params;
  uint64_t constantsAt = 0, stagingUsed = 0;

  SpirvSection section;
  std::vector<VkShaderModule> modules;
  std::map<std::string, const GpuKernelInfo *> kernelsBySymbol;
  std::map<size_t, VkDescriptorSetLayout> setLayouts; // By binding count.
  std::map<size_t, VkPipelineLayout> pipelineLayouts;
  std::map<std::pair<unsigned, std::string>, VkPipeline> pipelines;
  std::mutex pipelineMutex;
  VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
  /// By program kernel: its dispatches, with descriptor sets and parameter
  /// slots allocated at load.
  std::vector<std::vector<PreparedDispatch>> prepared;
  std::vector<const artifact::Kernel *> kernelInfo;

  VkCommandPool commandPool = VK_NULL_HANDLE;
  std::vector<Batch> batches;
  Batch *current = nullptr;
  uint64_t submissions = 0;
  std::map<size_t, Allocation> downloadSlots;
  std::mutex errorMutex;
  std::string asyncError;

  // Device timing: a pair of queries per launch since the last wait, and
  // the kernel each pair timed.
  VkQueryPool queries = VK_NULL_HANDLE;
  uint32_t queryCapacity = 0;
  std::vector<size_t> timedKernels;
  std::vector<LaunchSpan> spans;
};
} // namespace

VulkanBackend::~VulkanBackend() {
  if (device) {
    vk->vkDeviceWaitIdle(device);
    for (Batch &b : batches)
      vk->vkDestroyFence(device, b.fence, nullptr);
    if (commandPool)
      vk->vkDestroyCommandPool(device, commandPool, nullptr);
    if (queries)
      vk->vkDestroyQueryPool(device, queries, nullptr);
    for (auto &[key, p] : pipelines)
      vk->vkDestroyPipeline(device, p, nullptr);
    for (auto &[n, l] : pipelineLayouts)
      vk->vkDestroyPipelineLayout(device, l, nullptr);
    for (auto &[n, l] : setLayouts)
      vk->vkDestroyDescriptorSetLayout(device, l, nullptr);
    if (descriptorPool)
      vk->vkDestroyDescriptorPool(device, descriptorPool, nullptr);
    for (VkShaderModule m : modules)
      vk->vkDestroyShaderModule(device, m, nullptr);
    for (Allocation *a : {&arena, &constants, &staging, &params})
      destroy(*a);
    for (auto &[slot, a] : downloadSlots)
      destroy(a);
    vk->vkDestroyDevice(device, nullptr);
  }
  if (messenger)
    vk->vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (instance)
    vk->vkDestroyInstance(instance, nullptr);
  if (base)
    munmap(base, kReservedBytes);
}

Expected<void> VulkanBackend::check(VkResult result, const std::string &what) {
  if (result == VK_SUCCESS)
    return {};
  return Error{what + " failed: " + vulkanResultName(result)};
}

void VulkanBackend::fail(std::string message) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (asyncError.empty())
    asyncError = std::move(message);
}

std::string VulkanBackend::error() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return asyncError;
}

/// Whether the Khronos validation layer is installed.
static bool hasValidationLayer(VulkanApi &vk) {
  uint32_t count = 0;
  vk.vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vk.vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(), [](const VkLayerProperties &l) {
    return std::string(l.layerName) == "VK_LAYER_KHRONOS_validation";
  });
}

/// The first word of a device name, lower case ("llvmpipe", "nvidia").
static std::string firstWord(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '(')
      break;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Expected<void> VulkanBackend::open(const artifact::Device &info) {
  Expected<std::unique_ptr<VulkanApi>> api = VulkanApi::open();
  if (!api)
    return Error{api.error()};
  vk = std::move(*api);
  const char *validation = std::getenv("FUEL_VULKAN_VALIDATION");
  bool validate = validation && std::string(validation) == "1" && hasValidationLayer(*vk);
  auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "fuel-runtime";
  app.apiVersion = VK_API_VERSION_1_2;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  auto create = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  create.pApplicationInfo = &app;
  if (validate) {
    create.enabledLayerCount = 1;
    create.ppEnabledLayerNames = &layer;
    create.enabledExtensionCount = 1;
    create.ppEnabledExtensionNames = &extension;
  }
  VkResult created = vk->vkCreateInstance(&create, nullptr, &instance);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER)
    return Error{"no Vulkan driver is installed (the loader found no ICD)"};
  if (Expected<void> checked = check(created, "creating a Vulkan instance"); !checked)
    return checked;
  if (Expected<void> loaded = vk->loadInstance(instance); !loaded)
    return loaded;
  if (validate && vk->vkCreateDebugUtilsMessengerEXT) {
    auto m = make<VkDebugUtilsMessengerCreateInfoEXT>(VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
    m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = printValidationMessage;
    vk->vkCreateDebugUtilsMessengerEXT(instance, &m, nullptr, &messenger);
  }
  uint32_t count = 0;
  vk->vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vk->vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (devices.empty())
    return Error{"no Vulkan device (the loader found no driver)"};
  // The device the machine description names, else vulkan:N's N-th.
  std::string wanted = firstWord(info.name);
  // The reader checked that the id is `vulkan:N`.
  size_t index = 0;
  std::string_view number = std::string_view(info.id).substr(info.id.find(':') + 1);
  std::from_chars(number.data(), number.data() + number.size(), index);
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties p;
    vk->vkGetPhysicalDeviceProperties(d, &p);
    if (!wanted.empty() && firstWord(p.deviceName) == wanted) {
      physical = d;
      break;
    }
  }
  if (!physical) {
    if (index >= devices.size())
      return Error{"there are " + std::to_string(devices.size()) +
                   " Vulkan devices and none is named like '" + info.name + "'"};
    physical = devices[index];
  }
  vk->vkGetPhysicalDeviceProperties(physical, &properties);
  vk->vkGetPhysicalDeviceMemoryProperties(physical, &memoryProperties);
  // 8- and 16-bit types need Vulkan 1.2's feature structures.
  features11 = make<VkPhysicalDeviceVulkan11Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  features12 = make<VkPhysicalDeviceVulkan12Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto all = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  bool modern = properties.apiVersion >= VK_API_VERSION_1_2;
  if (modern) {
    features11.pNext = &features12;
    all.pNext = &features11;
    vk->vkGetPhysicalDeviceFeatures2(physical, &all);
    features = all.features;
    features11.pNext = features12.pNext = nullptr;
    // Whether NaN and Inf survive the driver's compiler (PreserveInfNan.cpp).
    floatControls = make<VkPhysicalDeviceFloatControlsProperties>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES);
    auto withControls =
        make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
    withControls.pNext = &floatControls;
    vk->vkGetPhysicalDeviceProperties2(physical, &withControls);
    floatControls.pNext = nullptr;
  } else {
    vk->vkGetPhysicalDeviceFeatures(physical, &features);
  }
  uint32_t families = 0;
  vk->vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> familyList(families);
  vk->vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, familyList.data());
  auto compute = std::find_if(familyList.begin(), familyList.end(),
                              [](const VkQueueFamilyProperties &f) {
                                return f.queueFlags & VK_QUEUE_COMPUTE_BIT;
                              });
  if (compute == familyList.end())
    return Error{std::string(properties.deviceName) + " has no compute queue"};
  queueFamily = static_cast<uint32_t>(compute - familyList.begin());
  timestampBits = compute->timestampValidBits;
  float priority = 1;
  auto queueInfo = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queueInfo.queueFamilyIndex = queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  // Generated kernels use 64-bit integers and doubles where the graph
  // needs them (integer pow, float to int casts); enabled when present,
  // checked per module at load.
  auto enabled = make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  enabled.features.shaderInt64 = features.shaderInt64;
  enabled.features.shaderFloat64 = features.shaderFloat64;
  enabled.features.shaderInt16 = features.shaderInt16;
  auto enabled11 = make<VkPhysicalDeviceVulkan11Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto enabled12 = make<VkPhysicalDeviceVulkan12Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  enabled11.storageBuffer16BitAccess = features11.storageBuffer16BitAccess;
  enabled12.storageBuffer8BitAccess = features12.storageBuffer8BitAccess;
  enabled12.shaderInt8 = features12.shaderInt8;
  enabled12.shaderFloat16 = features12.shaderFloat16;
  if (modern) {
    enabled.pNext = &enabled11;
    enabled11.pNext = &enabled12;
  }
  auto deviceInfo = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  deviceInfo.pNext = &enabled;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  // Timestamps on the host's clock, for profiles and traces, where offered.
  uint32_t extensionCount = 0;
  vk->vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount, nullptr);
  std::vector<VkExtensionProperties> extensions(extensionCount);
  vk->vkEnumerateDeviceExtensionProperties(physical, nullptr, &extensionCount,
                                           extensions.data());
  const char *calibration = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  calibrated = std::any_of(extensions.begin(), extensions.end(), [&](const auto &e) {
    return std::string_view(e.extensionName) == calibration;
  });
  if (calibrated) {
    deviceInfo.enabledExtensionCount = 1;
    deviceInfo.ppEnabledExtensionNames = &calibration;
  }
  if (Expected<void> created = check(vk->vkCreateDevice(physical, &deviceInfo, nullptr, &device),
                                     "creating the Vulkan device");
      !created)
    return created;
  if (Expected<void> loaded = vk->loadDevice(device); !loaded)
    return loaded;
  if (calibrated)
    vk->vkGetCalibratedTimestampsEXT = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
        vk->vkGetDeviceProcAddr(device, "vkGetCalibratedTimestampsEXT"));
  vk->vkGetDeviceQueue(device, queueFamily, 0, &queue);
  auto poolInfo = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  poolInfo.queueFamilyIndex = queueFamily;
  if (Expected<void> created =
          check(vk->vkCreateCommandPool(device, &poolInfo, nullptr, &commandPool),
                "creating a command pool");
      !created)
    return created;
  void *reserved = mmap(nullptr, kReservedBytes, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED)
    return Error{"cannot reserve address space for the device's memory"};
  base = static_cast<char *>(reserved);
  return {};
}

Expected<void> VulkanBackend::createBuffer(uint64_t size, bool hostVisible, Allocation &out) {
  out.size = std::max<uint64_t>(size, 256);
  auto info = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = out.size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (Expected<void> created =
          check(vk->vkCreateBuffer(device, &info, nullptr, &out.buffer), "creating a buffer");
      !created)
    return created;
  VkMemoryRequirements req;
  vk->vkGetBufferMemoryRequirements(device, out.buffer, &req);
  VkMemoryPropertyFlags wanted =
      hostVisible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                  : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  std::optional<uint32_t> type;
  for (uint32_t t = 0; t < memoryProperties.memoryTypeCount && !type; ++t)
    if ((req.memoryTypeBits & (1u << t)) &&
        (memoryProperties.memoryTypes[t].propertyFlags & wanted) == wanted)
      type = t;
  if (!type)
    return Error{std::string("no ") + (hostVisible ? "host-visible" : "device-local") +
                 " memory type for a buffer"};
  auto alloc = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = *type;
  if (Expected<void> allocated = check(vk->vkAllocateMemory(device, &alloc, nullptr, &out.memory),
                                       "allocating " + std::to_string(size) + " bytes");
      !allocated)
    return allocated;
  if (Expected<void> bound =
          check(vk->vkBindBufferMemory(device, out.buffer, out.memory, 0), "binding buffer memory");
      !bound)
    return bound;
  if (hostVisible) {
    void *mapped = nullptr;
    if (Expected<void> mapping = check(
            vk->vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &mapped), "mapping memory");
        !mapping)
      return mapping;
    out.mapped = static_cast<char *>(mapped);
  }
  return {};
}

void VulkanBackend::destroy(Allocation &a) {
  if (a.buffer)
    vk->vkDestroyBuffer(device, a.buffer, nullptr);
  if (a.memory)
    vk->vkFreeMemory(device, a.memory, nullptr);
  a = Allocation{};
}

Expected<void> VulkanBackend::allocateArena(uint64_t bytes) {
  if (Expected<void> created = createBuffer(bytes, false, arena); !created)
    return created;
  uint64_t align = properties.limits.minStorageBufferOffsetAlignment;
  constantsAt = (arena.size + align - 1) / align * align;
  return {};
}

Expected<void> VulkanBackend::importConstants(const std::vector<std::string_view> &data,
                                              std::vector<char *> &addresses) {
  uint64_t align = std::max<uint64_t>(properties.limits.minStorageBufferOffsetAlignment, 16);
  uint64_t size = 0;
  std::vector<uint64_t> offsets;
  for (std::string_view d : data) {
    offsets.push_back(size);
    size = (size + d.size() + align - 1) / align * align;
  }
  if (data.empty())
    return {};
  if (Expected<void> created = createBuffer(size, false, constants); !created)
    return created;
  for (size_t i = 0; i < data.size(); ++i) {
    addresses.push_back(base + constantsAt + offsets[i]);
    upload(addresses.back(), data[i].data(), data[i].size());
  }
  wait();
  return {};
}

const Allocation *VulkanBackend::resolve(const char *address,
                                         uint64_t &offset) const {
  uint64_t at = static_cast<uint64_t>(address - base);
  if (at < arena.size) {
    offset = at;
    return &arena;
  }
  if (at >= constantsAt && at - constantsAt < constants.size) {
    offset = at - constantsAt;
    return &constants;
  }
  return nullptr;
}

/// The device feature SPIR-V capability `cap` needs, when the device lacks
/// it (nullptr when present or not a feature).
const char *VulkanBackend::missingFeature(uint32_t cap) const {
  auto need = [](VkBool32 present, const char *name) {
    return present ? nullptr : name;
  };
  switch (cap) {
  case 9: // Float16
    return need(features12.shaderFloat16, "shaderFloat16");
  case 10: // Float64
    return need(features.shaderFloat64, "shaderFloat64");
  case 11: // Int64
    return need(features.shaderInt64, "shaderInt64");
  case 22: // Int16
    return need(features.shaderInt16, "shaderInt16");
  case 39: // Int8
    return need(features12.shaderInt8, "shaderInt8");
  case 4433: // StorageBuffer16BitAccess
    return need(features11.storageBuffer16BitAccess, "storageBuffer16BitAccess");
  case 4448: // StorageBuffer8BitAccess
    return need(features12.storageBuffer8BitAccess, "storageBuffer8BitAccess");
  case 4466: // SignedZeroInfNanPreserve (of 32-bit floats: PreserveInfNan.cpp)
    return need(floatControls.shaderSignedZeroInfNanPreserveFloat32,
                "shaderSignedZeroInfNanPreserveFloat32 (Vulkan 1.2)");
  default:
    return nullptr;
  }
}

Expected<void> VulkanBackend::loadKernels(std::string_view binary, const artifact::Program &program,
                                          unsigned deviceIndex) {
  if (Expected<void> read = readSpirvSection(binary, section); !read)
    return Error{"the SPIR-V kernel section " + read.error()};
  for (const SpirvModule &m : section.modules) {
    for (uint32_t cap : m.capabilities)
      if (const char *feature = missingFeature(cap))
        return Error{"SPIR-V module '" + m.name + "' needs " + feature + ", which " +
                     properties.deviceName + " lacks"};
    auto info = make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    info.codeSize = m.words.size() * 4;
    info.pCode = m.words.data();
    VkShaderModule module;
    if (Expected<void> created = check(vk->vkCreateShaderModule(device, &info, nullptr, &module),
                                       "creating shader module '" + m.name + "'");
        !created)
      return created;
    modules.push_back(module);
  }
  for (const GpuKernelInfo &k : section.kernels)
    kernelsBySymbol[k.symbol] = &k;
  // Descriptor sets and parameter slots of every dispatch of the device's
  // kernels, allocated once.
  uint64_t align = std::max<uint64_t>(properties.limits.minStorageBufferOffsetAlignment, 16);
  uint64_t paramsBytes = 0;
  uint32_t sets = 0, descriptors = 0;
  prepared.assign(program.kernels.size(), {});
  kernelInfo.assign(program.kernels.size(), nullptr);
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const artifact::Kernel &info = program.kernels[k];
    auto it = kernelsBySymbol.find(info.symbol);
    if (info.device != deviceIndex || it == kernelsBySymbol.end())
      continue;
    kernelInfo[k] = &info;
    if (Expected<void> checked = checkGpuKernel(*it->second, info); !checked)
      return checked;
    // A storage buffer binding reaches at most maxStorageBufferRange bytes.
    for (const artifact::KernelArg &arg : info.args)
      if (arg.tensor.storage == artifact::StorageKind::Buffer &&
          program.buffers[arg.tensor.index].size > properties.limits.maxStorageBufferRange)
        return Error{"kernel '" + info.symbol + "' reads a " +
                     std::to_string(program.buffers[arg.tensor.index].size) + "-byte buffer; " +
                     properties.deviceName + " binds at most " +
                     std::to_string(properties.limits.maxStorageBufferRange) + " bytes"};
    for (const GpuDispatchInfo &d : it->second->dispatches) {
      if (d.workgroupSize > properties.limits.maxComputeWorkGroupInvocations ||
          d.workgroupSize > properties.limits.maxComputeWorkGroupSize[0])
        return Error{"kernel '" + info.symbol + "' needs workgroups of " +
                     std::to_string(d.workgroupSize) + " threads"};
      PreparedDispatch p;
      p.dispatch = &d;
      p.paramsOffset = paramsBytes;
      p.paramsBytes = parameterWords(d, info) * 4;
      paramsBytes += (p.paramsBytes + align - 1) / align * align;
      prepared[k].push_back(p);
      ++sets;
      descriptors += static_cast<uint32_t>(d.args.size()) + 1;
    }
  }
  if (sets == 0)
    return {};
  if (Expected<void> created = createBuffer(paramsBytes, true, params); !created)
    return created;
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
  auto poolInfo = make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  poolInfo.maxSets = sets;
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &size;
  if (Expected<void> created =
          check(vk->vkCreateDescriptorPool(device, &poolInfo, nullptr, &descriptorPool),
                "creating a descriptor pool");
      !created)
    return created;
  for (std::vector<PreparedDispatch> &kernel : prepared)
    for (PreparedDispatch &p : kernel) {
      size_t bindings = p.dispatch->args.size() + 1;
      VkDescriptorSetLayout &setLayout = setLayouts[bindings];
      if (!setLayout) {
        std::vector<VkDescriptorSetLayoutBinding> list(bindings);
        for (size_t b = 0; b < bindings; ++b)
          list[b] = {static_cast<uint32_t>(b), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                     VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
        auto info = make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
        info.bindingCount = static_cast<uint32_t>(bindings);
        info.pBindings = list.data();
        auto layoutInfo = make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
        layoutInfo.setLayoutCount = 1;
        layoutInfo.pSetLayouts = &setLayout;
        if (Expected<void> created =
                check(vk->vkCreateDescriptorSetLayout(device, &info, nullptr, &setLayout),
                      "creating a descriptor set layout");
            !created)
          return created;
        if (Expected<void> created = check(vk->vkCreatePipelineLayout(device, &layoutInfo, nullptr,
                                                                      &pipelineLayouts[bindings]),
                                           "creating a pipeline layout");
            !created)
          return created;
      }
      p.layout = pipelineLayouts[bindings];
      auto alloc = make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
      alloc.descriptorPool = descriptorPool;
      alloc.descriptorSetCount = 1;
      alloc.pSetLayouts = &setLayout;
      if (Expected<void> allocated = check(vk->vkAllocateDescriptorSets(device, &alloc, &p.set),
                                           "allocating descriptor sets");
          !allocated)
        return allocated;
    }
  return {};
}

void *VulkanBackend::findKernel(const std::string &symbol) {
  auto it = kernelsBySymbol.find(symbol);
  return it == kernelsBySymbol.end() ? nullptr
                                     : const_cast<GpuKernelInfo *>(it->second);
}

VkPipeline VulkanBackend::pipelineFor(const GpuDispatchInfo &d, VkPipelineLayout layout) {
  std::lock_guard<std::mutex> lock(pipelineMutex);
  VkPipeline &pipeline = pipelines[{d.module, d.entry}];
  if (pipeline)
    return pipeline;
  auto info = make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = modules[d.module];
  info.stage.pName = d.entry.c_str();
  info.layout = layout;
  if (Expected<void> created =
          check(vk->vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline),
                "creating the pipeline of '" + d.entry + "'");
      !created)
    fail(created.error());
  return pipeline;
}

void VulkanBackend::prepare(KernelCall &call) {
  const artifact::Kernel &info = *kernelInfo[call.kernel];
  for (PreparedDispatch &p : prepared[call.kernel]) {
    const GpuDispatchInfo &d = *p.dispatch;
    p.pipeline = pipelineFor(d, p.layout);
    std::vector<VkDescriptorBufferInfo> buffers;
    std::vector<int64_t> elementOffsets;
    uint64_t align = properties.limits.minStorageBufferOffsetAlignment;
    for (unsigned a : d.args) {
      uint64_t offset = 0;
      const Allocation *alloc =
          resolve(reinterpret_cast<const char *>(call.descriptors[a][1]), offset);
      if (!alloc) {
        fail("kernel '" + info.symbol + "' argument " + std::to_string(a) +
             " is outside the device's memory");
        return;
      }
      // Bound at an aligned offset at or below the lowest element the view
      // reaches (below its first one when a stride is negative, as in a
      // reversed slice); the rest is the element offset.
      const std::vector<int64_t> &desc = call.descriptors[a];
      int64_t below = 0;
      for (unsigned k = 0, rank = info.args[a].tensor.sizes.size(); k < rank; ++k)
        if (desc[3 + rank + k] < 0 && desc[3 + k] > 0)
          below -= desc[3 + rank + k] * (desc[3 + k] - 1);
      uint64_t lowest = offset - std::min<uint64_t>(offset, below * call.elementBytes[a]);
      uint64_t bound = lowest / align * align;
      uint64_t range = std::min<uint64_t>(alloc->size - bound,
                                          properties.limits.maxStorageBufferRange);
      buffers.push_back({alloc->buffer, bound, range / 4 * 4});
      elementOffsets.push_back(static_cast<int64_t>((offset - bound) / call.elementBytes[a]));
    }
    writeParameters(d, info, call, elementOffsets,
                    reinterpret_cast<int32_t *>(params.mapped + p.paramsOffset));
    buffers.push_back({params.buffer, p.paramsOffset, p.paramsBytes});
    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    for (size_t b = 0; b < buffers.size(); ++b) {
      writes[b] = make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[b].dstSet = p.set;
      writes[b].dstBinding = static_cast<uint32_t>(b);
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &buffers[b];
    }
    vk->vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()),
                               writes.data(), 0, nullptr);
    p.groups = workgroups(d, info, call,
                          std::min<int64_t>(65535, properties.limits.maxComputeWorkGroupCount[0]));
  }
}

VkCommandBuffer VulkanBackend::recording() {
  if (current)
    return current->commands;
  auto free = std::find_if(batches.begin(), batches.end(),
                           [](const Batch &b) { return !b.inFlight; });
  if (free == batches.end()) {
    Batch b;
    auto alloc = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    alloc.commandPool = commandPool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    auto fence = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
    Expected<void> created = check(vk->vkAllocateCommandBuffers(device, &alloc, &b.commands),
                                   "allocating a command buffer");
    if (created)
      created = check(vk->vkCreateFence(device, &fence, nullptr, &b.fence), "creating a fence");
    if (!created) {
      fail(created.error());
      return VK_NULL_HANDLE;
    }
    batches.push_back(b);
    free = batches.end() - 1;
  }
  current = &*free;
  auto begin = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk->vkBeginCommandBuffer(current->commands, &begin);
  return current->commands;
}

void VulkanBackend::barrier(VkCommandBuffer commands) {
  auto b = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  vk->vkCmdPipelineBarrier(commands, stages, stages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void VulkanBackend::submit() {
  if (!current)
    return;
  vk->vkEndCommandBuffer(current->commands);
  auto info = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  info.commandBufferCount = 1;
  info.pCommandBuffers = &current->commands;
  if (Expected<void> submitted =
          check(vk->vkQueueSubmit(queue, 1, &info, current->fence), "submitting work");
      !submitted)
    fail(submitted.error());
  current->inFlight = true;
  current->submission = ++submissions;
  current = nullptr;
}

void VulkanBackend::waitFor(Event event) {
  for (Batch &b : batches) {
    if (!b.inFlight || b.submission > event || !error().empty())
      continue;
    if (Expected<void> waited = check(vk->vkWaitForFences(device, 1, &b.fence, VK_TRUE, UINT64_MAX),
                                      "waiting for the device");
        !waited)
      fail(waited.error());
    vk->vkResetFences(device, 1, &b.fence);
    b.inFlight = false;
  }
}

void VulkanBackend::wait() {
  if (!error().empty())
    return;
  waitFor(record());
  stagingUsed = 0;
  if (error().empty())
    readTimestamps();
}

void VulkanBackend::launch(KernelCall &call) {
  if (!error().empty())
    return;
  VkCommandBuffer commands = recording();
  if (!commands)
    return;
  // Timed: the first timestamp once the work before is done, the second
  // once the kernel's dispatches are.
  uint32_t query = static_cast<uint32_t>(2 * timedKernels.size());
  bool timed = queries && query + 2 <= queryCapacity;
  if (timed) {
    timedKernels.push_back(call.kernel);
    vk->vkCmdResetQueryPool(commands, queries, query, 2);
    vk->vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries, query);
  }
  for (const PreparedDispatch &p : prepared[call.kernel]) {
    if (p.groups == 0)
      continue;
    vk->vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vk->vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0,
                                1, &p.set, 0, nullptr);
    vk->vkCmdDispatch(commands, p.groups, 1, 1);
    barrier(commands);
  }
  if (timed)
    vk->vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries,
                            query + 1);
}

bool VulkanBackend::startDeviceTiming() {
  if (queries)
    return true;
  if (!calibrated || !vk->vkGetCalibratedTimestampsEXT || timestampBits == 0)
    return false;
  // A pair per kernel: every launch of a run, whose end waits.
  queryCapacity = static_cast<uint32_t>(2 * std::max<size_t>(prepared.size(), 1));
  auto info = make<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = queryCapacity;
  // Without a query pool the session times launches from the host.
  if (vk->vkCreateQueryPool(device, &info, nullptr, &queries) != VK_SUCCESS) {
    queries = VK_NULL_HANDLE;
    return false;
  }
  return true;
}

void VulkanBackend::readTimestamps() {
  if (timedKernels.empty())
    return;
  std::vector<uint64_t> ticks(2 * timedKernels.size());
  VkCalibratedTimestampInfoEXT domains[2] = {
      make<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT),
      make<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT)};
  domains[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
  domains[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT; // std::steady_clock's.
  uint64_t now[2], deviation = 0;
  Expected<void> read =
      check(vk->vkGetQueryPoolResults(device, queries, 0, static_cast<uint32_t>(ticks.size()),
                                      ticks.size() * 8, ticks.data(), 8,
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "reading timestamps");
  if (read)
    read = check(vk->vkGetCalibratedTimestampsEXT(device, 2, domains, now, &deviation),
                 "calibrating timestamps");
  if (!read) {
    fail(read.error());
    timedKernels.clear();
    return;
  }
  // Ticks count modulo 2^timestampBits; a run is far shorter than a wrap.
  uint64_t mask = timestampBits >= 64 ? ~uint64_t(0) : (uint64_t(1) << timestampBits) - 1;
  double period = properties.limits.timestampPeriod * 1e-9; // Seconds per tick.
  auto toHost = [&](uint64_t tick) {
    int64_t before = static_cast<int64_t>((now[0] - tick) & mask);
    return static_cast<double>(now[1]) * 1e-9 - static_cast<double>(before) * period;
  };
  for (size_t i = 0; i < timedKernels.size(); ++i)
    spans.push_back({timedKernels[i], toHost(ticks[2 * i]), toHost(ticks[2 * i + 1])});
  timedKernels.clear();
}

char *VulkanBackend::stage(size_t bytes, uint64_t &offset) {
  uint64_t at = (stagingUsed + 15) / 16 * 16;
  if (at + bytes > staging.size) {
    wait(); // Everything staged so far has been consumed.
    at = 0;
    if (bytes > staging.size) {
      destroy(staging);
      if (Expected<void> created =
              createBuffer(std::max<uint64_t>(bytes, uint64_t(1) << 20), true, staging);
          !created) {
        fail(created.error());
        return nullptr;
      }
    }
  }
  stagingUsed = at + bytes;
  offset = at;
  return staging.mapped + at;
}

void VulkanBackend::upload(char *to, const char *from, size_t bytes) {
  if (bytes == 0) // Empty tensors: Vulkan forbids empty copies.
    return;
  uint64_t target = 0, source = 0;
  const Allocation *alloc = resolve(to, target);
  if (!alloc || !error().empty()) {
    fail("an upload targets memory outside the device");
    return;
  }
  char *staged = stage(bytes, source);
  VkCommandBuffer commands = recording();
  if (!staged || !commands)
    return;
  std::memcpy(staged, from, bytes);
  VkBufferCopy region{source, target, bytes};
  vk->vkCmdCopyBuffer(commands, staging.buffer, alloc->buffer, 1, &region);
  barrier(commands);
}

const char *VulkanBackend::enqueueDownload(size_t slot, const char *from, size_t bytes) {
  uint64_t source = 0;
  const Allocation *alloc = resolve(from, source);
  if (!alloc || !error().empty()) {
    fail("a download reads memory outside the device");
    return nullptr;
  }
  Allocation &region = downloadSlots[slot];
  if (region.size < bytes || !region.buffer) {
    wait(); // A copy in flight may still target the old region.
    destroy(region);
    if (Expected<void> created = createBuffer(std::max<uint64_t>(bytes, 64), true, region);
        !created) {
      fail(created.error());
      return nullptr;
    }
  }
  VkCommandBuffer commands = recording();
  if (!commands)
    return nullptr;
  if (bytes > 0) { // Empty tensors: Vulkan forbids empty copies.
    VkBufferCopy copy{source, 0, bytes};
    vk->vkCmdCopyBuffer(commands, alloc->buffer, region.buffer, 1, &copy);
    barrier(commands);
  }
  return region.mapped;
}

Expected<std::unique_ptr<Backend>> runtime::createVulkanBackend(const artifact::Device &device) {
  auto backend = std::make_unique<VulkanBackend>();
  if (Expected<void> opened = backend->open(device); !opened)
    return Error{opened.error()};
  return std::unique_ptr<Backend>(std::move(backend));
}
