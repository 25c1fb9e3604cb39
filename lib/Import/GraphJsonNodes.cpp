//===- GraphJsonNodes.cpp - Nodes and attributes in fuel.graph files ------===//
//
// A node's id, op, operand names (resolved later), placement and attributes;
// attributes are typed by Attrs.def and checked against the op's schema.
//
//===----------------------------------------------------------------------===//

#include "GraphJsonParser.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::detail;

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
