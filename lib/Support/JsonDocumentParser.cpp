//===- JsonDocumentParser.cpp - Shared machinery of JSON file readers -----===//

#include "fuel/Support/JsonDocumentParser.h"

#include <algorithm>
#include <cstdio>

using namespace fuel;

std::string JsonDocumentParser::currentPointer() const {
  std::string out;
  for (const PathPart &p : path) {
    out += '/';
    if (p.index >= 0)
      out += std::to_string(p.index);
    else
      out += p.key;
  }
  return out;
}

SourceLocation fuel::locateOffset(LineIndex &lines, std::string_view fileName,
                                  size_t offset, std::string pointer) {
  SourceLocation loc;
  loc.file = fileName;
  LineColumn lc = lines.lookup(offset);
  loc.line = lc.line;
  loc.column = lc.column;
  loc.pointer = std::move(pointer);
  return loc;
}

SourceLocation JsonDocumentParser::at(size_t offset,
                                      std::string pointer) const {
  return locateOffset(lines, fileName, offset, std::move(pointer));
}

void JsonDocumentParser::errorAt(size_t offset, std::string message,
                                 std::string_view node) {
  if (reader.failed())
    return;
  SourceLocation loc = at(offset, currentPointer());
  loc.node = node;
  defer(offset, {Severity::Error, std::move(loc), std::move(message), {}});
}

bool JsonDocumentParser::syntaxError() {
  if (!syntaxReported) {
    syntaxReported = true;
    defer(reader.errorOffset(),
          {Severity::Error, at(reader.errorOffset(), ""),
           "invalid JSON: " + reader.errorMessage(), {}});
  }
  return false;
}

void JsonDocumentParser::flushDiagnostics() {
  std::stable_sort(pending.begin(), pending.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &entry : pending)
    diag.report(std::move(entry.second));
  pending.clear();
}

bool JsonDocumentParser::expect(JsonKind kind, const char *what, bool &alive) {
  JsonKind got = reader.peek();
  if (got == kind)
    return true;
  if (got == JsonKind::Invalid) {
    if (!reader.failed())
      (void)reader.skipValue(); // Produces the syntax error.
    alive = syntaxError();
    return false;
  }
  errorAt(reader.offset(),
          std::string("expected ") + what + ", got " + jsonKindName(got));
  alive = reader.skipValue() || syntaxError();
  return false;
}

bool JsonDocumentParser::unknownMember(size_t offset, std::string_view key,
                                       std::string_view where,
                                       std::string_view expected,
                                       std::string_view node) {
  errorAt(offset,
          "unknown member '" + std::string(key) + "' in " +
              std::string(where) + " (expected " + std::string(expected) + ")",
          node);
  return reader.skipValue() || syntaxError();
}

std::string_view JsonDocumentParser::keep(std::string_view s) {
  if (s.data() >= text.data() && s.data() + s.size() <= text.data() + text.size())
    return s;
  return keptStrings.emplace_back(s);
}

bool JsonDocumentParser::finish(bool alive) {
  alive = alive && reader.expectEnd();
  if (!alive && reader.failed())
    syntaxError();
  bool ok = alive && pending.empty();
  flushDiagnostics();
  return ok;
}

bool JsonDocumentParser::readText(std::string &out, bool &valid) {
  bool alive = true;
  if (!expect(JsonKind::String, "a string", alive)) {
    valid = false;
    return alive;
  }
  std::string_view s;
  if (!reader.readString(s))
    return syntaxError();
  out = s;
  return true;
}

bool JsonDocumentParser::readFlag(bool &out, bool &valid) {
  bool alive = true;
  if (!expect(JsonKind::Bool, "a boolean", alive)) {
    valid = false;
    return alive;
  }
  return reader.readBool(out) || syntaxError();
}

bool JsonDocumentParser::readNumberAtLeast(double &out, bool &valid,
                                           double min, bool strict) {
  bool alive = true;
  size_t offset = reader.offset();
  if (!expect(JsonKind::Number, "a number", alive)) {
    valid = false;
    return alive;
  }
  JsonNumber n;
  if (!reader.readNumber(n))
    return syntaxError();
  if (strict ? !(n.real > min) : !(n.real >= min)) {
    char bound[48];
    if (min == 0)
      std::snprintf(bound, sizeof(bound), "%s",
                    strict ? "a positive number" : "a non-negative number");
    else
      std::snprintf(bound, sizeof(bound), "a number %s %g",
                    strict ? "above" : "of at least", min);
    errorAt(offset, std::string("expected ") + bound + ", got " + literal(offset));
    valid = false;
  }
  out = n.real;
  return true;
}

std::optional<bool>
JsonDocumentParser::readHeaderMember(std::string_view key,
                                     std::string_view format,
                                     std::string_view what) {
  size_t offset = reader.offset();
  if (key == "format") {
    auto s = scope("format");
    sawFormat = true;
    std::string text;
    bool valid = true;
    if (!readText(text, valid))
      return false;
    if (valid && text != format)
      errorAt(offset, "unknown format '" + text + "' (expected \"" +
                          std::string(format) + "\")");
    return true;
  }
  if (key != "version")
    return std::nullopt;
  auto s = scope("version");
  sawVersion = true;
  bool alive = true;
  if (!expect(JsonKind::Number, "an integer", alive))
    return alive;
  JsonNumber n;
  if (!reader.readNumber(n))
    return syntaxError();
  if (!n.isInteger || n.overflow || n.integer != 1) {
    errorAt(offset, "unsupported " + std::string(what) + " version " +
                        literal(offset) + " (this fuelc reads version 1)");
    return false; // Nothing else can be trusted in another version.
  }
  return true;
}

void JsonDocumentParser::checkHeaderSeen(size_t start,
                                         std::string_view format) {
  if (!sawFormat)
    errorAt(start, "missing member 'format' (must be \"" +
                       std::string(format) + "\")");
  if (!sawVersion)
    errorAt(start, "missing member 'version'");
}
