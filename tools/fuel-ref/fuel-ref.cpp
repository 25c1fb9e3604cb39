//===- fuel-ref.cpp - Run a graph with the reference interpreter ----------===//
//
//   fuel-ref model.json --input x=x.npy [--input ...] --output y.npy [...]
//
// Evaluates the graph naively on the host (fuel/Reference/Interpreter.h):
// the oracle that compiled kernels and runtimes are checked against. Outputs
// are written as .npy in the order of the graph's outputs. Exit codes as
// fuelc: 0 success, 1 bad input, 2 usage error, 3 internal error.
//
//===----------------------------------------------------------------------===//

#include "fuel/Import/GraphJson.h"
#include "fuel/Support/Npy.h"
#include "fuel/Reference/Interpreter.h"

#include <CLI/CLI.hpp>

#include <iostream>

using namespace fuel;

namespace {
int run(int argc, char **argv) {
  CLI::App app{"fuel-ref: evaluate a fuel.graph with the reference interpreter",
               "fuel-ref"};
  std::string graphPath;
  std::vector<std::string> inputs, outputs;
  app.add_option("graph", graphPath, "Graph file (fuel.graph JSON)")->required();
  app.add_option("--input", inputs, "NAME=FILE.npy for each graph input");
  app.add_option("--output", outputs,
                 "FILE.npy for each graph output, in order");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  DiagnosticEngine diag;
  diag.setHandler([](const Diagnostic &d) { printDiagnosticText(std::cerr, d); });
  std::optional<GraphFile> file = readGraphFile(graphPath, diag);
  if (!file)
    return 1;
  if (outputs.size() != file->graph.outputs().size()) {
    std::cerr << "fuel-ref: error: the graph has " << file->graph.outputs().size()
              << " outputs, " << outputs.size() << " --output files given\n";
    return 2;
  }
  std::map<std::string, HostTensor> tensors;
  for (const std::string &binding : inputs) {
    NamedArray input;
    if (Expected<void> read = readNamedNpy(binding, input); !read) {
      if (input.path.empty()) {
        std::cerr << "fuel-ref: error: " << read.error() << '\n';
        return 2;
      }
      std::cerr << input.path << ": error: " << read.error() << '\n';
      return 1;
    }
    tensors[input.name] =
        HostTensor::fromBytes(input.array.dtype, input.array.shape, input.data());
  }
  std::vector<HostTensor> results;
  if (failed(interpret(file->graph, tensors, results, diag)))
    return 1;
  for (size_t i = 0; i < results.size(); ++i) {
    if (Expected<void> written =
            writeNpyFile(outputs[i], results[i].dtype, results[i].shape, results[i].toBytes());
        !written) {
      std::cerr << "fuel-ref: error: " << written.error() << '\n';
      return 1;
    }
  }
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "fuel-ref: internal error: " << e.what() << '\n';
  }
  return 3;
}
