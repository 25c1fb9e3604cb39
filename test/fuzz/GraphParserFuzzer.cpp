//===- GraphParserFuzzer.cpp - libFuzzer target for the graph reader ------===//
//
// Feeds arbitrary bytes to the fuel.graph reader and verifier. Besides "no
// crash, no sanitizer report, no hang", it checks a property: whatever parses
// must print to text that parses again and prints identically.
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuel/Import/GraphJson.h"

#include <cstdio>
#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diag;
  std::optional<Graph> graph = fuzz::parseFuzzGraph(data, size, diag);
  if (!graph) {
    if (!diag.hadErrors()) {
      std::fprintf(stderr, "rejected input without a diagnostic\n");
      std::abort();
    }
    return 0;
  }
  std::string printed = printGraphJson(*graph);
  DiagnosticEngine again;
  std::optional<Graph> reparsed = fuzz::parseFuzzGraph(
      reinterpret_cast<const uint8_t *>(printed.data()), printed.size(), again);
  if (!reparsed || printGraphJson(*reparsed) != printed) {
    std::fprintf(stderr, "print -> parse -> print is not the identity:\n%s\n",
                 printed.c_str());
    std::abort();
  }
  return 0;
}
