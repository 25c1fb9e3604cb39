//===- PlanCommands.cpp - fuelc plan, explain, inspect and targets --------===//

#include "Driver.h"

#include "fuel/Artifact/Artifact.h"
#include "fuel/Artifact/Program.h"
#include "fuel/Codegen/PlanCodegen.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Planner/Planner.h"
#include "fuel/Transforms/Materialize.h"

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
  CapsuleRegistry registry = CapsuleRegistry::builtin();
  if (!flags.kernels.empty() &&
      failed(registry.addManifestDirectory(flags.kernels, diag)))
    return std::nullopt;
  return registry;
}

/// What `plan` and `explain` read before planning.
struct PlanningInputs {
  ExecutionConfig config;
  std::optional<Machine> machine;
  std::optional<GraphFile> file;
  std::optional<CapsuleRegistry> registry;
};

/// Reads the policy, flags, machine, graph and kernels; returns kSuccess or
/// the exit code to stop with (after printing why).
int loadPlanningInputs(const std::string &input, const PlanFlags &flags,
                       const DriverOptions &options, DiagnosticEngine &diag,
                       PlanningInputs &in) {
  if (!flags.policy.empty() &&
      failed(loadPolicy(flags.policy, diag, in.config)))
    return finishWithErrors(diag, options);
  if (!makeConfig(flags, in.config))
    return kUsageError;
  in.machine = loadPlanningMachine(flags, diag);
  if (in.machine)
    in.file = readModel(input, diag, options);
  if (in.file)
    materializeStridedReshapes(in.file->graph);
  if (in.file)
    in.registry = loadRegistry(flags, diag);
  return in.registry ? kSuccess : finishWithErrors(diag, options);
}
} // namespace

int driver::runPlan(const std::string &input, const PlanFlags &flags,
            const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::vector<std::vector<DeviceRef>> routeDevices;
  if (!parseRoutes(flags, routeDevices))
    return kUsageError;
  PlanningInputs in;
  if (int code = loadPlanningInputs(input, flags, options, diag, in))
    return code;
  const ExecutionConfig &config = in.config;
  const Machine *machine = &*in.machine;
  const GraphFile *file = &*in.file;
  const CapsuleRegistry *registry = &*in.registry;
  // Without --route, one route over the allowed (or all) devices.
  if (routeDevices.empty()) {
    routeDevices.push_back(config.allowedDevices);
    if (routeDevices[0].empty())
      for (const DeviceSpec &d : machine->devices)
        routeDevices[0].push_back(d.ref);
  }
  std::vector<PlannedRoute> routes;
  for (size_t r = 0; r < routeDevices.size(); ++r) {
    ExecutionConfig routeConfig = config;
    routeConfig.allowedDevices = routeDevices[r];
    PlannedRoute route{routeDevices[r], {}, {}, {}};
    if (failed(planGraph(file->graph, *machine, *registry, routeConfig, diag,
                         *file->locator, route.plan))) {
      if (!flags.routes.empty())
        diag.error({}, "route " + std::to_string(r) + " (" + flags.routes[r] +
                           ") cannot be planned");
      return finishWithErrors(diag, options);
    }
    routes.push_back(std::move(route));
  }
  bool wantsCode = !flags.output.empty() || !flags.spirvDir.empty() ||
                   flags.emit == "mlir" || flags.emit == "asm" || flags.emit == "ptx";
  std::vector<RouteCode> code(routes.size());
  bool warnedPtx = false;
  for (size_t r = 0; r < routes.size() && wantsCode; ++r) {
    std::string error;
    KernelLibraries libraries{FUEL_X86_KERNEL_LIBRARY, FUEL_SPIRV_KERNEL_DIR,
                              FUEL_PTX_KERNEL_DIR};
    if (failed(generateRouteCode(file->graph, routes[r].plan, libraries,
                                 flags.emit == "asm", code[r], error))) {
      diag.error({}, "code generation failed: " + error);
      return finishWithErrors(diag, options);
    }
    routes[r].kernelBinaries = code[r].binaries;
    routes[r].kernelRevisions = code[r].revisions;
    if (!flags.spirvDir.empty())
      if (int status = writeSpirvModules(flags.spirvDir, r, code[r].spirvModules))
        return status;
    if (code[r].ptxUnverified && !warnedPtx) {
      diag.warning({}, "ptxas was not found: the PTX kernels were not assembled, "
                       "so they are not verified");
      warnedPtx = true;
    }
  }
  if (!flags.output.empty()) {
    int code = writeOutput(
        flags.output, buildPlanArtifact(file->graph, routes, config,
                                        std::string("fuelc ") + FUEL_VERSION));
    if (code != kSuccess || flags.emit.empty())
      return code;
  }
  if (flags.emit == "mlir" || flags.emit == "asm" || flags.emit == "ptx") {
    for (const RouteCode &c : code)
      std::cout << (flags.emit == "mlir" ? c.mlir : flags.emit == "asm" ? c.assembly : c.ptx);
    return kSuccess;
  }
  bool several = !flags.routes.empty();
  if (flags.emit == "plan-json" && several)
    std::cout << "{\"format\": \"fuel.plan-routes\", \"routes\": [\n";
  for (size_t r = 0; r < routes.size(); ++r) {
    const ExecutionPlan &plan = routes[r].plan;
    if (flags.emit == "plan-json") {
      std::cout << (r ? "," : "") << printPlanJson(file->graph, plan);
      continue;
    }
    if (several && flags.emit != "dot")
      std::cout << (r ? "\n" : "") << "route " << r << ": " << flags.routes[r]
                << '\n';
    std::cout << (flags.emit == "dot" ? printPlanDot(file->graph, plan)
                                      : printPlanText(file->graph, plan));
  }
  if (flags.emit == "plan-json" && several)
    std::cout << "]}\n";
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
  PlanningInputs in;
  if (int code = loadPlanningInputs(input, flags, options, diag, in))
    return code;
  const GraphFile *file = &*in.file;
  std::optional<NodeId> only;
  if (!node.empty()) {
    for (NodeId n = 0; n < file->graph.numNodes(); ++n)
      if (file->graph.name(n) == node)
        only = n;
    if (!only) {
      diag.error({}, "--node names '" + node + "', which the graph does not have");
      return finishWithErrors(diag, options);
    }
  }
  ExecutionPlan plan;
  if (failed(planGraph(file->graph, *in.machine, *in.registry, in.config, diag,
                       *file->locator, plan)))
    return finishWithErrors(diag, options);
  std::cout << explainPlan(file->graph, *in.machine, *in.registry, in.config,
                           plan, only);
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
  std::string error;
  std::shared_ptr<const FileBuffer> buffer = FileBuffer::open(input, error);
  if (!buffer) {
    SourceLocation loc;
    loc.file = input;
    diag.error(std::move(loc), "cannot read artifact: " + error);
    return finishWithErrors(diag, options);
  }
  std::optional<ArtifactView> artifact = readArtifact(buffer, input, diag);
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
  cmd->add_flag("--no-fusion", flags.noFusion,
                "One kernel per node: no fused elementwise chains or epilogues");
  cmd->add_option("--prefer-provider", flags.preferProviders,
                  "Kernel providers to prefer on ties, most preferred first");
  cmd->add_option("--input-residency", flags.inputResidency,
                  "Device graph inputs arrive on (default cpu:0)");
  cmd->add_option("--output-residency", flags.outputResidency,
                  "Device graph outputs are delivered to (default cpu:0)");
}
