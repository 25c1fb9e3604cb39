//===- OnnxImportFuzzer.cpp - libFuzzer target for ONNX models ------------===//
//
// Arbitrary bytes as an ONNX model: no crash, no sanitizer report; a
// rejection always says why.
//
//===----------------------------------------------------------------------===//

#include "fuel/Import/Onnx.h"

#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diag;
  std::optional<Graph> graph = importOnnx(
      std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.onnx", diag);
  if (!graph && !diag.hadErrors())
    std::abort();
  return 0;
}
