//===- GraphJsonWriter.cpp - Canonical fuel.graph JSON --------------------===//
//
// One canonical text per graph: sections in a fixed order, one source or node
// per line, members in a fixed order, attributes sorted by name, numbers in
// their shortest round-tripping form. Printing the result of parsing this
// text gives the same text again.
//
//===----------------------------------------------------------------------===//

#include "fuel/Import/GraphJson.h"

#include "ExternalData.h"

#include "fuel/Support/Float16.h"
#include "fuel/Support/JsonReader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

using namespace fuel;

namespace {
class GraphJsonWriter {
public:
  GraphJsonWriter(const Graph &graph, const std::vector<uint64_t> *weightOffsets)
      : graph(graph), weightOffsets(weightOffsets) {}
  std::string print();

private:
  void str(std::string_view s) { appendJsonString(out, s); }
  void integer(int64_t v) { out += std::to_string(v); }
  template <typename F> void real(F v) {
    if (std::isnan(v)) {
      out += "\"nan\"";
      return;
    }
    if (std::isinf(v)) {
      out += v > 0 ? "\"inf\"" : "\"-inf\"";
      return;
    }
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, end);
  }
  void dim(Dim d);
  void dims(ShapeRef shape);
  void valueRef(ValueRef v);
  void attr(const Attribute &a);
  void source(NodeId node);
  void inlineData(DType dtype, std::string_view bytes);
  void node(NodeId node);
  template <typename Fn>
  void section(const char *name, OpKind kind, bool include, Fn printOne);

  const Graph &graph;
  const std::vector<uint64_t> *weightOffsets;
  std::string out;
};
} // namespace

void GraphJsonWriter::dim(Dim d) {
  if (d.isStatic())
    integer(d.size());
  else if (d.isInferred())
    out += "-1";
  else
    str(graph.symbols().name(d.symbolId()));
}

void GraphJsonWriter::dims(ShapeRef shape) {
  out += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    dim(shape[i]);
  }
  out += ']';
}

void GraphJsonWriter::valueRef(ValueRef v) {
  std::string ref(graph.name(v.node));
  if (graph.numResults(v.node) != 1)
    ref += "#" + std::to_string(v.result);
  str(ref);
}

void GraphJsonWriter::attr(const Attribute &a) {
  str(attrName(a.name));
  out += ": ";
  switch (a.type) {
  case AttrType::Int:
    integer(graph.intAttr(a));
    break;
  case AttrType::Float:
    real(graph.floatAttr(a));
    break;
  case AttrType::Bool:
    out += graph.boolAttr(a) ? "true" : "false";
    break;
  case AttrType::String:
    str(graph.stringAttr(a));
    break;
  case AttrType::Ints: {
    out += '[';
    std::span<const int64_t> values = graph.intsAttr(a);
    for (size_t i = 0; i < values.size(); ++i) {
      if (i)
        out += ", ";
      integer(values[i]);
    }
    out += ']';
    break;
  }
  case AttrType::Dims:
    dims(graph.dimsAttr(a));
    break;
  case AttrType::Dim:
    dim(graph.dimsAttr(a)[0]);
    break;
  case AttrType::DType:
    str(dtypeName(graph.dtypeAttr(a)));
    break;
  case AttrType::Device:
    str(formatDevice(graph.deviceAttr(a)));
    break;
  }
}

void GraphJsonWriter::inlineData(DType dtype, std::string_view bytes) {
  size_t width = dtypeByteSize(dtype);
  out += '[';
  for (size_t i = 0; i * width < bytes.size(); ++i) {
    if (i)
      out += ", ";
    const char *p = bytes.data() + i * width;
    auto load = [&](auto v) {
      std::memcpy(&v, p, sizeof(v));
      return v;
    };
    switch (dtype) {
    case DType::F32:
      real(load(float()));
      break;
    case DType::F64:
      real(load(double()));
      break;
    case DType::F16:
      real(halfBitsToFloat(load(uint16_t())));
      break;
    case DType::BF16:
      real(bfloat16BitsToFloat(load(uint16_t())));
      break;
    case DType::I64:
      integer(load(int64_t()));
      break;
    case DType::U64:
      out += std::to_string(load(uint64_t()));
      break;
    case DType::Bool:
      out += load(uint8_t()) ? "true" : "false";
      break;
    default: // Integers of up to 32 bits, exact in a double.
      integer(static_cast<int64_t>(loadElement(dtype, p)));
    }
  }
  out += ']';
}

