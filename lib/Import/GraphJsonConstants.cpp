//===- GraphJsonConstants.cpp - Constant data in fuel.graph files ---------===//
//
// A constant's `data`: inline values (encoded to the declared dtype, checked
// for range and count) or a reference to a weight file (ExternalData.h).
//
//===----------------------------------------------------------------------===//

#include "GraphJsonParser.h"

#include "fuel/Support/Float16.h"

#include <cmath>
#include <cstring>

using namespace fuel;
using namespace fuel::detail;

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

/// Encodes one JSON number or special-value string as `dtype`,
/// little-endian; the error completes "value V ...".
static Expected<void> encodeElement(DType dtype, const JsonNumber &n, std::string &out) {
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
    return {};
  }
  if (!n.isInteger || n.overflow)
    return Error{"is not an integer"};
  int64_t v = n.integer;
  auto store = [&](int64_t lo, int64_t hi) -> Expected<void> {
    if (v < lo || v > hi)
      return Error{"is out of range for " + std::string(dtypeName(dtype))};
    size_t at = out.size();
    out.resize(at + dtypeByteSize(dtype));
    storeElement(dtype, static_cast<double>(v), out.data() + at);
    return {};
  };
  switch (dtype) {
  case DType::I8:
    return store(INT8_MIN, INT8_MAX);
  case DType::I16:
    return store(INT16_MIN, INT16_MAX);
  case DType::I32:
    return store(INT32_MIN, INT32_MAX);
  case DType::U8:
    return store(0, UINT8_MAX);
  case DType::U16:
    return store(0, UINT16_MAX);
  case DType::U32:
    return store(0, UINT32_MAX);
  case DType::U64: // JSON integers are read as int64: stored whole, not through a double.
    if (v < 0)
      return Error{"is out of range for u64"};
    append(v);
    return {};
  default:
    append(v);
    return {};
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
      (void)encodeElement(decl.dtype, n, bytes); // Floats always encode.
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
    if (Expected<void> encoded = encodeElement(decl.dtype, n, bytes); !encoded) {
      errorAt(offset, "value " + literal(offset) + " " + encoded.error());
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
  if (Expected<void> loaded = weights.load(source, decl, data); !loaded) {
    errorAt(start, loaded.error());
    valid = false;
  }
  return true;
}
