//===- ExecutionConfig.h - Planning policy ----------------------*- C++ -*-===//
//
// What the user allows and prefers: devices, trust, precision, providers,
// pins, and the extents to price symbolic dims at.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_EXECUTIONCONFIG_H
#define FUEL_PLANNER_EXECUTIONCONFIG_H

#include "fuel/IR/Device.h"
#include "fuel/Planner/Capsule.h"
#include "fuel/Planner/Placement.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace fuel {

struct ExecutionConfig {
  /// Devices plans may use; empty means every device of the machine.
  std::vector<DeviceRef> allowedDevices;
  /// Capsules less trusted than this are rejected.
  TrustLevel minimumTrust = TrustLevel::TrustedExternal;
  /// Hard precision floor: capsules whose worst-case relative error exceeds
  /// it are rejected.
  double maxRelativeError = std::numeric_limits<double>::infinity();
  /// Soft: keep only bit-stable kernels where one exists.
  bool preferBitStable = false;
  /// Fuse elementwise chains and epilogues into kernels (Transforms/Fusion.h).
  bool fusion = true;
  /// Providers to prefer among equally good kernels, most preferred first.
  std::vector<std::string> preferredProviders;
  /// Hard pins by node id, on top of the graph's own `placement`s.
  std::map<std::string, DeviceRef, std::less<>> pins;
  /// Extents symbolic dims are priced at (unbound symbols count as 1).
  std::map<std::string, int64_t, std::less<>> dims;
  /// Where graph inputs arrive and outputs are delivered.
  DeviceRef inputResidency{DeviceKind::CPU, 0};
  DeviceRef outputResidency{DeviceKind::CPU, 0};
  PlacerKind placer = PlacerKind::Optimal;
  /// Candidates kept per node and device on the Pareto frontier.
  unsigned frontierCap = 3;
};

/// Reads a fuel.policy file (docs/cli.md) into `config`, overwriting the
/// members it sets; reports every problem with its location.
LogicalResult parsePolicyJson(std::string_view text, std::string_view fileName,
                              DiagnosticEngine &diag, ExecutionConfig &config);
LogicalResult loadPolicy(const std::string &path, DiagnosticEngine &diag,
                         ExecutionConfig &config);

std::optional<PlacerKind> parsePlacerKind(std::string_view name);

} // namespace fuel

#endif // FUEL_PLANNER_EXECUTIONCONFIG_H
