//===- GraphJsonReader.cpp - Parse fuel.graph JSON into the IR ------------===//
//
// A single pass over the document with the JsonReader: sources and nodes are
// created in file order (their NodeIds), operand names are resolved once the
// whole file is read (so nodes may be listed in any order), and the verifier
// then checks and types the graph. A JsonSourceMap remembers the byte offset
// of every node, operand and attribute so that verifier diagnostics point at
// the exact line and column of the JSON value at fault.
//
// Type errors in a value are reported and the value skipped, so one run lists
// many problems; a JSON syntax error stops the parse.
//
//===----------------------------------------------------------------------===//

#include "fuel/Import/GraphJson.h"

#include "ExternalData.h"

#include "fuel/IR/Verifier.h"
#include "fuel/Support/Float16.h"
#include "fuel/Support/JsonDocumentParser.h"
#include "fuel/Support/StringIndex.h"

#include <charconv>
#include <cmath>
#include <cstring>

using namespace fuel;

namespace {

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

bool isIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) ||
                     s[0] == '_'))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

class GraphJsonParser : public JsonDocumentParser {
public:
  GraphJsonParser(std::string_view text, std::string_view fileName,
                  const GraphReadOptions &options, DiagnosticEngine &diag)
      : JsonDocumentParser(text, fileName, diag), options(options),
        sourceMap(std::make_unique<JsonSourceMap>(text, fileName)),
        weights(options.baseDir) {}

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

} // namespace

//===----------------------------------------------------------------------===//
// Document
//===----------------------------------------------------------------------===//

std::optional<Graph>
GraphJsonParser::parse(std::unique_ptr<SourceLocator> *locatorOut) {
  // A node takes at least ~40 bytes of JSON; sizing the name table up front
  // avoids rehashing it a dozen times on large graphs.
  nameIndex.reserve(text.size() / 48);
  bool alive = parseDocument() && reader.expectEnd();
  if (alive) {
    sourceMap->finish();
    resolveReferences();
    checkSymbols();
  } else if (reader.failed()) {
    syntaxError();
  }
  bool parsed = alive && !hasPendingErrors();
  flushDiagnostics();
  if (!parsed)
    return std::nullopt;
  if (options.verify && failed(verifyGraph(graph, diag, *sourceMap)))
    return std::nullopt;
  if (locatorOut)
    *locatorOut = std::move(sourceMap);
  return std::move(graph);
}

bool GraphJsonParser::parseDocument() {
  bool alive = true;
  if (!expect(JsonKind::Object, "a JSON object at the top level", alive))
    return alive && false;
  size_t start = reader.offset();
  reader.beginObject();
  std::vector<std::string_view> seen;
  std::string_view key;
  while (alive && !limitReached() && reader.nextMember(key)) {
    size_t keyOffset = reader.offset();
    key = keep(key);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      errorAt(keyOffset, "duplicate member '" + std::string(key) + "'");
      alive = reader.skipValue() || syntaxError();
      continue;
    }
    seen.push_back(key);
    if (key == "format") {
      auto s = scope("format");
      if (!expect(JsonKind::String, "a string", alive))
        continue;
      std::string_view value;
      reader.readString(value);
      sawFormat = true;
      if (value != "fuel.graph")
        errorAt(keyOffset, "unknown format '" + std::string(value) +
                               "' (expected \"fuel.graph\")");
    } else if (key == "version") {
      auto s = scope("version");
      if (!expect(JsonKind::Number, "an integer", alive))
        continue;
      JsonNumber n;
      reader.readNumber(n);
      sawVersion = true;
      if (!n.isInteger || n.overflow || n.integer != kGraphFormatVersion) {
        errorAt(keyOffset, "unsupported format version " +
                               literal(keyOffset) +
                               " (this fuelc reads version " +
                               std::to_string(kGraphFormatVersion) + ")");
        return false; // Nothing else can be trusted in another version.
      }
    } else if (key == "name") {
      auto s = scope("name");
      if (!expect(JsonKind::String, "a string", alive))
        continue;
      std::string_view value;
      reader.readString(value);
      graph.setName(value);
    } else if (key == "inputs") {
      alive = parseSection("inputs", &GraphJsonParser::parseInput);
    } else if (key == "constants") {
      alive = parseSection("constants", &GraphJsonParser::parseConstant);
    } else if (key == "nodes") {
      alive = parseSection("nodes", &GraphJsonParser::parseNode);
    } else if (key == "outputs") {
      alive = parseOutputs();
    } else {
      errorAt(keyOffset, "unknown top-level member '" + std::string(key) +
                             "' (expected format, version, name, inputs, "
                             "constants, nodes, outputs)");
      alive = reader.skipValue() || syntaxError();
    }
  }
  if (!alive || reader.failed())
    return false;
  if (limitReached())
    return true;
  if (!sawFormat)
    errorAt(start, "missing member 'format' (must be \"fuel.graph\")");
  if (!sawVersion)
    errorAt(start, "missing member 'version'");
  return true;
}

