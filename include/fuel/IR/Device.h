//===- Device.h - Device references such as "cuda:0" ------------*- C++ -*-===//
#ifndef FUEL_IR_DEVICE_H
#define FUEL_IR_DEVICE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fuel {

enum class DeviceKind : uint8_t { CPU, CUDA, Vulkan };

/// A device of a machine, named `<kind>:<index>` in files.
struct DeviceRef {
  DeviceKind kind = DeviceKind::CPU;
  uint16_t index = 0;

  bool operator==(const DeviceRef &o) const {
    return kind == o.kind && index == o.index;
  }
  /// Dense encoding for per-node storage; 0 is reserved for "no device".
  uint32_t encode() const {
    return (static_cast<uint32_t>(kind) + 1) << 16 | index;
  }
  static std::optional<DeviceRef> decode(uint32_t bits);
};

std::string_view deviceKindName(DeviceKind kind);
/// Parses "cpu:0", "cuda:1", "vulkan:0"; nullopt for anything else.
std::optional<DeviceRef> parseDevice(std::string_view text);
std::string formatDevice(DeviceRef device);

} // namespace fuel

#endif // FUEL_IR_DEVICE_H
