//===- SpirvBackend.cpp - gpu.func -> SPIR-V for Vulkan --------------------===//
//
//   1. emit the kernels' gpu.module and wrap it in a module carrying the
//      device's SPIR-V target environment;
//   2. expand powf (GLSL's pow is undefined for negative bases), replace
//      f32 math with polynomial approximations, convert math, then
//      gpu/arith/memref/scf to the spirv dialect; lower the entry-point ABI
//      (one storage buffer per argument at set 0) and deduce the minimal
//      version/capabilities/extensions;
//   3. serialize, declare NaN and Inf preserved (PreserveInfNan.cpp),
//      validate with SPIRV-Tools for the Vulkan environment, optimize with
//      its performance passes (validated again);
//   4. write the `kernels.spirv` section: modules as base64 plus each
//      kernel's dispatches.
//
//===----------------------------------------------------------------------===//

#include "SpirvCodegen.h"

#include "ApproximateMath.h"
#include "PassRunner.h"
#include "GpuSection.h"

#include "fuel/Codegen/GpuKernels.h"
#include "fuel/Support/Base64.h"

#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRVPass.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/SPIRV/Serialization.h"

#include "llvm/Support/raw_ostream.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace fuel;

namespace {
/// The validation environment of a Vulkan version. Modules are SPIR-V 1.3,
/// which every Vulkan 1.1+ device accepts (spirv-update-vce lowers the
/// version the module declares to what it uses, which must not change the
/// rules its entry-point interfaces were written for: those of 1.3).
struct VulkanEnvironment {
  const char *target;
  spv_target_env env;
};
constexpr VulkanEnvironment kEnvironments[] = {
    {"vulkan1.1", SPV_ENV_VULKAN_1_1},
    {"vulkan1.2", SPV_ENV_VULKAN_1_2},
    {"vulkan1.3", SPV_ENV_VULKAN_1_3},
};
} // namespace

/// The top-level module: the SPIR-V target environment declares what the
/// conversion may use; spirv-update-vce then keeps what the kernels need.
static std::string wrapModule(const std::string &gpuModule) {
  return "module attributes {gpu.container_module, spirv.target_env = "
         "#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Float64, Int16, "
         "Int8, Float16, StorageBuffer16BitAccess, StorageBuffer8BitAccess], "
         "[SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, "
         "SPV_KHR_8bit_storage]>, api=Vulkan, #spirv.resource_limits<>>} {\n" +
         gpuModule + "}\n";
}

static LogicalResult lowerToSpirv(mlir::ModuleOp module, DiagnosticEngine &diag) {
  mlir::PassManager pm(module->getContext());
  pm.addPass(codegen::createExpandPowfPass());
  pm.addPass(codegen::createApproximateMathPass());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(mlir::createConvertMathToSPIRVPass());
  pm.addPass(mlir::createConvertGPUToSPIRVPass());
  mlir::OpPassManager &spirvModule = pm.nest<mlir::spirv::ModuleOp>();
  spirvModule.addPass(mlir::spirv::createSPIRVLowerABIAttributesPass());
  spirvModule.addPass(mlir::spirv::createSPIRVUpdateVCEPass());
  if (failed(codegen::runPipeline(pm, module, "SPIR-V", diag)))
    return failure();
  return success();
}

/// Declares NaN and Inf preserved in `words`, validates them, then optimizes
/// them (the optimizer validates its input and output too); `what` names
/// the module in errors.
static LogicalResult validateAndOptimize(std::vector<uint32_t> &words, spv_target_env env,
                                         const std::string &what, DiagnosticEngine &diag) {
  preserveInfNan(words);
  std::string messages;
  auto consumer = [&](spv_message_level_t, const char *, const spv_position_t &pos,
                      const char *message) {
    messages += "\n  word " + std::to_string(pos.index) + ": " + message;
  };
  spvtools::SpirvTools tools(env);
  tools.SetMessageConsumer(consumer);
  if (!tools.Validate(words)) {
    diag.error({},
               what + " is not valid SPIR-V for " + spvTargetEnvDescription(env) + ":" + messages);
    return failure();
  }
  spvtools::Optimizer optimizer(env);
  optimizer.SetMessageConsumer(consumer);
  optimizer.RegisterPerformancePasses();
  std::vector<uint32_t> optimized;
  if (!optimizer.Run(words.data(), words.size(), &optimized) ||
      !tools.Validate(optimized)) {
    diag.error({}, "optimizing " + what + " failed:" + messages);
    return failure();
  }
  words = std::move(optimized);
  return success();
}

