//===- Passes.cpp - The passes of fuelc's compiler pipeline ---------------===//
//
// Each pass is a thin wrapper over its library's entry point (importModel,
// materializeStridedReshapes, foldChannelScales, distributePooling, planGraph,
// generateTargetCode, lowerProgram, buildPlanArtifact); this file is the one
// place that says in which order they run and what each prints.
//
//===----------------------------------------------------------------------===//

#include "fuel/Compiler/Pipeline.h"

#include "fuel/Planner/CostModel.h"
#include "fuel/Planner/LowerProgram.h"
#include "fuel/Support/Sha256.h"
#include "fuel/Transforms/DistributePooling.h"
#include "fuel/Transforms/FoldChannelScales.h"
#include "fuel/Transforms/Materialize.h"

using namespace fuel;

/// "cpu:0,cuda:0".
static std::string formatRoute(const std::vector<DeviceRef> &devices) {
  std::string out;
  for (DeviceRef d : devices)
    out += (out.empty() ? "" : ",") + formatDevice(d);
  return out;
}

/// `print(route)` for every route, each behind a `route N:` line when
/// there are several.
template <typename Fn>
static std::string perRoute(const Compilation &c, Fn print) {
  std::string out;
  for (size_t r = 0; r < c.routes.size(); ++r) {
    if (c.routes.size() > 1)
      out += "route " + std::to_string(r) + " (" + formatRoute(c.routeDevices[r]) + "):\n";
    out += print(r);
  }
  return out;
}

static LogicalResult importPass(Compilation &c, DiagnosticEngine &diag) {
  c.file = importModel(c.modelPath, c.freeze, diag);
  return success(c.file.has_value());
}

static std::string printGraph(const Compilation &c) {
  return c.file ? printGraphJson(c.file->graph) : std::string();
}

static LogicalResult materializePass(Compilation &c, DiagnosticEngine &) {
  materializeStridedReshapes(c.file->graph);
  return success();
}

static LogicalResult foldScalesPass(Compilation &c, DiagnosticEngine &) {
  // Symbols are planned at their --dim extents, upper bounds the runtime
  // checks.
  SymbolPricing pricing(c.file->graph, c.config.dims);
  std::vector<int64_t> bounds;
  for (uint32_t id = 0; id < c.file->graph.symbols().size(); ++id)
    bounds.push_back(pricing.extent(Dim::symbol(id)));
  foldChannelScales(c.file->graph, bounds);
  return success();
}

static LogicalResult distributePoolingPass(Compilation &c, DiagnosticEngine &) {
  distributePooling(c.file->graph);
  return success();
}

static LogicalResult placePass(Compilation &c, DiagnosticEngine &diag) {
  c.routes.clear();
  for (size_t r = 0; r < c.routeDevices.size(); ++r) {
    ExecutionConfig config = c.config;
    config.allowedDevices = c.routeDevices[r];
    PlannedRoute route;
    route.devices = c.routeDevices[r];
    if (failed(planGraph(c.file->graph, *c.machine, *c.registry, config, diag,
                         *c.file->locator, route.plan))) {
      if (c.explicitRoutes)
        diag.error({}, "route " + std::to_string(r) + " (" +
                           formatRoute(c.routeDevices[r]) + ") cannot be planned");
      return failure();
    }
    c.routes.push_back(std::move(route));
  }
  c.code.assign(c.routes.size(), {});
  return success();
}

static std::string printPlans(const Compilation &c) {
  return perRoute(c, [&](size_t r) { return printPlanText(c.file->graph, c.routes[r].plan); });
}

