//===- JsonReaderTest.cpp - The pull JSON parser --------------------------===//

#include "fuel/Support/JsonReader.h"

#include <catch2/catch.hpp>

#include <string>

using namespace fuel;

/// Skips a whole document and returns the error ("" when valid).
static std::string skipError(const std::string &text, size_t *offset = nullptr) {
  JsonReader reader(text);
  if (reader.skipValue() && reader.expectEnd())
    return "";
  if (offset)
    *offset = reader.errorOffset();
  return reader.errorMessage();
}

TEST_CASE("valid documents are accepted", "[json]") {
  for (const char *text :
       {"{}", "[]", "0", "-0.5e+3", "\"a\\u00e9\\n\"", "true", "null",
        " {\"a\": [1, {\"b\": null}], \"c\": \"\\ud83d\\ude00\"} ",
        "[[[[]]]]"}) {
    INFO(text);
    CHECK(skipError(text) == "");
  }
}

TEST_CASE("syntax errors name the problem and its offset", "[json]") {
  size_t offset = 0;
  CHECK(skipError("[1, 2,]", &offset) == "trailing comma");
  CHECK(offset == 6);
  CHECK(skipError("{\"a\" 1}", &offset) == "expected ':' after member name");
  CHECK(offset == 5);
  CHECK(skipError("[01]") == "leading zeros are not allowed in numbers");
  CHECK(skipError("\"abc") == "unterminated string");
  CHECK(skipError("\"\\x\"") == "invalid escape sequence '\\x'");
  CHECK(skipError("\"\\ud800\"") ==
        "unpaired UTF-16 surrogate in \\u escape");
  CHECK(skipError("[1 2]") == "expected ',' or ']', found '2'");
  CHECK(skipError("{\"a\": 1,}") == "trailing comma");
  CHECK(skipError("{1: 2}") ==
        "expected a member name in double quotes, found '1'");
  CHECK(skipError("[") == "unexpected end of input, expected a value or ']'");
  CHECK(skipError("{\"a\": 1") ==
        "unexpected end of input, expected ',' or '}'");
  CHECK(skipError("") == "unexpected end of input, expected a value");
  CHECK(skipError("[1] x") == "unexpected 'x' after the top-level value");
  CHECK(skipError("1e999") == "number out of the range of a 64-bit float");
  CHECK(skipError(std::string("\"a\x01\"")) == "control character in string");
}

TEST_CASE("nesting depth is bounded without recursion", "[json]") {
  std::string deep(100000, '[');
  CHECK(skipError(deep) ==
        "JSON nesting deeper than " + std::to_string(JsonReader::kMaxDepth) +
            " levels");
}

TEST_CASE("numbers keep integer precision and flag overflow", "[json]") {
  JsonReader reader("[9007199254740993, 9223372036854775808, 2.5, -7]");
  REQUIRE(reader.beginArray());
  JsonNumber n;
  REQUIRE(reader.nextElement());
  REQUIRE(reader.readNumber(n));
  CHECK(n.isInteger);
  CHECK(n.integer == 9007199254740993LL);
  REQUIRE(reader.nextElement());
  REQUIRE(reader.readNumber(n));
  CHECK(n.overflow);
  REQUIRE(reader.nextElement());
  REQUIRE(reader.readNumber(n));
  CHECK_FALSE(n.isInteger);
  CHECK(n.real == 2.5);
  REQUIRE(reader.nextElement());
  REQUIRE(reader.readNumber(n));
  CHECK(n.integer == -7);
  CHECK_FALSE(reader.nextElement());
  CHECK_FALSE(reader.failed());
}

TEST_CASE("members are read in order with unescaped keys", "[json]") {
  JsonReader reader(R"({"a\"b": "x\ty", "n": 1})");
  REQUIRE(reader.beginObject());
  std::string_view key, value;
  REQUIRE(reader.nextMember(key));
  CHECK(key == "a\"b");
  REQUIRE(reader.readString(value));
  CHECK(value == "x\ty");
  REQUIRE(reader.nextMember(key));
  CHECK(key == "n");
  CHECK(reader.offset() == 22);
  CHECK(reader.skipValue());
  CHECK_FALSE(reader.nextMember(key));
  CHECK(reader.expectEnd());
}

TEST_CASE("line index maps offsets to lines and columns", "[json]") {
  LineIndex index("ab\ncd\n\nef");
  CHECK(index.lookup(0).line == 1);
  CHECK(index.lookup(1).column == 2);
  CHECK(index.lookup(3).line == 2);
  CHECK(index.lookup(3).column == 1);
  CHECK(index.lookup(7).line == 4);
  CHECK(index.lookup(8).column == 2);
}

TEST_CASE("strings are escaped for output", "[json]") {
  std::string out;
  appendJsonString(out, "a\"b\\c\n\x01");
  CHECK(out == R"("a\"b\\c\n\u0001")");
  JsonReader reader(out);
  std::string_view back;
  REQUIRE(reader.readString(back));
  CHECK(back == "a\"b\\c\n\x01");
}
