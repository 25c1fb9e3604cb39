//===- fuel-run.cpp - Run a .fplan artifact -------------------------------===//
//
//   fuel-run model.fplan --input x=x.npy [...] --output y.npy [...]
//            [--threads N] [--bench N] [--profile]
//
// FUEL_NUM_THREADS, where set, is the default of --threads: test runners
// that run many cases at once give each one thread.
// Loads the artifact with the fail-fast checks of the runtime (Runtime.h),
// prints the chosen route, binds symbolic dims from the inputs' shapes, runs
// the plan and writes the outputs as .npy in the graph's output order.
// --bench N runs N more times and prints the load time, the first run's
// latency and median/min/max latency of the others, after the runs in
// which the CPU backend still chooses its thread splits (with more than
// one thread), which it prints apart; --profile prints time per kernel
// kind and device (with --bench, over the N warm runs only: the first pays
// the page faults and the weight packing). Exit codes as fuelc: 0 success,
// 1 bad input (artifact, tensors, no runnable route), 2 usage error,
// 3 internal error.
//
//===----------------------------------------------------------------------===//

#include "fuel/Support/Npy.h"
#include "fuel/Runtime/Runtime.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>

using namespace fuel;

namespace {
int run(int argc, char **argv) {
  CLI::App app{"fuel-run: execute a .fplan artifact", "fuel-run"};
  std::string artifactPath;
  std::vector<std::string> inputs, outputs;
  runtime::RuntimeOptions options;
  unsigned benchRuns = 0;
  bool quiet = false;
  std::string tracePath;
  std::vector<std::string> symbolSettings;
  app.add_option("artifact", artifactPath, "Artifact (.fplan) from fuelc plan -o")
      ->required();
  app.add_option("--input", inputs, "NAME=FILE.npy for each graph input");
  app.add_option("--output", outputs, "FILE.npy for each graph output, in order");
  app.add_option("--threads", options.threads,
                 "Threads for CPU kernels (default: $FUEL_NUM_THREADS, else one per CPU "
                 "this process may use; at most 1024)")
      ->envname("FUEL_NUM_THREADS");
  app.add_option("--bench", benchRuns,
                 "Run N more times and print median/min/max latency (after the runs that "
                 "choose the thread splits, printed apart)");
  app.add_flag("--profile", options.profile,
               "Print time per kernel kind and device (with --bench: over the warm runs)");
  app.add_option("--symbol", symbolSettings,
                 "NAME=N: set a symbolic dim by name (the inputs' shapes must agree)");
  app.add_option("--trace", tracePath,
                 "Write a Chrome trace of the runs (chrome://tracing, Perfetto): a track "
                 "per device with its kernels, the host's with copies and waits, one per "
                 "thread with its slices of split CPU kernels");
  app.add_flag("-q,--quiet", quiet, "Do not print the chosen route");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  options.trace = !tracePath.empty();
  DiagnosticEngine diag;
  diag.setHandler([](const Diagnostic &d) { printDiagnosticText(std::cerr, d); });
  std::shared_ptr<const FileBuffer> artifact =
      openInputFile(artifactPath, "artifact", diag);
  if (!artifact)
    return 1;
  auto loadStart = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::Session> session =
      runtime::Session::load(artifact, artifactPath, options, diag);
  if (!session)
    return 1;
  double loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - loadStart)
                      .count();
  if (!quiet)
    std::cerr << session->routeReport();
  if (!outputs.empty() && outputs.size() != session->outputs().size()) {
    std::cerr << "fuel-run: error: the plan has " << session->outputs().size()
              << " outputs, " << outputs.size() << " --output files given\n";
    return 2;
  }
  std::map<std::string, int64_t> symbols;
  for (const std::string &setting : symbolSettings) {
    size_t eq = setting.find('=');
    std::string name = setting.substr(0, eq == std::string::npos ? 0 : eq);
    std::string value = eq == std::string::npos ? "" : setting.substr(eq + 1);
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(value.c_str(), &end, 10);
    if (name.empty() || value.empty() || *end != '\0' || errno == ERANGE) {
      std::cerr << "fuel-run: error: --symbol '" << setting << "' is not NAME=N\n";
      return 2;
    }
    if (!symbols.emplace(name, n).second) {
      std::cerr << "fuel-run: error: --symbol '" << name << "' is given twice\n";
      return 2;
    }
  }
  std::map<std::string, runtime::Tensor> tensors;
  for (const std::string &binding : inputs) {
    NamedArray input;
    if (Expected<void> read = readNamedNpy(binding, input); !read) {
      std::cerr << (input.path.empty() ? "fuel-run" : input.path) << ": error: " << read.error()
                << '\n';
      return input.path.empty() ? 2 : 1;
    }
    if (tensors.count(input.name)) {
      std::cerr << "fuel-run: error: --input '" << input.name << "' is given twice\n";
      return 2;
    }
    tensors[input.name] = {input.array.dtype, input.array.shape,
                           std::string(input.data())};
  }
  std::vector<runtime::Tensor> results;
  auto firstStart = std::chrono::steady_clock::now();
  if (failed(session->run(tensors, results, diag, symbols)))
    return 1;
  double firstMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - firstStart)
                       .count();
  if (benchRuns) {
    auto timedRun = [&](std::vector<double> &ms) {
      auto start = std::chrono::steady_clock::now();
      if (failed(session->run(tensors, results, diag, symbols)))
        return false;
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
      return true;
    };
    // The runs that choose the thread splits are not the steady state.
    std::vector<double> choosing, ms;
    while (session->choosing())
      if (!timedRun(choosing))
        return 1;
    session->resetProfile();
    for (unsigned i = 0; i < benchRuns; ++i)
      if (!timedRun(ms))
        return 1;
    std::sort(choosing.begin(), choosing.end());
    std::sort(ms.begin(), ms.end());
    std::cout << "load " << loadMs << " ms (first run " << firstMs << " ms)";
    if (!choosing.empty())
      std::cout << ", " << choosing.size() << " runs choosing the thread splits (median "
                << choosing[choosing.size() / 2] << " ms, max " << choosing.back() << " ms)";
    std::cout << "; latency over " << benchRuns << " runs: median " << ms[ms.size() / 2]
              << " ms, min " << ms.front() << " ms, max " << ms.back() << " ms\n";
  }
  if (options.profile)
    std::cout << session->profileReport();
  if (options.trace) {
    if (Expected<void> written = writeFileAtomically(tracePath, session->traceJson()); !written) {
      std::cerr << "fuel-run: error: " << written.error() << '\n';
      return 1;
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (Expected<void> written =
            writeNpyFile(outputs[i], results[i].dtype, results[i].shape, results[i].data);
        !written) {
      std::cerr << "fuel-run: error: " << written.error() << '\n';
      return 1;
    }
  }
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "fuel-run: internal error: " << e.what() << '\n';
  }
  return 3;
}
