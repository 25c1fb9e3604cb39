//===- PlanCommands.cpp - fuelc plan, explain, inspect and targets --------===//

#include "Driver.h"

#include "fuel/Artifact/Artifact.h"
#include "fuel/Artifact/Program.h"
#include "fuel/Compiler/Pipeline.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>

using namespace fuel;
using namespace fuel::driver;

namespace {
/// Splits "name=value" at the last '='.
bool splitAssignment(const std::string &text, std::string &name,
                     std::string &value) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  name = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

/// Parses `--route cpu:0,cuda:0` lists; on a malformed one prints why.
bool parseRoutes(const PlanFlags &flags,
                 std::vector<std::vector<DeviceRef>> &routes) {
  if (!flags.routes.empty() && !flags.allowDevices.empty()) {
    std::cerr << "fuelc: error: --route and --allow-device exclude each other "
                 "(a route is the list of devices it may use)\n";
    return false;
  }
  for (const std::string &text : flags.routes) {
    std::vector<DeviceRef> devices;
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = std::min(text.find(',', start), text.size());
      std::optional<DeviceRef> d = parseDevice(text.substr(start, comma - start));
      if (!d) {
        std::cerr << "fuelc: error: --route expects devices separated by "
                     "commas (e.g. cpu:0,cuda:0), got '"
                  << text << "'\n";
        return false;
      }
      devices.push_back(*d);
      start = comma + 1;
    }
    routes.push_back(std::move(devices));
  }
  return true;
}

/// Builds the ExecutionConfig from the policy file (if any) and the flags
/// given, which win; on a malformed flag prints why and fails.
bool makeConfig(const PlanFlags &flags, ExecutionConfig &config) {
  auto usage = [](const std::string &message) {
    std::cerr << "fuelc: error: " << message << '\n';
    return false;
  };
  auto device = [&](const std::string &text, DeviceRef &out) {
    std::optional<DeviceRef> d = parseDevice(text);
    if (d)
      out = *d;
    return d.has_value();
  };
  if (!flags.allowDevices.empty())
    config.allowedDevices.clear();
  for (const std::string &text : flags.allowDevices) {
    DeviceRef d;
    if (!device(text, d))
      return usage("--allow-device: invalid device '" + text + "'");
    config.allowedDevices.push_back(d);
  }
  for (const std::string &text : flags.pins) {
    std::string node, dev;
    DeviceRef d;
    if (!splitAssignment(text, node, dev) || !device(dev, d))
      return usage("--pin expects NODE=DEVICE (e.g. fc1=cuda:0), got '" +
                   text + "'");
    config.pins[node] = d;
  }
  for (const std::string &text : flags.dims) {
    std::string name, value;
    int64_t extent = 0;
    if (!splitAssignment(text, name, value) ||
        std::from_chars(value.data(), value.data() + value.size(), extent).ec !=
            std::errc() ||
        extent < 0)
      return usage("--dim expects SYMBOL=EXTENT (e.g. B=32), got '" + text +
                   "'");
    config.dims[name] = extent;
  }
  if (!flags.trust.empty()) {
    std::optional<TrustLevel> trust = parseTrustLevel(flags.trust);
    if (!trust)
      return usage("--trust must be verified, checked, fuzzed or "
                   "trusted-external, got '" +
                   flags.trust + "'");
    config.minimumTrust = *trust;
  }
  if (!std::isnan(flags.precisionFloor))
    config.maxRelativeError = flags.precisionFloor;
  config.preferBitStable |= flags.preferBitStable;
  config.fusion = !flags.noFusion;
  if (!flags.preferProviders.empty())
    config.preferredProviders = flags.preferProviders;
  if (!flags.inputResidency.empty() &&
      !device(flags.inputResidency, config.inputResidency))
    return usage("--input-residency: invalid device '" + flags.inputResidency +
                 "'");
  if (!flags.outputResidency.empty() &&
      !device(flags.outputResidency, config.outputResidency))
    return usage("--output-residency: invalid device '" +
                 flags.outputResidency + "'");
  if (!flags.placer.empty())
    config.placer = *parsePlacerKind(flags.placer);
  return true;
}

