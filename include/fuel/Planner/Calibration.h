//===- Calibration.h - Measured kernel latencies ----------------*- C++ -*-===//
//
// A table of measured kernel latencies keyed by (op, dtype, backend,
// provider, size class = floor(log2(result elements))). Where an entry
// matches a candidate, its latency, scaled by the ratio of result elements,
// replaces the roofline time; transfers and memory are priced as before.
// Read from a fuel.calibration JSON file (docs/machine-format.md).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_CALIBRATION_H
#define FUEL_PLANNER_CALIBRATION_H

#include "fuel/IR/Device.h"
#include "fuel/Support/DType.h"
#include "fuel/IR/OpKind.h"
#include "fuel/Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace fuel {

class CalibrationTable {
public:
  struct Entry {
    double elements; // Result elements of the measured call.
    double latency;  // Seconds.
  };

  void add(OpKind op, DType dtype, DeviceKind backend, std::string provider,
           Entry entry);
  /// The measured time for a call with `elements` result elements, scaled
  /// from the entry of the same size class; nullopt without one.
  std::optional<double> lookup(OpKind op, DType dtype, DeviceKind backend,
                               std::string_view provider,
                               double elements) const;
  size_t size() const { return entries.size(); }

  static int sizeClass(double elements);

private:
  using Key = std::tuple<OpKind, DType, DeviceKind, std::string, int>;
  std::map<Key, Entry> entries;
};

std::optional<CalibrationTable> parseCalibrationJson(std::string_view text,
                                                     std::string_view fileName,
                                                     DiagnosticEngine &diag);
std::optional<CalibrationTable> loadCalibration(const std::string &path,
                                                DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_PLANNER_CALIBRATION_H
