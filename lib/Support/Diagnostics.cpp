//===- Diagnostics.cpp - Located diagnostics and their engine -------------===//

#include "fuel/Support/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <ostream>

using namespace fuel;

const char *fuel::severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void DiagnosticEngine::report(Diagnostic diag) {
  if (diag.severity == Severity::Error) {
    if (reachedErrorLimit()) {
      ++numSuppressed;
      return;
    }
    ++numErrors;
  }
  if (handler)
    handler(diag);
}

void fuel::printDiagnosticText(std::ostream &os, const Diagnostic &diag) {
  const SourceLocation &loc = diag.location;
  if (!loc.file.empty()) {
    os << loc.file;
    if (loc.line != 0)
      os << ':' << loc.line << ':' << loc.column;
    os << ": ";
  }
  os << severityName(diag.severity) << ": " << diag.message;
  if (!loc.pointer.empty())
    os << " [" << loc.pointer << ']';
  if (!loc.node.empty())
    os << " (node '" << loc.node << "')";
  os << '\n';
  for (const std::string &note : diag.notes)
    os << "  note: " << note << '\n';
}

std::string fuel::diagnosticToJson(const Diagnostic &diag) {
  const SourceLocation &loc = diag.location;
  nlohmann::ordered_json j;
  j["severity"] = severityName(diag.severity);
  j["message"] = diag.message;
  if (!loc.file.empty())
    j["file"] = loc.file;
  if (loc.line != 0) {
    j["line"] = loc.line;
    j["column"] = loc.column;
  }
  if (!loc.pointer.empty())
    j["pointer"] = loc.pointer;
  if (!loc.node.empty())
    j["node"] = loc.node;
  if (!diag.notes.empty())
    j["notes"] = diag.notes;
  // Replace invalid UTF-8 (e.g. from a corrupt input file) rather than throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
