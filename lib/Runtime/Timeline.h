//===- Timeline.h - Spans of a session's runs, as a Chrome trace -*- C++ -*-===//
//
// What ran where and when: kernels on their device's track (timed on the
// device where its backend can, else on the host), the slices of a kernel
// split over a device's threads on one track per thread, copies and waits
// on the host's, and each run as a whole. Written as Chrome trace JSON, which
// chrome://tracing and Perfetto show as one row per track: a picture of
// whether the plan's devices overlapped.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_TIMELINE_H
#define FUEL_LIB_RUNTIME_TIMELINE_H

#include <string>
#include <vector>

namespace fuel::runtime {

class Timeline {
public:
  enum class Kind { Run, Kernel, Slice, Copy, Wait };

  /// A span of `name` on `track`, in seconds of the host's steady clock.
  void add(Kind kind, std::string name, unsigned track, double start, double end) {
    spans.push_back({kind, std::move(name), track, start, end});
  }
  void clear() { spans.clear(); }
  /// The spans as Chrome trace JSON (times in microseconds from the first
  /// span's start), track i named trackNames[i].
  std::string toChromeTrace(const std::vector<std::string> &trackNames) const;

private:
  struct Span {
    Kind kind;
    std::string name;
    unsigned track;
    double start, end;
  };
  std::vector<Span> spans;
};

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_TIMELINE_H
