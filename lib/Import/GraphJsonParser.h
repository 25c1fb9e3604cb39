//===- GraphJsonParser.h - The fuel.graph reader's parser class -*- C++ -*-===//
//
// Shared by the reader's files: GraphJsonReader.cpp (document, inputs,
// outputs, name resolution), GraphJsonNodes.cpp (nodes and attributes) and
// GraphJsonConstants.cpp (inline and external constant data).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_IMPORT_GRAPHJSONPARSER_H
#define FUEL_LIB_IMPORT_GRAPHJSONPARSER_H

#include "fuel/Import/GraphJson.h"

#include "ExternalData.h"

#include "fuel/IR/Verifier.h"
#include "fuel/Support/JsonDocumentParser.h"
#include "fuel/Support/StringIndex.h"

#include <memory>

namespace fuel::detail {

/// Source positions of everything the verifier may point at.
class JsonSourceMap final : public SourceLocator {
public:
  JsonSourceMap(std::string_view text, std::string_view fileName)
      : fileName(fileName), lines(text) {}

  struct NodeOrigin {
    size_t offset;
    std::string_view section;
    uint32_t index;
  };

  void addNode(size_t offset, std::string_view section, uint32_t index) {
    nodes.push_back({offset, section, index});
    operandBegin.push_back(static_cast<uint32_t>(operandOffsets.size()));
    attrBegin.push_back(static_cast<uint32_t>(attrOffsets.size()));
  }
  void addOperand(size_t offset) { operandOffsets.push_back(offset); }
  void addAttr(AttrName name, size_t offset) {
    attrOffsets.emplace_back(name, offset);
  }
  void addOutput(size_t offset) { outputOffsets.push_back(offset); }
  void finish() {
    operandBegin.push_back(static_cast<uint32_t>(operandOffsets.size()));
    attrBegin.push_back(static_cast<uint32_t>(attrOffsets.size()));
  }

  SourceLocation at(size_t offset, std::string pointer) const {
    return locateOffset(lines, fileName, offset, std::move(pointer));
  }

  SourceLocation locate(const Graph &graph, NodeId node,
                        NodeSite site) const override {
    if (node >= nodes.size()) // Inserted by a pass: not in the file.
      return SourceLocator::locate(graph, node, site);
    const NodeOrigin &origin = nodes[node];
    std::string pointer =
        "/" + std::string(origin.section) + "/" + std::to_string(origin.index);
    size_t offset = origin.offset;
    if (site.kind == NodeSite::Kind::Operand &&
        operandBegin[node] + site.operand < operandBegin[node + 1]) {
      offset = operandOffsets[operandBegin[node] + site.operand];
      pointer += "/inputs/" + std::to_string(site.operand);
    } else if (site.kind == NodeSite::Kind::Attribute) {
      for (uint32_t i = attrBegin[node]; i < attrBegin[node + 1]; ++i) {
        if (attrOffsets[i].first == site.attr) {
          offset = attrOffsets[i].second;
          pointer += "/attrs/" + std::string(attrName(site.attr));
        }
      }
    }
    SourceLocation loc = at(offset, std::move(pointer));
    loc.node = graph.name(node);
    return loc;
  }

  SourceLocation locateOutput(const Graph &, unsigned index) const override {
    return at(outputOffsets[index], "/outputs/" + std::to_string(index));
  }
  SourceLocation locateOutputs(const Graph &) const override {
    return at(outputsOffset, outputsOffset ? "/outputs" : "");
  }
  void setOutputsOffset(size_t offset) { outputsOffset = offset; }

private:
  std::string fileName;
  mutable LineIndex lines;
  std::vector<NodeOrigin> nodes;
  std::vector<uint32_t> operandBegin;
  std::vector<size_t> operandOffsets;
  std::vector<uint32_t> attrBegin;
  std::vector<std::pair<AttrName, size_t>> attrOffsets;
  std::vector<size_t> outputOffsets;
  size_t outputsOffset = 0;
};

/// A reference to a value by name, resolved after the whole file is read.
struct PendingRef {
  std::string_view text;
  size_t offset;
  NodeId user;       // The node using it, or kNoNode for a graph output.
  unsigned position; // Operand index or output index.
};
constexpr NodeId kNoNode = ~NodeId(0);

/// Symbol names: letters, digits and '_', not starting with a digit.
bool isIdentifier(std::string_view s);

class GraphJsonParser : public JsonDocumentParser {
public:
  GraphJsonParser(std::string_view text, std::string_view fileName,
                  const GraphReadOptions &options, DiagnosticEngine &diag)
      : JsonDocumentParser(text, fileName, diag), options(options),
        sourceMap(std::make_unique<JsonSourceMap>(text, fileName)),
        weights(options.baseDir, options.preloadedFiles) {}

  std::optional<Graph> parse(std::unique_ptr<SourceLocator> *locatorOut);

private:
  //===--- Document structure ---------------------------------------------===//

  bool parseDocument();
  bool parseSection(std::string_view section,
                    bool (GraphJsonParser::*element)(uint32_t));
  bool parseInput(uint32_t index) { return parseSource(index, true); }
  bool parseConstant(uint32_t index) { return parseSource(index, false); }
  bool parseSource(uint32_t index, bool isInput);
  bool parseNode(uint32_t index);
  bool parseOutputs();
  bool parseName(std::string_view &name, size_t &offset);
  bool parseShape(Shape &shape, bool allowSymbols, bool &valid);
  bool parseDim(Dim &dim, bool allowSymbols, bool allowInferred, bool &valid);
  bool parseAttrs(NodeId node);
  bool parseAttrValue(NodeId node, AttrName name, bool &valid);
  bool parseConstantData(NodeId node, const TensorDecl &decl);
  bool parseInlineData(const TensorDecl &decl, std::string &bytes,
                       bool &valid);
  bool parseDataReference(const TensorDecl &decl, ConstantData &data,
                          bool &valid);
  void declareName(std::string_view name, size_t offset, NodeId node);
  void resolveReferences();
  SourceLocation refLocation(const PendingRef &ref) const;
  void checkSymbols();

  const GraphReadOptions &options;
  std::unique_ptr<JsonSourceMap> sourceMap;
  ExternalDataLoader weights;
  Graph graph;
  bool sawVersion = false, sawFormat = false;

  /// Every defined name, with its node (kNoNode when the definition had
  /// errors) and the offset of its id for "first defined at" notes.
  struct Definition {
    NodeId node;
    size_t offset;
  };
  StringIndex nameIndex; // Name -> index into `definitions`.
  std::vector<Definition> definitions;
  std::vector<PendingRef> refs;
  /// Symbols bound by input shapes, and the first use of every symbol.
  std::vector<bool> symbolBound;
  std::vector<size_t> symbolFirstUse;
  std::vector<std::string> symbolFirstUsePointer;
};

} // namespace fuel::detail

#endif // FUEL_LIB_IMPORT_GRAPHJSONPARSER_H
