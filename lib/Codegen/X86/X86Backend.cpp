//===- X86Backend.cpp - MLIR -> LLVM -> x86-64 shared object --------------===//
//
//   1. parse the kernel module; lower linalg to loops; replace f32
//      transcendental math with polynomial approximations (vectorizable);
//      lower everything to the LLVM dialect (memref descriptor ABI, plus a
//      C interface per kernel);
//   2. translate to LLVM IR, add each kernel's entry point
//      `void symbol(void **args)` around its C interface, internalize the
//      rest and optimize at -O3 for the target CPU (loop vectorization);
//   3. emit a PIC object and link it with the library kernels into a
//      shared object with the system linker.
//
//===----------------------------------------------------------------------===//

#include "X86Codegen.h"

#include "ApproximateMath.h"
#include "PassRunner.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <fstream>
#include <set>
#include <sstream>

using namespace fuel;

namespace {
/// What the LLVM dialect has no op for: integer ceil/floor division and
/// bf16 conversions (as integer arithmetic: no soft-float runtime needed).
/// Not arith-expand's min/max rewrite: `llvm.maximum` and `llvm.maxnum`
/// stay intrinsics, which LLVM's loop vectorizer takes as reductions; as
/// compare-and-select chains a row maximum ran one scalar at a time (a
/// [64,128,128] softmax 1.31 -> 0.75 ms).
struct ExpandArithForLLVMPass
    : mlir::PassWrapper<ExpandArithForLLVMPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandArithForLLVMPass)
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    mlir::arith::populateExpandBFloat16Patterns(patterns);
    if (failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

static LogicalResult lowerToLLVMDialect(mlir::ModuleOp module, DiagnosticEngine &diag) {
  mlir::PassManager pm(module->getContext());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createConvertLinalgToLoopsPass());
  pm.addPass(codegen::createApproximateMathPass());
  pm.addPass(std::make_unique<ExpandArithForLLVMPass>());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  // LLVM intrinsics first (fma, floor, sqrt become instructions); libm only
  // for what has none (f64 erf, tanh).
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  // aligned_alloc, not malloc and rounding the address up: LLVM then knows
  // a scratch buffer aliases nothing else, and keeps a row's statistics in
  // registers instead of storing them on every element.
  mlir::FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useAlignedAlloc = true;
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (failed(codegen::runPipeline(pm, module, "LLVM", diag)))
    return failure();
  return success();
}

/// Adds `void symbol(void **args)` calling the kernel's C interface with
/// one memref descriptor pointer per argument; everything else becomes
/// internal so LLVM inlines it into the entry points.
static LogicalResult addEntryPoints(llvm::Module &module, const std::vector<KernelSpec> &kernels,
                                    DiagnosticEngine &diag) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  std::vector<std::string> entries;
  for (const KernelSpec &spec : kernels) {
    llvm::Function *ciface =
        module.getFunction("_mlir_ciface_" + spec.symbol + "_memref");
    if (!ciface) {
      diag.error({}, "kernel '" + spec.symbol + "' has no C interface");
      return failure();
    }
    auto *entry = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
        llvm::GlobalValue::ExternalLinkage, spec.symbol, module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    std::vector<llvm::Value *> args;
    for (unsigned i = 0; i < ciface->arg_size(); ++i) {
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
      args.push_back(b.CreateLoad(ptr, slot));
    }
    b.CreateCall(ciface, args);
    b.CreateRetVoid();
    entries.push_back(spec.symbol);
  }
  // `void fuel_release(void)` frees what the library kernels hold (called
  // by the runtime before it unloads the binary).
  auto *release = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::GlobalValue::ExternalLinkage, "fuel_release", module);
  llvm::IRBuilder<> rb(llvm::BasicBlock::Create(ctx, "entry", release));
  std::set<std::string> libraries;
  for (const KernelSpec &spec : kernels)
    if (!spec.librarySymbol.empty() && libraries.insert(spec.librarySymbol).second)
      rb.CreateCall(module.getOrInsertFunction(
          spec.librarySymbol + "_release",
          llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false)));
  rb.CreateRetVoid();
  entries.push_back("fuel_release");
  for (llvm::Function &f : module)
    if (!f.isDeclaration() &&
        std::find(entries.begin(), entries.end(), f.getName()) == entries.end())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return success();
}