bool GraphJsonParser::parseSection(std::string_view section,
                                   bool (GraphJsonParser::*element)(uint32_t)) {
  auto s = scope(section);
  bool alive = true;
  if (!expect(JsonKind::Array, "an array", alive))
    return alive;
  reader.beginArray();
  uint32_t index = 0;
  while (reader.nextElement()) {
    if (limitReached())
      return true;
    auto e = scope(index);
    if (!(this->*element)(index++))
      return false;
  }
  return !reader.failed() || syntaxError();
}

bool GraphJsonParser::parseName(std::string_view &name, size_t &offset) {
  bool alive = true;
  offset = reader.offset();
  if (!expect(JsonKind::String, "a string", alive))
    return alive;
  reader.readString(name);
  name = keep(name);
  if (name.empty())
    errorAt(offset, "ids must not be empty");
  else if (name.find('#') != std::string_view::npos)
    errorAt(offset, "'#' is reserved for result indices and cannot appear "
                    "in an id");
  return true;
}

void GraphJsonParser::declareName(std::string_view name, size_t offset,
                                  NodeId node) {
  if (name.empty())
    return;
  auto [index, inserted] =
      nameIndex.insert(name, static_cast<uint32_t>(definitions.size()));
  if (inserted) {
    definitions.push_back({node, offset});
    return;
  }
  Diagnostic d;
  d.location = at(offset, currentPointer());
  d.location.node = name;
  d.message = "duplicate id '" + std::string(name) + "'";
  SourceLocation first = at(definitions[index].offset, "");
  d.notes.push_back("first defined at " + fileName + ":" +
                    std::to_string(first.line) + ":" +
                    std::to_string(first.column));
  defer(offset, std::move(d));
}

//===----------------------------------------------------------------------===//
// Shapes and extents
//===----------------------------------------------------------------------===//

bool GraphJsonParser::parseDim(Dim &dim, bool allowSymbols,
                               bool allowInferred, bool &valid) {
  size_t offset = reader.offset();
  JsonKind kind = reader.peek();
  if (kind == JsonKind::String && allowSymbols) {
    std::string_view name;
    reader.readString(name);
    if (!isIdentifier(name)) {
      errorAt(offset, "invalid symbol name '" + std::string(name) +
                          "' (letters, digits and '_', not starting with a "
                          "digit)");
      valid = false;
      return true;
    }
    uint32_t id = graph.symbols().intern(name);
    if (id >= symbolBound.size()) {
      symbolBound.push_back(false);
      symbolFirstUse.push_back(offset);
      symbolFirstUsePointer.push_back(currentPointer());
    }
    dim = Dim::symbol(id);
    return true;
  }
  if (kind == JsonKind::String) {
    std::string_view name;
    reader.readString(name);
    errorAt(offset, "constants have static shapes, got symbol '" +
                        std::string(name) + "'");
    valid = false;
    return true;
  }
  bool alive = true;
  if (!expect(JsonKind::Number,
              allowSymbols ? "an extent (an integer or a symbol name)"
                           : "an integer extent",
              alive)) {
    valid = false;
    return alive;
  }
  JsonNumber n;
  reader.readNumber(n);
  if (!n.isInteger) {
    errorAt(offset, "extent must be an integer, got " + literal(offset));
    valid = false;
  } else if (n.overflow || n.integer > kMaxElements) {
    errorAt(offset,
            "extent " + literal(offset) + " is too large (the limit is 2^59)");
    valid = false;
  } else if (n.integer == -1 && allowInferred) {
    dim = Dim::inferred();
  } else if (n.integer < 0) {
    errorAt(offset, "extent must be non-negative, got " +
                        std::to_string(n.integer));
    valid = false;
  } else {
    dim = Dim::fixed(n.integer);
  }
  return true;
}

