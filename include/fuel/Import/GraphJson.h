//===- GraphJson.h - The fuel.graph JSON format -----------------*- C++ -*-===//
//
// Reading and canonical printing of fuel.graph files (docs/graph-format.md).
// The reader reports every problem with file:line:column, the JSON pointer of
// the offending value and the node id, then verifies the graph and infers its
// types; the printer writes the canonical form (parse -> print -> parse is the
// identity).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IMPORT_GRAPHJSON_H
#define FUEL_IMPORT_GRAPHJSON_H

#include "fuel/IR/Graph.h"
#include "fuel/IR/Verifier.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/FileBuffer.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fuel {

inline constexpr int kGraphFormatVersion = 1;

struct GraphReadOptions {
  /// Directory that external weight files are relative to (usually the
  /// directory of the graph file).
  std::string baseDir = ".";
  /// Run the verifier (and type inference) after parsing.
  bool verify = true;
  /// Weight files already in memory, by the name the graph uses for them
  /// (the runtime reads an artifact's graph against its weights section).
  std::map<std::string, std::shared_ptr<const FileBuffer>> preloadedFiles;
};

/// Parses `text` (the contents of `fileName`, used in diagnostics). Returns
/// nullopt after reporting at least one error. With `locator`, receives the
/// source map later passes use to point their diagnostics into `text` (which
/// must then outlive it).
std::optional<Graph>
parseGraphJson(std::string_view text, std::string_view fileName,
               const GraphReadOptions &options, DiagnosticEngine &diag,
               std::unique_ptr<SourceLocator> *locator = nullptr);

/// A graph read from a file, with what locates its nodes in that file.
struct GraphFile {
  Graph graph;
  std::shared_ptr<const FileBuffer> text;
  std::unique_ptr<SourceLocator> locator;
};

/// Reads the file at `path` (or standard input for "-"); weights are looked
/// up relative to the file's directory.
std::optional<GraphFile> readGraphFile(const std::string &path,
                                       DiagnosticEngine &diag,
                                       bool verify = true);

/// The canonical JSON text of a verified graph. With `weightOffsets` (by
/// NodeId, see constantOffsets), constants refer to raw data at those offsets
/// of a file named "weights" instead of their own sources: the form the
/// artifact's `graph` section takes.
std::string printGraphJson(const Graph &graph,
                           const std::vector<uint64_t> *weightOffsets = nullptr);

} // namespace fuel

#endif // FUEL_IMPORT_GRAPHJSON_H