static std::unique_ptr<llvm::TargetMachine> createTargetMachine(const X86Target &target,
                                                                DiagnosticEngine &diag) {
  static const bool initialized = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple("x86_64-unknown-linux-gnu");
  std::string lookupError;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!t) {
    diag.error({}, "LLVM has no x86-64 target: " + lookupError);
    return nullptr;
  }
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(
      t->createTargetMachine(triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

static void optimize(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

static LogicalResult emitCode(llvm::Module &module, llvm::TargetMachine &tm,
                              llvm::CodeGenFileType kind, std::string &out,
                              DiagnosticEngine &diag) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind)) {
    diag.error({}, "LLVM cannot emit code for this target");
    return failure();
  }
  pm.run(module);
  out.assign(buffer.begin(), buffer.end());
  return success();
}

/// Links objects into a shared object with the system linker.
static LogicalResult linkSharedObject(const std::string &object,
                                      const std::vector<std::string> &libraries,
                                      std::string &sharedObject, DiagnosticEngine &diag) {
  llvm::ErrorOr<std::string> ld = llvm::sys::findProgramByName("ld");
  if (!ld) {
    diag.error({}, "no system linker 'ld' found on PATH (install binutils)");
    return failure();
  }
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("fuelc-link", dir)) {
    diag.error({}, "cannot create a temporary directory for linking");
    return failure();
  }
  std::string objPath = (dir + "/kernels.o").str(),
              soPath = (dir + "/kernels.so").str(),
              logPath = (dir + "/ld.log").str();
  std::ofstream(objPath, std::ios::binary) << object;
  // Without the library's debug information: the artifact carries what
  // runs (SqueezeNet's plan 7.2 -> 5.4 MB).
  std::vector<llvm::StringRef> args{*ld,    "-shared", "--hash-style=gnu", "--strip-debug", "-o",
                                    soPath, objPath};
  for (const std::string &lib : libraries)
    args.push_back(lib);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath, logPath};
  int rc = llvm::sys::ExecuteAndWait(*ld, args, std::nullopt, redirects);
  std::ifstream so(soPath, std::ios::binary), log(logPath);
  std::stringstream soBytes, logText;
  soBytes << so.rdbuf();
  logText << log.rdbuf();
  for (const std::string &path : {objPath, soPath, logPath})
    llvm::sys::fs::remove(path);
  llvm::sys::fs::remove(dir);
  if (rc != 0) {
    diag.error({}, "linking kernels failed: " + logText.str());
    return failure();
  }
  sharedObject = soBytes.str();
  return success();
}

LogicalResult fuel::compileX86(const std::string &moduleText,
                               const std::vector<KernelSpec> &kernels, const X86Target &target,
                               const std::vector<std::string> &libraryObjects, bool wantAssembly,
                               X86Output &out, DiagnosticEngine &diag) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::LLVM::LLVMDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(moduleText, "kernels.mlir", false),
      llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagStream);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module) {
    diag.error({}, "internal error: generated MLIR does not parse:\n" + diagnostics);
    return failure();
  }
  if (failed(lowerToLLVMDialect(*module, diag)))
    return failure();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, "fuel-kernels");
  if (!llvmModule) {
    diag.error({}, "translating kernels to LLVM IR failed:\n" + diagnostics);
    return failure();
  }
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(target, diag);
  if (!tm)
    return failure();
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  if (failed(addEntryPoints(*llvmModule, kernels, diag)))
    return failure();
  // Functions carry their target: LLVM's optimizer reads the CPU from them.
  // Kernels stream through memory, where full-width vectors pay off. Gathers
  // and scatters do not: LLVM unrolled the 49 elements of a 7x7 channel
  // and vectorized the loop over channels by them (EfficientNet-B0's
  // squeeze-and-excitation products of 7x7, 1152 channels, took 36 us
  // against 10 us for 14x14 ones of 2.3x the elements; ShuffleNetV2's
  // channel shuffles too). Without them: EfficientNet-B0 0.96 and
  // ShuffleNetV2 0.94 and 0.92 of their time at one and two threads
  // (paired A/B, Zen 5, 2026-12-07); the other models' kernels unchanged.
  constexpr const char *kNoGathers = "+prefer-no-gather,+prefer-no-scatter";
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", target.cpu);
      f.addFnAttr("target-features", target.features.empty() ? std::string(kNoGathers)
                                                             : target.features + "," + kNoGathers);
      f.addFnAttr("prefer-vector-width", "512");
    }
  optimize(*llvmModule, *tm);
  if (wantAssembly &&
      failed(emitCode(*llvmModule, *tm, llvm::CodeGenFileType::AssemblyFile, out.assembly, diag)))
    return failure();
  std::string object;
  if (failed(emitCode(*llvmModule, *tm, llvm::CodeGenFileType::ObjectFile, object, diag)))
    return failure();
  return linkSharedObject(object, libraryObjects, out.sharedObject, diag);
}
