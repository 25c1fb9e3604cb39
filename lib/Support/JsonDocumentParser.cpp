//===- JsonDocumentParser.cpp - Shared machinery of JSON file readers -----===//

#include "fuel/Support/JsonDocumentParser.h"

#include <algorithm>

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

SourceLocation JsonDocumentParser::at(size_t offset,
                                      std::string pointer) const {
  SourceLocation loc;
  loc.file = fileName;
  LineColumn lc = lines.lookup(offset);
  loc.line = lc.line;
  loc.column = lc.column;
  loc.pointer = std::move(pointer);
  return loc;
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
