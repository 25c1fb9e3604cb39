//===- IrScaleBench.cpp - Parse + verify throughput of huge graphs --------===//
//
// Generates a synthetic fuel.graph file with N nodes (a residual chain mixing
// unary, binary and view ops, default N = 1,000,000), then times, best of
// several runs: the fuelc reader, the verifier (with type inference), and as
// the reference nlohmann::json parsing the same bytes into a DOM (it builds
// no graph and checks nothing). Prints a markdown table with ns/node, the
// ratio to the reference, the graph's own footprint and the peak RSS.
//
//===----------------------------------------------------------------------===//

#include "fuel/IR/Verifier.h"
#include "fuel/Import/GraphJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace fuel;

static std::string makeGraph(size_t numNodes) {
  std::string text = R"({"format": "fuel.graph", "version": 1, "name": "synthetic",
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 64]}],
  "constants": [{"name": "scale", "dtype": "f32", "shape": [64], "data": [)";
  for (int i = 0; i < 64; ++i)
    text += (i ? ", " : "") + std::to_string(0.5 + i / 128.0);
  text += "]}],\n  \"nodes\": [\n";
  std::string prev = "x", prev2 = "x";
  for (size_t i = 0; i < numNodes; ++i) {
    std::string id = "n" + std::to_string(i);
    std::string node = "    {\"id\": \"" + id + "\", ";
    switch (i % 5) {
    case 0:
      node += "\"op\": \"relu\", \"inputs\": [\"" + prev + "\"]}";
      break;
    case 1:
      node += "\"op\": \"add\", \"inputs\": [\"" + prev + "\", \"" + prev2 + "\"]}";
      break;
    case 2:
      node += "\"op\": \"mul\", \"inputs\": [\"" + prev + "\", \"scale\"]}";
      break;
    case 3:
      node += "\"op\": \"reshape\", \"inputs\": [\"" + prev +
              "\"], \"attrs\": {\"shape\": [\"B\", 8, 8]}}";
      break;
    default:
      node += "\"op\": \"reshape\", \"inputs\": [\"" + prev +
              "\"], \"attrs\": {\"shape\": [\"B\", 64]}}";
    }
    text += node + (i + 1 < numNodes ? ",\n" : "\n");
    prev2 = prev;
    prev = id;
  }
  text += "  ],\n  \"outputs\": [\"" + prev + "\"]\n}\n";
  return text;
}

template <typename Fn> static double bestSeconds(int runs, Fn fn) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    fn();
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    best = std::min(best, d.count());
  }
  return best;
}

static long peakRssKiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int main(int argc, char **argv) {
  size_t numNodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  std::string text = makeGraph(numNodes);
  long rssBefore = peakRssKiB();

  size_t footprint = 0;
  double parseTime = bestSeconds(runs, [&] {
    DiagnosticEngine diag;
    GraphReadOptions options;
    options.verify = false;
    std::optional<Graph> g = parseGraphJson(text, "synthetic.json", options, diag);
    if (!g) {
      std::fprintf(stderr, "synthetic graph failed to parse\n");
      std::exit(1);
    }
  });
  double verifyTime = 1e300;
  for (int r = 0; r < runs; ++r) {
    DiagnosticEngine diag;
    GraphReadOptions options;
    options.verify = false;
    std::optional<Graph> g = parseGraphJson(text, "synthetic.json", options, diag);
    verifyTime = std::min(verifyTime, bestSeconds(1, [&] {
                            if (failed(verifyGraph(*g, diag))) {
                              std::fprintf(stderr, "synthetic graph failed to verify\n");
                              std::exit(1);
                            }
                          }));
    footprint = g->memoryFootprint();
  }
  long rssFuel = peakRssKiB();
  double domTime = bestSeconds(runs, [&] {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.size() == 0)
      std::exit(1);
  });

  auto nsPerNode = [&](double s) { return s * 1e9 / double(numNodes); };
  double total = parseTime + verifyTime;
  std::printf("| measure | value |\n|---|---|\n");
  std::printf("| nodes | %zu |\n", numNodes);
  std::printf("| graph file size | %.1f MB |\n", text.size() / 1e6);
  std::printf("| fuelc parse | %.1f ns/node (%.3f s) |\n", nsPerNode(parseTime), parseTime);
  std::printf("| fuelc verify + type inference | %.1f ns/node (%.3f s) |\n",
              nsPerNode(verifyTime), verifyTime);
  std::printf("| fuelc parse + verify | %.1f ns/node (%.3f s) |\n", nsPerNode(total), total);
  std::printf("| reference: nlohmann::json DOM parse of the same bytes | %.1f ns/node (%.3f s) |\n",
              nsPerNode(domTime), domTime);
  std::printf("| ratio (fuelc parse + verify) / reference | %.2f |\n", total / domTime);
  std::printf("| graph IR footprint | %.1f bytes/node |\n", double(footprint) / double(numNodes));
  std::printf("| peak RSS growth during fuelc runs | %.1f bytes/node (text excluded) |\n",
              double(rssFuel - rssBefore) * 1024.0 / double(numNodes));
  return 0;
}