/// The machine of --machine with the table of --calibration, if any.
std::optional<Machine> loadPlanningMachine(const PlanFlags &flags,
                                           DiagnosticEngine &diag) {
  std::optional<Machine> machine = loadMachine(flags.machine, diag);
  if (!machine || flags.calibration.empty())
    return machine;
  machine->calibration = loadCalibration(flags.calibration, diag);
  if (!machine->calibration)
    return std::nullopt;
  return machine;
}

/// The generated kernels plus the manifests under --kernels.
std::optional<CapsuleRegistry> loadRegistry(const PlanFlags &flags,
                                            DiagnosticEngine &diag) {
  CapsuleRegistry registry = builtinCapsules();
  if (!flags.kernels.empty() &&
      failed(registry.addManifestDirectory(flags.kernels, diag)))
    return std::nullopt;
  return registry;
}

/// The compilation `plan` and `explain` run, with the machine and kernels it
/// points into.
struct PreparedCompilation {
  std::optional<Machine> machine;
  std::optional<CapsuleRegistry> registry;
  Compilation c;
};

/// Reads the policy, flags, machine and kernels and chooses the routes;
/// returns kSuccess or the exit code to stop with (after printing why).
int prepareCompilation(const std::string &input, const PlanFlags &flags,
                       const DriverOptions &options, DiagnosticEngine &diag,
                       PreparedCompilation &prepared) {
  Compilation &c = prepared.c;
  std::optional<Machine> &machine = prepared.machine;
  std::optional<CapsuleRegistry> &registry = prepared.registry;
  if (!parseRoutes(flags, c.routeDevices))
    return kUsageError;
  c.explicitRoutes = !c.routeDevices.empty();
  if (!flags.policy.empty() && failed(loadPolicy(flags.policy, diag, c.config)))
    return finishWithErrors(diag, options);
  if (!makeConfig(flags, c.config))
    return kUsageError;
  machine = loadPlanningMachine(flags, diag);
  if (machine)
    registry = loadRegistry(flags, diag);
  if (!registry)
    return finishWithErrors(diag, options);
  c.modelPath = input;
  c.freeze = options.freeze;
  c.machine = &*machine;
  c.registry = &*registry;
  c.libraries = {FUEL_X86_KERNEL_LIBRARY, FUEL_SPIRV_KERNEL_DIR, FUEL_PTX_KERNEL_DIR};
  c.compilerVersion = std::string("fuelc ") + FUEL_VERSION;
  // Without --route, one route over the allowed (or all) devices.
  if (c.routeDevices.empty()) {
    c.routeDevices.push_back(c.config.allowedDevices);
    if (c.routeDevices[0].empty())
      for (const DeviceSpec &d : machine->devices)
        c.routeDevices[0].push_back(d.ref);
  }
  return kSuccess;
}

/// The pipeline options of the flags: what to print and where to stop
/// (after `place` when nothing needs the kernels); false on an unknown pass.
bool makePipelineOptions(const PlanFlags &flags, PipelineOptions &pipeline) {
  std::vector<std::string> named = flags.printBefore;
  named.insert(named.end(), flags.printAfter.begin(), flags.printAfter.end());
  if (!flags.stopAfter.empty())
    named.push_back(flags.stopAfter);
  for (const std::string &name : named)
    if (!findPass(name)) {
      std::string known;
      for (const Pass &p : compilerPasses())
        known += (known.empty() ? "" : ", ") + p.name;
      std::cerr << "fuelc: error: no pass named '" << name << "' (passes: " << known
                << ")\n";
      return false;
    }
  pipeline.printBefore = flags.printBefore;
  pipeline.printAfter = flags.printAfter;
  pipeline.print = [](const std::string &text) { std::cout << text; };
  bool wantsCode = !flags.output.empty() || !flags.spirvDir.empty() ||
                   flags.emit == "mlir" || flags.emit == "asm" || flags.emit == "ptx";
  if (!flags.stopAfter.empty() && flags.stopAfter != "serialize" &&
      !flags.output.empty()) {
    std::cerr << "fuelc: error: -o writes the artifact, which --stop-after "
              << flags.stopAfter << " never reaches\n";
    return false;
  }
  if (!flags.stopAfter.empty())
    pipeline.stopAfter = flags.stopAfter;
  else if (!wantsCode && flags.printBefore.empty() && flags.printAfter.empty())
    pipeline.stopAfter = "place";
  return true;
}

