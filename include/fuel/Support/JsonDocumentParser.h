//===- JsonDocumentParser.h - Shared machinery of JSON file readers -*- C++ -*-===//
//
// What every reader of a fuelc JSON file (graphs, machine descriptions,
// capsule manifests...) needs around the JsonReader: the JSON pointer of the
// value being read, located diagnostics held back and reported in source
// order, recovery from type errors (report, skip the value, go on), and
// re-reading a value whose meaning depends on members that come after it.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_JSONDOCUMENTPARSER_H
#define FUEL_SUPPORT_JSONDOCUMENTPARSER_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/JsonReader.h"

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuel {

class JsonDocumentParser {
public:
  JsonDocumentParser(std::string_view text, std::string_view fileName,
                     DiagnosticEngine &diag)
      : text(text), fileName(fileName), diag(diag), reader(text),
        lines(text) {}

protected:
  /// One step of a JSON pointer: an object key or an array index.
  struct PathPart {
    std::string_view key;
    int64_t index = -1;
  };
  /// Pushes a path step for its lifetime.
  class PathScope {
  public:
    PathScope(std::vector<PathPart> &path, PathPart part) : path(path) {
      path.push_back(part);
    }
    ~PathScope() { path.pop_back(); }

  private:
    std::vector<PathPart> &path;
  };
  PathScope scope(std::string_view key) { return PathScope(path, {key, -1}); }
  PathScope scope(int64_t index) { return PathScope(path, {{}, index}); }
  std::string currentPointer() const;

  SourceLocation at(size_t offset, std::string pointer) const;
  /// Holds a diagnostic back until flushDiagnostics (source order).
  void defer(size_t offset, Diagnostic d) {
    pending.emplace_back(offset, std::move(d));
  }
  /// An error at `offset` with the current JSON pointer. Dropped after a
  /// syntax error: the value just read is garbage then.
  void errorAt(size_t offset, std::string message, std::string_view node = {});
  /// Reports the reader's syntax error (once) and returns false.
  bool syntaxError();
  /// Reports everything held back, sorted by offset.
  void flushDiagnostics();
  bool hasPendingErrors() const { return !pending.empty(); }
  bool limitReached() const {
    return diag.maxErrorCount() != 0 && pending.size() >= diag.maxErrorCount();
  }

  /// Checks the next value's kind. On a mismatch reports it, skips the value
  /// and returns false; `alive` becomes false on a syntax error (parsing
  /// cannot go on).
  bool expect(JsonKind kind, const char *what, bool &alive);
  /// Reports an unknown object member (listing the expected ones) and skips
  /// its value; returns false on a syntax error.
  bool unknownMember(size_t offset, std::string_view key,
                     std::string_view where, std::string_view expected,
                     std::string_view node = {});

  /// The source text of the value that started at `offset` and was just read.
  std::string literal(size_t offset) {
    return std::string(text.substr(offset, reader.offset() - offset));
  }
  /// Runs `parse` with the reader repositioned at `offset` (a value skipped
  /// earlier because its meaning depends on members read later).
  template <typename Fn> bool reparseAt(size_t offset, Fn parse) {
    JsonReader sub(text, offset);
    std::swap(reader, sub);
    bool alive = parse();
    std::swap(reader, sub);
    return alive;
  }
  /// A stable copy of a string the reader may have unescaped into scratch.
  std::string_view keep(std::string_view s);

  std::string_view text;
  std::string fileName;
  DiagnosticEngine &diag;
  JsonReader reader;

private:
  mutable LineIndex lines;
  std::vector<PathPart> path;
  std::vector<std::pair<size_t, Diagnostic>> pending;
  std::deque<std::string> keptStrings;
  bool syntaxReported = false;
};

} // namespace fuel

#endif // FUEL_SUPPORT_JSONDOCUMENTPARSER_H
