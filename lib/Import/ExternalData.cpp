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

std::shared_ptr<const FileBuffer>
ExternalDataLoader::open(const std::string &file, std::string &error) {
  auto it = files.find(file);
  if (it != files.end())
    return it->second;
  std::string path = file.starts_with('/') ? file : baseDir + "/" + file;
  std::string why;
  std::shared_ptr<const FileBuffer> buffer = FileBuffer::open(path, why, /*regularOnly=*/true);
  if (!buffer) {
    error = "cannot open weight file '" + file + "': " + why;
    return nullptr;
  }
  files.emplace(file, buffer);
  return buffer;
}

bool ExternalDataLoader::load(const ConstantSource &source,
                              const TensorDecl &decl, ConstantData &out,
                              std::string &error) {
  out.source = source;
  switch (source.kind) {
  case ConstantSourceKind::Raw:
    return loadRaw(source, decl, out, error);
  case ConstantSourceKind::Npy:
    return loadNpy(source, decl, out, error);
  case ConstantSourceKind::Safetensors:
    return loadSafetensors(source, decl, out, error);
  case ConstantSourceKind::Inline:
    break;
  }
  error = "internal error: inline data has no file";
  return false;
}

bool ExternalDataLoader::loadRaw(const ConstantSource &source,
                                 const TensorDecl &decl, ConstantData &out,
                                 std::string &error) {
  std::shared_ptr<const FileBuffer> buffer = open(source.file, error);
  if (!buffer)
    return false;
  uint64_t need = decl.byteSize();
  if (source.offset > buffer->size() || need > buffer->size() - source.offset) {
    error = "weight file '" + source.file + "' is truncated: needs " +
            std::to_string(need) + " bytes at offset " +
            std::to_string(source.offset) + ", the file has " +
            std::to_string(buffer->size());
    return false;
  }
  out.storage = buffer;
  out.offset = source.offset;
  out.size = need;
  return true;
}

bool ExternalDataLoader::loadNpy(const ConstantSource &source,
                                 const TensorDecl &decl, ConstantData &out,
                                 std::string &error) {
  std::shared_ptr<const FileBuffer> buffer = open(source.file, error);
  if (!buffer)
    return false;
  std::string where = "'" + source.file + "'";
  NpyArray array;
  if (!parseNpy(buffer->text(), array, error)) {
    error = where + " " + error;
    return false;
  }
  if (array.dtype != decl.dtype || array.shape != decl.shape) {
    error = where + " holds " + std::string(dtypeName(array.dtype)) +
            formatExtents(array.shape) + ", the graph declares " +
            std::string(dtypeName(decl.dtype)) + formatExtents(decl.shape);
    return false;
  }
  out.storage = buffer;
  out.offset = array.dataOffset;
  out.size = array.dataSize;
  return true;
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

const ExternalDataLoader::SafetensorsIndex *
ExternalDataLoader::indexSafetensors(const std::string &file,
                                     const FileBuffer &buffer,
                                     std::string &error) {
  auto cached = safetensors.find(file);
  if (cached != safetensors.end())
    return &cached->second;
  std::string where = "'" + file + "'";
  std::string_view bytes = buffer.text();
  if (bytes.size() < 8) {
    error = where + " is truncated: no safetensors header";
    return nullptr;
  }
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i]))
                  << (8 * i);
  if (headerSize > bytes.size() - 8) {
    error = where + " is truncated: its header claims " +
            std::to_string(headerSize) + " bytes";
    return nullptr;
  }
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
        if (ok && !dtype) {
          error = where + ": tensor '" + tensorName +
                  "' has unsupported dtype '" + std::string(dtypeText) + "'";
          return nullptr;
        }
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
  if (!ok || reader.failed() || !reader.expectEnd()) {
    error = where + " has a malformed safetensors header";
    return nullptr;
  }
  return &safetensors.emplace(file, std::move(index)).first->second;
}

bool ExternalDataLoader::loadSafetensors(const ConstantSource &source,
                                         const TensorDecl &decl,
                                         ConstantData &out,
                                         std::string &error) {
  std::shared_ptr<const FileBuffer> buffer = open(source.file, error);
  if (!buffer)
    return false;
  const SafetensorsIndex *index =
      indexSafetensors(source.file, *buffer, error);
  if (!index)
    return false;
  std::string where = "'" + source.file + "'";
  auto it = index->tensors.find(source.tensor);
  if (it == index->tensors.end()) {
    error = where + " has no tensor '" + source.tensor + "'";
    return false;
  }
  const SafetensorsEntry &entry = it->second;
  uint64_t dataSize = buffer->size() - index->dataStart;
  if (entry.end > dataSize) {
    error = where + " is truncated: tensor '" + source.tensor + "' ends at " +
            std::to_string(entry.end) + ", the data section has " +
            std::to_string(dataSize) + " bytes";
    return false;
  }
  if (entry.dtype != decl.dtype || entry.shape != decl.shape) {
    error = "tensor '" + source.tensor + "' in " + where + " is " +
            std::string(dtypeName(entry.dtype)) + formatExtents(entry.shape) +
            ", the graph declares " + std::string(dtypeName(decl.dtype)) +
            formatExtents(decl.shape);
    return false;
  }
  if (entry.end - entry.begin != decl.byteSize()) {
    error = "tensor '" + source.tensor + "' in " + where + " has " +
            std::to_string(entry.end - entry.begin) + " bytes, its shape needs " +
            std::to_string(decl.byteSize());
    return false;
  }
  out.storage = buffer;
  out.offset = index->dataStart + entry.begin;
  out.size = decl.byteSize();
  return true;
}
