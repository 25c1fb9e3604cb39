//===- KernelModule.cpp - The MLIR module of a plan's kernels -------------===//

#include "KernelEmitter.h"
#include "fuel/Codegen/X86Codegen.h"

#include <set>

using namespace fuel;

LogicalResult fuel::emitKernelModule(const Graph &graph,
                                     const std::vector<KernelSpec> &kernels,
                                     std::string &module, std::string &error) {
  module = "module {\n";
  // Library kernels the generated ones call, declared once each.
  std::set<std::string> libraries;
  for (const KernelSpec &spec : kernels) {
    if (spec.librarySymbol.empty() || !libraries.insert(spec.librarySymbol).second)
      continue;
    std::string type = codegen::librarySignature(graph.kind(spec.nodes.front()));
    module += "  func.func private @" + spec.librarySymbol +
              type.substr(0, type.find(" ->")) +
              " attributes {llvm.emit_c_interface}\n";
  }
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