/// Prints what --emit asks for of the planned routes.
void emitPlans(const Compilation &c, const PlanFlags &flags) {
  const Graph &graph = c.file->graph;
  if (flags.emit == "mlir" || flags.emit == "asm" || flags.emit == "ptx") {
    for (const RouteCode &code : c.code) {
      if (flags.emit == "asm") {
        std::cout << code.assembly;
        continue;
      }
      if (flags.emit == "ptx") {
        std::cout << code.ptx;
        continue;
      }
      for (const CodegenTarget *target : codegenTargets())
        if (auto it = code.mlir.find(std::string(target->name())); it != code.mlir.end())
          std::cout << it->second;
    }
    return;
  }
  bool several = c.explicitRoutes;
  if (flags.emit == "plan-json" && several)
    std::cout << "{\"format\": \"fuel.plan-routes\", \"routes\": [\n";
  for (size_t r = 0; r < c.routes.size(); ++r) {
    const ExecutionPlan &plan = c.routes[r].plan;
    if (flags.emit == "plan-json") {
      std::cout << (r ? "," : "") << printPlanJson(graph, plan);
      continue;
    }
    if (several && flags.emit != "dot")
      std::cout << (r ? "\n" : "") << "route " << r << ": " << flags.routes[r] << '\n';
    std::cout << (flags.emit == "dot" ? printPlanDot(graph, plan)
                                      : printPlanText(graph, plan));
  }
  if (flags.emit == "plan-json" && several)
    std::cout << "]}\n";
}
} // namespace

int driver::runPlan(const std::string &input, const PlanFlags &flags,
                    const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  PreparedCompilation prepared;
  if (int code = prepareCompilation(input, flags, options, diag, prepared))
    return code;
  Compilation &c = prepared.c;
  PipelineOptions pipeline;
  if (!makePipelineOptions(flags, pipeline))
    return kUsageError;
  c.wantAssembly = flags.emit == "asm";
  std::vector<PassTiming> timings;
  LogicalResult result = runPipeline(c, pipeline, diag, timings);
  if (flags.timePasses)
    std::cerr << formatPassTimings(timings);
  if (failed(result))
    return finishWithErrors(diag, options);
  // What the flags ask for of the passes that ran.
  for (size_t r = 0; r < c.code.size() && !flags.spirvDir.empty(); ++r)
    if (int status = writeSpirvModules(flags.spirvDir, r, c.code[r].spirvModules))
      return status;
  if (!flags.output.empty() && !c.artifact.empty()) {
    if (int code = writeOutput(flags.output, c.artifact); code != kSuccess)
      return code;
    if (flags.emit.empty())
      return kSuccess;
  }
  if (!flags.stopAfter.empty() || !flags.printBefore.empty() || !flags.printAfter.empty())
    if (flags.emit.empty())
      return kSuccess; // The printed passes are the output.
  if (!c.routes.empty())
    emitPlans(c, flags);
  return kSuccess;
}

int driver::writeSpirvModules(const std::string &dir, size_t route,
                              const std::map<std::string, std::string> &modules) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto &[name, words] : modules) {
    std::string file = name;
    if (route)
      file.insert(file.rfind('.'), "." + std::to_string(route));
    if (int status = writeOutput((std::filesystem::path(dir) / file).string(), words))
      return status;
  }
  return kSuccess;
}

