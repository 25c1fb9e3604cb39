//===- PtxBackend.cpp - gpu.func -> PTX for CUDA ---------------------------===//
//
//   1. emit the kernels' gpu.module (workgroup arrays as attributions);
//   2. attach the NVVM target (the device's SM architecture, PTX ISA 8.0:
//      older defaults abort for sm_90), expand powf and replace f32 math
//      with polynomial approximations (f64 math becomes libdevice calls),
//      lower scf to cf and gpu/arith/memref/math to NVVM and LLVM, and
//      serialize the module to PTX (gpu-module-to-binary, format isa);
//   3. assemble the PTX with ptxas for the target when it is installed;
//   4. write the `kernels.ptx` section: the PTX text plus each kernel's
//      dispatches.
//
//===----------------------------------------------------------------------===//

#include "PtxCodegen.h"

#include "ApproximateMath.h"
#include "PassRunner.h"
#include "GpuSection.h"

#include "fuel/Codegen/GpuKernels.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>
#include <sstream>

using namespace fuel;

/// The CUDA toolkit fuelc was built to find (ptxas, libdevice).
static constexpr const char *kCudaToolkit = "/usr/local/cuda";

static LogicalResult lowerToPtx(mlir::ModuleOp module, const std::string &chip, std::string &ptx,
                                DiagnosticEngine &diag) {
  mlir::PassManager pm(module->getContext());
  mlir::GpuNVVMAttachTargetOptions target;
  target.chip = chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(mlir::createGpuNVVMAttachTarget(target));
  pm.addPass(codegen::createExpandPowfPass());
  pm.addPass(codegen::createApproximateMathPass());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(mlir::createSCFToControlFlowPass());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(mlir::createConvertGpuOpsToNVVMOps());
  // What NVVM has no pattern for (integer abs) becomes LLVM intrinsics.
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  mlir::GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = kCudaToolkit;
  pm.addPass(mlir::createGpuModuleToBinaryPass(binary));
  if (failed(codegen::runPipeline(pm, module, "PTX", diag)))
    return failure();
  // The binary's object holds the PTX text (its properties carry timings:
  // never hash those).
  module->walk([&](mlir::gpu::BinaryOp op) {
    for (mlir::Attribute a : op.getObjects())
      if (auto object = mlir::dyn_cast<mlir::gpu::ObjectAttr>(a))
        ptx = object.getObject().str();
  });
  if (ptx.empty()) {
    diag.error({}, "lowering kernels to PTX produced no PTX");
    return failure();
  }
  return success();
}

/// Assembles `ptx` for `chip` with ptxas; `verified` is false when there is
/// no ptxas here.
static LogicalResult assemble(const std::string &ptx, const std::string &chip, bool &verified,
                              DiagnosticEngine &diag) {
  llvm::ErrorOr<std::string> ptxas =
      llvm::sys::findProgramByName("ptxas", {std::string(kCudaToolkit) + "/bin"});
  verified = false;
  if (!ptxas)
    return success();
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("fuelc-ptxas", dir)) {
    diag.error({}, "cannot create a temporary directory for ptxas");
    return failure();
  }
  std::string source = (dir + "/kernels.ptx").str(), cubin = (dir + "/kernels.cubin").str(),
              log = (dir + "/ptxas.log").str();
  std::ofstream(source) << ptx;
  std::vector<llvm::StringRef> args{*ptxas, "-arch", chip, "-o", cubin, source};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  int rc = llvm::sys::ExecuteAndWait(*ptxas, args, std::nullopt, redirects);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  for (const std::string &path : {source, cubin, log})
    llvm::sys::fs::remove(path);
  llvm::sys::fs::remove(dir);
  if (rc != 0) {
    diag.error({}, "ptxas rejected the PTX for " + chip + ": " + text.str());
    return failure();
  }
  verified = true;
  return success();
}

LogicalResult fuel::compilePtx(const Graph &graph, const std::vector<KernelSpec> &kernels,
                               const std::string &target, unsigned workgroupSize,
                               const std::string &libraryDir, PtxOutput &out,
                               DiagnosticEngine &diag) {
  if (target.rfind("sm_", 0) != 0) {
    diag.error({}, "'" + target + "' is not an NVIDIA SM architecture (sm_80, sm_90, ...)");
    return failure();
  }
  GpuDialectTarget dialect{"#gpu.address_space<workgroup>", "#gpu.address_space<private>",
                           "gpu.known_block_size = array<i32: %N, 1, 1>",
                           /*workgroupAttributions=*/true, workgroupSize};
  std::vector<GpuKernel> described;
  if (failed(emitGpuModule(graph, kernels, dialect, out.mlir, described, diag)))
    return failure();
  out.revisions = codegen::revisionsOf(described);
  bool anyGenerated = codegen::hasGeneratedDispatch(described);

  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::NVVM::NVVMDialect,
                  mlir::scf::SCFDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers each dialect through its interface.
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    os << d.str() << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(
      "module attributes {gpu.container_module} {\n" + out.mlir + "}\n", &context);
  if (!module) {
    diag.error({}, "internal error: the emitted GPU kernels do not parse: " + diagnostics);
    return failure();
  }
  if (anyGenerated && (failed(lowerToPtx(*module, target, out.ptx, diag)) ||
                       failed(assemble(out.ptx, target, out.verified, diag))))
    return failure();

  // Modules: the generated kernels, then each library kernel used.
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  std::map<std::string, unsigned> moduleIndex;
  auto addModule = [&](const std::string &name, const std::string &ptx) {
    moduleIndex[name] = static_cast<unsigned>(modules.size());
    modules.push_back({{"name", name}, {"ptx", ptx}});
  };
  if (anyGenerated)
    addModule("generated", out.ptx);
  for (const GpuKernel &k : described)
    for (const GpuDispatch &d : k.dispatches) {
      if (!d.isLibrary || moduleIndex.count(d.entry))
        continue;
      std::string path = libraryDir + "/" + d.entry + ".ptx";
      std::stringstream ptx;
      ptx << std::ifstream(path).rdbuf();
      if (ptx.str().empty()) {
        diag.error({}, "cannot read the library kernel '" + path +
                           "' (was nvcc found when fuelc was built?)");
        return failure();
      }
      bool verified = false;
      if (failed(assemble(ptx.str(), target, verified, diag)))
        return failure();
      out.verified = out.verified || verified;
      addModule(d.entry, ptx.str());
    }
  nlohmann::ordered_json section;
  section["format"] = "fuel.ptx-kernels";
  section["version"] = 1;
  section["target"] = target;
  section["modules"] = std::move(modules);
  section["kernels"] = codegen::describeGpuKernels(described, [&](const GpuDispatch &d) {
    return std::make_pair(moduleIndex.at(d.isLibrary ? d.entry : "generated"), d.entry);
  });
  out.section = section.dump(1) + "\n";
  return success();
}
