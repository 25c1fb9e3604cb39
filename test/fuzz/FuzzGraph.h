//===- FuzzGraph.h - Fuzz input as a graph ------------------------*- C++ -*-===//
//
// The graph-taking fuzz targets read their input the same way: as a
// fuel.graph file whose weight references resolve against examples/mlp.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TEST_FUZZ_FUZZGRAPH_H
#define FUEL_TEST_FUZZ_FUZZGRAPH_H

#include "fuel/Import/GraphJson.h"

#include <cstdint>

namespace fuel::fuzz {

inline std::optional<Graph>
parseFuzzGraph(const uint8_t *data, size_t size, DiagnosticEngine &diag,
               std::unique_ptr<SourceLocator> *locator = nullptr) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  diag.setMaxErrors(50);
  GraphReadOptions options;
  options.baseDir = FUEL_EXAMPLES_DIR "/mlp"; // Lets references resolve.
  return parseGraphJson(text, "fuzz.json", options, diag, locator);
}

} // namespace fuel::fuzz

#endif // FUEL_TEST_FUZZ_FUZZGRAPH_H
