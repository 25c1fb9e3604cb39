//===- TestPlans.h - The runtime tests' artifacts ---------------*- C++ -*-===//
//
// The runtime-test-plans fixture plans them with the real fuelc into the
// directory FUEL_TEST_PLANS names (fuel-runtime-tests links no compiler).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TEST_UNIT_RUNTIME_TESTPLANS_H
#define FUEL_TEST_UNIT_RUNTIME_TESTPLANS_H

#include "fuel/Support/FileBuffer.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fuel::test {

/// The bytes of artifact `name` from the fixture's directory.
inline std::shared_ptr<const FileBuffer> readPlan(const std::string &name) {
  const char *dir = std::getenv("FUEL_TEST_PLANS");
  REQUIRE(dir);
  std::ifstream in(std::string(dir) + "/" + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return FileBuffer::fromBytes(bytes.str());
}

} // namespace fuel::test

#endif // FUEL_TEST_UNIT_RUNTIME_TESTPLANS_H
