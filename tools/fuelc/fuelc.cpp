//===- fuelc.cpp - The fuelc compiler driver ------------------------------===//
//
// Subcommands over the libraries: `check` (parse, verify, summarize), `print`
// (canonical JSON), `plan` (placement planning, .fplan artifacts), `inspect`
// (validate an artifact) and `targets` (built-in machines). Exit codes: 0 success, 1 the input is wrong (diagnostics
// printed), 2 usage error, 3 internal error (docs/cli.md).
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Artifact.h"
#include "fuel/IR/GraphStats.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Planner/Planner.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

using namespace fuel;

namespace {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternal = 3 };

struct DriverOptions {
  std::string diagnosticsFormat = "text";
  unsigned maxErrors = 20;
};

/// Prints diagnostics as they come, as text or as JSON Lines on stderr.
void installRenderer(DiagnosticEngine &diag, const DriverOptions &options) {
  diag.setMaxErrors(options.maxErrors);
  bool json = options.diagnosticsFormat == "json";
  diag.setHandler([json](const Diagnostic &d) {
    if (json)
      std::cerr << diagnosticToJson(d) << '\n';
    else
      printDiagnosticText(std::cerr, d);
  });
}

int finishWithErrors(const DiagnosticEngine &diag,
                     const DriverOptions &options) {
  if (diag.suppressedCount() != 0 && options.diagnosticsFormat == "text")
    std::cerr << "note: " << diag.suppressedCount()
              << " more error(s) not shown (--max-errors=" << options.maxErrors
              << ")\n";
  return kInputError;
}

std::string typeText(const Graph &graph, ValueRef v) {
  return std::string(dtypeName(graph.dtype(v))) +
         formatShape(graph.shape(v), graph.symbols());
}

std::string valueName(const Graph &graph, ValueRef v) {
  std::string name(graph.name(v.node));
  if (graph.numResults(v.node) != 1)
    name += "#" + std::to_string(v.result);
  return name;
}

void printSummary(const Graph &graph, std::ostream &os) {
  GraphStats stats = computeGraphStats(graph);
  size_t numOps = graph.numNodes() - stats.numInputs - stats.numConstants;
  std::string name(graph.graphNameText());
  os << "graph" << (name.empty() ? "" : " '" + name + "'") << ": "
     << graph.numNodes() << " nodes (" << stats.numInputs << " inputs, "
     << stats.numConstants << " constants, " << numOps << " ops), "
     << graph.outputs().size() << " outputs\n";
  os << "inputs:\n";
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (graph.kind(n) == OpKind::Input)
      os << "  " << graph.name(n) << ": " << typeText(graph, {n, 0}) << '\n';
  os << "outputs:\n";
  for (ValueRef v : graph.outputs())
    os << "  " << valueName(graph, v) << ": " << typeText(graph, v) << '\n';
  os << "parameters: " << stats.numConstants << " constants, "
     << stats.parameterElements << " elements, " << stats.parameterBytes
     << " bytes\n";
  if (graph.symbols().size() != 0) {
    os << "symbols:";
    for (uint32_t s = 0; s < graph.symbols().size(); ++s)
      os << ' ' << graph.symbols().name(s);
    os << '\n';
  }
  // Sorted by op name, for stable output.
  std::map<std::string_view, size_t> byName;
  for (unsigned k = 0; k < kNumOpKinds; ++k) {
    OpKind kind = static_cast<OpKind>(k);
    if (stats.nodesByOp[k] != 0 && kind != OpKind::Input &&
        kind != OpKind::Constant)
      byName[opName(kind)] = stats.nodesByOp[k];
  }
  os << "ops:\n";
  for (auto [op, count] : byName) {
    std::string padded(op);
    padded.resize(std::max<size_t>(padded.size(), 14), ' ');
    os << "  " << padded << ' ' << count << '\n';
  }
}

int writeOutput(const std::string &output, const std::string &text);

int runCheck(const std::string &input, const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<GraphFile> file = readGraphFile(input, diag);
  if (!file)
    return finishWithErrors(diag, options);
  printSummary(file->graph, std::cout);
  return kSuccess;
}

int runPrint(const std::string &input, const std::string &output,
             const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  std::optional<GraphFile> file = readGraphFile(input, diag);
  if (!file)
    return finishWithErrors(diag, options);
  return writeOutput(output, printGraphJson(file->graph));
}

