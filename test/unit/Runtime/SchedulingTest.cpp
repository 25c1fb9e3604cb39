//===- SchedulingTest.cpp - What the runtime asks of its devices, in order -===//
//
// On the null backend (RuntimeOptions::nullDevices), which runs nothing and
// reports every launch, submission, wait and copy: the dependency structure
// of a run, not its timing. The plans come from the runtime-test-plans
// fixture; branches.fplan is plans/branches.json on the `ci` machine:
//   copy x -> vulkan:0; fuel_k0 tanh (vulkan); fuel_k1 exp (cpu);
//   fuel_k2 matmul (vulkan); copy b -> cpu; fuel_k3 matmul+add (cpu)
// with independent branches on the two devices.
//
//===----------------------------------------------------------------------===//

#include "TestPlans.h"
#include "fuel/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fuel;
using fuel::test::readPlan;
using runtime::Session;

namespace {
/// The events of `runs` runs of `plan` with every device null, after loading.
std::vector<std::string> runOnNullDevices(const std::string &plan, int runs = 1) {
  std::vector<std::string> log;
  runtime::RuntimeOptions options;
  options.threads = 1;
  options.nullDevices = {"cpu", "vulkan"};
  options.nullDeviceLog = [&](const std::string &event) { log.push_back(event); };
  DiagnosticEngine diag;
  std::unique_ptr<Session> session = Session::load(readPlan(plan), plan, options, diag);
  REQUIRE(session);
  CHECK(session->routeReport().find("cpu:0: null") != std::string::npos);
  log.clear();
  for (int r = 0; r < runs; ++r) {
    std::map<std::string, runtime::Tensor> inputs;
    for (const runtime::TensorInfo &in : session->inputs()) {
      int64_t count = 1;
      for (int64_t e : in.shape)
        count *= e;
      inputs[in.name] = {in.dtype, in.shape, std::string(count * dtypeByteSize(in.dtype), '\1')};
    }
    std::vector<runtime::Tensor> outputs;
    REQUIRE(succeeded(session->run(inputs, outputs, diag)));
  }
  return log;
}

/// Where the `nth` (from 0) `event` is in `log`.
size_t indexOf(const std::vector<std::string> &log, const std::string &event,
               int nth = 0) {
  for (size_t i = 0; i < log.size(); ++i)
    if (log[i] == event && nth-- == 0)
      return i;
  FAIL("no " << event << " in the log");
  return 0;
}
} // namespace

TEST_CASE("independent branches on two devices are in flight at once",
          "[runtime][scheduling]") {
  std::vector<std::string> log = runOnNullDevices("branches.fplan");
  // Vulkan's work, the copy of its result to the CPU included, is queued
  // and submitted before the CPU computes its branch: the matmul on Vulkan
  // is hoisted over the CPU's exp.
  size_t exp = indexOf(log, "cpu:0 launch fuel_k1");
  CHECK(indexOf(log, "vulkan:0 launch fuel_k0") < exp);
  CHECK(indexOf(log, "vulkan:0 launch fuel_k2") < exp);
  CHECK(indexOf(log, "vulkan:0 download") < exp);
  // Four in the queue: the upload of x, two launches and the download.
  CHECK(indexOf(log, "vulkan:0 submit 4") < exp);
  // Nothing waits on Vulkan until the fused matmul+add reads the copy; then
  // the host waits for the event after it, and the end of the run finds
  // nothing more in flight.
  size_t firstWait = indexOf(log, "vulkan:0 wait for 4");
  CHECK(firstWait > exp);
  CHECK(indexOf(log, "cpu:0 launch fuel_k3") == firstWait + 1);
  CHECK(log.back() == "vulkan:0 wait 0");
}