bool GraphJsonParser::parseShape(Shape &shape, bool allowSymbols,
                                 bool &valid) {
  bool alive = true;
  if (!expect(JsonKind::Array, "an array of extents", alive)) {
    valid = false;
    return alive;
  }
  reader.beginArray();
  int64_t index = 0;
  while (reader.nextElement()) {
    auto s = scope(index++);
    Dim dim;
    if (!parseDim(dim, allowSymbols, /*allowInferred=*/false, valid))
      return false;
    shape.push_back(dim);
  }
  if (shape.size() > 64 && valid) {
    errorAt(reader.offset(), "rank " + std::to_string(shape.size()) +
                                 " exceeds the limit of 64");
    valid = false;
  }
  return !reader.failed() || syntaxError();
}

//===----------------------------------------------------------------------===//
// Inputs and constants
//===----------------------------------------------------------------------===//

bool GraphJsonParser::parseSource(uint32_t index, bool isInput) {
  const char *what = isInput ? "input" : "constant";
  bool alive = true;
  size_t start = reader.offset();
  if (!expect(JsonKind::Object,
              isInput ? "an input object" : "a constant object", alive))
    return alive;
  reader.beginObject();
  std::string_view name, key;
  size_t nameOffset = 0, dataOffset = 0;
  std::optional<DType> dtype;
  bool dtypeSeen = false, shapeSeen = false, shapeValid = true;
  Shape shape;
  while (alive && reader.nextMember(key)) {
    size_t valueOffset = reader.offset();
    if (key == "name") {
      auto s = scope("name");
      alive = parseName(name, nameOffset);
    } else if (key == "dtype") {
      auto s = scope("dtype");
      dtypeSeen = true;
      if (!expect(JsonKind::String, "a dtype name", alive))
        continue;
      std::string_view dtypeText;
      reader.readString(dtypeText);
      dtype = parseDType(dtypeText);
      if (!dtype)
        errorAt(valueOffset, "unknown dtype '" + std::string(dtypeText) +
                                 "' (expected f32, f16, bf16, f64, i8, i32, "
                                 "i64, u8 or bool)");
    } else if (key == "shape") {
      auto s = scope("shape");
      shapeSeen = true;
      alive = parseShape(shape, isInput, shapeValid);
    } else if (key == "data" && !isInput) {
      dataOffset = valueOffset;
      alive = reader.skipValue() || syntaxError();
    } else {
      alive = unknownMember(valueOffset, key, what,
                            isInput ? "name, dtype, shape"
                                    : "name, dtype, shape, data");
    }
  }
  if (!alive || reader.failed())
    return syntaxError();

  std::vector<const char *> missing;
  if (nameOffset == 0)
    missing.push_back("name");
  if (!dtypeSeen)
    missing.push_back("dtype");
  if (!shapeSeen)
    missing.push_back("shape");
  if (!isInput && dataOffset == 0)
    missing.push_back("data");
  for (const char *member : missing)
    errorAt(start, std::string(what) + " is missing member '" + member + "'",
            name);
  if (!missing.empty() || name.empty() || !dtype || !shapeValid) {
    // Keep the name known so that its uses are not reported as dangling.
    declareName(name, nameOffset, kNoNode);
    return true;
  }

  if (!staticElementCount(shape)) {
    errorAt(start, std::string(what) + " has more than 2^59 elements", name);
    declareName(name, nameOffset, kNoNode);
    return true;
  }
  NodeId node =
      graph.createNode(isInput ? OpKind::Input : OpKind::Constant, name);
  graph.addResults(1);
  graph.setResultType({node, 0}, *dtype, shape);
  sourceMap->addNode(start, isInput ? "inputs" : "constants", index);
  declareName(name, nameOffset, node);
  if (isInput) {
    for (Dim d : shape)
      if (d.isSymbolic())
        symbolBound[d.symbolId()] = true;
    return true;
  }
  TensorDecl decl{*dtype, {}};
  for (Dim d : shape)
    decl.shape.push_back(d.size());
  return reparseAt(dataOffset, [&] { return parseConstantData(node, decl); });
}

