//===- ExternalDataTest.cpp - Weights from .bin, .npy and .safetensors ----===//

#include "../TestUtil.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace fuel;
using namespace fuel::test;

namespace {
/// A scratch directory removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char templ[] = "/tmp/fuel-test-XXXXXX";
    path = mkdtemp(templ);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
  }
};

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values)
    out.append(reinterpret_cast<const char *>(&v), sizeof(v));
  return out;
}

std::string npy(const std::string &descr, const std::string &shape,
                const std::string &data) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string safetensors(const std::string &json, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  return out + json + data;
}

/// A graph with one f32[2, 2] constant `w` read through `data`.
ParseResult loadWeight(const TempDir &dir, const std::string &data,
                       const std::string &shape = "[2, 2]") {
  return parseText(document("[]", "[]", R"(["w"])",
                            R"([{"name": "w", "dtype": "f32", "shape": )" +
                                shape + R"(, "data": )" + data + "}]"),
                   dir.path.string());
}

std::vector<float> constantFloats(const Graph &g) {
  std::string_view bytes = g.constantData(0)->bytes();
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}
} // namespace

TEST_CASE("raw files with offsets", "[weights]") {
  TempDir dir;
  dir.write("w.bin", "PAD!" + floats({1, 2, 3, 4}));
  ParseResult r = loadWeight(dir, R"({"file": "w.bin", "offset": 4})");
  REQUIRE(r.graph);
  CHECK(constantFloats(*r.graph) == std::vector<float>{1, 2, 3, 4});

  r = loadWeight(dir, R"({"file": "w.bin", "offset": 8})");
  REQUIRE_FALSE(r.graph);
  CHECK(r.firstMessage() == "weight file 'w.bin' is truncated: needs 16 bytes "
                            "at offset 8, the file has 20");
  r = loadWeight(dir, R"({"file": "missing.bin"})");
  CHECK(r.firstMessage() ==
        "cannot open weight file 'missing.bin': No such file or directory");
  r = loadWeight(dir, R"({"file": "w.dat"})");
  CHECK(r.firstMessage() ==
        "cannot tell the format of 'w.dat' from its name; add \"format\": "
        "\"raw\", \"npy\" or \"safetensors\"");
}

TEST_CASE("npy files are checked against the declaration", "[weights]") {
  TempDir dir;
  dir.write("w.npy", npy("<f4", "(2, 2)", floats({5, 6, 7, 8})));
  ParseResult r = loadWeight(dir, R"({"file": "w.npy"})");
  REQUIRE(r.graph);
  CHECK(constantFloats(*r.graph) == std::vector<float>{5, 6, 7, 8});

  r = loadWeight(dir, R"({"file": "w.npy"})", "[4]");
  CHECK(r.firstMessage() ==
        "'w.npy' holds f32[2, 2], the graph declares f32[4]");
  dir.write("short.npy", npy("<f4", "(2, 2)", floats({5, 6, 7})));
  r = loadWeight(dir, R"({"file": "short.npy"})");
  CHECK(r.firstMessage() ==
        "'short.npy' is truncated: needs 16 data bytes, has 12");
  dir.write("f8.npy", npy("<f8", "(2, 2)", std::string(32, '\0')));
  r = loadWeight(dir, R"({"file": "f8.npy"})");
  CHECK(r.firstMessage() ==
        "'f8.npy' holds f64[2, 2], the graph declares f32[2, 2]");
  dir.write("bad.npy", "NUMPY but not really");
  r = loadWeight(dir, R"({"file": "bad.npy"})");
  CHECK(r.firstMessage() == "'bad.npy' is not a .npy file (bad magic)");
  dir.write("cut.npy", npy("<f4", "(2, 2)", "").substr(0, 30));
  r = loadWeight(dir, R"({"file": "cut.npy"})");
  CHECK(r.firstMessage() == "'cut.npy' is truncated inside its header");
}

TEST_CASE("safetensors tensors are found by name", "[weights]") {
  TempDir dir;
  std::string json =
      R"({"__metadata__": {"a": "b"}, "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [16, 32]},)"
      R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})";
  dir.write("m.safetensors",
            safetensors(json, floats({1, 1, 1, 1, 9, 8, 7, 6})));
  ParseResult r =
      loadWeight(dir, R"({"file": "m.safetensors", "tensor": "w"})");
  REQUIRE(r.graph);
  CHECK(constantFloats(*r.graph) == std::vector<float>{9, 8, 7, 6});

  r = loadWeight(dir, R"({"file": "m.safetensors", "tensor": "nope"})");
  CHECK(r.firstMessage() == "'m.safetensors' has no tensor 'nope'");
  r = loadWeight(dir, R"({"file": "m.safetensors", "tensor": "b"})");
  CHECK(r.firstMessage() == "tensor 'b' in 'm.safetensors' is f32[4], the "
                            "graph declares f32[2, 2]");
  r = loadWeight(dir, R"({"file": "m.safetensors"})");
  CHECK(r.firstMessage() == "a safetensors reference needs member 'tensor'");
  dir.write("cut.safetensors",
            safetensors(json, floats({1, 1, 1, 1, 9})));
  r = loadWeight(dir, R"({"file": "cut.safetensors", "tensor": "w"})");
  CHECK(r.firstMessage() == "'cut.safetensors' is truncated: tensor 'w' ends "
                            "at 32, the data section has 20 bytes");
  dir.write("huge.safetensors", std::string("\xff\xff\xff\xff\0\0\0\0{}", 10));
  r = loadWeight(dir, R"({"file": "huge.safetensors", "tensor": "w"})");
  CHECK(r.firstMessage() == "'huge.safetensors' is truncated: its header "
                            "claims 4294967295 bytes");
}

TEST_CASE("inline data is encoded per dtype", "[weights]") {
  auto inlineBytes = [](const std::string &dtype, const std::string &values,
                        const std::string &shape) {
    ParseResult r = parseText(document(
        "[]", "[]", R"(["c"])",
        R"([{"name": "c", "dtype": ")" + dtype + R"(", "shape": )" + shape +
            R"(, "data": )" + values + "}]"));
    return r.graph ? std::string(r.graph->constantData(0)->bytes())
                   : "error: " + r.firstMessage();
  };
  CHECK(inlineBytes("u8", "[1, 255]", "[2]") == std::string("\x01\xff"));
  CHECK(inlineBytes("i8", "[-1]", "[1]") == std::string("\xff"));
  CHECK(inlineBytes("bool", "[true, false]", "[2]") == std::string("\x01\0", 2));
  CHECK(inlineBytes("f16", "[1.0, -2]", "[2]") == std::string("\x00\x3c\x00\xc0", 4));
  CHECK(inlineBytes("bf16", "[1.0]", "[]") == std::string("\x80\x3f", 2));
  CHECK(inlineBytes("u8", "[256]", "[1]") ==
        "error: value 256 is out of range for u8");
  CHECK(inlineBytes("i32", "[1.5]", "[1]") == "error: value 1.5 is not an integer");
  CHECK(inlineBytes("f32", "[1, 2, 3]", "[2, 2]") ==
        "error: inline data has 3 values, shape [2, 2] needs 4");
  CHECK(inlineBytes("f32", "[\"nan\", \"-inf\"]", "[2]").size() == 8);
  CHECK(inlineBytes("f32", "[\"NaN\"]", "[1]") ==
        "error: expected a number, \"nan\", \"inf\" or \"-inf\", got \"NaN\"");
  CHECK(inlineBytes("bool", "[1]", "[1]") ==
        "error: expected true or false, got number");
}
