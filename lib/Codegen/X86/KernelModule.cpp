//===- KernelModule.cpp - The MLIR module of a plan's kernels -------------===//

#include "KernelEmitter.h"
#include "X86Codegen.h"

#include "fuel/Artifact/Program.h"
#include "fuel/Support/Sha256.h"

#include <set>

using namespace fuel;

LogicalResult fuel::emitKernelModule(const Graph &graph, const std::vector<KernelSpec> &kernels,
                                     std::string &module,
                                     std::map<std::string, std::string> &revisions,
                                     DiagnosticEngine &diag) {
  module = "module {\n";
  // Library kernels the generated ones call, declared once each.
  std::set<std::string> libraries;
  for (const KernelSpec &spec : kernels) {
    if (spec.librarySymbol.empty() || !libraries.insert(spec.librarySymbol).second)
      continue;
    std::string type = codegen::librarySignature(graph, spec);
    module += "  func.func private @" + spec.librarySymbol +
              type.substr(0, type.find(" ->")) +
              " attributes {llvm.emit_c_interface}\n";
  }
  for (const KernelSpec &spec : kernels) {
    codegen::KernelEmitter emitter(graph, spec);
    size_t start = module.size();
    if (failed(emitter.emit(module, diag)))
      return failure();
    revisions[spec.symbol] =
        "sha256:" + toHex(Sha256::of(std::string_view(module).substr(start)));
    // What the runtime checks the program's arguments against at load.
    std::vector<std::pair<DType, size_t>> args;
    for (const KernelArg &arg : spec.args)
      args.emplace_back(graph.dtype(arg.value), graph.shape(arg.value).size());
    std::string signature =
        artifact::kernelSignature(args, !spec.symbols.empty(), spec.takesSliceOrigin);
    module += "  llvm.mlir.global external constant @" + spec.symbol + "_signature(\"" +
              signature + "\\00\") {addr_space = 0 : i32}\n";
  }
  module += "}\n";
  return success();
}
