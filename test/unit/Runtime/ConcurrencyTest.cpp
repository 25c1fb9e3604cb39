//===- ConcurrencyTest.cpp - The runtime used from several threads --------===//
//
// fuel-runtime-tests links the runtime alone, so the stage that builds it
// with ThreadSanitizer compiles nothing of the compiler. The artifacts come
// from the real fuelc (the runtime-test-plans fixture), in the directory
// FUEL_TEST_PLANS names.
//
// Every run's outputs are compared byte for byte with the same input's
// outputs from a run on one thread: whether a kernel splits over the
// threads is measured on its first runs, but a slice never changes an
// element's arithmetic, so a race shows as a difference (and, under TSan,
// as a report).
//
//===----------------------------------------------------------------------===//

#include "TestPlans.h"
#include "fuel/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <dirent.h>

#include <cstring>
#include <random>
#include <thread>

using namespace fuel;
using fuel::test::readPlan;
using runtime::Session;
using runtime::Tensor;

namespace {
using Inputs = std::map<std::string, Tensor>;

/// Sessions run on two threads unless asked: outputs are compared across
/// sessions.
std::unique_ptr<Session> load(const std::shared_ptr<const FileBuffer> &plan,
                              unsigned threads = 2) {
  DiagnosticEngine diag;
  runtime::RuntimeOptions options;
  options.threads = threads;
  std::unique_ptr<Session> session = Session::load(plan, "plan", options, diag);
  REQUIRE(session);
  return session;
}

/// Random f32 inputs at the plan's planned shapes.
Inputs randomInputs(const Session &session, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Inputs inputs;
  for (const runtime::TensorInfo &info : session.inputs()) {
    REQUIRE(info.dtype == DType::F32);
    int64_t count = 1;
    for (int64_t e : info.shape)
      count *= e;
    std::vector<float> values(static_cast<size_t>(count));
    for (float &v : values)
      v = normal(rng);
    Tensor &t = inputs[info.name];
    t.shape = info.shape;
    t.data.assign(reinterpret_cast<const char *>(values.data()), values.size() * 4);
  }
  return inputs;
}

std::vector<Tensor> runOnce(Session &session, const Inputs &inputs) {
  DiagnosticEngine diag;
  std::vector<Tensor> outputs;
  REQUIRE(succeeded(session.run(inputs, outputs, diag)));
  return outputs;
}

bool sameBytes(const std::vector<Tensor> &a, const std::vector<Tensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape != b[i].shape || a[i].data != b[i].data)
      return false;
  return true;
}

/// Entries of a /proc/self directory (open descriptors, threads).
size_t countEntries(const char *path) {
  size_t n = 0;
  DIR *dir = opendir(path);
  REQUIRE(dir);
  while (dirent *e = readdir(dir))
    n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

/// An artifact with random inputs and its outputs from a run on one thread.
struct Known {
  std::shared_ptr<const FileBuffer> plan;
  Inputs inputs;
  std::vector<Tensor> expected;
};

/// The MLP and the CNN examples, known.
std::vector<Known> twoArtifacts(unsigned seed) {
  std::vector<Known> known;
  for (const char *name : {"mlp.fplan", "cnn.fplan"}) {
    Known &k = known.emplace_back();
    k.plan = readPlan(name);
    std::unique_ptr<Session> session = load(k.plan);
    k.inputs = randomInputs(*session, seed++);
    k.expected = runOnce(*session, k.inputs);
  }
  return known;
}

/// Runs `body(t)` on `count` threads at once; Catch2's assertions are not
/// thread-safe, so the threads report through their results.
template <class Body> std::vector<int> onThreads(int count, Body body) {
  std::vector<int> failures(static_cast<size_t>(count), 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t)
    threads.emplace_back([&, t] { failures[static_cast<size_t>(t)] = body(t); });
  for (std::thread &t : threads)
    t.join();
  return failures;
}
} // namespace

