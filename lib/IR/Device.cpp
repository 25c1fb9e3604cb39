//===- Device.cpp - Device references such as "cuda:0" --------------------===//

#include "fuel/IR/Device.h"

#include <charconv>

using namespace fuel;

static constexpr std::string_view kDeviceKindNames[] = {"cpu", "cuda",
                                                        "vulkan"};

std::string_view fuel::deviceKindName(DeviceKind kind) {
  return kDeviceKindNames[static_cast<unsigned>(kind)];
}

std::optional<DeviceRef> DeviceRef::decode(uint32_t bits) {
  if (bits == 0)
    return std::nullopt;
  return DeviceRef{static_cast<DeviceKind>((bits >> 16) - 1),
                   static_cast<uint16_t>(bits & 0xFFFF)};
}

std::optional<DeviceRef> fuel::parseDevice(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return std::nullopt;
  std::string_view kindName = text.substr(0, colon);
  std::string_view indexText = text.substr(colon + 1);
  for (unsigned k = 0; k < std::size(kDeviceKindNames); ++k) {
    if (kDeviceKindNames[k] != kindName)
      continue;
    uint16_t index = 0;
    auto [ptr, ec] = std::from_chars(
        indexText.data(), indexText.data() + indexText.size(), index);
    if (ec != std::errc() || ptr != indexText.data() + indexText.size() ||
        indexText.empty() || (indexText.size() > 1 && indexText[0] == '0'))
      return std::nullopt;
    return DeviceRef{static_cast<DeviceKind>(k), index};
  }
  return std::nullopt;
}

std::string fuel::formatDevice(DeviceRef device) {
  return std::string(deviceKindName(device.kind)) + ":" +
         std::to_string(device.index);
}
