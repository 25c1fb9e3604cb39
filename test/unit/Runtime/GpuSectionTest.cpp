//===- GpuSectionTest.cpp - Damaged GPU kernel sections are refused -------===//

#include "../../../lib/Runtime/Vulkan/SpirvSection.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fuel;
using namespace fuel::runtime;

namespace {
/// The refusal of `text` as a kernels.spirv section.
std::string refusal(const std::string &text) {
  SpirvSection section;
  Expected<void> read = readSpirvSection(text, section);
  REQUIRE(!read);
  return read.error();
}

/// A one-module section (the module is a valid SPIR-V header) whose only
/// kernel has `dispatch` as its one dispatch.
std::string withDispatch(const std::string &dispatch) {
  return R"({"format": "fuel.spirv-kernels", "version": 1, "target": "vulkan1.2",
             "modules": [{"name": "generated", "spirv": "AwIjBwAAAQAAAAAAAQAAAAAAAAA="}],
             "kernels": [{"symbol": "fuel_k0", "signature": "f32:1",
                          "dispatches": [)" +
         dispatch + "]}]}";
}
} // namespace

TEST_CASE("a damaged SPIR-V section is refused with what is wrong, never thrown", "[runtime]") {
  CHECK(refusal("{") == "is not JSON");
  CHECK(refusal(R"({"format": "fuel.spirv-kernels", "version": "1"})") ==
        "is not fuel.spirv-kernels version 1");
  CHECK(refusal(R"({"format": "fuel.spirv-kernels", "version": 1, "target": "vulkan1.2",
                    "modules": [{"name": 3, "spirv": ""}], "kernels": []})") ==
        "has a module without 'name' and 'spirv' strings");
  std::string good = R"({"module": 0, "entry": "k", "args": [0], "workgroup_size": 64,
                         "grid": {"arg": 0, "skip_axes": [], "per_group": 1},
                         "constants": []})";
  SpirvSection section;
  REQUIRE(readSpirvSection(withDispatch(good), section));
  CHECK(section.kernels.at(0).dispatches.at(0).workgroupSize == 64);

  std::string wrongType = good;
  wrongType.replace(wrongType.find("\"args\": [0]"), 11, "\"args\": [-1]");
  CHECK(refusal(withDispatch(wrongType)) ==
        "kernel 'fuel_k0': a dispatch lacks a member or has one of the wrong type");
  std::string farModule = good;
  farModule.replace(farModule.find("\"module\": 0"), 11, "\"module\": 7");
  CHECK(refusal(withDispatch(farModule)) == "kernel 'fuel_k0': dispatch names module 7 of 1");
  std::string noGroup = good;
  noGroup.replace(noGroup.find("\"workgroup_size\": 64"), 20, "\"workgroup_size\": 0");
  CHECK(refusal(withDispatch(noGroup)) ==
        "kernel 'fuel_k0': dispatch has an invalid grid or workgroup size");
}