TEST_CASE("one session run from many threads at once", "[runtime][threads]") {
  std::unique_ptr<Session> session = load(readPlan("mlp.fplan"));
  constexpr int kThreads = 8, kRuns = 10;
  std::vector<Inputs> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(randomInputs(*session, 100 + t));
    expected.push_back(runOnce(*session, inputs.back()));
  }
  std::vector<int> failures = onThreads(kThreads, [&](int t) {
    int wrong = 0;
    for (int r = 0; r < kRuns; ++r) {
      DiagnosticEngine diag;
      std::vector<Tensor> outputs;
      wrong += failed(session->run(inputs[t], outputs, diag)) ||
               !sameBytes(outputs, expected[t]);
    }
    return wrong;
  });
  CHECK(failures == std::vector<int>(kThreads, 0));
}

TEST_CASE("kernels give the same bytes split and whole, through the runs that choose",
          "[runtime][threads]") {
  // The first runs alternate each kernel large enough to split between the
  // two ways (a batch of 32 makes the convolutions so); the later ones keep
  // the faster.
  for (const char *name : {"mlp.fplan", "cnn32.fplan"}) {
    std::unique_ptr<Session> one = load(readPlan(name), 1), two = load(readPlan(name), 2);
    for (unsigned run = 0; run < 10; ++run) {
      Inputs inputs = randomInputs(*one, 200 + run);
      std::vector<Tensor> expected = runOnce(*one, inputs);
      INFO(name << ", run " << run);
      CHECK(sameBytes(runOnce(*two, inputs), expected));
    }
  }
}

TEST_CASE("sessions of different artifacts run at once", "[runtime][threads]") {
  std::vector<Known> known = twoArtifacts(7);
  // Each thread loads its own session and runs it.
  std::vector<int> failures = onThreads(4, [&](int t) {
    const Known &k = known[static_cast<size_t>(t) % known.size()];
    DiagnosticEngine diag;
    runtime::RuntimeOptions options;
    options.threads = 2;
    std::unique_ptr<Session> session = Session::load(k.plan, "plan", options, diag);
    if (!session)
      return 1;
    int wrong = 0;
    for (int r = 0; r < 5; ++r) {
      std::vector<Tensor> outputs;
      wrong += failed(session->run(k.inputs, outputs, diag)) || !sameBytes(outputs, k.expected);
    }
    return wrong;
  });
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("loading and unloading in a loop leaks no thread or descriptor",
          "[runtime][threads]") {
  // Two artifacts in turn, one of them kept loaded: each session runs its
  // own kernels, whatever was loaded before.
  std::vector<Known> known = twoArtifacts(11);
  std::unique_ptr<Session> kept = load(known[0].plan);
  runOnce(*kept, known[0].inputs); // Its binder thread is gone after a run.
  size_t descriptors = countEntries("/proc/self/fd"), threads = countEntries("/proc/self/task");
  for (int i = 0; i < 40; ++i) {
    const Known &k = known[static_cast<size_t>(i) % known.size()];
    std::unique_ptr<Session> session = load(k.plan);
    if (i % 4 < 2) // Some are unloaded before they run (the binder still working).
      CHECK(sameBytes(runOnce(*session, k.inputs), k.expected));
  }
  CHECK(sameBytes(runOnce(*kept, known[0].inputs), known[0].expected));
  CHECK(countEntries("/proc/self/fd") == descriptors);
  CHECK(countEntries("/proc/self/task") == threads);
}

TEST_CASE("a first run at other extents than planned rebinds beside the binder",
          "[runtime][threads]") {
  // The MLP is planned for x[B, 64] with B <= 4; B = 2 runs its kernels at
  // other extents than the binder binds.
  std::shared_ptr<const FileBuffer> plan = readPlan("mlp.fplan");
  std::unique_ptr<Session> reference = load(plan);
  Inputs full = randomInputs(*reference, 5), half = full;
  half["x"].shape[0] = 2;
  half["x"].data.resize(half["x"].data.size() / 2);
  std::vector<Tensor> expectedFull = runOnce(*reference, full);
  std::vector<Tensor> expectedHalf = runOnce(*reference, half);
  REQUIRE(expectedHalf[0].shape[0] == 2);
  for (int i = 0; i < 10; ++i) {
    std::unique_ptr<Session> session = load(plan);
    CHECK(sameBytes(runOnce(*session, half), expectedHalf));
    CHECK(sameBytes(runOnce(*session, full), expectedFull));
    CHECK(sameBytes(runOnce(*session, half), expectedHalf));
  }
}
