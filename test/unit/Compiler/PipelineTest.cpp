//===- PipelineTest.cpp - The compiler as named passes --------------------===//
//
// The pipeline runs its passes in the documented order, stops where asked
// (leaving later results empty), prints a pass's view of the compilation,
// and stops at the first failing pass with its diagnostic.
//
//===----------------------------------------------------------------------===//

#include "fuel/Compiler/Pipeline.h"
#include "fuel/Codegen/TargetKernels.h"

#include <catch2/catch.hpp>

using namespace fuel;

namespace {
struct Fixture {
  DiagnosticEngine diag;
  std::optional<Machine> machine = loadMachine("host", diag);
  CapsuleRegistry registry = builtinCapsules();
  Compilation c;
  Fixture() {
    REQUIRE(machine);
    c.modelPath = std::string(FUEL_EXAMPLES_DIR) + "/mlp/mlp.json";
    c.machine = &*machine;
    c.registry = &registry;
    c.routeDevices = {{machine->devices[0].ref}};
    c.compilerVersion = "fuelc test";
  }
};

std::vector<std::string> passNames(const std::vector<PassTiming> &timings) {
  std::vector<std::string> out;
  for (const PassTiming &t : timings)
    if (t.name[0] != ' ')
      out.push_back(t.name);
  return out;
}
} // namespace

TEST_CASE("the passes run in order and stop where asked", "[pipeline]") {
  std::vector<std::string> all;
  for (const Pass &p : compilerPasses())
    all.push_back(p.name);
  CHECK(all == std::vector<std::string>{"import", "materialize", "fold-scales",
                                        "distribute-pooling", "place", "codegen-x86",
                                        "codegen-spirv", "codegen-ptx", "lower", "serialize"});
  Fixture f;
  PipelineOptions options;
  options.stopAfter = "place";
  std::vector<PassTiming> timings;
  REQUIRE(succeeded(runPipeline(f.c, options, f.diag, timings)));
  CHECK(passNames(timings) == std::vector<std::string>{"import", "materialize", "fold-scales",
                                                       "distribute-pooling", "place"});
  REQUIRE(f.c.routes.size() == 1);
  CHECK_FALSE(f.c.routes[0].plan.kernels.empty());
  CHECK(f.c.routes[0].kernelBinaries.empty()); // No code generated yet.
  CHECK(f.c.artifact.empty());
  // The planner's phases come right after `place`, indented.
  REQUIRE(timings.size() > 5);
  CHECK(timings[5].name == "  candidates");
}

TEST_CASE("a whole run lowers every route and writes the artifact", "[pipeline]") {
  Fixture f;
  PipelineOptions options;
  std::string printed;
  options.printAfter = {"lower"};
  options.print = [&](const std::string &text) { printed += text; };
  std::vector<PassTiming> timings;
  REQUIRE(succeeded(runPipeline(f.c, options, f.diag, timings)));
  CHECK(f.c.routes[0].kernelBinaries.count("x86") == 1);
  CHECK(f.c.routes[0].program.kernels.size() == f.c.routes[0].plan.kernels.size());
  CHECK(f.c.artifact.rfind("FUELPLAN", 0) == 0);
  CHECK(printed.rfind("// --- after lower ---\n{\n \"format\": \"fuel.program\"", 0) == 0);
}

TEST_CASE("a failing pass stops the pipeline", "[pipeline]") {
  Fixture f;
  f.c.modelPath = "/nonexistent/model.json";
  std::vector<std::string> messages;
  f.diag.setHandler([&](const Diagnostic &d) { messages.push_back(d.message); });
  std::vector<PassTiming> timings;
  CHECK(failed(runPipeline(f.c, {}, f.diag, timings)));
  CHECK(passNames(timings) == std::vector<std::string>{"import"});
  REQUIRE_FALSE(messages.empty());
  CHECK(f.c.routes.empty());
}
