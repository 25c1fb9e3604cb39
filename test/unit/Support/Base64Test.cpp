//===- Base64Test.cpp - Binary data in JSON text ---------------------------===//

#include "fuel/Support/Base64.h"

#include <catch2/catch.hpp>

#include <random>

using namespace fuel;

TEST_CASE("base64 matches the RFC 4648 test vectors") {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
      {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"}};
  for (const auto &[plain, encoded] : vectors) {
    CHECK(encodeBase64(plain) == encoded);
    CHECK(decodeBase64(encoded) == plain);
  }
}

TEST_CASE("base64 round-trips arbitrary bytes") {
  std::mt19937 rng(7);
  for (size_t size = 0; size < 70; ++size) {
    std::string bytes(size, '\0');
    for (char &c : bytes)
      c = static_cast<char>(rng());
    CHECK(decodeBase64(encodeBase64(bytes)) == bytes);
  }
}

TEST_CASE("base64 rejects malformed text") {
  for (const char *bad : {"Zg=", "Zg===", "Z===", "Zm9v!A==", "Zg==Zg==", "=Zg=", "Zm 9"})
    CHECK_FALSE(decodeBase64(bad).has_value());
}
