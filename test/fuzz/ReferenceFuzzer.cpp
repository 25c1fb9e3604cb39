//===- ReferenceFuzzer.cpp - libFuzzer target for the reference interpreter ===//
//
// Every graph that parses and verifies, with its symbols bound to 2 and
// small enough to evaluate, runs through the reference interpreter on
// pseudo-random inputs: no crash, no sanitizer report, and a failure (e.g. a
// gather index out of range) always comes with a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuel/Import/GraphJson.h"
#include "fuel/Reference/Interpreter.h"

#include <cstdlib>

using namespace fuel;

/// Elements the interpreter may touch for one fuzz input.
static constexpr double kElementBudget = 1 << 16;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diag;
  std::optional<Graph> graph = fuzz::parseFuzzGraph(data, size, diag);
  if (!graph)
    return 0;
  auto extent = [](Dim d) { return d.isStatic() ? double(d.size()) : 2.0; };
  double elements = 0;
  for (NodeId n = 0; n < graph->numNodes(); ++n)
    for (uint32_t r = 0; r < graph->numResults(n); ++r) {
      double e = 1;
      for (Dim d : graph->shape({n, r}))
        e *= extent(d);
      elements += e;
    }
  if (elements > kElementBudget)
    return 0;
  std::map<std::string, HostTensor> inputs;
  uint32_t seed = 12345;
  for (NodeId n = 0; n < graph->numNodes(); ++n) {
    if (graph->kind(n) != OpKind::Input)
      continue;
    HostTensor t{graph->dtype({n, 0}), {}, {}};
    for (Dim d : graph->shape({n, 0}))
      t.shape.push_back(static_cast<int64_t>(extent(d)));
    for (int64_t i = 0; i < t.numElements(); ++i) {
      seed = seed * 1103515245 + 12345;
      t.values.push_back(double(int(seed >> 16) % 7 - 3));
    }
    inputs[std::string(graph->name(n))] = std::move(t);
  }
  std::vector<HostTensor> outputs;
  DiagnosticEngine runDiag;
  if (failed(interpret(*graph, inputs, outputs, runDiag)) &&
      !runDiag.hadErrors())
    std::abort();
  return 0;
}