bool GraphJsonParser::parseConstantData(NodeId node, const TensorDecl &decl) {
  auto s = scope("data");
  ConstantData data;
  bool valid = true, alive;
  if (reader.peek() == JsonKind::Object) {
    alive = parseDataReference(decl, data, valid);
  } else {
    std::string bytes;
    alive = parseInlineData(decl, bytes, valid);
    data.size = bytes.size();
    data.storage = FileBuffer::fromBytes(std::move(bytes));
  }
  if (alive && valid)
    graph.setConstantData(node, std::move(data));
  return alive;
}

/// Encodes one JSON number or special-value string as `dtype`, little-endian.
static bool encodeElement(DType dtype, const JsonNumber &n, std::string &out,
                          std::string &error) {
  auto append = [&](const auto &v) {
    char buf[sizeof(v)];
    std::memcpy(buf, &v, sizeof(v));
    out.append(buf, sizeof(v));
  };
  if (isFloat(dtype)) {
    switch (dtype) {
    case DType::F64:
      append(n.real);
      break;
    case DType::F32:
      append(static_cast<float>(n.real));
      break;
    case DType::F16:
      append(floatToHalfBits(static_cast<float>(n.real)));
      break;
    default:
      append(floatToBFloat16Bits(static_cast<float>(n.real)));
    }
    return true;
  }
  if (!n.isInteger || n.overflow) {
    error = "is not an integer";
    return false;
  }
  int64_t v = n.integer;
  auto inRange = [&](int64_t lo, int64_t hi) {
    if (v >= lo && v <= hi)
      return true;
    error = "is out of range for " + std::string(dtypeName(dtype));
    return false;
  };
  switch (dtype) {
  case DType::I8:
    return inRange(INT8_MIN, INT8_MAX) && (append(static_cast<int8_t>(v)), true);
  case DType::U8:
    return inRange(0, UINT8_MAX) && (append(static_cast<uint8_t>(v)), true);
  case DType::I32:
    return inRange(INT32_MIN, INT32_MAX) &&
           (append(static_cast<int32_t>(v)), true);
  default:
    append(v);
    return true;
  }
}

bool GraphJsonParser::parseInlineData(const TensorDecl &decl,
                                      std::string &bytes, bool &valid) {
  bool alive = true;
  if (!expect(JsonKind::Array,
              "an array of values or an object naming a weight file", alive)) {
    valid = false;
    return alive;
  }
  uint64_t expected = 1;
  for (int64_t d : decl.shape)
    expected *= static_cast<uint64_t>(d);
  size_t start = reader.offset();
  reader.beginArray();
  uint64_t count = 0;
  while (reader.nextElement()) {
    size_t offset = reader.offset();
    JsonKind kind = reader.peek();
    ++count;
    if (!valid || count > expected) {
      if (!reader.skipValue())
        return syntaxError();
      continue;
    }
    auto s = scope(static_cast<int64_t>(count - 1));
    std::string error;
    if (decl.dtype == DType::Bool && kind == JsonKind::Bool) {
      bool b;
      reader.readBool(b);
      bytes += static_cast<char>(b);
      continue;
    }
    if (kind == JsonKind::String && isFloat(decl.dtype)) {
      // JSON has no NaN or infinity; they are spelled as strings.
      std::string_view word;
      reader.readString(word);
      JsonNumber n;
      n.real = word == "nan"    ? std::nan("")
               : word == "inf"  ? HUGE_VAL
               : word == "-inf" ? -HUGE_VAL
                                : 0;
      if (word != "nan" && word != "inf" && word != "-inf") {
        errorAt(offset, "expected a number, \"nan\", \"inf\" or \"-inf\", got "
                        "\"" + std::string(word) + "\"");
        valid = false;
        continue;
      }
      encodeElement(decl.dtype, n, bytes, error);
      continue;
    }
    if (decl.dtype == DType::Bool || kind != JsonKind::Number) {
      const char *want = decl.dtype == DType::Bool ? "true or false" : "a number";
      if (!expect(decl.dtype == DType::Bool ? JsonKind::Bool : JsonKind::Number,
                  want, alive) &&
          !alive)
        return false;
      valid = false;
      continue;
    }
    JsonNumber n;
    if (!reader.readNumber(n))
      return syntaxError();
    if (!encodeElement(decl.dtype, n, bytes, error)) {
      errorAt(offset, "value " + literal(offset) + " " + error);
      valid = false;
    }
  }
  if (reader.failed())
    return syntaxError();
  if (count != expected) {
    std::string shape = "[";
    for (size_t i = 0; i < decl.shape.size(); ++i)
      shape += (i ? ", " : "") + std::to_string(decl.shape[i]);
    errorAt(start, "inline data has " + std::to_string(count) +
                       " values, shape " + shape + "] needs " +
                       std::to_string(expected));
    valid = false;
  }
  return true;
}

