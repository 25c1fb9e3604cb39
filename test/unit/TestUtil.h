//===- TestUtil.h - Helpers shared by the unit tests ------------*- C++ -*-===//
#ifndef FUEL_TEST_UNIT_TESTUTIL_H
#define FUEL_TEST_UNIT_TESTUTIL_H

#include "fuel/Import/GraphJson.h"

#include <optional>
#include <string>
#include <vector>

namespace fuel::test {

/// A parse result with every diagnostic it produced.
struct ParseResult {
  std::optional<Graph> graph;
  std::vector<Diagnostic> diagnostics;

  std::string firstMessage() const {
    return diagnostics.empty() ? "" : diagnostics.front().message;
  }
};

inline ParseResult parseText(const std::string &text,
                             const std::string &baseDir = ".") {
  ParseResult result;
  DiagnosticEngine diag;
  diag.setHandler(
      [&](const Diagnostic &d) { result.diagnostics.push_back(d); });
  GraphReadOptions options;
  options.baseDir = baseDir;
  result.graph = parseGraphJson(text, "test.json", options, diag);
  return result;
}

/// Wraps sections into a complete fuel.graph document.
inline std::string document(const std::string &inputs,
                            const std::string &nodes,
                            const std::string &outputs,
                            const std::string &constants = "[]") {
  return R"({"format": "fuel.graph", "version": 1, "inputs": )" + inputs +
         R"(, "constants": )" + constants + R"(, "nodes": )" + nodes +
         R"(, "outputs": )" + outputs + "}";
}

/// Parses a graph with one node `y` applied to the given inputs.
inline ParseResult parseOneOp(const std::string &inputs,
                              const std::string &node) {
  return parseText(document(inputs, "[" + node + "]", R"(["y"])"));
}

/// The type of the value named `name` (result 0) as "f32[B, 4]".
inline std::string typeOf(const Graph &graph, std::string_view name,
                          uint32_t result = 0) {
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.name(n) == name)
      return std::string(dtypeName(graph.dtype({n, result}))) +
             formatShape(graph.shape({n, result}), graph.symbols());
  return "<no value " + std::string(name) + ">";
}

} // namespace fuel::test

#endif // FUEL_TEST_UNIT_TESTUTIL_H
