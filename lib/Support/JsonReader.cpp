//===- JsonReader.cpp - Pull parser for JSON with source offsets ----------===//

#include "fuel/Support/JsonReader.h"

#include <algorithm>
#include <charconv>
#include <cstring>

using namespace fuel;

const char *fuel::jsonKindName(JsonKind kind) {
  switch (kind) {
  case JsonKind::Object:
    return "object";
  case JsonKind::Array:
    return "array";
  case JsonKind::String:
    return "string";
  case JsonKind::Number:
    return "number";
  case JsonKind::Bool:
    return "boolean";
  case JsonKind::Null:
    return "null";
  case JsonKind::Invalid:
    break;
  }
  return "invalid value";
}

bool JsonReader::fail(size_t at, std::string message) {
  if (!hasError) {
    hasError = true;
    errorAt = std::min(at, text.size());
    error = std::move(message);
  }
  return false;
}

void JsonReader::skipWhitespace() {
  while (pos < text.size()) {
    char c = text[pos];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
      return;
    ++pos;
  }
}

size_t JsonReader::offset() {
  skipWhitespace();
  return pos;
}

JsonKind JsonReader::peek() {
  if (hasError)
    return JsonKind::Invalid;
  skipWhitespace();
  if (pos >= text.size())
    return JsonKind::Invalid;
  switch (text[pos]) {
  case '{':
    return JsonKind::Object;
  case '[':
    return JsonKind::Array;
  case '"':
    return JsonKind::String;
  case 't':
  case 'f':
    return JsonKind::Bool;
  case 'n':
    return JsonKind::Null;
  default:
    if (text[pos] == '-' || (text[pos] >= '0' && text[pos] <= '9'))
      return JsonKind::Number;
    return JsonKind::Invalid;
  }
}

static std::string describeChar(char c) {
  if (c >= 0x20 && c < 0x7f)
    return std::string("'") + c + "'";
  char buf[8];
  snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

bool JsonReader::enterContainer(char open) {
  if (hasError)
    return false;
  skipWhitespace();
  if (pos >= text.size())
    return fail(pos, std::string("unexpected end of input, expected '") +
                         open + "'");
  if (text[pos] != open)
    return fail(pos, std::string("expected '") + open + "', found " +
                         describeChar(text[pos]));
  if (firstChild.size() >= kMaxDepth)
    return fail(pos, "JSON nesting deeper than " + std::to_string(kMaxDepth) +
                         " levels");
  ++pos;
  firstChild.push_back(true);
  return true;
}

bool JsonReader::advanceInContainer(char close) {
  if (hasError)
    return false;
  skipWhitespace();
  bool first = firstChild.back();
  if (pos >= text.size())
    return fail(pos, std::string("unexpected end of input, expected ") +
                         (first ? (close == '}' ? "a member name" : "a value")
                                : "','") +
                         " or '" + close + "'");
  if (text[pos] == close) {
    if (!first && text[pos - 1] == ',')
      return fail(pos, "trailing comma");
    ++pos;
    firstChild.pop_back();
    return false;
  }
  if (!first) {
    if (text[pos] != ',')
      return fail(pos, std::string("expected ',' or '") + close + "', found " +
                           describeChar(text[pos]));
    ++pos;
    skipWhitespace();
    if (pos < text.size() && text[pos] == close)
      return fail(pos, "trailing comma");
  }
  firstChild.back() = false;
  return true;
}

bool JsonReader::beginObject() { return enterContainer('{'); }
bool JsonReader::beginArray() { return enterContainer('['); }

bool JsonReader::nextMember(std::string_view &key) {
  if (!advanceInContainer('}'))
    return false;
  skipWhitespace();
  if (pos >= text.size() || text[pos] != '"')
    return fail(pos, pos >= text.size()
                         ? "unexpected end of input, expected a member name"
                         : "expected a member name in double quotes, found " +
                               describeChar(text[pos]));
  if (!parseString(keyScratch, key))
    return false;
  skipWhitespace();
  if (pos >= text.size() || text[pos] != ':')
    return fail(pos, "expected ':' after member name");
  ++pos;
  return true;
}

bool JsonReader::nextElement() { return advanceInContainer(']'); }

static void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

static int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

bool JsonReader::parseString(std::string &scratch, std::string_view &out) {
  size_t start = ++pos; // Past the opening quote.
  // Fast path: no escapes, the result is a view into the input.
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '"') {
      out = text.substr(start, pos - start);
      ++pos;
      return true;
    }
    if (c == '\\')
      break;
    if (static_cast<unsigned char>(c) < 0x20)
      return fail(pos, c == '\n' ? "unterminated string (a string cannot "
                                   "span lines)"
                                 : "control character in string");
    ++pos;
  }
  scratch.assign(text.substr(start, pos - start));
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '"') {
      ++pos;
      out = scratch;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20)
      return fail(pos, "control character in string");
    if (c != '\\') {
      scratch += c;
      ++pos;
      continue;
    }
    if (pos + 1 >= text.size())
      break;
    char e = text[pos + 1];
    pos += 2;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      scratch += e;
      break;
    case 'b':
      scratch += '\b';
      break;
    case 'f':
      scratch += '\f';
      break;
    case 'n':
      scratch += '\n';
      break;
    case 'r':
      scratch += '\r';
      break;
    case 't':
      scratch += '\t';
      break;
    case 'u': {
      auto readHex4 = [&](uint32_t &v) {
        if (pos + 4 > text.size())
          return false;
        v = 0;
        for (int i = 0; i < 4; ++i) {
          int h = hexValue(text[pos + i]);
          if (h < 0)
            return false;
          v = v * 16 + static_cast<uint32_t>(h);
        }
        pos += 4;
        return true;
      };
      size_t escapeAt = pos - 2;
      uint32_t cp;
      if (!readHex4(cp))
        return fail(escapeAt, "invalid \\u escape");
      if (cp >= 0xD800 && cp < 0xDC00) {
        uint32_t lo;
        if (pos + 2 > text.size() || text[pos] != '\\' || text[pos + 1] != 'u')
          return fail(escapeAt, "unpaired UTF-16 surrogate in \\u escape");
        pos += 2;
        if (!readHex4(lo) || lo < 0xDC00 || lo >= 0xE000)
          return fail(escapeAt, "unpaired UTF-16 surrogate in \\u escape");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        return fail(escapeAt, "unpaired UTF-16 surrogate in \\u escape");
      }
      appendUtf8(scratch, cp);
      break;
    }
    default:
      return fail(pos - 2, "invalid escape sequence '\\" +
                               std::string(1, e) + "'");
    }
  }
  return fail(pos, "unterminated string");
}

