//===- GraphCommands.cpp - fuelc check and fuelc print --------------------===//

#include "Driver.h"

#include "fuel/Compiler/Pipeline.h"
#include "fuel/IR/GraphStats.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Import/Onnx.h"

#include <filesystem>
#include <iostream>
#include <map>

using namespace fuel;
using namespace fuel::driver;

namespace {
std::string typeText(const Graph &graph, ValueRef v) {
  return std::string(dtypeName(graph.dtype(v))) +
         formatShape(graph.shape(v), graph.symbols());
}

void printSummary(const Graph &graph, std::ostream &os) {
  GraphStats stats = computeGraphStats(graph);
  size_t numOps = graph.numNodes() - stats.numInputs - stats.numConstants;
  std::string name(graph.graphNameText());
  os << "graph" << (name.empty() ? "" : " '" + name + "'") << ": "
     << graph.numNodes() << " nodes (" << stats.numInputs << " inputs, "
     << stats.numConstants << " constants, " << numOps << " ops), "
     << graph.outputs().size() << " outputs\n";
  os << "inputs:\n";
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      os << "  " << graph.name(n) << ": " << typeText(graph, {n, 0}) << '\n';
  os << "outputs:\n";
  for (ValueRef v : graph.outputs())
    os << "  " << valueName(graph, v) << ": " << typeText(graph, v) << '\n';
  os << "parameters: " << stats.numConstants << " constants, "
     << stats.parameterElements << " elements, " << stats.parameterBytes
     << " bytes\n";
  if (graph.symbols().size() != 0) {
    os << "symbols:";
    for (uint32_t s = 0; s < graph.symbols().size(); ++s)
      os << ' ' << graph.symbols().name(s);
    os << '\n';
  }
  // Sorted by op name, for stable output.
  std::map<std::string_view, size_t> byName;
  for (unsigned k = 0; k < kNumOpKinds; ++k) {
    OpKind kind = static_cast<OpKind>(k);
    if (stats.nodesByOp[k] != 0 && kind != OpKind::Input &&
        kind != OpKind::Constant)
      byName[opName(kind)] = stats.nodesByOp[k];
  }
  os << "ops:\n";
  for (auto [op, count] : byName) {
    std::string padded(op);
    padded.resize(std::max<size_t>(padded.size(), 14), ' ');
    os << "  " << padded << ' ' << count << '\n';
  }
}
} // namespace

int driver::runCheck(const std::string &input, const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<GraphFile> file = importModel(input, options.freeze, diag);
  if (!file)
    return finishWithErrors(diag, options);
  printSummary(file->graph, std::cout);
  return kSuccess;
}

int driver::runPrint(const std::string &input, const std::string &output,
             const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<GraphFile> file = importModel(input, options.freeze, diag);
  if (!file)
    return finishWithErrors(diag, options);
  return writeOutput(output, printGraphJson(file->graph));
}

int driver::runImport(const std::string &input, const std::string &output,
                      const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<GraphFile> file = importModel(input, options.freeze, diag);
  if (!file)
    return finishWithErrors(diag, options);
  std::filesystem::path json(output);
  std::filesystem::path weights = json;
  weights.replace_extension(".bin");
  std::string bytes = externalizeConstants(file->graph, weights.filename().string());
  if (int code = writeOutput(weights.string(), bytes))
    return code;
  return writeOutput(output, printGraphJson(file->graph));
}