/// Planning flags as given on the command line, before validation.
struct PlanFlags {
  std::string machine = "host";
  std::string calibration;
  std::string kernels = FUEL_KERNELS_DIR;
  std::string policy;
  std::string emit; // Default: text, unless an artifact is written.
  std::string output;
  std::vector<std::string> allowDevices, pins, dims, preferProviders, routes;
  // Empty (or NaN, or false): not given; the policy file or default holds.
  std::string placer, trust, inputResidency, outputResidency;
  double precisionFloor = std::numeric_limits<double>::quiet_NaN();
  bool preferBitStable = false;
};

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

int runPlan(const std::string &input, const PlanFlags &flags,
            const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  ExecutionConfig config;
  if (!flags.policy.empty() && failed(loadPolicy(flags.policy, diag, config)))
    return finishWithErrors(diag, options);
  std::vector<std::vector<DeviceRef>> routeDevices;
  if (!makeConfig(flags, config) || !parseRoutes(flags, routeDevices))
    return kUsageError;
  std::optional<Machine> machine = loadPlanningMachine(flags, diag);
  if (!machine)
    return finishWithErrors(diag, options);
  std::optional<GraphFile> file = readGraphFile(input, diag);
  if (!file)
    return finishWithErrors(diag, options);
  // Without --route, one route over the allowed (or all) devices.
  if (routeDevices.empty()) {
    routeDevices.push_back(config.allowedDevices);
    if (routeDevices[0].empty())
      for (const DeviceSpec &d : machine->devices)
        routeDevices[0].push_back(d.ref);
  }
  std::optional<CapsuleRegistry> registry = loadRegistry(flags, diag);
  if (!registry)
    return finishWithErrors(diag, options);
  std::vector<PlannedRoute> routes;
  for (size_t r = 0; r < routeDevices.size(); ++r) {
    ExecutionConfig routeConfig = config;
    routeConfig.allowedDevices = routeDevices[r];
    PlannedRoute route{routeDevices[r], {}};
    if (failed(planGraph(file->graph, *machine, *registry, routeConfig, diag,
                         *file->locator, route.plan))) {
      if (!flags.routes.empty())
        diag.error({}, "route " + std::to_string(r) + " (" + flags.routes[r] +
                           ") cannot be planned");
      return finishWithErrors(diag, options);
    }
    routes.push_back(std::move(route));
  }
  if (!flags.output.empty()) {
    int code = writeOutput(
        flags.output, buildPlanArtifact(file->graph, routes, config,
                                        std::string("fuelc ") + FUEL_VERSION));
    if (code != kSuccess || flags.emit.empty())
      return code;
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

int runExplain(const std::string &input, const PlanFlags &flags,
               const std::string &node, const DriverOptions &options) {
  DiagnosticEngine diag;
  installRenderer(diag, options);
  ExecutionConfig config;
  if (!flags.policy.empty() && failed(loadPolicy(flags.policy, diag, config)))
    return finishWithErrors(diag, options);
  if (!makeConfig(flags, config))
    return kUsageError;
  std::optional<Machine> machine = loadPlanningMachine(flags, diag);
  if (!machine)
    return finishWithErrors(diag, options);
  std::optional<GraphFile> file = readGraphFile(input, diag);
  if (!file)
    return finishWithErrors(diag, options);
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
  std::optional<CapsuleRegistry> registry = loadRegistry(flags, diag);
  if (!registry || failed(planGraph(file->graph, *machine, *registry, config,
                                    diag, *file->locator, plan)))
    return finishWithErrors(diag, options);
  std::cout << explainPlan(file->graph, *machine, *registry, config, plan, only);
  return kSuccess;
}

int runInspect(const std::string &input, const DriverOptions &options) {
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
  std::cout << "fuelc artifact, format version " << kArtifactVersion << ", "
            << artifact->size() << " bytes, " << artifact->sections().size()
            << " sections (all hashes verified)\n";
  for (const ArtifactView::Section &s : artifact->sections()) {
    std::string name = s.name;
    name.resize(std::max<size_t>(name.size(), 16), ' ');
    std::cout << "  " << name << ' ' << s.size << " bytes  sha256 "
              << toHex(s.hash) << '\n';
  }
  return kSuccess;
}

int runTargets(const std::string &printName) {
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

int writeOutput(const std::string &output, const std::string &text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    return kSuccess;
  }
  std::ofstream file(output, std::ios::binary);
  file << text;
  file.close();
  if (!file) {
    std::cerr << "fuelc: error: cannot write '" << output << "'\n";
    return kInputError;
  }
  return kSuccess;
}

void addCommonOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--diagnostics-format", options.diagnosticsFormat,
                  "How to print diagnostics: text (file:line:col: error: "
                  "...) or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--max-errors", options.maxErrors,
                  "Stop after this many errors (0: no limit)");
}