void GraphJsonWriter::source(NodeId node) {
  ValueRef v{node, 0};
  out += "{\"name\": ";
  str(graph.name(node));
  out += ", \"dtype\": ";
  str(dtypeName(graph.dtype(v)));
  out += ", \"shape\": ";
  dims(graph.shape(v));
  if (const ConstantData *data = graph.constantData(node)) {
    out += ", \"data\": ";
    const ConstantSource &src = data->source;
    if (weightOffsets) {
      out += "{\"file\": \"weights\", \"format\": \"raw\", \"offset\": ";
      integer(static_cast<int64_t>((*weightOffsets)[node]));
      out += "}";
    } else if (src.kind == ConstantSourceKind::Inline) {
      inlineData(graph.dtype(v), data->bytes());
    } else {
      out += "{\"file\": ";
      str(src.file);
      // The format is spelled out only where the extension does not say it.
      static constexpr const char *kFormatNames[] = {"", "raw", "npy",
                                                     "safetensors"};
      if (constantKindForFile(src.file) != src.kind) {
        out += ", \"format\": ";
        str(kFormatNames[static_cast<unsigned>(src.kind)]);
      }
      if (src.kind == ConstantSourceKind::Raw && src.offset != 0) {
        out += ", \"offset\": ";
        integer(static_cast<int64_t>(src.offset));
      }
      if (src.kind == ConstantSourceKind::Safetensors) {
        out += ", \"tensor\": ";
        str(src.tensor);
      }
      out += '}';
    }
  }
  out += '}';
}

void GraphJsonWriter::node(NodeId node) {
  out += "{\"id\": ";
  str(graph.name(node));
  out += ", \"op\": ";
  str(opName(graph.kind(node)));
  std::span<const ValueRef> operands = graph.operands(node);
  if (!operands.empty()) {
    out += ", \"inputs\": [";
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i)
        out += ", ";
      valueRef(operands[i]);
    }
    out += ']';
  }
  std::span<const Attribute> attrs = graph.attrs(node);
  if (!attrs.empty()) {
    std::vector<const Attribute *> sorted;
    for (const Attribute &a : attrs)
      sorted.push_back(&a);
    // AttrName enumerators are in alphabetical order of their JSON names.
    std::sort(sorted.begin(), sorted.end(),
              [](const Attribute *a, const Attribute *b) {
                return a->name < b->name;
              });
    out += ", \"attrs\": {";
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i)
        out += ", ";
      attr(*sorted[i]);
    }
    out += '}';
  }
  if (std::optional<DeviceRef> device = graph.placement(node)) {
    out += ", \"placement\": ";
    str(formatDevice(*device));
  }
  out += '}';
}

template <typename Fn>
void GraphJsonWriter::section(const char *name, OpKind kind, bool include,
                              Fn printOne) {
  out += "  \"";
  out += name;
  out += "\": [";
  bool first = true;
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    bool isSource = graph.kind(n) == OpKind::Input ||
                    graph.kind(n) == OpKind::Constant;
    if (include ? graph.kind(n) != kind : isSource)
      continue;
    out += first ? "\n    " : ",\n    ";
    first = false;
    printOne(n);
  }
  out += first ? "],\n" : "\n  ],\n";
}

std::string GraphJsonWriter::print() {
  out += "{\n  \"format\": \"fuel.graph\",\n  \"version\": ";
  integer(kGraphFormatVersion);
  out += ",\n";
  if (!graph.graphNameText().empty()) {
    out += "  \"name\": ";
    str(graph.graphNameText());
    out += ",\n";
  }
  section("inputs", OpKind::Input, true, [&](NodeId n) { source(n); });
  section("constants", OpKind::Constant, true, [&](NodeId n) { source(n); });
  section("nodes", OpKind::Input, false, [&](NodeId n) { node(n); });
  out += "  \"outputs\": [";
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    if (i)
      out += ", ";
    valueRef(graph.outputs()[i]);
  }
  out += "]\n}\n";
  return std::move(out);
}

std::string fuel::printGraphJson(const Graph &graph,
                                 const std::vector<uint64_t> *weightOffsets) {
  return GraphJsonWriter(graph, weightOffsets).print();
}
