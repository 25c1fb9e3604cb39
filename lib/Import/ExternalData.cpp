//===- ExternalData.cpp - Constants stored in weight files ----------------===//

#include "ExternalData.h"

#include "fuel/Support/Npy.h"
#include "fuel/Support/JsonReader.h"

#include <cstring>

using namespace fuel;


uint64_t TensorDecl::byteSize() const {
  uint64_t n = dtypeByteSize(dtype);
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

static bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<ConstantSourceKind>
fuel::constantKindForFile(const std::string &file) {
  if (endsWith(file, ".npy"))
    return ConstantSourceKind::Npy;
  if (endsWith(file, ".safetensors"))
    return ConstantSourceKind::Safetensors;
  if (endsWith(file, ".bin") || endsWith(file, ".raw"))
    return ConstantSourceKind::Raw;
  return std::nullopt;
}

Expected<std::shared_ptr<const FileBuffer>> ExternalDataLoader::open(const std::string &file) {
  auto it = files.find(file);
  if (it != files.end())
    return it->second;
  std::string path = file.starts_with('/') ? file : baseDir + "/" + file;
  Expected<std::shared_ptr<const FileBuffer>> buffer = FileBuffer::open(path, /*regularOnly=*/true);
  if (!buffer)
    return Error{"cannot open weight file '" + file + "': " + buffer.error()};
  files.emplace(file, *buffer);
  return buffer;
}

Expected<void> ExternalDataLoader::load(const ConstantSource &source, const TensorDecl &decl,
                                        ConstantData &out) {
  out.source = source;
  switch (source.kind) {
  case ConstantSourceKind::Raw:
    return loadRaw(source, decl, out);
  case ConstantSourceKind::Npy:
    return loadNpy(source, decl, out);
  case ConstantSourceKind::Safetensors:
    return loadSafetensors(source, decl, out);
  case ConstantSourceKind::Inline:
    break;
  }
  return Error{"internal error: inline data has no file"};
}

Expected<void> ExternalDataLoader::loadRaw(const ConstantSource &source, const TensorDecl &decl,
                                           ConstantData &out) {
  Expected<std::shared_ptr<const FileBuffer>> opened = open(source.file);
  if (!opened)
    return Error{opened.error()};
  std::shared_ptr<const FileBuffer> buffer = *opened;
  uint64_t need = decl.byteSize();
  if (source.offset > buffer->size() || need > buffer->size() - source.offset)
    return Error{"weight file '" + source.file + "' is truncated: needs " + std::to_string(need) +
                 " bytes at offset " + std::to_string(source.offset) + ", the file has " +
                 std::to_string(buffer->size())};
  out.storage = buffer;
  out.offset = source.offset;
  out.size = need;
  return {};
}

Expected<void> ExternalDataLoader::loadNpy(const ConstantSource &source, const TensorDecl &decl,
                                           ConstantData &out) {
  Expected<std::shared_ptr<const FileBuffer>> opened = open(source.file);
  if (!opened)
    return Error{opened.error()};
  std::shared_ptr<const FileBuffer> buffer = *opened;
  std::string where = "'" + source.file + "'";
  Expected<NpyArray> parsed = parseNpy(buffer->text());
  if (!parsed)
    return Error{where + " " + parsed.error()};
  const NpyArray &array = *parsed;
  if (array.dtype != decl.dtype || array.shape != decl.shape)
    return Error{where + " holds " + std::string(dtypeName(array.dtype)) +
                 formatExtents(array.shape) + ", the graph declares " +
                 std::string(dtypeName(decl.dtype)) + formatExtents(decl.shape)};
  out.storage = buffer;
  out.offset = array.dataOffset;
  out.size = array.dataSize;
  return {};
}

static std::optional<DType> dtypeFromSafetensors(std::string_view name) {
  static constexpr std::pair<std::string_view, DType> table[] = {
      {"F32", DType::F32}, {"F16", DType::F16},  {"BF16", DType::BF16},
      {"F64", DType::F64}, {"I8", DType::I8},    {"I32", DType::I32},
      {"I64", DType::I64}, {"U8", DType::U8},    {"BOOL", DType::Bool}};
  for (auto [n, dtype] : table)
    if (n == name)
      return dtype;
  return std::nullopt;
}

/// Reads `[a, b, ...]` of non-negative integers.
static bool readUnsignedList(JsonReader &reader, std::vector<int64_t> &out) {
  if (!reader.beginArray())
    return false;
  while (reader.nextElement()) {
    JsonNumber n;
    if (!reader.readNumber(n) || !n.isInteger || n.overflow || n.integer < 0)
      return false;
    out.push_back(n.integer);
  }
  return !reader.failed();
}

Expected<const ExternalDataLoader::SafetensorsIndex *>
ExternalDataLoader::indexSafetensors(const std::string &file, const FileBuffer &buffer) {
  auto cached = safetensors.find(file);
  if (cached != safetensors.end())
    return &cached->second;
  std::string where = "'" + file + "'";
  std::string_view bytes = buffer.text();
  if (bytes.size() < 8)
    return Error{where + " is truncated: no safetensors header"};
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i]))
                  << (8 * i);
  if (headerSize > bytes.size() - 8)
    return Error{where + " is truncated: its header claims " + std::to_string(headerSize) +
                 " bytes"};
  SafetensorsIndex index;
  index.dataStart = 8 + headerSize;
  JsonReader reader(bytes.substr(8, headerSize));
  std::string_view name;
  bool ok = reader.beginObject();
  while (ok && reader.nextMember(name)) {
    std::string tensorName(name);
    if (tensorName == "__metadata__") {
      ok = reader.skipValue();
      continue;
    }
    SafetensorsEntry entry{DType::F32, {}, 0, 0};
    std::vector<int64_t> offsets;
    bool hasDType = false;
    std::string_view key;
    ok = reader.beginObject();
    while (ok && reader.nextMember(key)) {
      if (key == "dtype") {
        std::string_view dtypeText;
        ok = reader.readString(dtypeText);
        std::optional<DType> dtype = dtypeFromSafetensors(dtypeText);
        if (ok && !dtype)
          return Error{where + ": tensor '" + tensorName + "' has unsupported dtype '" +
                       std::string(dtypeText) + "'"};
        entry.dtype = dtype.value_or(DType::F32);
        hasDType = true;
      } else if (key == "shape") {
        ok = readUnsignedList(reader, entry.shape);
      } else if (key == "data_offsets") {
        ok = readUnsignedList(reader, offsets);
      } else {
        ok = reader.skipValue();
      }
    }
    ok = ok && !reader.failed() && hasDType && offsets.size() == 2 &&
         offsets[0] <= offsets[1];
    if (!ok)
      break;
    entry.begin = static_cast<uint64_t>(offsets[0]);
    entry.end = static_cast<uint64_t>(offsets[1]);
    index.tensors.emplace(tensorName, std::move(entry));
  }
  if (!ok || reader.failed() || !reader.expectEnd())
    return Error{where + " has a malformed safetensors header"};
  return &safetensors.emplace(file, std::move(index)).first->second;
}