int driver::runExplain(const std::string &input, const PlanFlags &flags,
                       const std::string &node, const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  PreparedCompilation prepared;
  if (int code = prepareCompilation(input, flags, options, diag, prepared))
    return code;
  Compilation &c = prepared.c;
  PipelineOptions pipeline;
  pipeline.stopAfter = "place";
  std::vector<PassTiming> timings;
  if (failed(runPipeline(c, pipeline, diag, timings)))
    return finishWithErrors(diag, options);
  const Graph &graph = c.file->graph;
  std::optional<NodeId> only;
  if (!node.empty()) {
    for (NodeId n = 0; n < graph.numNodes(); ++n)
      if (graph.name(n) == node)
        only = n;
    if (!only) {
      diag.error({}, "--node names '" + node + "', which the graph does not have");
      return finishWithErrors(diag, options);
    }
  }
  std::cout << explainPlan(graph, *prepared.machine, *prepared.registry, c.config,
                           c.routes.front().plan, only);
  return kSuccess;
}

/// Each route's program, validated as the runtime would, with every kernel's
/// device, capsule and revision (the audit trail of which code runs).
static bool printRoutes(const ArtifactView &artifact, const std::string &input,
                        DiagnosticEngine &diag) {
  std::optional<std::string_view> metaText = artifact.section("meta"),
                                  weights = artifact.section("weights");
  if (!metaText || !weights) {
    SourceLocation loc;
    loc.file = input;
    diag.error(std::move(loc), "the artifact has no 'meta' or 'weights' section");
    return false;
  }
  std::optional<artifact::Meta> meta =
      artifact::readMeta(*metaText, input + ":meta", diag);
  if (!meta)
    return false;
  for (size_t r = 0; r < meta->routes.size(); ++r) {
    const artifact::Route &route = meta->routes[r];
    std::optional<std::string_view> text = artifact.section(route.section);
    if (!text) {
      SourceLocation loc;
      loc.file = input;
      diag.error(std::move(loc), "route " + std::to_string(r) +
                                     " names a missing section '" + route.section + "'");
      return false;
    }
    std::optional<artifact::Program> program = artifact::readProgram(
        *text, input + ":" + route.section, *meta, weights->size(), diag);
    if (!program)
      return false;
    std::cout << "route " << r << " (" << route.section << "): "
              << program->kernels.size() << " kernels, " << program->copies.size()
              << " copies, " << program->buffers.size() << " buffers\n";
    for (const artifact::Kernel &k : program->kernels)
      std::cout << "  " << k.symbol << "  " << program->devices[k.device].id << "  "
                << k.capsule << "  " << k.revision << "  " << k.label << '\n';
  }
  return true;
}

int driver::runInspect(const std::string &input, const std::string &section,
                       const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  Expected<std::shared_ptr<const FileBuffer>> buffer = FileBuffer::open(input);
  if (!buffer) {
    SourceLocation loc;
    loc.file = input;
    diag.error(std::move(loc), "cannot read artifact: " + buffer.error());
    return finishWithErrors(diag, options);
  }
  std::optional<ArtifactView> artifact = readArtifact(*buffer, input, diag);
  if (!artifact)
    return finishWithErrors(diag, options);
  if (!section.empty()) {
    std::optional<std::string_view> bytes = artifact->section(section);
    if (!bytes) {
      SourceLocation loc;
      loc.file = input;
      diag.error(std::move(loc), "the artifact has no section '" + section + "'");
      return finishWithErrors(diag, options);
    }
    std::cout << *bytes;
    return kSuccess;
  }
  std::cout << "fuelc artifact, format version " << kArtifactVersion << ", "
            << artifact->size() << " bytes, " << artifact->sections().size()
            << " sections (all hashes verified)\n";
  for (const ArtifactView::Section &s : artifact->sections()) {
    std::string name = s.name;
    name.resize(std::max<size_t>(name.size(), 16), ' ');
    std::cout << "  " << name << ' ' << s.size << " bytes  sha256 "
              << toHex(s.hash) << '\n';
  }
  return printRoutes(*artifact, input, diag) ? kSuccess
                                             : finishWithErrors(diag, options);
}