bool GraphJsonParser::parseDataReference(const TensorDecl &decl,
                                         ConstantData &data, bool &valid) {
  size_t start = reader.offset();
  reader.beginObject();
  ConstantSource source;
  std::optional<ConstantSourceKind> kind;
  bool hasFile = false, hasOffset = false, alive = true;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t valueOffset = reader.offset();
    std::string_view value;
    if (key == "file" || key == "tensor" || key == "format") {
      std::string member(key);
      auto s = scope(key == "file" ? "file" : key == "tensor" ? "tensor" : "format");
      if (!expect(JsonKind::String, "a string", alive)) {
        valid = false;
        continue;
      }
      reader.readString(value);
      if (member == "file") {
        source.file = value;
        hasFile = true;
      } else if (member == "tensor") {
        source.tensor = value;
      } else if (value == "raw") {
        kind = ConstantSourceKind::Raw;
      } else if (value == "npy") {
        kind = ConstantSourceKind::Npy;
      } else if (value == "safetensors") {
        kind = ConstantSourceKind::Safetensors;
      } else {
        errorAt(valueOffset, "unknown weight file format '" +
                                 std::string(value) +
                                 "' (expected raw, npy or safetensors)");
        valid = false;
      }
    } else if (key == "offset") {
      auto s = scope("offset");
      if (!expect(JsonKind::Number, "a byte offset", alive)) {
        valid = false;
        continue;
      }
      JsonNumber n;
      reader.readNumber(n);
      if (!n.isInteger || n.overflow || n.integer < 0) {
        errorAt(valueOffset, "offset must be a non-negative integer");
        valid = false;
      }
      source.offset = static_cast<uint64_t>(n.integer);
      hasOffset = true;
    } else {
      alive = unknownMember(valueOffset, key, "a data reference",
                            "file, format, offset, tensor");
      valid = false;
    }
  }
  if (!alive || reader.failed())
    return !reader.failed() || syntaxError();
  if (!valid)
    return true;
  if (!hasFile) {
    errorAt(start, "data reference is missing member 'file'");
    valid = false;
    return true;
  }
  if (!kind)
    kind = constantKindForFile(source.file);
  if (!kind) {
    errorAt(start, "cannot tell the format of '" + source.file +
                       "' from its name; add \"format\": \"raw\", \"npy\" "
                       "or \"safetensors\"");
    valid = false;
    return true;
  }
  source.kind = *kind;
  if (hasOffset != (source.kind == ConstantSourceKind::Raw) && hasOffset) {
    errorAt(start, "'offset' only applies to raw weight files");
    valid = false;
    return true;
  }
  if ((source.kind == ConstantSourceKind::Safetensors) !=
      !source.tensor.empty()) {
    errorAt(start, source.tensor.empty()
                       ? "a safetensors reference needs member 'tensor'"
                       : "'tensor' only applies to safetensors files");
    valid = false;
    return true;
  }
  std::string error;
  if (!weights.load(source, decl, data, error)) {
    errorAt(start, error);
    valid = false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

bool GraphJsonParser::parseNode(uint32_t index) {
  bool alive = true;
  size_t start = reader.offset();
  if (!expect(JsonKind::Object, "a node object", alive))
    return alive;
  reader.beginObject();
  std::string_view name, key;
  size_t nameOffset = 0, attrsOffset = 0;
  std::optional<OpKind> kind;
  std::optional<DeviceRef> placement;
  bool opSeen = false, inputsValid = true;
  std::vector<std::pair<std::string_view, size_t>> operands;
  while (alive && reader.nextMember(key)) {
    size_t valueOffset = reader.offset();
    if (key == "id") {
      auto s = scope("id");
      alive = parseName(name, nameOffset);
    } else if (key == "op") {
      auto s = scope("op");
      opSeen = true;
      if (!expect(JsonKind::String, "an op name", alive))
        continue;
      std::string_view opText;
      reader.readString(opText);
      kind = parseOpKind(opText);
      if (!kind)
        errorAt(valueOffset, "unknown op '" + std::string(opText) + "'", name);
    } else if (key == "inputs") {
      auto s = scope("inputs");
      if (!expect(JsonKind::Array, "an array of value names", alive)) {
        inputsValid = false;
        continue;
      }
      reader.beginArray();
      while (reader.nextElement()) {
        auto e = scope(static_cast<int64_t>(operands.size()));
        size_t offset = reader.offset();
        if (!expect(JsonKind::String, "a value name", alive)) {
          inputsValid = false;
          if (!alive)
            return false;
          operands.emplace_back(std::string_view(), offset);
          continue;
        }
        std::string_view ref;
        reader.readString(ref);
        operands.emplace_back(keep(ref), offset);
      }
      alive = !reader.failed() || syntaxError();
    } else if (key == "attrs") {
      attrsOffset = valueOffset;
      alive = reader.skipValue() || syntaxError();
    } else if (key == "placement") {
      auto s = scope("placement");
      if (!expect(JsonKind::String, "a device name", alive))
        continue;
      std::string_view device;
      reader.readString(device);
      placement = parseDevice(device);
      if (!placement) {
        errorAt(valueOffset, "invalid device '" + std::string(device) +
                                 "' (expected cpu:N, cuda:N or vulkan:N)",
                name);
        inputsValid = false;
      }
    } else {
      alive = unknownMember(valueOffset, key, "node",
                            "id, op, inputs, attrs, placement", name);
    }
  }
  if (!alive || reader.failed())
    return syntaxError();
  if (nameOffset == 0)
    errorAt(start, "node is missing member 'id'");
  if (!opSeen)
    errorAt(start, "node is missing member 'op'", name);
  if (!kind || name.empty() || !inputsValid) {
    declareName(name, nameOffset, kNoNode);
    return true;
  }

  NodeId node = graph.createNode(*kind, name);
  sourceMap->addNode(start, "nodes", index);
  declareName(name, nameOffset, node);
  for (unsigned i = 0; i < operands.size(); ++i) {
    graph.addOperand({});
    sourceMap->addOperand(operands[i].second);
    refs.push_back({operands[i].first, operands[i].second, node, i});
  }
  if (placement)
    graph.setPlacement(node, *placement);
  if (attrsOffset != 0) {
    auto s = scope("attrs");
    if (!reparseAt(attrsOffset, [&] { return parseAttrs(node); }))
      return false;
  }
  graph.addResults(expectedResultCount(graph, node));
  return true;
}

bool GraphJsonParser::parseAttrs(NodeId node) {
  bool alive = true;
  if (!expect(JsonKind::Object, "an object of attributes", alive))
    return alive;
  reader.beginObject();
  OpKind kind = graph.kind(node);
  std::span<const AttrSpec> specs = opAttrSpecs(kind);
  std::vector<AttrName> seen;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    std::optional<AttrName> name = parseAttrName(key);
    bool accepted =
        name && std::any_of(specs.begin(), specs.end(),
                            [&](const AttrSpec &s) { return s.name == *name; });
    if (!accepted || std::find(seen.begin(), seen.end(), *name) != seen.end()) {
      auto s = scope(keep(key));
      std::string message;
      if (!name) {
        message = "unknown attribute '" + std::string(key) + "'";
      } else if (!accepted) {
        message = "op '" + std::string(opName(kind)) +
                  "' has no attribute '" + std::string(key) + "'";
      } else {
        message = "attribute '" + std::string(key) + "' is given twice";
      }
      if (!specs.empty()) {
        message += " (it takes";
        for (size_t i = 0; i < specs.size(); ++i)
          message += std::string(i ? ", " : " ") +
                     std::string(attrName(specs[i].name));
        message += ")";
      } else {
        message += " (it takes none)";
      }
      errorAt(offset, std::move(message), graph.name(node));
      alive = reader.skipValue() || syntaxError();
      continue;
    }
    seen.push_back(*name);
    auto s = scope(attrName(*name));
    bool valid = true;
    alive = parseAttrValue(node, *name, valid);
    if (valid)
      sourceMap->addAttr(*name, offset);
  }
  return alive && (!reader.failed() || syntaxError());
}