/// Options shared by `plan` and `explain`.
void addPlanOptions(CLI::App *cmd, std::string &input, PlanFlags &flags) {
  cmd->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin)")
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
  cmd->add_option("--prefer-provider", flags.preferProviders,
                  "Kernel providers to prefer on ties, most preferred first");
  cmd->add_option("--input-residency", flags.inputResidency,
                  "Device graph inputs arrive on (default cpu:0)");
  cmd->add_option("--output-residency", flags.outputResidency,
                  "Device graph outputs are delivered to (default cpu:0)");
}

int runDriver(int argc, char **argv) {
  CLI::App app{"fuelc: an ahead-of-time ML graph compiler", "fuelc"};
  app.set_version_flag("--version",
                       std::string("fuelc ") + FUEL_VERSION +
                           " (graph format version " +
                           std::to_string(kGraphFormatVersion) + ")");
  app.require_subcommand(1);
  DriverOptions options;
  std::string input, output;

  CLI::App *check = app.add_subcommand(
      "check", "Parse and verify a graph, then print a summary of it");
  check->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin)")
      ->required();
  addCommonOptions(check, options);

  CLI::App *print = app.add_subcommand(
      "print", "Parse and verify a graph, then print its canonical JSON");
  print->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin)")
      ->required();
  print->add_option("-o,--output", output, "Output file (default: stdout)");
  addCommonOptions(print, options);

  PlanFlags planFlags;
  CLI::App *plan = app.add_subcommand(
      "plan", "Place every node on a device and kernel, insert copies, plan "
              "memory; print the plan or write a .fplan artifact");
  addPlanOptions(plan, input, planFlags);
  plan->add_option("--emit", planFlags.emit,
                   "Print the plan to stdout as text, plan-json or dot "
                   "(Graphviz; default: text, or nothing when writing an "
                   "artifact)")
      ->check(CLI::IsMember({"text", "plan-json", "dot"}));
  plan->add_option("-o,--output", planFlags.output,
                   "Write the .fplan artifact to this file");
  plan->add_option("--route", planFlags.routes,
                   "DEV,DEV,...: plan a route over these devices "
                   "(repeatable, in order of preference; the artifact carries "
                   "all, the runtime takes the first whose devices exist)");
  addCommonOptions(plan, options);

  std::string explainNode;
  CLI::App *explain = app.add_subcommand(
      "explain", "Plan, then say for each node which kernels could run it, "
                 "at what cost, and why it runs where it does");
  addPlanOptions(explain, input, planFlags);
  explain->add_option("--node", explainNode, "Explain only this node");
  addCommonOptions(explain, options);

  CLI::App *inspect = app.add_subcommand(
      "inspect", "Validate a .fplan artifact and list its sections");
  inspect->add_option("artifact", input, "Artifact file")->required();
  addCommonOptions(inspect, options);

  std::string printName;
  CLI::App *targets = app.add_subcommand(
      "targets", "List the built-in machines (for plan --machine)");
  targets->add_option("--print", printName,
                      "Print the fuel.machine JSON of one built-in machine");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? kSuccess : kUsageError;
  }
  if (check->parsed())
    return runCheck(input, options);
  if (plan->parsed())
    return runPlan(input, planFlags, options);
  if (explain->parsed())
    return runExplain(input, planFlags, explainNode, options);
  if (targets->parsed())
    return runTargets(printName);
  if (inspect->parsed())
    return runInspect(input, options);
  return runPrint(input, output, options);
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runDriver(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "fuelc: internal error: " << e.what() << '\n';
  } catch (...) {
    std::cerr << "fuelc: internal error\n";
  }
  return kInternal;
}
