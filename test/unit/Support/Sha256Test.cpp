//===- Sha256Test.cpp - SHA-256 against the FIPS 180-4 examples -----------===//

#include "fuel/Support/Sha256.h"

#include <catch2/catch.hpp>

#include <random>

using namespace fuel;

TEST_CASE("SHA-256 matches the published test vectors", "[sha256]") {
  CHECK(toHex(Sha256::of("")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(toHex(Sha256::of("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(toHex(Sha256::of(
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 million;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i)
    million.update(chunk);
  CHECK(toHex(million.finish()) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("the SHA extensions and the portable code agree", "[sha256]") {
  // On CPUs without the SHA extensions both are the portable code.
  std::mt19937 rng(7);
  for (size_t size : {0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 4096 + 17, 1 << 20}) {
    std::string data(size, '\0');
    for (char &c : data)
      c = static_cast<char>(rng());
    Sha256 fastest, portable(Sha256::Implementation::Portable);
    // Odd chunks, so blocks are taken from the buffer and from the input.
    for (size_t at = 0; at < size; at += 1000) {
      fastest.update(std::string_view(data).substr(at, 1000));
      portable.update(std::string_view(data).substr(at, 1000));
    }
    INFO("size " << size);
    CHECK(fastest.finish() == portable.finish());
  }
  Sha256 portable(Sha256::Implementation::Portable);
  portable.update("abc");
  CHECK(toHex(portable.finish()) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("SHA-256 does not depend on how the input is split", "[sha256]") {
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += static_cast<char>(i * 7);
  Sha256Digest whole = Sha256::of(text);
  for (size_t split = 0; split <= text.size(); split += 13) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, split));
    h.update(std::string_view(text).substr(split));
    REQUIRE(h.finish() == whole);
  }
}
