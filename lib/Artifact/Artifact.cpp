//===- Artifact.cpp - The .fplan container: sections with hashes ----------===//

#include "fuel/Artifact/Artifact.h"

#include <algorithm>
#include <cstring>

using namespace fuel;

namespace {
// Header: magic[8] version:u32 sectionCount:u32 fileSize:u64
//         tableHash[32] reserved[8]
// Entry:  name[16] offset:u64 size:u64 hash[32]
constexpr size_t kVersionAt = 8, kCountAt = 12, kFileSizeAt = 16,
                 kTableHashAt = 24, kReservedAt = 56;
constexpr size_t kNameBytes = 16, kEntryOffsetAt = 16, kEntrySizeAt = 24,
                 kEntryHashAt = 32;
constexpr uint32_t kMaxSections = 1024;

void putU32(std::string &out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[at + i] = static_cast<char>(v >> (8 * i));
}
void putU64(std::string &out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out[at + i] = static_cast<char>(v >> (8 * i));
}
uint32_t getU32(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}
uint64_t getU64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(uint8_t(in[at + i])) << (8 * i);
  return v;
}
uint64_t alignUp(uint64_t v) {
  return (v + kArtifactBlock - 1) / kArtifactBlock * kArtifactBlock;
}
} // namespace

std::string fuel::writeArtifact(const std::vector<ArtifactSection> &sections) {
  size_t tableBytes = sections.size() * kArtifactBlock;
  std::string out(kArtifactBlock + tableBytes, '\0');
  std::memcpy(out.data(), kArtifactMagic.data(), kArtifactMagic.size());
  putU32(out, kVersionAt, kArtifactVersion);
  putU32(out, kCountAt, static_cast<uint32_t>(sections.size()));
  for (size_t i = 0; i < sections.size(); ++i) {
    const ArtifactSection &s = sections[i];
    size_t entry = kArtifactBlock * (i + 1);
    std::memcpy(out.data() + entry, s.name.data(),
                std::min(s.name.size(), kMaxSectionName));
    out.resize(alignUp(out.size()), '\0');
    putU64(out, entry + kEntryOffsetAt, out.size());
    putU64(out, entry + kEntrySizeAt, s.bytes.size());
    Sha256Digest hash = Sha256::of(s.bytes);
    std::memcpy(out.data() + entry + kEntryHashAt, hash.data(), hash.size());
    out += s.bytes;
  }
  putU64(out, kFileSizeAt, out.size());
  Sha256Digest tableHash =
      Sha256::of(std::string_view(out).substr(kArtifactBlock, tableBytes));
  std::memcpy(out.data() + kTableHashAt, tableHash.data(), tableHash.size());
  return out;
}

std::optional<std::string_view>
ArtifactView::section(std::string_view name) const {
  for (const Section &s : table)
    if (s.name == name)
      return buffer->text().substr(s.offset, s.size);
  return std::nullopt;
}

