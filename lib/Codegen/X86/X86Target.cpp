//===- X86Target.cpp - The x86-64 code generation target ------------------===//

#include "X86Codegen.h"

#include "fuel/Codegen/PlanCodegen.h"

#include <algorithm>

using namespace fuel;

static LogicalResult generateX86(const CodegenInput &in, TargetCode &out, RouteCode &code,
                                 DiagnosticEngine &diag) {
  std::optional<X86TargetName> target = parseX86Target(in.device.target);
  if (!target) {
    diag.error({}, "device " + formatDevice(in.device.ref) + " has target '" + in.device.target +
                       "', which is not an x86-64 target (x86-64, x86-64-v2, x86-64-v3 or "
                       "x86-64-v4, optionally with +avxvnni or +avx512vnni)");
    return failure();
  }
  std::string extensions;
  for (const std::string &e : target->extensions)
    extensions += (extensions.empty() ? "+" : ",+") + e;
  std::string &mlir = code.mlir["x86"];
  if (failed(emitKernelModule(in.graph, in.kernels, mlir, out.revisions, diag)))
    return failure();
  std::vector<std::string> archives;
  if (std::any_of(in.kernels.begin(), in.kernels.end(),
                  [](const KernelSpec &k) { return !k.librarySymbol.empty(); }))
    archives.push_back(in.libraries.x86Archive);
  X86Output x86;
  if (failed(compileX86(mlir, in.kernels, X86Target{target->level, extensions}, archives,
                        in.wantAssembly, x86, diag)))
    return failure();
  out.section = std::move(x86.sharedObject);
  code.assembly = std::move(x86.assembly);
  return success();
}

const CodegenTarget fuel::x86CodegenTarget = {x86GeneratedKernels, generateX86};
