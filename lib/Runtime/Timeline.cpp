//===- Timeline.cpp - Spans of a session's runs, as a Chrome trace --------===//

#include "Timeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace fuel::runtime;
using json = nlohmann::ordered_json;

static const char *categoryOf(Timeline::Kind kind) {
  switch (kind) {
  case Timeline::Kind::Run: return "run";
  case Timeline::Kind::Kernel: return "kernel";
  case Timeline::Kind::Slice: return "slice";
  case Timeline::Kind::Copy: return "copy";
  case Timeline::Kind::Wait: return "wait";
  }
  return "";
}

std::string Timeline::toChromeTrace(const std::vector<std::string> &trackNames) const {
  json events = json::array();
  for (size_t t = 0; t < trackNames.size(); ++t) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", t},
                      {"args", {{"name", trackNames[t]}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", t},
                      {"args", {{"sort_index", t}}}});
  }
  double origin = spans.empty() ? 0 : spans.front().start;
  for (const Span &s : spans)
    origin = std::min(origin, s.start);
  for (const Span &s : spans)
    events.push_back({{"name", s.name},
                      {"cat", categoryOf(s.kind)},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", s.track},
                      {"ts", (s.start - origin) * 1e6},
                      {"dur", std::max(0.0, s.end - s.start) * 1e6}});
  return json{{"displayTimeUnit", "ms"}, {"traceEvents", events}}.dump(1) + "\n";
}
