//===- fuelc.cpp - The fuelc compiler driver ------------------------------===//
//
// Wires the command line to the subcommands: `check` (parse, verify,
// summarize), `print` (canonical JSON), `plan` (placement planning, .fplan
// artifacts), `explain`, `inspect` (validate an artifact) and `targets`
// (built-in machines). Exit codes: 0 success, 1 the input is wrong
// (diagnostics printed), 2 usage error, 3 internal error (docs/cli.md).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "fuel/Import/GraphJson.h"

#include <iostream>

using namespace fuel;
using namespace fuel::driver;

namespace {

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
  check->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin) or ONNX model (.onnx)")
      ->required();
  addCommonOptions(check, options);
  addModelOptions(check, options);

  CLI::App *print = app.add_subcommand(
      "print", "Parse and verify a graph, then print its canonical JSON");
  print->add_option("graph", input, "Graph file (fuel.graph JSON, - for stdin) or ONNX model (.onnx)")
      ->required();
  print->add_option("-o,--output", output, "Output file (default: stdout)");
  addCommonOptions(print, options);
  addModelOptions(print, options);

  CLI::App *import = app.add_subcommand(
      "import", "Import an ONNX model as a fuel.graph with a raw weights file "
                "beside it (OUTPUT.bin)");
  import->add_option("model", input, "ONNX model (.onnx)")->required();
  import->add_option("-o,--output", output, "fuel.graph file to write")->required();
  addCommonOptions(import, options);
  addModelOptions(import, options);

  PlanFlags planFlags;
  CLI::App *plan = app.add_subcommand(
      "plan", "Place every node on a device and kernel, insert copies, plan "
              "memory; print the plan or write a .fplan artifact");
  addPlanOptions(plan, input, planFlags);
  plan->add_option("--emit", planFlags.emit,
                   "Print the plan to stdout as text, plan-json or dot "
                   "(Graphviz), the generated kernels as mlir (x86 then "
                   "GPU), the x86 kernels as asm or the CUDA kernels as ptx "
                   "(default: text, or nothing when writing an artifact)")
      ->check(CLI::IsMember({"text", "plan-json", "dot", "mlir", "asm", "ptx"}));
  plan->add_option("-o,--output", planFlags.output,
                   "Write the .fplan artifact to this file");
  plan->add_option("--spirv-dir", planFlags.spirvDir,
                   "Write the Vulkan kernels' SPIR-V modules (validated and "
                   "optimized, as in the artifact) into this directory, one "
                   ".spv file each (route N>0: NAME.N.spv)");
  plan->add_option("--route", planFlags.routes,
                   "DEV,DEV,...: plan a route over these devices "
                   "(repeatable, in order of preference; the artifact carries "
                   "all, the runtime takes the first whose devices exist)");
  addCommonOptions(plan, options);
  addModelOptions(plan, options);

  std::string explainNode;
  CLI::App *explain = app.add_subcommand(
      "explain", "Plan, then say for each node which kernels could run it, "
                 "at what cost, and why it runs where it does");
  addPlanOptions(explain, input, planFlags);
  explain->add_option("--node", explainNode, "Explain only this node");
  addCommonOptions(explain, options);
  addModelOptions(explain, options);

  CLI::App *inspect = app.add_subcommand(
      "inspect", "Validate a .fplan artifact and list its sections");
  inspect->add_option("artifact", input, "Artifact file")->required();
  std::string sectionName;
  inspect->add_option("--section", sectionName,
                      "Write this section's bytes to stdout instead of the list");
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
    return runInspect(input, sectionName, options);
  if (import->parsed())
    return runImport(input, output, options);
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
