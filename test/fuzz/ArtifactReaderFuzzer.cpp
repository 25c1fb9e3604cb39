//===- ArtifactReaderFuzzer.cpp - libFuzzer target for .fplan files -------===//
//
// Arbitrary bytes as an artifact: no crash, no sanitizer report; a rejection
// always says why, and an accepted artifact's sections lie inside the file.
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Artifact.h"

#include <cstdlib>

using namespace fuel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DiagnosticEngine diag;
  std::optional<ArtifactView> view = readArtifact(
      FileBuffer::fromBytes(std::string(reinterpret_cast<const char *>(data), size)),
      "fuzz.fplan", diag);
  if (!view) {
    if (!diag.hadErrors())
      std::abort();
    return 0;
  }
  for (const ArtifactView::Section &s : view->sections())
    if (s.offset + s.size > size || view->section(s.name)->size() != s.size)
      std::abort();
  return 0;
}