bool JsonReader::readString(std::string_view &out) {
  if (hasError)
    return false;
  skipWhitespace();
  if (pos >= text.size() || text[pos] != '"')
    return fail(pos, "expected a string");
  return parseString(valueScratch, out);
}

bool JsonReader::readNumber(JsonNumber &out) {
  if (hasError)
    return false;
  skipWhitespace();
  size_t start = pos;
  auto isDigit = [&](size_t i) {
    return i < text.size() && text[i] >= '0' && text[i] <= '9';
  };
  if (pos < text.size() && text[pos] == '-')
    ++pos;
  if (!isDigit(pos))
    return fail(start, "expected a number");
  if (text[pos] == '0' && isDigit(pos + 1))
    return fail(start, "leading zeros are not allowed in numbers");
  while (isDigit(pos))
    ++pos;
  bool integer = true;
  if (pos < text.size() && text[pos] == '.') {
    integer = false;
    ++pos;
    if (!isDigit(pos))
      return fail(pos, "expected a digit after the decimal point");
    while (isDigit(pos))
      ++pos;
  }
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    integer = false;
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      ++pos;
    if (!isDigit(pos))
      return fail(pos, "expected a digit in the exponent");
    while (isDigit(pos))
      ++pos;
  }
  const char *first = text.data() + start;
  const char *last = text.data() + pos;
  out = JsonNumber();
  out.isInteger = integer;
  if (integer) {
    auto [ptr, ec] = std::from_chars(first, last, out.integer);
    out.overflow = ec != std::errc();
  }
  // from_chars for double yields +-inf-free results: out-of-range is an error.
  // It also keeps the sign of "-0", which a float constant holds (printed as
  // "-0", it must parse back to -0.0).
  auto [ptr, ec] = std::from_chars(first, last, out.real);
  if (ec == std::errc::result_out_of_range && !integer)
    return fail(start, "number out of the range of a 64-bit float");
  return true;
}

bool JsonReader::readBool(bool &out) {
  if (hasError)
    return false;
  skipWhitespace();
  if (text.substr(pos, 4) == "true") {
    pos += 4;
    out = true;
    return true;
  }
  if (text.substr(pos, 5) == "false") {
    pos += 5;
    out = false;
    return true;
  }
  return fail(pos, "expected true or false");
}

bool JsonReader::readNull() {
  if (hasError)
    return false;
  skipWhitespace();
  if (text.substr(pos, 4) == "null") {
    pos += 4;
    return true;
  }
  return fail(pos, "expected null");
}

bool JsonReader::skipValue() {
  // Iterative walk: `closers` holds the closing char of each open container.
  std::string closers;
  do {
    if (!closers.empty()) {
      std::string_view key;
      bool more = closers.back() == '}' ? nextMember(key) : nextElement();
      if (!more) {
        if (hasError)
          return false;
        closers.pop_back();
        continue;
      }
    }
    switch (peek()) {
    case JsonKind::Object:
      if (!beginObject())
        return false;
      closers.push_back('}');
      break;
    case JsonKind::Array:
      if (!beginArray())
        return false;
      closers.push_back(']');
      break;
    case JsonKind::String: {
      std::string_view s;
      if (!readString(s))
        return false;
      break;
    }
    case JsonKind::Number: {
      JsonNumber n;
      if (!readNumber(n))
        return false;
      break;
    }
    case JsonKind::Bool: {
      bool b;
      if (!readBool(b))
        return false;
      break;
    }
    case JsonKind::Null:
      if (!readNull())
        return false;
      break;
    case JsonKind::Invalid:
      if (hasError)
        return false;
      skipWhitespace();
      if (pos >= text.size())
        return fail(pos, "unexpected end of input, expected a value");
      return fail(pos, "expected a value, found " + describeChar(text[pos]));
    }
  } while (!closers.empty());
  return true;
}

bool JsonReader::expectEnd() {
  if (hasError)
    return false;
  skipWhitespace();
  if (pos != text.size())
    return fail(pos, "unexpected " + describeChar(text[pos]) +
                         " after the top-level value");
  return true;
}

LineColumn LineIndex::lookup(size_t offset) {
  if (lineStarts.empty()) {
    lineStarts.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n')
        lineStarts.push_back(i + 1);
  }
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = static_cast<size_t>(it - lineStarts.begin());
  LineColumn lc;
  lc.line = static_cast<uint32_t>(line);
  lc.column = static_cast<uint32_t>(offset - lineStarts[line - 1] + 1);
  return lc;
}

void fuel::appendJsonString(std::string &out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        out += "\\u00";
        out += hex[(c >> 4) & 0xF];
        out += hex[c & 0xF];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}
