//===- RuntimeLoadFuzzer.cpp - libFuzzer target for the runtime's load ---===//
//
// Arbitrary bytes as the `program` section of an otherwise valid artifact (the
// MLP example planned by fuelc; its hashes recomputed), so the input reaches
// the program reader and validator, route choice, kernel resolution and memory
// checks: no crash, no sanitizer report; a refusal always says why.
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Artifact.h"
#include "fuel/Runtime/Runtime.h"

#include <cstdio>
#include <cstdlib>

using namespace fuel;

namespace {
std::vector<ArtifactSection> base;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // run-fuzzer.sh plans the examples into seeds/ (with the release fuelc).
  Expected<std::shared_ptr<const FileBuffer>> file = FileBuffer::open("seeds/mlp.fplan");
  DiagnosticEngine diag;
  std::optional<ArtifactView> view;
  if (file)
    view = readArtifact(*file, "seeds/mlp.fplan", diag);
  if (!view) {
    std::fprintf(stderr, "runtime-load-fuzzer: needs seeds/mlp.fplan (%s)\n",
                 file ? "not an artifact" : file.error().c_str());
    std::abort();
  }
  for (const ArtifactView::Section &s : view->sections())
    base.push_back({s.name, std::string(*view->section(s.name))});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<ArtifactSection> sections = base;
  for (ArtifactSection &s : sections)
    if (s.name == "program")
      s.bytes.assign(reinterpret_cast<const char *>(data), size);
  DiagnosticEngine diag;
  runtime::RuntimeOptions options;
  options.threads = 1;
  std::unique_ptr<runtime::Session> session = runtime::Session::load(
      FileBuffer::fromBytes(writeArtifact(sections)), "fuzz.fplan", options, diag);
  if (!session && !diag.hadErrors())
    std::abort();
  return 0;
}
