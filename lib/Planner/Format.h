//===- Format.h - Human-readable times and sizes for plan dumps -*- C++ -*-===//
#ifndef FUEL_LIB_PLANNER_FORMAT_H
#define FUEL_LIB_PLANNER_FORMAT_H

#include <string>

namespace fuel {

/// "12.3 us" or "4.47 ms", three significant digits.
std::string formatTime(double seconds);
/// "512 B", "1.5 KiB", "3 MiB".
std::string formatBytes(double bytes);

} // namespace fuel

#endif // FUEL_LIB_PLANNER_FORMAT_H
