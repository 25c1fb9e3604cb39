//===- Machine.h - The machine a plan is made for ---------------*- C++ -*-===//
//
// Devices with their roofline parameters (peak throughput per dtype, memory
// bandwidth and capacity, launch overhead, code generation target) and the
// links between them. Read from a fuel.machine JSON file
// (docs/machine-format.md) or taken from a built-in preset.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_MACHINE_H
#define FUEL_PLANNER_MACHINE_H

#include "fuel/Support/DType.h"
#include "fuel/IR/Device.h"
#include "fuel/Planner/Calibration.h"
#include "fuel/Support/Diagnostics.h"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

struct DeviceSpec {
  DeviceRef ref;
  std::string name;
  /// Code generation target: an x86-64 level ("x86-64-v3"), an SM
  /// ("sm_90") or a Vulkan version ("vulkan1.3").
  std::string target;
  /// FLOP/s per dtype; 0 where the device cannot compute in that dtype.
  std::array<double, kNumDTypes> peakFlops{};
  double memoryBandwidth = 0; // bytes/s
  double memoryCapacity = 0;  // bytes
  double launchOverhead = 0;  // seconds per kernel
  /// Threads per workgroup of generated GPU kernels.
  unsigned workgroupSize = 256;
};

struct LinkSpec {
  DeviceRef from, to;
  double bandwidth = 0; // bytes/s
  double latency = 0;   // seconds
};

struct Machine {
  std::string name;
  std::string description;
  std::vector<DeviceSpec> devices;
  std::vector<LinkSpec> links;
  /// Measured latencies that replace the roofline where they match.
  std::optional<CalibrationTable> calibration;

  /// Index of `ref` in `devices`, or nullopt.
  std::optional<unsigned> indexOf(DeviceRef ref) const;
  /// Latency and 1/bandwidth matrices (device index x device index) with
  /// infinity where there is no direct link.
  void linkMatrices(std::vector<double> &latency,
                    std::vector<double> &inverseBandwidth) const;
};

/// Parses a fuel.machine document; nullopt after reporting errors.
std::optional<Machine> parseMachineJson(std::string_view text,
                                        std::string_view fileName,
                                        DiagnosticEngine &diag);

/// The built-in machines, by name (see `fuelc targets`).
std::vector<std::string_view> machinePresetNames();
/// The JSON text of a preset, or an empty view.
std::string_view machinePresetText(std::string_view name);

/// A preset name or a path to a machine file.
std::optional<Machine> loadMachine(const std::string &nameOrPath,
                                   DiagnosticEngine &diag);

/// An x86-64 code generation target: an x86-64 level (`x86-64`,
/// `x86-64-v2`, `-v3`, `-v4`), then any of the extensions fuelc's kernels
/// use, each after a `+` (`x86-64-v4+avx512vnni`, `x86-64-v3+avxvnni`).
struct X86TargetName {
  std::string level;
  std::vector<std::string> extensions;
};

/// `target` split into its level and extensions; nullopt when it is not an
/// x86-64 target (an unknown level or extension, or one named twice).
std::optional<X86TargetName> parseX86Target(std::string_view target);

/// The CPU features code built for `target` may use, in LLVM's spelling:
/// its level's, then its extensions; nullptr for other targets. That code
/// runs only where all of them are present. Each target is parsed once
/// (the capsule filter asks for every node); the list lives as long as
/// the process.
const std::vector<std::string> *x86TargetFeatures(std::string_view target);

/// The x86-64 target of the CPU this process runs on: the highest level
/// whose features it has, and the extensions it has (FUEL_HIDE_CPU_FEATURES
/// hides some, as for the runtime's check).
std::string hostX86Target();

} // namespace fuel

#endif // FUEL_PLANNER_MACHINE_H
