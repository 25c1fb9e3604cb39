//===- MachineParserFuzzer.cpp - libFuzzer target for machine files -------===//
//
// Arbitrary bytes as a fuel.machine file (and as a calibration table, a
// capsule manifest and a policy, the planner's other JSON inputs): no crash, no sanitizer
// report, and every rejection comes with a diagnostic; an accepted machine
// has devices and link matrices without NaNs.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Capsule.h"
#include "fuel/Planner/ExecutionConfig.h"
#include "fuel/Planner/Machine.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine calibrationDiag;
  if (!parseCalibrationJson(text, "fuzz.json", calibrationDiag) &&
      !calibrationDiag.hadErrors())
    std::abort();
  DiagnosticEngine manifestDiag;
  CapsuleRegistry registry;
  if (failed(registry.addManifest(text, "fuzz.json", "/nonexistent",
                                  manifestDiag)) &&
      !manifestDiag.hadErrors())
    std::abort();
  DiagnosticEngine policyDiag;
  ExecutionConfig config;
  if (failed(parsePolicyJson(text, "fuzz.json", policyDiag, config)) &&
      !policyDiag.hadErrors())
    std::abort();
  DiagnosticEngine diag;
  std::optional<Machine> machine = parseMachineJson(text, "fuzz.json", diag);
  if (!machine) {
    if (!diag.hadErrors()) {
      std::fprintf(stderr, "rejected input without a diagnostic\n");
      std::abort();
    }
    return 0;
  }
  std::vector<double> latency, inverseBandwidth;
  machine->linkMatrices(latency, inverseBandwidth);
  for (size_t i = 0; i < latency.size(); ++i)
    if (machine->devices.empty() || std::isnan(latency[i]) ||
        std::isnan(inverseBandwidth[i]))
      std::abort();
  return 0;
}
