//===- SessionTest.cpp - Loading and running artifacts in-process ---------===//
//
// Artifacts are built here with the real pipeline (plan, fuse, generate x86
// code); then the runtime runs them against the reference interpreter, and
// is handed artifacts whose sections were swapped or replaced (with valid
// hashes) to check that every inconsistency is a load error, not a crash.
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Artifact.h"
#include "fuel/Codegen/PlanCodegen.h"
#include "fuel/Planner/LowerProgram.h"
#include "fuel/Import/GraphJson.h"
#include "fuel/Reference/Interpreter.h"
#include "fuel/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstring>
#include <functional>
#include <random>
#include <sys/mman.h>
#include <unistd.h>

using namespace fuel;

namespace {
const char *kGraph = R"({"format": "fuel.graph", "version": 1, "name": "g",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 4]}],
  "constants": [{"name": "w", "dtype": "f32", "shape": [5, 4],
                 "data": [0.5, -1, 2, 0, 1, 1, -0.5, 0.25, 0, 3, 1, -2, 0.75, 0, 0, 1, -1, 2, 0.5, 0.125]}],
  "nodes": [{"id": "l", "op": "linear", "inputs": ["x", "w"]},
            {"id": "g", "op": "gelu", "inputs": ["l"]},
            {"id": "t", "op": "transpose", "inputs": ["g"]},
            {"id": "s", "op": "softmax", "inputs": ["t"]}],
  "outputs": ["s", "g"]})";
const char *kOneKernel = R"({"format": "fuel.graph", "version": 1, "name": "one",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 4]}],
  "nodes": [{"id": "y", "op": "relu", "inputs": ["x"]}], "outputs": ["y"]})";

std::string buildArtifact(const char *text) {
  DiagnosticEngine diag;
  std::unique_ptr<SourceLocator> locator;
  std::optional<Graph> g = parseGraphJson(text, "g.json", {}, diag, &locator);
  REQUIRE(g);
  std::optional<Machine> host = loadMachine("host", diag);
  REQUIRE(host);
  PlannedRoute route;
  route.devices = {host->devices[0].ref};
  ExecutionConfig config;
  CapsuleRegistry registry = builtinCapsules(); // The plan points into it.
  REQUIRE(succeeded(planGraph(*g, *host, registry, config, diag, *locator, route.plan)));
  RouteCode code;
  REQUIRE(succeeded(generateRouteCode(*g, route, {}, false, code, diag)));
  route.program = lowerProgram(*g, route, 0);
  return buildPlanArtifact(*g, {route}, config, "fuelc test");
}

std::vector<ArtifactSection> sectionsOf(const std::string &bytes) {
  DiagnosticEngine diag;
  auto view = readArtifact(FileBuffer::fromBytes(bytes), "a.fplan", diag);
  REQUIRE(view);
  std::vector<ArtifactSection> out;
  for (const ArtifactView::Section &s : view->sections())
    out.push_back({s.name, std::string(*view->section(s.name))});
  return out;
}

void replaceSection(std::vector<ArtifactSection> &sections, const std::string &name,
                    std::string bytes) {
  for (ArtifactSection &s : sections)
    if (s.name == name)
      s.bytes = std::move(bytes);
}

/// The load's error messages (empty when it loaded).
std::vector<std::string> loadErrors(const std::string &bytes) {
  DiagnosticEngine diag;
  std::vector<std::string> messages;
  diag.setHandler([&](const Diagnostic &d) { messages.push_back(d.message); });
  auto session = runtime::Session::load(FileBuffer::fromBytes(bytes), "a.fplan", {}, diag);
  CHECK((session == nullptr) == !messages.empty());
  return messages;
}
} // namespace

TEST_CASE("an artifact runs and matches the reference interpreter", "[runtime]") {
  std::string bytes = buildArtifact(kGraph);
  DiagnosticEngine diag;
  auto session = runtime::Session::load(FileBuffer::fromBytes(bytes), "a.fplan", {}, diag);
  REQUIRE(session);
  std::vector<runtime::TensorInfo> in = session->inputs(), out = session->outputs();
  REQUIRE(in.size() == 1);
  CHECK((in[0].name == "x" && in[0].dtype == DType::F32));
  CHECK(in[0].shape == std::vector<int64_t>{3, 4});
  CHECK(in[0].dimSymbols == std::vector<std::string>{"", ""});
  REQUIRE(out.size() == 2);
  CHECK((out[0].name == "s" && out[1].name == "g"));
  CHECK((out[0].shape == std::vector<int64_t>{5, 3} && out[1].shape == std::vector<int64_t>{3, 5}));
  std::optional<Graph> g = parseGraphJson(kGraph, "g.json", {}, diag);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (int run = 0; run < 3; ++run) { // Outputs reused across runs.
    std::vector<float> x(12);
    for (float &v : x)
      v = normal(rng);
    runtime::Tensor input{DType::F32, {3, 4}, std::string(48, '\0')};
    std::memcpy(input.data.data(), x.data(), 48);
    std::vector<runtime::Tensor> outputs;
    REQUIRE(succeeded(session->run({{"x", input}}, outputs, diag)));
    std::vector<HostTensor> want;
    HostTensor hx = HostTensor::fromBytes(DType::F32, {3, 4}, input.data);
    REQUIRE(succeeded(interpret(*g, {{"x", hx}}, want, diag)));
    REQUIRE(outputs.size() == 2);
    for (size_t o = 0; o < 2; ++o) {
      REQUIRE(outputs[o].shape == want[o].shape);
      for (size_t i = 0; i < want[o].values.size(); ++i) {
        float got;
        std::memcpy(&got, outputs[o].data.data() + 4 * i, 4);
        CHECK(got == Approx(want[o].values[i]).epsilon(1e-5).margin(1e-6));
      }
    }
  }
}