std::optional<ArtifactView>
fuel::readArtifact(std::shared_ptr<const FileBuffer> buffer,
                   std::string_view fileName, DiagnosticEngine &diag) {
  std::string_view bytes = buffer->text();
  bool ok = true;
  auto error = [&](std::string message) {
    SourceLocation loc;
    loc.file = fileName;
    diag.error(std::move(loc), std::move(message));
    ok = false;
  };
  if (bytes.size() < kArtifactBlock) {
    error("truncated artifact: " + std::to_string(bytes.size()) +
          " bytes, the header alone needs " + std::to_string(kArtifactBlock));
    return std::nullopt;
  }
  if (bytes.substr(0, kArtifactMagic.size()) != kArtifactMagic) {
    error("not a fuelc artifact (bad magic; expected \"FUELPLAN\")");
    return std::nullopt;
  }
  uint32_t version = getU32(bytes, kVersionAt);
  if (version != kArtifactVersion) {
    error("artifact format version " + std::to_string(version) +
          " is not supported (this build reads version " +
          std::to_string(kArtifactVersion) + ")");
    return std::nullopt;
  }
  if (bytes.substr(kReservedAt, kArtifactBlock - kReservedAt)
          .find_first_not_of('\0') != std::string_view::npos) {
    error("corrupted artifact: reserved header bytes are not zero");
    return std::nullopt;
  }
  uint64_t declaredSize = getU64(bytes, kFileSizeAt);
  if (declaredSize != bytes.size()) {
    error(std::string(declaredSize > bytes.size() ? "truncated" : "extended") +
          " artifact: the header says " + std::to_string(declaredSize) +
          " bytes, the file has " + std::to_string(bytes.size()));
    return std::nullopt;
  }
  uint32_t count = getU32(bytes, kCountAt);
  if (count > kMaxSections ||
      kArtifactBlock * (uint64_t(count) + 1) > bytes.size()) {
    error("corrupted artifact: a table of " + std::to_string(count) +
          " sections does not fit in " + std::to_string(bytes.size()) +
          " bytes");
    return std::nullopt;
  }
  std::string_view table = bytes.substr(kArtifactBlock, kArtifactBlock * count);
  Sha256Digest tableHash = Sha256::of(table);
  if (std::memcmp(tableHash.data(), bytes.data() + kTableHashAt,
                  tableHash.size()) != 0) {
    error("corrupted artifact: the section table does not match its hash");
    return std::nullopt;
  }
  ArtifactView view;
  uint64_t dataStart = kArtifactBlock * (uint64_t(count) + 1);
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view entry = table.substr(kArtifactBlock * i, kArtifactBlock);
    ArtifactView::Section s;
    size_t nameLength = entry.substr(0, kNameBytes).find('\0');
    if (nameLength == std::string_view::npos || nameLength == 0) {
      error("corrupted artifact: section " + std::to_string(i) +
            " has no valid name");
      continue;
    }
    s.name = entry.substr(0, nameLength);
    s.offset = getU64(entry, kEntryOffsetAt);
    s.size = getU64(entry, kEntrySizeAt);
    std::memcpy(s.hash.data(), entry.data() + kEntryHashAt, s.hash.size());
    std::string where = "section '" + s.name + "'";
    if (s.offset % kArtifactBlock != 0 || s.offset < dataStart ||
        s.offset > bytes.size() || s.size > bytes.size() - s.offset) {
      error("corrupted artifact: " + where + " (offset " +
            std::to_string(s.offset) + ", " + std::to_string(s.size) +
            " bytes) lies outside the " + std::to_string(bytes.size()) +
            "-byte file");
      continue;
    }
    for (const ArtifactView::Section &other : view.table)
      if (other.name == s.name)
        error("corrupted artifact: " + where + " appears twice");
    if (Sha256::of(bytes.substr(s.offset, s.size)) != s.hash) {
      error("corrupted artifact: " + where +
            " does not match its hash (the file was damaged or modified)");
      continue;
    }
    view.table.push_back(std::move(s));
  }
  if (!ok)
    return std::nullopt;
  // Sections tile the file: in order, separated only by zero padding to the
  // next block, so that no byte escapes the hashes.
  std::vector<const ArtifactView::Section *> byOffset;
  for (const ArtifactView::Section &s : view.table)
    byOffset.push_back(&s);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const auto *a, const auto *b) { return a->offset < b->offset; });
  uint64_t position = dataStart;
  for (const ArtifactView::Section *s : byOffset) {
    if (s->offset < position || s->offset - position >= kArtifactBlock ||
        bytes.substr(position, s->offset - position)
                .find_first_not_of('\0') != std::string_view::npos) {
      error("corrupted artifact: unexpected bytes before section '" + s->name +
            "'");
      return std::nullopt;
    }
    position = s->offset + s->size;
  }
  if (position != bytes.size()) {
    error("corrupted artifact: " + std::to_string(bytes.size() - position) +
          " unexpected bytes after the last section");
    return std::nullopt;
  }
  view.buffer = std::move(buffer);
  return view;
}
