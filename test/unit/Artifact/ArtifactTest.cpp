//===- ArtifactTest.cpp - The .fplan container ----------------------------===//

#include "fuel/Artifact/Artifact.h"

#include <catch2/catch.hpp>

using namespace fuel;

namespace {
std::optional<ArtifactView> read(std::string bytes, std::vector<std::string> *messages = nullptr) {
  DiagnosticEngine diag;
  diag.setHandler([&](const Diagnostic &d) {
    if (messages)
      messages->push_back(d.message);
  });
  return readArtifact(FileBuffer::fromBytes(std::move(bytes)), "test.fplan", diag);
}
} // namespace

TEST_CASE("sections round-trip with their hashes", "[artifact]") {
  std::string bytes = writeArtifact(
      {{"meta", "{}"}, {"plan", std::string(100, 'p')}, {"empty", ""},
       {"weights", std::string("\0\1\2\3", 4)}});
  CHECK(bytes.size() % kArtifactBlock == 4); // Last section is 4 bytes.
  std::optional<ArtifactView> view = read(bytes);
  REQUIRE(view);
  REQUIRE(view->sections().size() == 4);
  CHECK(*view->section("plan") == std::string(100, 'p'));
  CHECK(view->section("empty")->empty());
  CHECK(*view->section("weights") == std::string("\0\1\2\3", 4));
  CHECK_FALSE(view->section("kernels.x86"));
  for (const ArtifactView::Section &s : view->sections())
    CHECK(s.offset % kArtifactBlock == 0);
  CHECK(writeArtifact({{"meta", "{}"}}) == writeArtifact({{"meta", "{}"}}));
}

TEST_CASE("every single-byte change is detected", "[artifact]") {
  std::string good = writeArtifact({{"meta", "{\"a\": 1}"}, {"plan", "[1, 2, 3]"}});
  REQUIRE(read(good));
  // Header, table, data and the zero padding between sections alike.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    INFO("byte " << i);
    CHECK_FALSE(read(bad));
  }
  for (size_t cut = 0; cut < good.size(); ++cut)
    REQUIRE_FALSE(read(good.substr(0, cut)));
}

TEST_CASE("damaged artifacts are explained", "[artifact]") {
  std::vector<std::string> messages;
  CHECK_FALSE(read("FUELPLAN", &messages));
  CHECK(messages.back() ==
        "truncated artifact: 8 bytes, the header alone needs 64");
  std::string good = writeArtifact({{"plan", "x"}});
  std::string bad = good;
  bad[12] = 100; // Section count.
  CHECK_FALSE(read(bad, &messages));
  CHECK(messages.back() == "corrupted artifact: a table of 100 sections does "
                           "not fit in " + std::to_string(good.size()) + " bytes");
}