TEST_CASE("outputs the CPU computes are written in place where their memory allows", "[runtime]") {
  // On a null CPU, whose kernels write nothing: memory written in place
  // keeps what the caller put there, while a copy brings the arena's zeros.
  std::string bytes = buildArtifact(kGraph);
  runtime::RuntimeOptions options;
  options.nullDevices = {"cpu"};
  DiagnosticEngine diag;
  auto session = runtime::Session::load(FileBuffer::fromBytes(bytes), "a.fplan", options, diag);
  REQUIRE(session);
  alignas(16) float x[16] = {}; // The input is the first 12.
  std::vector<int64_t> shape{3, 4};
  std::map<std::string, runtime::TensorRef> inputs{{"x", {DType::F32, shape, x, 48}}};
  alignas(16) char memory[2][64];
  auto runWith = [&](std::function<void *(size_t)> place) {
    std::memset(memory, 0x7f, sizeof memory);
    REQUIRE(succeeded(session->run(
        inputs, [&](size_t i, DType, std::span<const int64_t>, size_t) { return place(i); },
        diag)));
  };
  auto untouched = [](const char *at) {
    return std::all_of(at, at + 60, [](char c) { return c == 0x7f; });
  };
  auto zeros = [](const char *at) {
    return std::all_of(at, at + 60, [](char c) { return c == 0; });
  };
  // Aligned: both outputs in place (g is also read by the transpose after).
  runWith([&](size_t i) { return memory[i]; });
  CHECK((untouched(memory[0]) && untouched(memory[1])));
  // Misaligned for f32: copied; the other output still in place.
  runWith([&](size_t i) { return i == 0 ? memory[0] + 1 : memory[1]; });
  CHECK((zeros(memory[0] + 1) && untouched(memory[1])));
  // An output over the input (the caller overwrites x): copied at the end.
  std::fill(x, x + 16, 1.0f);
  runWith([&](size_t i) { return i == 1 ? static_cast<void *>(x) : memory[0]; });
  CHECK(std::all_of(x, x + 15, [](float v) { return v == 0; }));
  CHECK(untouched(memory[0]));
}

TEST_CASE("kernels write no byte past their outputs in the caller's memory", "[runtime]") {
  // Outputs written in place end where a page the process may not touch
  // begins: a kernel storing past its output faults. (A split's first part
  // once copied over the whole input's extent along the axis.)
  const char *graph = R"({"format": "fuel.graph", "version": 1, "name": "parts",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [3, 50]}],
    "nodes": [{"id": "s", "op": "split", "inputs": ["x"], "attrs": {"axis": 1, "sizes": [20, 30]}},
              {"id": "c", "op": "concat", "inputs": ["s", "x"], "attrs": {"axis": 1}}],
    "outputs": ["s", "s#1", "c"]})";
  DiagnosticEngine diag;
  auto session =
      runtime::Session::load(FileBuffer::fromBytes(buildArtifact(graph)), "p.fplan", {}, diag);
  REQUIRE(session);
  std::vector<float> x(150);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) * 0.5f - 7;
  std::vector<int64_t> shape{3, 50};
  long page = sysconf(_SC_PAGESIZE);
  std::vector<std::pair<char *, size_t>> mappings;
  std::vector<float *> got;
  REQUIRE(succeeded(session->run(
      {{"x", {DType::F32, shape, x.data(), x.size() * 4}}},
      [&](size_t, DType, std::span<const int64_t>, size_t bytes) {
        size_t span = (bytes + page - 1) / page * page;
        auto *at = static_cast<char *>(
            mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        REQUIRE(at != MAP_FAILED);
        mprotect(at + span, page, PROT_NONE);
        mappings.push_back({at, span + page});
        got.push_back(reinterpret_cast<float *>(at + span - bytes));
        return static_cast<void *>(got.back());
      },
      diag)));
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t j = 0; j < 20; ++j)
      CHECK(got[0][r * 20 + j] == x[r * 50 + j]);
    for (int64_t j = 0; j < 30; ++j)
      CHECK(got[1][r * 30 + j] == x[r * 50 + 20 + j]);
    for (int64_t j = 0; j < 70; ++j)
      CHECK(got[2][r * 70 + j] == (j < 20 ? x[r * 50 + j] : x[r * 50 + j - 20]));
  }
  for (auto [at, length] : mappings)
    munmap(at, length);
}