int driver::runTargets(const std::string &printName) {
  DiagnosticEngine diag;
  diag.setHandler([](const Diagnostic &d) { printDiagnosticText(std::cerr, d); });
  if (!printName.empty()) {
    std::string_view text = machinePresetText(printName);
    if (text.empty()) {
      std::cerr << "fuelc: error: no built-in machine named '" << printName
                << "'\n";
      return kUsageError;
    }
    std::cout << text << '\n';
    return kSuccess;
  }
  for (std::string_view name : machinePresetNames()) {
    std::optional<Machine> m = loadMachine(std::string(name), diag);
    if (!m)
      return kInternal; // A preset that does not parse is a bug.
    std::cout << name << ": " << m->description << '\n';
    for (const DeviceSpec &d : m->devices)
      std::cout << "  " << formatDevice(d.ref) << "  " << d.name << " ("
                << d.target << ")\n";
  }
  return kSuccess;
}

void driver::addPlanOptions(CLI::App *cmd, std::string &input, PlanFlags &flags) {
  cmd->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin) or ONNX model (.onnx)")
      ->required();
  cmd->add_option("--machine", flags.machine,
                  "Built-in machine (see `fuelc targets`) or fuel.machine file")
      ->capture_default_str();
  cmd->add_option("--kernels", flags.kernels,
                  "Directory of hand-written kernels' capsule manifests")
      ->capture_default_str();
  cmd->add_option("--calibration", flags.calibration,
                  "fuel.calibration file of measured kernel latencies");
  cmd->add_option("--policy", flags.policy,
                  "fuel.policy file with the options below; flags given win");
  cmd->add_option("--placer", flags.placer,
                  "optimal (min-cut / expansion; the default), or the seeds' "
                  "baselines greedy and chain-dp")
      ->check(CLI::IsMember({"optimal", "greedy", "chain-dp"}));
  cmd->add_option("--allow-device", flags.allowDevices,
                  "Only use these devices (repeatable; default: all)");
  cmd->add_option("--pin", flags.pins,
                  "NODE=DEVICE: run NODE on DEVICE (repeatable)");
  cmd->add_option("--dim", flags.dims,
                  "SYMBOL=EXTENT: price a symbolic dim at EXTENT (repeatable)");
  cmd->add_option("--trust", flags.trust,
                  "Least trusted kernels allowed: verified, checked, fuzzed, "
                  "trusted-external (default)");
  cmd->add_option("--precision-floor", flags.precisionFloor,
                  "Reject kernels whose relative error may exceed this");
  cmd->add_flag("--prefer-bit-stable", flags.preferBitStable,
                "Prefer kernels with run-to-run identical bits");
  cmd->add_option("--print-before", flags.printBefore,
                  "Print the compilation before this pass (repeatable; the graph, "
                  "the plans, a target's MLIR or the lowered programs)");
  cmd->add_option("--print-after", flags.printAfter,
                  "Print the compilation after this pass (repeatable)");
  cmd->add_option("--stop-after", flags.stopAfter,
                  "Run the pipeline up to and including this pass");
  cmd->add_flag("--time-passes", flags.timePasses,
                "Report each pass's wall time (and the planner's phases) on stderr");
  cmd->add_flag(
      "--no-fusion", flags.noFusion,
      "One kernel per node: no fused elementwise chains or epilogues, no in-place concats");
  cmd->add_option("--prefer-provider", flags.preferProviders,
                  "Kernel providers to prefer on ties, most preferred first");
  cmd->add_option("--input-residency", flags.inputResidency,
                  "Device graph inputs arrive on (default cpu:0)");
  cmd->add_option("--output-residency", flags.outputResidency,
                  "Device graph outputs are delivered to (default cpu:0)");
}