bool GraphJsonParser::parseAttrValue(NodeId node, AttrName name,
                                     bool &valid) {
  AttrType type = attrType(name);
  std::string desc(attrTypeDescription(type));
  size_t offset = reader.offset();
  bool alive = true;
  auto fail = [&](std::string message) {
    errorAt(offset, "attribute '" + std::string(attrName(name)) + "' " +
                        message,
            graph.name(node));
    valid = false;
    return true;
  };
  switch (type) {
  case AttrType::Int:
  case AttrType::Float: {
    if (!expect(JsonKind::Number, desc.c_str(), alive))
      return (valid = false), alive;
    JsonNumber n;
    reader.readNumber(n);
    if (type == AttrType::Int) {
      if (!n.isInteger || n.overflow)
        return fail("must be a 64-bit integer, got " + literal(offset));
      graph.addIntAttr(name, n.integer);
    } else {
      graph.addFloatAttr(name, n.real);
    }
    return true;
  }
  case AttrType::Bool: {
    if (!expect(JsonKind::Bool, desc.c_str(), alive))
      return (valid = false), alive;
    bool b;
    reader.readBool(b);
    graph.addBoolAttr(name, b);
    return true;
  }
  case AttrType::String:
  case AttrType::DType:
  case AttrType::Device: {
    if (!expect(JsonKind::String, desc.c_str(), alive))
      return (valid = false), alive;
    std::string_view value;
    reader.readString(value);
    if (type == AttrType::String) {
      graph.addStringAttr(name, value);
    } else if (type == AttrType::DType) {
      std::optional<DType> dtype = parseDType(value);
      if (!dtype)
        return fail("names unknown dtype '" + std::string(value) + "'");
      graph.addDTypeAttr(name, *dtype);
    } else {
      std::optional<DeviceRef> device = parseDevice(value);
      if (!device)
        return fail("names invalid device '" + std::string(value) +
                    "' (expected cpu:N, cuda:N or vulkan:N)");
      graph.addDeviceAttr(name, *device);
    }
    return true;
  }
  case AttrType::Ints: {
    if (!expect(JsonKind::Array, desc.c_str(), alive))
      return (valid = false), alive;
    std::vector<int64_t> values;
    reader.beginArray();
    while (reader.nextElement()) {
      auto s = scope(static_cast<int64_t>(values.size()));
      size_t at = reader.offset();
      if (!expect(JsonKind::Number, "an integer", alive)) {
        valid = false;
        if (!alive)
          return false;
        values.push_back(0);
        continue;
      }
      JsonNumber n;
      reader.readNumber(n);
      if (!n.isInteger || n.overflow) {
        errorAt(at, "expected a 64-bit integer, got " + literal(at),
                graph.name(node));
        valid = false;
      }
      values.push_back(n.integer);
    }
    if (reader.failed())
      return syntaxError();
    if (valid)
      graph.addIntsAttr(name, values);
    return true;
  }
  case AttrType::Dims: {
    if (!expect(JsonKind::Array, desc.c_str(), alive))
      return (valid = false), alive;
    Shape dims;
    reader.beginArray();
    while (reader.nextElement()) {
      auto s = scope(static_cast<int64_t>(dims.size()));
      Dim d;
      if (!parseDim(d, /*allowSymbols=*/true, /*allowInferred=*/true, valid))
        return false;
      dims.push_back(d);
    }
    if (reader.failed())
      return syntaxError();
    if (valid)
      graph.addDimsAttr(name, dims);
    return true;
  }
  case AttrType::Dim: {
    Dim d;
    if (!parseDim(d, /*allowSymbols=*/true, /*allowInferred=*/false, valid))
      return false;
    if (valid)
      graph.addDimAttr(name, d);
    return true;
  }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Outputs and name resolution
//===----------------------------------------------------------------------===//

bool GraphJsonParser::parseOutputs() {
  auto s = scope("outputs");
  sourceMap->setOutputsOffset(reader.offset());
  bool alive = true;
  if (!expect(JsonKind::Array, "an array of value names", alive))
    return alive;
  reader.beginArray();
  unsigned index = 0;
  while (reader.nextElement()) {
    auto e = scope(index);
    size_t offset = reader.offset();
    if (!expect(JsonKind::String, "a value name", alive)) {
      if (!alive)
        return false;
      continue;
    }
    std::string_view ref;
    reader.readString(ref);
    refs.push_back({keep(ref), offset, kNoNode, index++});
    sourceMap->addOutput(offset);
  }
  return !reader.failed() || syntaxError();
}

SourceLocation GraphJsonParser::refLocation(const PendingRef &ref) const {
  if (ref.user == kNoNode)
    return at(ref.offset, "/outputs/" + std::to_string(ref.position));
  return sourceMap->locate(graph, ref.user, NodeSite::ofOperand(ref.position));
}

void GraphJsonParser::resolveReferences() {
  std::vector<ValueRef> outputs;
  for (const PendingRef &ref : refs) {
    if (limitReached())
      return;
    if (ref.text.empty())
      continue; // Already reported as a type error.
    // "name#k" selects result k of a multi-result node.
    std::string_view name = ref.text;
    uint32_t result = 0;
    bool hasIndex = false;
    size_t hash = name.rfind('#');
    if (hash != std::string_view::npos) {
      std::string_view digits = name.substr(hash + 1);
      hasIndex = !digits.empty() && digits.size() <= 5 &&
                 std::all_of(digits.begin(), digits.end(),
                             [](char c) { return c >= '0' && c <= '9'; });
      if (hasIndex) {
        std::from_chars(digits.data(), digits.data() + digits.size(), result);
        name = name.substr(0, hash);
      }
    }
    const uint32_t *index = nameIndex.find(name);
    if (!index) {
      SourceLocation loc = refLocation(ref);
      defer(ref.offset, {Severity::Error, std::move(loc),
                         "use of undefined value '" + std::string(ref.text) +
                             "'",
                         {}});
      continue;
    }
    NodeId producer = definitions[*index].node;
    if (producer == kNoNode)
      continue; // The definition itself had errors.
    if (result >= graph.numResults(producer)) {
      SourceLocation loc = refLocation(ref);
      defer(ref.offset, {Severity::Error, std::move(loc),
                         "'" + std::string(name) + "' has " +
                             std::to_string(graph.numResults(producer)) +
                             " result(s); '" + std::string(ref.text) +
                             "' does not exist",
                         {}});
      continue;
    }
    if (ref.user == kNoNode)
      graph.addOutput({producer, result});
    else
      graph.setOperand(ref.user, ref.position, {producer, result});
  }
}

void GraphJsonParser::checkSymbols() {
  for (uint32_t id = 0; id < symbolBound.size(); ++id) {
    if (symbolBound[id])
      continue;
    defer(symbolFirstUse[id],
          {Severity::Error,
           at(symbolFirstUse[id], symbolFirstUsePointer[id]),
           "symbol '" + std::string(graph.symbols().name(id)) +
               "' is not bound by the shape of any graph input",
           {}});
  }
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

std::optional<Graph>
fuel::parseGraphJson(std::string_view text, std::string_view fileName,
                     const GraphReadOptions &options, DiagnosticEngine &diag,
                     std::unique_ptr<SourceLocator> *locator) {
  return GraphJsonParser(text, fileName, options, diag).parse(locator);
}

std::optional<GraphFile> fuel::readGraphFile(const std::string &path,
                                             DiagnosticEngine &diag,
                                             bool verify) {
  std::string error;
  std::shared_ptr<const FileBuffer> buffer =
      FileBuffer::open(path == "-" ? "/dev/stdin" : path, error);
  if (!buffer) {
    SourceLocation loc;
    loc.file = path;
    diag.error(std::move(loc), "cannot read graph file: " + error);
    return std::nullopt;
  }
  GraphReadOptions options;
  size_t slash = path.rfind('/');
  options.baseDir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (options.baseDir.empty())
    options.baseDir = "/";
  options.verify = verify;
  GraphFile file;
  std::optional<Graph> graph =
      parseGraphJson(buffer->text(), path == "-" ? "<stdin>" : path, options,
                     diag, &file.locator);
  if (!graph)
    return std::nullopt;
  file.graph = std::move(*graph);
  file.text = std::move(buffer);
  return file;
}
