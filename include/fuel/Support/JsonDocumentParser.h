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
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuel {

/// The location of byte `offset` of `fileName` (whose lines `lines` indexes).
SourceLocation locateOffset(LineIndex &lines, std::string_view fileName,
                            size_t offset, std::string pointer);

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

  /// Ends a parse: checks that nothing follows the document, reports every
  /// held-back diagnostic in source order; true when there was no error.
  bool finish(bool alive);

  /// Reads a string value. A value of another kind is reported, skipped and
  /// clears `valid`; returns false only on a syntax error.
  bool readText(std::string &out, bool &valid);
  /// Reads a boolean value, likewise.
  bool readFlag(bool &out, bool &valid);
  /// Reads a number at least `min` (or above it, with `strict`), likewise.
  bool readNumberAtLeast(double &out, bool &valid, double min, bool strict);

  /// Handles the `format` and `version` members every fuelc document starts
  /// with, if `key` is one of them: nullopt otherwise, else whether parsing
  /// can go on (an unsupported version stops it: nothing else can be
  /// trusted). `what` names the format in messages ("machine format").
  std::optional<bool> readHeaderMember(std::string_view key,
                                       std::string_view format,
                                       std::string_view what);
  /// Reports a missing `format` or `version` member of the document that
  /// starts at `start`.
  void checkHeaderSeen(size_t start, std::string_view format);

  /// Reads the document's top-level object: `format` and `version` are
  /// handled here, every other member by `member(key, offset)` (which returns
  /// false on a syntax error); then missing header members are reported.
  template <typename Fn>
  bool readDocument(std::string_view format, std::string_view what,
                    Fn member) {
    bool alive = true;
    if (!expect(JsonKind::Object, "a JSON object at the top level", alive))
      return false;
    size_t start = reader.offset();
    reader.beginObject();
    std::string_view key;
    while (alive && reader.nextMember(key)) {
      size_t offset = reader.offset();
      if (std::optional<bool> header = readHeaderMember(key, format, what))
        alive = *header;
      else
        alive = member(key, offset);
    }
    if (!alive || reader.failed())
      return false;
    checkHeaderSeen(start, format);
    documentStart = start;
    return true;
  }

  /// Calls `element()` for each element of an array value, with the index
  /// on the JSON pointer; returns false on a syntax error.
  template <typename Fn> bool forEachElement(Fn element) {
    bool alive = true;
    if (!expect(JsonKind::Array, "an array", alive))
      return alive;
    reader.beginArray();
    for (int64_t i = 0; alive && reader.nextElement(); ++i) {
      auto e = scope(i);
      alive = element();
    }
    return alive && (!reader.failed() || syntaxError());
  }
  /// Calls `member(key)` for each member of an object value.
  template <typename Fn> bool forEachMember(Fn member) {
    bool alive = true;
    if (!expect(JsonKind::Object, "an object", alive))
      return alive;
    reader.beginObject();
    std::string_view key;
    while (alive && reader.nextMember(key)) {
      std::string name(key);
      auto e = scope(keep(key));
      alive = member(name);
    }
    return alive && (!reader.failed() || syntaxError());
  }

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
  bool sawFormat = false, sawVersion = false;

protected:
  /// Offset of the top-level object (after readDocument).
  size_t documentStart = 0;
};

} // namespace fuel

#endif // FUEL_SUPPORT_JSONDOCUMENTPARSER_H
