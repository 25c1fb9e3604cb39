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
  // Both Vulkan kernels are queued and submitted before the CPU computes
  // its branch: the matmul on Vulkan is hoisted over the CPU's exp.
  size_t exp = indexOf(log, "cpu:0 launch fuel_k1");
  CHECK(indexOf(log, "vulkan:0 launch fuel_k0") < exp);
  CHECK(indexOf(log, "vulkan:0 launch fuel_k2") < exp);
  CHECK(indexOf(log, "vulkan:0 submit 2") < exp);
  // Nothing waits on Vulkan until the copy of its result to the CPU, which
  // the fused matmul+add reads.
  size_t firstWait = indexOf(log, "vulkan:0 wait 2");
  CHECK(firstWait > exp);
  CHECK(indexOf(log, "vulkan:0 download") == firstWait + 1);
  CHECK(indexOf(log, "cpu:0 launch fuel_k3") > firstWait);
}

TEST_CASE("a run waits on a device only where the host reads from it",
          "[runtime][scheduling]") {
  std::vector<std::string> log = runOnNullDevices("branches.fplan", 2);
  // Per run: the input goes up once; the copy of `b` and the output `b`
  // come down; the end-of-run wait finds nothing in flight.
  auto count = [&](const std::string &event) {
    return std::count(log.begin(), log.end(), event);
  };
  CHECK(count("vulkan:0 upload") == 2);
  CHECK(count("vulkan:0 wait 2") == 2);
  CHECK(count("vulkan:0 submit 2") == 2);
  CHECK(count("cpu:0 launch fuel_k1") == 2);
  for (const std::string &event : log)
    if (event.rfind("vulkan:0 wait", 0) == 0)
      CHECK((event == "vulkan:0 wait 2" || event == "vulkan:0 wait 0"));
}

TEST_CASE("plans on one device keep the plan's order", "[runtime][scheduling]") {
  CHECK(runOnNullDevices("mlp.fplan") ==
        std::vector<std::string>{"cpu:0 launch fuel_k0", "cpu:0 launch fuel_k1",
                                 "cpu:0 launch fuel_k2"});
}

TEST_CASE("a copy to the host waits until the host reads it", "[runtime][scheduling]") {
  // downloads.fplan (plans/downloads.json): copy x -> vulkan:0; fuel_k0
  // tanh (vulkan); fuel_k1 exp (cpu); fuel_k2 matmul (vulkan); copy b ->
  // cpu; fuel_k3 matmul (cpu); fuel_k4 sigmoid (vulkan); copy c -> cpu;
  // fuel_k5 matmul+sub (cpu, reads b).
  std::vector<std::string> log = runOnNullDevices("downloads.fplan");
  size_t firstDownload = indexOf(log, "vulkan:0 download");
  // The CPU's matmul does not read b: the copy of b waits past it.
  CHECK(indexOf(log, "cpu:0 launch fuel_k3") < firstDownload);
  // A launch on Vulkan never passes a pending copy from Vulkan (its memory
  // may be reused).
  CHECK(firstDownload < indexOf(log, "vulkan:0 launch fuel_k4"));
  // The sigmoid runs while the CPU computes matmul+sub; its result comes
  // down at the end.
  size_t cpuLast = indexOf(log, "cpu:0 launch fuel_k5");
  CHECK(indexOf(log, "vulkan:0 submit 1") < cpuLast);
  CHECK(indexOf(log, "vulkan:0 download", 1) > cpuLast);
}
