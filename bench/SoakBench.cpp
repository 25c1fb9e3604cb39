//===- SoakBench.cpp - Long use of one loaded model ----------------------===//
//
//   soak-bench MODEL.fplan RUNS THREADS CYCLES
//
// Runs the model RUNS times in one session and reports, per window of a
// tenth of the runs, the median latency (the drift: last window over the
// first, measured in the same run) and the resident memory, descriptors
// and threads at its end; then loads, runs and unloads the model CYCLES
// times and reports the same every quarter. Flat memory, equal counts and
// a drift near 1 are what long use must show. Prints Markdown.
//
//===----------------------------------------------------------------------===//

#include "fuel/Runtime/Runtime.h"

#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

using namespace fuel;

namespace {
struct Usage {
  double residentMiB = 0;
  size_t descriptors = 0, threads = 0, kernelMappings = 0;
};

size_t countEntries(const char *path) {
  size_t n = 0;
  if (DIR *dir = opendir(path)) {
    while (dirent *e = readdir(dir))
      n += e->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

/// Mappings of kernel binaries (memfd "fuel-kernels") still in the process.
size_t kernelMappings() {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);)
    n += line.find("fuel-kernels") != std::string::npos;
  return n;
}

Usage usage() {
  Usage u;
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  u.residentMiB = double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
  u.descriptors = countEntries("/proc/self/fd");
  u.threads = countEntries("/proc/self/task");
  u.kernelMappings = kernelMappings();
  return u;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::unique_ptr<runtime::Session> load(const std::shared_ptr<const FileBuffer> &plan,
                                       unsigned threads) {
  DiagnosticEngine diag;
  diag.setHandler([](const Diagnostic &d) { printDiagnosticText(std::cerr, d); });
  runtime::RuntimeOptions options;
  options.threads = threads;
  std::unique_ptr<runtime::Session> session =
      runtime::Session::load(plan, "model", options, diag);
  if (!session)
    std::exit(1);
  return session;
}

/// Random f32 inputs at the planned shapes.
std::map<std::string, runtime::Tensor> randomInputs(const runtime::Session &session) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::map<std::string, runtime::Tensor> inputs;
  for (const runtime::TensorInfo &info : session.inputs()) {
    runtime::Tensor &t = inputs[info.name];
    t.dtype = info.dtype;
    t.shape = info.shape;
    int64_t count = 1;
    for (int64_t e : info.shape)
      count *= e;
    std::vector<float> values(static_cast<size_t>(count));
    for (float &v : values)
      v = normal(rng);
    t.data.assign(reinterpret_cast<const char *>(values.data()), values.size() * 4);
  }
  return inputs;
}

void run(runtime::Session &session, const std::map<std::string, runtime::Tensor> &inputs,
         std::vector<runtime::Tensor> &outputs) {
  DiagnosticEngine diag;
  diag.setHandler([](const Diagnostic &d) { printDiagnosticText(std::cerr, d); });
  if (failed(session.run(inputs, outputs, diag)))
    std::exit(1);
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: soak-bench MODEL.fplan RUNS THREADS CYCLES\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::shared_ptr<const FileBuffer> plan = FileBuffer::fromBytes(bytes.str());
  int runs = std::atoi(argv[2]), cycles = std::atoi(argv[4]);
  unsigned threads = static_cast<unsigned>(std::atoi(argv[3]));
  int window = std::max(1, runs / 10);

  std::unique_ptr<runtime::Session> session = load(plan, threads);
  std::map<std::string, runtime::Tensor> inputs = randomInputs(*session);
  std::vector<runtime::Tensor> outputs;
  run(*session, inputs, outputs); // Warm-up: page faults, weight packing.
  Usage start = usage();
  std::printf("## %d runs in one session, %u threads\n\n", runs, threads);
  std::printf("| runs | median ms | drift | resident MiB | descriptors | threads |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::printf("| warm-up | | | %.1f | %zu | %zu |\n", start.residentMiB, start.descriptors,
              start.threads);
  double first = 0;
  std::vector<double> times;
  for (int i = 1; i <= runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run(*session, inputs, outputs);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
            .count());
    if (i % window)
      continue;
    double m = median(times);
    times.clear();
    first = first ? first : m;
    Usage u = usage();
    std::printf("| %d | %.3f | %.3f | %.1f | %zu | %zu |\n", i, m, m / first, u.residentMiB,
                u.descriptors, u.threads);
  }
  session.reset();

  // Resident memory after a cycle includes what malloc keeps for reuse
  // (per-thread arenas of the pools' workers); malloc_trim returns that, so
  // the second figure is the memory still in use: a leak grows it.
  std::printf("\n## %d cycles of load, run, unload\n\n", cycles);
  std::printf("| cycles | resident MiB | after malloc_trim MiB | descriptors | threads | "
              "kernel binary mappings |\n");
  std::printf("|---|---|---|---|---|---|\n");
  auto report = [](int done) {
    Usage held = usage();
    malloc_trim(0);
    Usage live = usage();
    std::printf("| %d | %.1f | %.1f | %zu | %zu | %zu |\n", done, held.residentMiB,
                live.residentMiB, live.descriptors, live.threads, live.kernelMappings);
  };
  report(0);
  for (int c = 1; c <= cycles; ++c) {
    std::unique_ptr<runtime::Session> s = load(plan, threads);
    run(*s, inputs, outputs);
    s.reset();
    if (c % std::max(1, cycles / 4) == 0)
      report(c);
  }
  return 0;
}
