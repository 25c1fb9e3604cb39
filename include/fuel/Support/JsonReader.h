//===- JsonReader.h - Pull parser for JSON with source offsets --*- C++ -*-===//
//
// A strict RFC 8259 pull parser. Unlike a DOM parser it builds nothing: the
// caller walks the document with a schema in hand, so every value it reads has
// an exact byte offset for diagnostics, and a 1M-node graph is read without
// materializing tens of millions of JSON values. Nesting is tracked with an
// explicit stack (no recursion), bounded by kMaxDepth.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_JSONREADER_H
#define FUEL_SUPPORT_JSONREADER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

enum class JsonKind { Object, Array, String, Number, Bool, Null, Invalid };

const char *jsonKindName(JsonKind kind);

struct JsonNumber {
  /// True when the literal has no fraction or exponent.
  bool isInteger = false;
  /// True when an integer literal does not fit in int64.
  bool overflow = false;
  int64_t integer = 0;
  double real = 0;
};

class JsonReader {
public:
  static constexpr unsigned kMaxDepth = 128;

  explicit JsonReader(std::string_view text, size_t start = 0)
      : text(text), pos(start) {}

  /// The kind of the next value (skipping whitespace); Invalid on a syntax
  /// error or at the end of input.
  JsonKind peek();
  /// Byte offset of the next token (after whitespace).
  size_t offset();

  bool beginObject();
  /// Advances to the next member of the innermost object. Returns false at
  /// its closing brace (consumed) or on error; check failed() to tell.
  bool nextMember(std::string_view &key);
  bool beginArray();
  /// Advances to the next element of the innermost array; false at ']'.
  bool nextElement();

  /// The string is valid until the next readString call.
  bool readString(std::string_view &out);
  bool readNumber(JsonNumber &out);
  bool readBool(bool &out);
  bool readNull();
  /// Skips one complete value of any kind.
  bool skipValue();
  /// Succeeds when only whitespace is left.
  bool expectEnd();

  bool failed() const { return hasError; }
  const std::string &errorMessage() const { return error; }
  size_t errorOffset() const { return errorAt; }

private:
  bool fail(size_t at, std::string message);
  void skipWhitespace();
  bool parseString(std::string &scratch, std::string_view &out);
  bool enterContainer(char open);
  /// Consumes the separator before a member/element; false at the close.
  bool advanceInContainer(char close);

  std::string_view text;
  size_t pos = 0;
  /// One entry per open container: true until its first child is read.
  std::vector<bool> firstChild;
  std::string keyScratch, valueScratch;
  bool hasError = false;
  std::string error;
  size_t errorAt = 0;
};

/// 1-based line and column of a byte offset (columns count bytes).
struct LineColumn {
  uint32_t line = 1;
  uint32_t column = 1;
};

/// Maps byte offsets of one text to line/column, indexing lines on first use.
class LineIndex {
public:
  explicit LineIndex(std::string_view text) : text(text) {}
  LineColumn lookup(size_t offset);

private:
  std::string_view text;
  std::vector<size_t> lineStarts;
};

/// Appends `s` to `out` as a quoted JSON string.
void appendJsonString(std::string &out, std::string_view s);

} // namespace fuel

#endif // FUEL_SUPPORT_JSONREADER_H
