//===- Diagnostics.h - Located diagnostics and their engine -----*- C++ -*-===//
//
// Libraries never print, exit or throw: they report a Diagnostic (severity,
// source location, JSON pointer, node) to a DiagnosticEngine and return
// failure. Tools install a renderer that prints compiler-style text or JSON.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_DIAGNOSTICS_H
#define FUEL_SUPPORT_DIAGNOSTICS_H

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

enum class Severity { Error, Warning, Note };

/// Where a diagnostic points. Every field is optional: line/column are 1-based
/// and 0 when unknown; `pointer` is an RFC 6901 JSON pointer into the input.
struct SourceLocation {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string pointer;
  std::string node;
};

/// A location naming only a node (the compiler's passes after import).
inline SourceLocation nodeLocation(std::string_view node) {
  SourceLocation loc;
  loc.node = node;
  return loc;
}

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  std::vector<std::string> notes;
};

/// Collects diagnostics and forwards each to an optional handler. Counts
/// errors so callers can stop after `maxErrors` and say how many were left.
class DiagnosticEngine {
public:
  using Handler = std::function<void(const Diagnostic &)>;

  void setHandler(Handler h) { handler = std::move(h); }
  void setMaxErrors(unsigned n) { maxErrors = n; }

  void report(Diagnostic diag);
  void error(SourceLocation loc, std::string message) {
    report({Severity::Error, std::move(loc), std::move(message), {}});
  }
  void warning(SourceLocation loc, std::string message) {
    report({Severity::Warning, std::move(loc), std::move(message), {}});
  }

  unsigned maxErrorCount() const { return maxErrors; }
  unsigned errorCount() const { return numErrors; }
  bool hadErrors() const { return numErrors != 0; }
  /// True once `maxErrors` errors were reported; producers stop early then.
  bool reachedErrorLimit() const {
    return maxErrors != 0 && numErrors >= maxErrors;
  }
  /// Errors reported after the limit was reached (not forwarded).
  unsigned suppressedCount() const { return numSuppressed; }

private:
  Handler handler;
  unsigned maxErrors = 0;
  unsigned numErrors = 0;
  unsigned numSuppressed = 0;
};

/// Renders `file:line:col: error: message [pointer] (node 'x')` plus notes.
void printDiagnosticText(std::ostream &os, const Diagnostic &diag);

/// Renders one diagnostic as a single-line JSON object.
std::string diagnosticToJson(const Diagnostic &diag);

const char *severityName(Severity s);

} // namespace fuel

#endif // FUEL_SUPPORT_DIAGNOSTICS_H
