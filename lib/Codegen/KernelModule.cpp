//===- KernelModule.cpp - The MLIR module of a plan's kernels -------------===//

#include "KernelEmitter.h"
#include "fuel/Codegen/X86Codegen.h"

using namespace fuel;

LogicalResult fuel::emitKernelModule(const Graph &graph,
                                     const std::vector<KernelSpec> &kernels,
                                     std::string &module, std::string &error) {
  module = "module {\n";
  for (const KernelSpec &spec : kernels) {
    codegen::KernelEmitter emitter(graph, spec);
    std::string why;
    if (failed(emitter.emit(module, why))) {
      error = "node '" + std::string(graph.name(spec.nodes.back())) + "': " + why;
      return failure();
    }
  }
  module += "}\n";
  return success();
}