TEST_CASE("outputs that are views of an input or another output are returned as views",
          "[runtime]") {
  const char *graph = R"({"format": "fuel.graph", "version": 1, "name": "views",
    "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 6]}],
    "nodes": [{"id": "r", "op": "relu", "inputs": ["x"]},
              {"id": "t", "op": "transpose", "inputs": ["r"]},
              {"id": "f", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [3, 8]}}],
    "outputs": ["t", "r", "f", "x"]})";
  DiagnosticEngine diag;
  auto session =
      runtime::Session::load(FileBuffer::fromBytes(buildArtifact(graph)), "v.fplan", {}, diag);
  REQUIRE(session);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> x(24), r(24, -1.0f);
  for (float &v : x)
    v = normal(rng);
  std::vector<int64_t> shape{4, 6};
  std::vector<size_t> asked;
  std::vector<runtime::OutputView> views;
  REQUIRE(succeeded(session->run(
      {{"x", {DType::F32, shape, x.data(), 96}}},
      [&](size_t i, DType, std::span<const int64_t>, size_t bytes) {
        asked.push_back(i);
        REQUIRE(bytes == 96);
        return static_cast<void *>(r.data());
      },
      diag, {}, &views)));
  using Source = runtime::OutputView::Source;
  CHECK(asked == std::vector<size_t>{1}); // Only r has memory of its own.
  REQUIRE(views.size() == 4);
  CHECK((views[0].source == Source::Output && views[0].index == 1));
  CHECK(views[0].shape == std::vector<int64_t>{6, 4});
  CHECK(views[0].strides == std::vector<int64_t>{1, 6});
  CHECK(views[1].source == Source::None);
  CHECK((views[2].source == Source::Input && views[2].index == 0 && views[2].offset == 0));
  CHECK((views[2].shape == std::vector<int64_t>{3, 8} &&
         views[2].strides == std::vector<int64_t>{8, 1}));
  CHECK((views[3].source == Source::Input && views[3].shape == shape));
  for (size_t i = 0; i < 24; ++i)
    CHECK(r[i] == std::max(x[i], 0.0f));
  // Without views, every output is written out densely.
  std::vector<runtime::Tensor> outputs;
  REQUIRE(succeeded(session->run(
      {{"x", {DType::F32, shape, std::string(reinterpret_cast<char *>(x.data()), 96)}}}, outputs,
      diag)));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      float t;
      std::memcpy(&t, outputs[0].data.data() + 4 * (i * 4 + j), 4);
      CHECK(t == r[j * 6 + i]);
    }
  CHECK(outputs[2].data == outputs[3].data);
}

TEST_CASE("a kernel missing from the binary fails the load", "[runtime]") {
  std::vector<ArtifactSection> sections = sectionsOf(buildArtifact(kGraph));
  // The one-kernel graph's binary exports fuel_k0 only.
  std::vector<ArtifactSection> other = sectionsOf(buildArtifact(kOneKernel));
  for (const ArtifactSection &s : other)
    if (s.name == "kernels.x86")
      replaceSection(sections, "kernels.x86", s.bytes);
  std::vector<std::string> errors = loadErrors(writeArtifact(sections));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0] == "step 's': kernel 'fuel_k1' (capsule codegen.x86.softmax) "
                     "is missing on cpu:0");
}

TEST_CASE("inconsistent sections are load errors", "[runtime]") {
  std::vector<ArtifactSection> good = sectionsOf(buildArtifact(kGraph));
  struct Case {
    std::string section, bytes, message;
  };
  const Case cases[] = {
      {"program", "{}", "not fuel.program version 2"},
      {"program", "not json", "not valid JSON"},
      {"meta", "[1, 2]", "not fuel.artifact-meta version 2"},
      {"kernels.x86", "\x7f" "ELF but not really", "cpu:0: the x86 kernel binary does not load: "},
  };
  for (const Case &c : cases) {
    std::vector<ArtifactSection> sections = good;
    replaceSection(sections, c.section, c.bytes);
    std::vector<std::string> errors = loadErrors(writeArtifact(sections));
    INFO(c.section << ": " << c.bytes);
    REQUIRE_FALSE(errors.empty());
    CHECK(errors[0].rfind(c.message, 0) == 0);
  }
}

