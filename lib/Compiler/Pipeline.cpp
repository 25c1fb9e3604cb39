//===- Pipeline.cpp - Running the compiler's passes -----------------------===//

#include "fuel/Compiler/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace fuel;

const Pass *fuel::findPass(std::string_view name) {
  for (const Pass &p : compilerPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

static bool listed(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

LogicalResult fuel::runPipeline(Compilation &compilation, const PipelineOptions &options,
                                DiagnosticEngine &diag,
                                std::vector<PassTiming> &timings) {
  for (const Pass &pass : compilerPasses()) {
    if (listed(options.printBefore, pass.name))
      options.print("// --- before " + pass.name + " ---\n" + pass.print(compilation));
    auto start = std::chrono::steady_clock::now();
    LogicalResult result = pass.run(compilation, diag);
    timings.push_back(
        {pass.name,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    if (failed(result))
      return failure();
    if (pass.name == "place")
      for (size_t r = 0; r < compilation.routes.size(); ++r)
        for (const auto &[phase, seconds] : compilation.routes[r].plan.phaseSeconds)
          timings.push_back({"  " + phase +
                                 (compilation.routes.size() > 1
                                      ? " (route " + std::to_string(r) + ")"
                                      : ""),
                             seconds});
    if (listed(options.printAfter, pass.name))
      options.print("// --- after " + pass.name + " ---\n" + pass.print(compilation));
    if (pass.name == options.stopAfter)
      break;
  }
  return success();
}

std::string fuel::formatPassTimings(const std::vector<PassTiming> &timings) {
  double total = 0;
  for (const PassTiming &t : timings)
    if (t.name[0] != ' ') // Phases are already counted in their pass.
      total += t.seconds;
  std::string out = "===" + std::string(69, '-') + "===\n" +
                    "                    fuelc pass execution timing report\n" + "===" +
                    std::string(69, '-') + "===\n";
  char line[160];
  std::snprintf(line, sizeof(line), "  Total: %.4f seconds\n\n   wall (s)   share  pass\n",
                total);
  out += line;
  for (const PassTiming &t : timings) {
    std::snprintf(line, sizeof(line), "  %9.4f  %5.1f%%  %s\n", t.seconds,
                  total > 0 ? 100 * t.seconds / total : 0.0, t.name.c_str());
    out += line;
  }
  return out;
}
