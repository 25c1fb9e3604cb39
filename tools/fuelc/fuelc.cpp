//===- fuelc.cpp - The fuelc compiler driver ------------------------------===//
//
// Subcommands over the libraries: `check` (parse, verify, summarize) and
// `print` (canonical JSON). Exit codes: 0 success, 1 the input is wrong
// (diagnostics printed), 2 usage error, 3 internal error.
//
//===----------------------------------------------------------------------===//

#include "fuel/IR/GraphStats.h"
#include "fuel/Import/GraphJson.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

using namespace fuel;

namespace {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternal = 3 };

struct DriverOptions {
  std::string diagnosticsFormat = "text";
  unsigned maxErrors = 20;
};

/// Prints diagnostics as they come, as text or as JSON Lines on stderr.
void installRenderer(DiagnosticEngine &diag, const DriverOptions &options) {
  diag.setMaxErrors(options.maxErrors);
  bool json = options.diagnosticsFormat == "json";
  diag.setHandler([json](const Diagnostic &d) {
    if (json)
      std::cerr << diagnosticToJson(d) << '\n';
    else
      printDiagnosticText(std::cerr, d);
  });
}

int finishWithErrors(const DiagnosticEngine &diag,
                     const DriverOptions &options) {
  if (diag.suppressedCount() != 0 && options.diagnosticsFormat == "text")
    std::cerr << "note: " << diag.suppressedCount()
              << " more error(s) not shown (--max-errors=" << options.maxErrors
              << ")\n";
  return kInputError;
}

std::string typeText(const Graph &graph, ValueRef v) {
  return std::string(dtypeName(graph.dtype(v))) +
         formatShape(graph.shape(v), graph.symbols());
}

std::string valueName(const Graph &graph, ValueRef v) {
  std::string name(graph.name(v.node));
  if (graph.numResults(v.node) != 1)
    name += "#" + std::to_string(v.result);
  return name;
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

int runCheck(const std::string &input, const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<Graph> graph = readGraphFile(input, diag);
  if (!graph)
    return finishWithErrors(diag, options);
  printSummary(*graph, std::cout);
  return kSuccess;
}

int runPrint(const std::string &input, const std::string &output,
             const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<Graph> graph = readGraphFile(input, diag);
  if (!graph)
    return finishWithErrors(diag, options);
  std::string text = printGraphJson(*graph);
  if (output.empty() || output == "-") {
    std::cout << text;
    return kSuccess;
  }
  std::ofstream file(output, std::ios::binary);
  file << text;
  file.close();
  if (!file) {
    std::cerr << "fuelc: error: cannot write '" << output << "'\n";
    return kInputError;
  }
  return kSuccess;
}

void addCommonOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--diagnostics-format", options.diagnosticsFormat,
                  "How to print diagnostics: text (file:line:col: error: "
                  "...) or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--max-errors", options.maxErrors,
                  "Stop after this many errors (0: no limit)");
}

int runDriver(int argc, char **argv) {
  CLI::App app{"fuelc: an ahead-of-time ML graph compiler", "fuelc"};
  app.set_version_flag("--version",
                       std::string("fuelc ") + FUEL_VERSION +
                           " (graph format version " +
                           std::to_string(kGraphFormatVersion) + ")");
  app.require_subcommand(1);
  DriverOptions options;
  std::string input, output;

  CLI::App *check = app.add_subcommand(
      "check", "Parse and verify a graph, then print a summary of it");
  check->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin)")
      ->required();
  addCommonOptions(check, options);

  CLI::App *print = app.add_subcommand(
      "print", "Parse and verify a graph, then print its canonical JSON");
  print->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin)")
      ->required();
  print->add_option("-o,--output", output, "Output file (default: stdout)");
  addCommonOptions(print, options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? kSuccess : kUsageError;
  }
  if (check->parsed())
    return runCheck(input, options);
  return runPrint(input, output, options);
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runDriver(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "fuelc: internal error: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "fuelc: internal error\n";
  }
  return kInternal;
}