static std::string bytesOf(const std::vector<uint32_t> &words) {
  return std::string(reinterpret_cast<const char *>(words.data()),
                     words.size() * sizeof(uint32_t));
}

static LogicalResult readLibraryModule(const std::string &path, std::vector<uint32_t> &words,
                                       DiagnosticEngine &diag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string data = bytes.str();
  if (!in || data.empty() || data.size() % 4 != 0) {
    diag.error({}, "cannot read the library kernel '" + path + "'");
    return failure();
  }
  words.resize(data.size() / 4);
  std::memcpy(words.data(), data.data(), data.size());
  return success();
}

/// Lowers the emitted gpu.module to a validated, optimized SPIR-V module.
static LogicalResult lowerGeneratedModule(const std::string &gpuModule, spv_target_env env,
                                          std::vector<uint32_t> &words, DiagnosticEngine &diag) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::spirv::SPIRVDialect>();
  mlir::MLIRContext context(registry);
  context.disableMultithreading();
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    os << d.str() << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(wrapModule(gpuModule), &context);
  if (!module) {
    diag.error({}, "internal error: the emitted GPU kernels do not parse: " + diagnostics);
    return failure();
  }
  if (failed(lowerToSpirv(*module, diag)))
    return failure();
  mlir::spirv::ModuleOp spirvModule;
  module->walk([&](mlir::spirv::ModuleOp m) { spirvModule = m; });
  llvm::SmallVector<uint32_t, 0> serialized;
  if (!spirvModule || mlir::failed(mlir::spirv::serialize(spirvModule, serialized))) {
    diag.error({}, "serializing SPIR-V failed: " + diagnostics);
    return failure();
  }
  words.assign(serialized.begin(), serialized.end());
  return validateAndOptimize(words, env, "the generated kernels", diag);
}

LogicalResult fuel::compileSpirv(const Graph &graph, const std::vector<KernelSpec> &kernels,
                                 const std::string &target, unsigned workgroupSize,
                                 const std::string &libraryDir, SpirvOutput &out,
                                 DiagnosticEngine &diag) {
  const VulkanEnvironment *env = nullptr;
  for (const VulkanEnvironment &e : kEnvironments)
    if (target == e.target)
      env = &e;
  if (!env) {
    diag.error({}, "'" + target +
                       "' is not a Vulkan version fuelc targets (vulkan1.1, vulkan1.2 or "
                       "vulkan1.3)");
    return failure();
  }
  GpuDialectTarget dialect{
      "#spirv.storage_class<Workgroup>", "#spirv.storage_class<Function>",
      "spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [%N, 1, 1]>",
      /*workgroupAttributions=*/false, workgroupSize};
  std::vector<GpuKernel> described;
  if (failed(emitGpuModule(graph, kernels, dialect, out.mlir, described, diag)))
    return failure();
  out.revisions = codegen::revisionsOf(described);
  bool anyGenerated = codegen::hasGeneratedDispatch(described);
  std::vector<uint32_t> generated;
  if (anyGenerated && failed(lowerGeneratedModule(out.mlir, env->env, generated, diag)))
    return failure();

  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  std::map<std::string, unsigned> moduleIndex;
  auto addModule = [&](const std::string &name, const std::vector<uint32_t> &words) {
    moduleIndex[name] = static_cast<unsigned>(modules.size());
    out.modules[name + ".spv"] = bytesOf(words);
    modules.push_back({{"name", name}, {"spirv", encodeBase64(bytesOf(words))}});
  };
  if (anyGenerated)
    addModule("generated", generated);
  // Library modules, each validated and optimized like the generated one.
  for (const GpuKernel &kernel : described)
    for (const GpuDispatch &d : kernel.dispatches) {
      if (!d.isLibrary || moduleIndex.count(d.entry))
        continue;
      std::vector<uint32_t> words;
      if (failed(readLibraryModule(libraryDir + "/" + d.entry + ".spv", words, diag)) ||
          failed(validateAndOptimize(words, env->env, "library kernel '" + d.entry + "'", diag)))
        return failure();
      addModule(d.entry, words);
    }
  nlohmann::ordered_json list = codegen::describeGpuKernels(
      described, [&](const GpuDispatch &d) {
        return d.isLibrary ? std::make_pair(moduleIndex.at(d.entry), std::string("main"))
                           : std::make_pair(moduleIndex.at("generated"), d.entry);
      });
  nlohmann::ordered_json section;
  section["format"] = "fuel.spirv-kernels";
  section["version"] = 1;
  section["target"] = target;
  section["modules"] = std::move(modules);
  section["kernels"] = std::move(list);
  out.section = section.dump(1) + "\n";
  return success();
}
