//===- Driver.h - Shared pieces of the fuelc subcommands ----------*- C++ -*-===//
//
// Exit codes, diagnostic rendering, and the subcommands' entry points, so
// that fuelc.cpp only wires the command line to them.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TOOLS_FUELC_DRIVER_H
#define FUEL_TOOLS_FUELC_DRIVER_H

#include "fuel/Import/GraphJson.h"
#include "fuel/Support/Diagnostics.h"

#include <CLI/CLI.hpp>

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuel::driver {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternal = 3 };

struct DriverOptions {
  std::string diagnosticsFormat = "text";
  unsigned maxErrors = 20;
  /// ONNX graph inputs to import as constants: NAME=FILE.npy.
  std::vector<std::string> freeze;
};

/// Planning flags as given on the command line, before validation.
struct PlanFlags {
  std::string machine = "host";
  std::string calibration;
  std::string kernels = FUEL_KERNELS_DIR;
  std::string policy;
  std::string emit; // Default: text, unless an artifact is written.
  std::string output;
  /// Directory to write the SPIR-V modules of the Vulkan kernels into.
  std::string spirvDir;
  std::vector<std::string> allowDevices, pins, dims, preferProviders, routes;
  // Empty (or NaN, or false): not given; the policy file or default holds.
  std::string placer, trust, inputResidency, outputResidency;
  double precisionFloor = std::numeric_limits<double>::quiet_NaN();
  bool preferBitStable = false;
  bool noFusion = false;
  /// Compiler pipeline: passes to print before / after, where to stop, and
  /// whether to report each pass's wall time.
  std::vector<std::string> printBefore, printAfter;
  std::string stopAfter;
  bool timePasses = false;
};

/// Writes SPIR-V modules (file name -> bytes) of route `route` into `dir`.
int writeSpirvModules(const std::string &dir, size_t route,
                      const std::map<std::string, std::string> &modules);

/// Prints diagnostics as they come, as text or as JSON Lines on stderr.
void installRenderer(DiagnosticEngine &diag, const DriverOptions &options);
/// Says how many errors were not shown and returns kInputError.
int finishWithErrors(const DiagnosticEngine &diag, const DriverOptions &options);
/// Writes `text` to `output` (stdout for "" or "-").
int writeOutput(const std::string &output, const std::string &text);
void addCommonOptions(CLI::App *cmd, DriverOptions &options);
/// Options shared by `plan` and `explain`.
void addPlanOptions(CLI::App *cmd, std::string &input, PlanFlags &flags);

/// Reads a model: an ONNX file (by its .onnx extension) is imported,
/// anything else is read as fuel.graph JSON.
/// --freeze NAME=FILE.npy (for the subcommands that read a model).
void addModelOptions(CLI::App *cmd, DriverOptions &options);

int runCheck(const std::string &input, const DriverOptions &options);
/// `fuelc import model.onnx -o model.json`: the graph, with its constants
/// in a raw weights file beside it (model.bin).
int runImport(const std::string &input, const std::string &output,
              const DriverOptions &options);
int runPrint(const std::string &input, const std::string &output,
             const DriverOptions &options);
int runPlan(const std::string &input, const PlanFlags &flags,
            const DriverOptions &options);
int runExplain(const std::string &input, const PlanFlags &flags,
               const std::string &node, const DriverOptions &options);
/// Lists the artifact's sections, or writes the one named `section`.
int runInspect(const std::string &input, const std::string &section,
               const DriverOptions &options);
int runTargets(const std::string &printName);

} // namespace fuel::driver

#endif // FUEL_TOOLS_FUELC_DRIVER_H
