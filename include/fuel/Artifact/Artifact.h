//===- Artifact.h - The .fplan container: sections with hashes --*- C++ -*-===//
//
// An artifact is one file of named sections (meta, plan, weights, and the
// kernel sections code generation adds), each with a SHA-256 content hash,
// behind a header and a section table that has a hash of its own. The
// container knows nothing of plans: the planner writes sections, the runtime
// reads them. Layout in docs/artifact-format.md.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_ARTIFACT_ARTIFACT_H
#define FUEL_ARTIFACT_ARTIFACT_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/Sha256.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

inline constexpr std::string_view kArtifactMagic = "FUELPLAN";
inline constexpr uint32_t kArtifactVersion = 2;
/// Header and section-table entry sizes; section data is aligned to this.
inline constexpr size_t kArtifactBlock = 64;
/// Longest section name (the table stores 16 bytes, NUL-terminated).
inline constexpr size_t kMaxSectionName = 15;

struct ArtifactSection {
  std::string name;
  std::string bytes;
};

/// Serializes sections (in the given order) into artifact bytes.
std::string writeArtifact(const std::vector<ArtifactSection> &sections);

/// A validated artifact: every section is in bounds and matches its hash.
class ArtifactView {
public:
  struct Section {
    std::string name;
    uint64_t offset = 0;
    uint64_t size = 0;
    Sha256Digest hash{};
  };

  const std::vector<Section> &sections() const { return table; }
  /// The section's bytes, or nullopt if the artifact has no such section.
  std::optional<std::string_view> section(std::string_view name) const;
  uint64_t size() const { return buffer->size(); }

private:
  friend std::optional<ArtifactView>
  readArtifact(std::shared_ptr<const FileBuffer>, std::string_view,
               DiagnosticEngine &);
  std::shared_ptr<const FileBuffer> buffer;
  std::vector<Section> table;
};

/// Validates `buffer` as an artifact; reports every problem found (with the
/// byte offset) and returns nullopt if there is any.
std::optional<ArtifactView> readArtifact(std::shared_ptr<const FileBuffer> buffer,
                                         std::string_view fileName,
                                         DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_ARTIFACT_ARTIFACT_H
