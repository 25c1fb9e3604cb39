//===- Driver.cpp - Shared pieces of the fuelc subcommands ----------------===//

#include "Driver.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace fuel;
using namespace fuel::driver;

void driver::installRenderer(DiagnosticEngine &diag, const DriverOptions &options) {
  diag.setMaxErrors(options.maxErrors);
  bool json = options.diagnosticsFormat == "json";
  diag.setHandler([json](const Diagnostic &d) {
    if (json)
      std::cerr << diagnosticToJson(d) << '\n';
    else
      printDiagnosticText(std::cerr, d);
  });
}

int driver::finishWithErrors(const DiagnosticEngine &diag,
                     const DriverOptions &options) {
  if (diag.suppressedCount() != 0 && options.diagnosticsFormat == "text")
    std::cerr << "note: " << diag.suppressedCount()
              << " more error(s) not shown (--max-errors=" << options.maxErrors
              << ")\n";
  return kInputError;
}

int driver::writeOutput(const std::string &output, const std::string &text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    return kSuccess;
  }
  if (Expected<void> written = writeFileAtomically(output, text); !written) {
    std::cerr << "fuelc: error: " << written.error() << '\n';
    return kInputError;
  }
  return kSuccess;
}

void driver::addCommonOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--diagnostics-format", options.diagnosticsFormat,
                  "How to print diagnostics: text (file:line:col: error: "
                  "...) or json (one JSON object per line)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--max-errors", options.maxErrors,
                  "Stop after this many errors (0: no limit)");
}

void driver::addModelOptions(CLI::App *cmd, DriverOptions &options) {
  cmd->add_option("--freeze", options.freeze,
                  "NAME=FILE.npy: import ONNX graph input NAME as this constant "
                  "(shapes, axes or pads the model takes as inputs; repeatable)");
}
