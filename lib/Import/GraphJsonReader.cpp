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

#include "GraphJsonParser.h"

#include <algorithm>
#include <charconv>

using namespace fuel;
using namespace fuel::detail;

bool fuel::detail::isIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) ||
                     s[0] == '_'))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

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
    SymbolProduct product;
    std::optional<Dim> parsed;
    if (isIdentifier(name))
      parsed = Dim::symbol(graph.symbols().intern(name));
    else if (parseSymbolProduct(name, graph.symbols(), product))
      parsed = graph.symbols().product(product);
    if (!parsed) {
      errorAt(offset, "invalid symbol name '" + std::string(name) +
                          "' (letters, digits and '_', not starting with a "
                          "digit; or a product such as '4*B')");
      valid = false;
      return true;
    }
    // First uses of new symbols (free ones must be bound by an input).
    while (symbolBound.size() < graph.symbols().size()) {
      symbolBound.push_back(false);
      symbolFirstUse.push_back(offset);
      symbolFirstUsePointer.push_back(currentPointer());
    }
    dim = *parsed;
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
    for (Dim d : shape) {
      if (!d.isSymbolic())
        continue;
      SymbolProduct p = graph.symbols().expand(d);
      for (uint32_t s : p.symbols) // Bound, so one root cause, one error.
        symbolBound[s] = true;
      if (p.symbols.size() > 1 || p.factor != 1)
        errorAt(start, "input extents are integers or symbols; '" +
                           std::string(graph.symbols().name(d.symbolId())) +
                           "' is a product of symbols",
                name);
    }
    return true;
  }
  TensorDecl decl{*dtype, {}};
  for (Dim d : shape)
    decl.shape.push_back(d.size());
  return reparseAt(dataOffset, [&] { return parseConstantData(node, decl); });
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
    // A product is bound when its free symbols are.
    if (symbolBound[id] || graph.symbols().isDerived(id))
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
  Expected<std::shared_ptr<const FileBuffer>> opened =
      FileBuffer::open(path == "-" ? "/dev/stdin" : path);
  if (!opened) {
    SourceLocation loc;
    loc.file = path;
    diag.error(std::move(loc), "cannot read graph file: " + opened.error());
    return std::nullopt;
  }
  std::shared_ptr<const FileBuffer> buffer = *opened;
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
