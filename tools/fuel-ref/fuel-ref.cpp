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
#include "fuel/Import/Npy.h"
#include "fuel/Reference/Interpreter.h"

#include <CLI/CLI.hpp>

#include <fstream>
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
    size_t eq = binding.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "fuel-ref: error: --input expects NAME=FILE.npy, got '"
                << binding << "'\n";
      return 2;
    }
    std::string path = binding.substr(eq + 1);
    std::shared_ptr<const FileBuffer> buffer = openInputFile(path, "tensor", diag);
    if (!buffer)
      return 1;
    NpyArray array;
    std::string error;
    if (!parseNpy(buffer->text(), array, error)) {
      std::cerr << path << ": error: '" << path << "' " << error << '\n';
      return 1;
    }
    tensors[binding.substr(0, eq)] = HostTensor::fromBytes(
        array.dtype, array.shape,
        buffer->text().substr(array.dataOffset, array.dataSize));
  }
  std::vector<HostTensor> results;
  if (failed(interpret(file->graph, tensors, results, diag)))
    return 1;
  for (size_t i = 0; i < results.size(); ++i) {
    std::ofstream out(outputs[i], std::ios::binary);
    out << writeNpy(results[i].dtype, results[i].shape, results[i].toBytes());
    if (!out) {
      std::cerr << "fuel-ref: error: cannot write '" << outputs[i] << "'\n";
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