Expected<void> ExternalDataLoader::loadSafetensors(const ConstantSource &source,
                                                   const TensorDecl &decl, ConstantData &out) {
  Expected<std::shared_ptr<const FileBuffer>> opened = open(source.file);
  if (!opened)
    return Error{opened.error()};
  std::shared_ptr<const FileBuffer> buffer = *opened;
  Expected<const SafetensorsIndex *> indexed = indexSafetensors(source.file, *buffer);
  if (!indexed)
    return Error{indexed.error()};
  const SafetensorsIndex *index = *indexed;
  std::string where = "'" + source.file + "'";
  auto it = index->tensors.find(source.tensor);
  if (it == index->tensors.end())
    return Error{where + " has no tensor '" + source.tensor + "'"};
  const SafetensorsEntry &entry = it->second;
  uint64_t dataSize = buffer->size() - index->dataStart;
  if (entry.end > dataSize)
    return Error{where + " is truncated: tensor '" + source.tensor + "' ends at " +
                 std::to_string(entry.end) + ", the data section has " + std::to_string(dataSize) +
                 " bytes"};
  if (entry.dtype != decl.dtype || entry.shape != decl.shape)
    return Error{"tensor '" + source.tensor + "' in " + where + " is " +
                 std::string(dtypeName(entry.dtype)) + formatExtents(entry.shape) +
                 ", the graph declares " + std::string(dtypeName(decl.dtype)) +
                 formatExtents(decl.shape)};
  if (entry.end - entry.begin != decl.byteSize())
    return Error{"tensor '" + source.tensor + "' in " + where + " has " +
                 std::to_string(entry.end - entry.begin) + " bytes, its shape needs " +
                 std::to_string(decl.byteSize())};
  out.storage = buffer;
  out.offset = index->dataStart + entry.begin;
  out.size = decl.byteSize();
  return {};
}