TEST_CASE("the runtime never reads the graph section", "[runtime]") {
  std::vector<ArtifactSection> sections = sectionsOf(buildArtifact(kGraph));
  replaceSection(sections, "graph", "not a graph");
  CHECK(loadErrors(writeArtifact(sections)).empty());
}

namespace {
/// The first load error of the artifact of kGraph after `edit` changed its
/// JSON section `section` (hashes recomputed, so only the section's
/// validation stands between the edit and the kernels).
std::string errorAfterEdit(const std::function<void(nlohmann::json &)> &edit,
                           const std::string &section = "program") {
  std::vector<ArtifactSection> sections = sectionsOf(buildArtifact(kGraph));
  for (ArtifactSection &s : sections)
    if (s.name == section) {
      nlohmann::json program = nlohmann::json::parse(s.bytes);
      edit(program);
      s.bytes = program.dump();
    }
  std::vector<std::string> errors = loadErrors(writeArtifact(sections));
  return errors.empty() ? "" : errors[0];
}
} // namespace

TEST_CASE("a program edited behind valid hashes is refused", "[runtime]") {
  using nlohmann::json;
  // The linear kernel reads x and w and writes l: dropping w would make it
  // read past its argument vector.
  CHECK(errorAfterEdit([](json &p) {
          json &args = p["kernels"][0]["args"];
          args.erase(args.begin() + 1);
        }) == "kernel 'fuel_k0' takes (f32:2,f32:2,f32:2) but the program passes it "
              "(f32:2,f32:2)");
  // Launching the softmax in place of the linear kernel reads l unwritten.
  CHECK(errorAfterEdit([](json &p) { p["steps"][0]["launch"] = 1; }) ==
        "reads buffer 1 before any step writes it");
  CHECK(errorAfterEdit([](json &p) { p["steps"][1]["launch"] = 0; }) ==
        "kernel 0 runs twice");
  CHECK(errorAfterEdit([](json &p) {
          std::swap(p["steps"][0], p["steps"][1]);
          p["steps"][0]["deps"] = json::array();
          p["steps"][1]["deps"] = json::array();
        }).find(" before any step writes it") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["steps"][1]["deps"] = json::array(); })
            .find("but does not depend on step 0, which writes it") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["buffers"][0]["offset"] = 1 << 30; })
            .find("lies outside the") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["kernels"][0]["args"][0]["strides"][0] = 1000; })
            .find("the tensor reaches outside its") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["kernels"][0]["args"][0]["offset"] = -1; })
            .find("the tensor reaches outside its") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["kernels"][0]["args"][2]["buffer"] = 99; })
            .rfind("expected an integer in [0, ", 0) == 0);
  CHECK(errorAfterEdit([](json &p) { p["kernels"][1]["device"] = 7; })
            .rfind("expected an integer in [0, 0]", 0) == 0);
  CHECK(errorAfterEdit([](json &p) { p["constants"][0]["size"] = 1 << 20; })
            .find("outside the") != std::string::npos);
  CHECK(errorAfterEdit([](json &p) { p["kernels"][0]["args"][1]["dtype"] = "f99"; }) ==
        "unknown dtype 'f99'");
  CHECK(errorAfterEdit([](json &p) { p["kernels"][0]["args"][0]["sizes"][0] = -3; })
            .rfind("expected an integer in [0, ", 0) == 0);
  CHECK(errorAfterEdit([](json &p) { p["outputs"][0]["buffer"] = p["inputs"][0]["buffer"]; })
            .find("the tensor reaches outside its 48-byte buffer") != std::string::npos);
}

TEST_CASE("an edited meta section is refused", "[runtime]") {
  using nlohmann::json;
  auto metaError = [](const std::function<void(json &)> &edit) {
    return errorAfterEdit(edit, "meta");
  };
  CHECK(metaError([](json &m) { m["machine"]["devices"][0]["cpu_features"] = 5; }) ==
        "expected an array");
  CHECK(metaError([](json &m) { m["machine"]["devices"][0]["cpu_features"] = {"avx", 1}; }) ==
        "expected a string");
  CHECK(metaError([](json &m) { m["machine"]["devices"][0]["id"] = "cpu:x"; }) ==
        "'cpu:x' is not a device id (kind:index)");
  CHECK(metaError([](json &m) { m["routes"][0]["devices"] = "cpu:0"; }) ==
        "expected an array");
  CHECK(metaError([](json &m) { m.erase("machine"); }) == "missing member 'machine'");
  CHECK(metaError([](json &m) { m["routes"][0]["section"] = "nosuch"; }) ==
        "route 0 names a missing section 'nosuch'");
}