TEST_CASE("a run waits on a device only where the host reads from it",
          "[runtime][scheduling]") {
  std::vector<std::string> log = runOnNullDevices("branches.fplan", 2);
  // Per run: the input goes up once and the copy of `b` comes down (`b`,
  // an output, is read from the CPU's copy); one wait for its event, and
  // the end-of-run wait finds nothing in flight.
  auto count = [&](const std::string &event) {
    return std::count(log.begin(), log.end(), event);
  };
  CHECK(count("vulkan:0 upload") == 2);
  CHECK(count("vulkan:0 download") == 2);
  CHECK(count("vulkan:0 submit 4") == 2);
  CHECK(count("vulkan:0 wait for 4") == 1);
  CHECK(count("vulkan:0 wait for 8") == 1); // Positions count on across runs.
  CHECK(count("vulkan:0 wait 0") == 2);
  CHECK(count("cpu:0 launch fuel_k1") == 2);
  for (const std::string &event : log)
    if (event.rfind("vulkan:0 wait", 0) == 0)
      CHECK((event == "vulkan:0 wait 0" || event.rfind("vulkan:0 wait for", 0) == 0));
}

TEST_CASE("plans on one device keep the plan's order", "[runtime][scheduling]") {
  CHECK(runOnNullDevices("mlp.fplan") ==
        std::vector<std::string>{"cpu:0 launch fuel_k0", "cpu:0 launch fuel_k1",
                                 "cpu:0 launch fuel_k2"});
}

TEST_CASE("the host waits for a copy's event, not for the device's later work",
          "[runtime][scheduling]") {
  // downloads.fplan (plans/downloads.json): copy x -> vulkan:0; fuel_k0
  // tanh (vulkan); fuel_k1 exp (cpu); fuel_k2 matmul (vulkan); copy b ->
  // cpu; fuel_k3 matmul (cpu); fuel_k4 sigmoid (vulkan); copy c -> cpu;
  // fuel_k5 matmul+sub (cpu, reads b).
  std::vector<std::string> log = runOnNullDevices("downloads.fplan");
  // The copy of b is queued behind the matmul producing it (position 4),
  // and the sigmoid behind that copy: it may reuse b's memory on Vulkan at
  // once. Both are on the device before the CPU computes.
  size_t copyOfB = indexOf(log, "vulkan:0 download");
  CHECK(indexOf(log, "vulkan:0 launch fuel_k2") < copyOfB);
  CHECK(copyOfB < indexOf(log, "vulkan:0 launch fuel_k4"));
  size_t cpuFirst = indexOf(log, "cpu:0 launch fuel_k1");
  CHECK(indexOf(log, "vulkan:0 download", 1) < cpuFirst);
  CHECK(indexOf(log, "vulkan:0 submit 2") < cpuFirst);
  // The CPU's matmul does not read b: the host waits for b after it, and
  // only up to b's copy, while the sigmoid and the copy of c may still run.
  size_t waitForB = indexOf(log, "vulkan:0 wait for 4");
  CHECK(indexOf(log, "cpu:0 launch fuel_k3") < waitForB);
  CHECK(waitForB + 1 == indexOf(log, "cpu:0 launch fuel_k5"));
  // c, an output, comes down at the end: a wait for the whole queue.
  CHECK(indexOf(log, "vulkan:0 wait for 6") > waitForB + 1);
}

TEST_CASE("a copy between two GPUs waits for its event, then goes up", "[runtime][scheduling]") {
  // two-gpus.fplan (lit/run/vulkan.test.two-gpus.json): fuel_k0 tanh
  // (vulkan:0); copy h -> vulkan:1; fuel_k1 exp (vulkan:1); copy e ->
  // vulkan:0; fuel_k2 softmax (vulkan:0).
  // Each copy is enqueued on its source behind the producer; the host waits
  // for that event (neither device can reach the other's memory) and puts
  // the bytes in the target's queue, before the kernel reading them.
  CHECK(runOnNullDevices("two-gpus.fplan") ==
        std::vector<std::string>{"vulkan:0 upload", "vulkan:0 launch fuel_k0", "vulkan:0 download",
                                 "vulkan:0 submit 3", "vulkan:0 wait for 3", "vulkan:1 upload",
                                 "vulkan:1 launch fuel_k1", "vulkan:1 download",
                                 "vulkan:1 submit 3", "vulkan:1 wait for 3", "vulkan:0 upload",
                                 "vulkan:0 launch fuel_k2",
                                 // The output s comes down to the CPU; then the end of the run.
                                 "vulkan:0 download", "vulkan:0 submit 3", "vulkan:0 wait for 6",
                                 "vulkan:0 wait 0", "vulkan:1 wait 0"});
}