static Pass codegenPass(const CodegenTarget &target) {
  std::string name(target.name());
  auto run = [&target](Compilation &c, DiagnosticEngine &diag) {
    bool unverified = false;
    for (size_t r = 0; r < c.routes.size(); ++r) {
      if (failed(generateTargetCode(target, c.file->graph, c.routes[r], c.libraries, c.wantAssembly,
                                    c.code[r], diag)))
        return failure();
      unverified |= c.code[r].ptxUnverified;
    }
    if (unverified)
      diag.warning({}, "ptxas was not found: the PTX kernels were not assembled, "
                       "so they are not verified");
    return success();
  };
  auto print = [name](const Compilation &c) {
    return perRoute(c, [&](size_t r) {
      auto it = c.code[r].mlir.find(name);
      return it == c.code[r].mlir.end() ? std::string() : it->second;
    });
  };
  return {"codegen-" + name, "generate the " + name + " kernels of every route", run,
          print};
}

/// Refuses a program the runtime would refuse: a kernel argument, input or
/// output whose layout at the planned extents is past what the runtime
/// takes (2^40 elements per tensor, the reader's bound on hostile files).
static LogicalResult checkRuntimeLimits(const artifact::Program &program,
                                        DiagnosticEngine &diag) {
  constexpr const char *kRemedy = " has more than 2^40 elements at the planned extents, more "
                                  "than the runtime takes per tensor (plan with smaller --dim "
                                  "values, or split the tensor)";
  std::vector<int64_t> bounds = program.boundValues();
  for (const artifact::Kernel &k : program.kernels)
    for (size_t a = 0; a < k.args.size(); ++a)
      if (!k.args[a].tensor.layout(bounds)) {
        SourceLocation loc;
        loc.node = k.node;
        diag.error(std::move(loc), "argument " + std::to_string(a) + " of the '" + k.label +
                                       "' kernel" + kRemedy);
        return failure();
      }
  for (const auto &[what, list] : {std::pair{"input", &program.inputs},
                                   std::pair{"output", &program.outputs}})
    for (const artifact::Io &io : *list)
      if (!io.tensor.layout(bounds)) {
        diag.error({}, std::string(what) + " '" + io.name + "'" + kRemedy);
        return failure();
      }
  return success();
}

static LogicalResult lowerPass(Compilation &c, DiagnosticEngine &diag) {
  for (size_t r = 0; r < c.routes.size(); ++r) {
    c.routes[r].program = lowerProgram(c.file->graph, c.routes[r], r);
    if (failed(checkRuntimeLimits(c.routes[r].program, diag)))
      return failure();
  }
  return success();
}

static std::string printPrograms(const Compilation &c) {
  return perRoute(c, [&](size_t r) { return artifact::printProgram(c.routes[r].program); });
}

static LogicalResult serializePass(Compilation &c, DiagnosticEngine &) {
  c.artifact = buildPlanArtifact(c.file->graph, c.routes, c.config, c.compilerVersion);
  return success();
}

static std::string printArtifact(const Compilation &c) {
  return "artifact: " + std::to_string(c.artifact.size()) + " bytes, sha256 " +
         toHex(Sha256::of(c.artifact)) + "\n";
}

const std::vector<Pass> &fuel::compilerPasses() {
  static const std::vector<Pass> passes = [] {
    std::vector<Pass> list{
        {"import", "read the model; verify it and infer every type", importPass, printGraph},
        {"materialize", "insert contiguous before reshapes no strides express", materializePass,
         printGraph},
        {"fold-scales", "fold per-channel scales of a convolution's input into its weights",
         foldScalesPass, printGraph},
        {"distribute-pooling", "pool a concat of convolutions' results part by part",
         distributePoolingPass, printGraph},
        {"place", "place, fuse, form kernels and plan memory for every route", placePass,
         printPlans}};
    for (const CodegenTarget *target : codegenTargets())
      list.push_back(codegenPass(*target));
    list.push_back({"lower", "lower every route to the program the runtime executes",
                    lowerPass, printPrograms});
    list.push_back({"serialize", "write the .fplan artifact's bytes", serializePass,
                    printArtifact});
    return list;
  }();
  return passes;
}
