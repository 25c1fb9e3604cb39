//===- MachinePresets.cpp - Built-in machine descriptions -----------------===//
//
// Presets are fuel.machine documents parsed by the same reader as user files,
// so `fuelc targets --print NAME` shows a valid starting point for a custom
// machine. Figures: the CI machine's were measured (memcpy bandwidth, FMA
// peak; see ../shared/notes/toolchain.md); the H200's are NVIDIA's published
// dense peaks and HBM3e bandwidth, with PCIe 5 x16 at its typical achieved
// rate. Calibration tables refine the time term where measured.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Machine.h"

using namespace fuel;

namespace {
struct Preset {
  std::string_view name;
  std::string text;
};
} // namespace

/// The CPU this process runs on, at the highest x86-64 level it has (as
/// -march=native: the default plan runs here), with the figures of our
/// build machines: 2 Zen 5 cores with AVX-512 (~215 GFLOP/s FMA peak per
/// core), ~57 GB/s memcpy on 2 threads, 24 GiB. 8-bit products run at
/// four times the FMA rate with VNNI (vpdpbusd: four per 32-bit lane), at
/// twice without (vpmaddwd: two).
static std::string hostCpu() {
  std::string target = hostX86Target();
  std::string bytes = target.find("vnni") != std::string::npos ? "1.72e12" : "8.6e11";
  return R"json({"id": "cpu:0", "name": "host CPU (2 cores)", "target": ")json" + target +
         R"json(",
      "peak_flops": {"f32": 4.3e11, "f64": 2.15e11, "f16": 4.3e11, "bf16": 4.3e11,
                     "i8": )json" +
         bytes + R"json(, "i16": 8.6e11, "i32": 4.3e11, "i64": 2.15e11, "u8": )json" + bytes +
         R"json(,
                     "u16": 8.6e11, "u32": 4.3e11, "u64": 2.15e11, "bool": 8.6e11},
      "memory_bandwidth": 5.7e10, "memory_capacity": 25769803776, "launch_overhead": 2e-6})json";
}

static const std::vector<Preset> &presets() {
  static const std::vector<Preset> list = [] {
    std::string cpu = hostCpu();
    return std::vector<Preset>{
        {"host", R"json({"format": "fuel.machine", "version": 1, "name": "host",
  "description": "the host CPU alone",
  "devices": [)json" + cpu + R"json(],
  "links": []
})json"},
        {"ci", R"json({"format": "fuel.machine", "version": 1, "name": "ci",
  "description": "the CI machine: host CPU + Mesa lavapipe (a Vulkan device that runs on the same CPU)",
  "devices": [)json" + cpu + R"json(,
    {"id": "vulkan:0", "name": "llvmpipe (Mesa lavapipe)", "target": "vulkan1.3",
     "peak_flops": {"f32": 1.0e11, "f64": 5.0e10, "f16": 5.0e10, "i8": 1.0e11, "i32": 1.0e11,
                    "i64": 5.0e10, "u8": 1.0e11, "bool": 1.0e11},
     "memory_bandwidth": 2.0e10, "memory_capacity": 8589934592, "launch_overhead": 5e-5}],
  "links": [{"from": "cpu:0", "to": "vulkan:0", "bandwidth": 1.0e10, "latency": 2e-5}]
})json"},
        {"h200", R"json({"format": "fuel.machine", "version": 1, "name": "h200",
  "description": "host CPU + one NVIDIA H200 over PCIe 5 x16, reachable through CUDA and through Vulkan",
  "devices": [)json" + cpu + R"json(,
    {"id": "cuda:0", "name": "NVIDIA H200", "target": "sm_90",
     "peak_flops": {"f32": 6.7e13, "f64": 6.7e13, "f16": 9.89e14, "bf16": 9.89e14,
                    "i8": 1.979e15, "i32": 3.35e13, "i64": 1.6e13, "u8": 1.979e15, "bool": 3.35e13},
     "memory_bandwidth": 4.8e12, "memory_capacity": 150323855360, "launch_overhead": 4e-6},
    {"id": "vulkan:0", "name": "NVIDIA H200 (Vulkan)", "target": "vulkan1.3",
     "peak_flops": {"f32": 6.0e13, "f64": 3.4e13, "f16": 1.2e14, "i8": 6.0e13, "i32": 3.0e13,
                    "i64": 1.5e13, "u8": 6.0e13, "bool": 3.0e13},
     "memory_bandwidth": 4.0e12, "memory_capacity": 150323855360, "launch_overhead": 8e-6}],
  "links": [{"from": "cpu:0", "to": "cuda:0", "bandwidth": 5.5e10, "latency": 1e-5},
            {"from": "cpu:0", "to": "vulkan:0", "bandwidth": 5.0e10, "latency": 1.5e-5}]
})json"}};
  }();
  return list;
}

std::vector<std::string_view> fuel::machinePresetNames() {
  std::vector<std::string_view> names;
  for (const Preset &p : presets())
    names.push_back(p.name);
  return names;
}

std::string_view fuel::machinePresetText(std::string_view name) {
  for (const Preset &p : presets())
    if (p.name == name)
      return p.text;
  return {};
}
