//===- ExternalData.h - Constants stored in weight files --------*- C++ -*-===//
//
// Loads constant payloads from raw little-endian .bin files, .npy arrays and
// .safetensors archives, checking the declared dtype and shape against the
// file's own header and the file's length against what is needed. Each file
// is mapped once per graph, and a safetensors header is parsed once.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_IMPORT_EXTERNALDATA_H
#define FUEL_LIB_IMPORT_EXTERNALDATA_H

#include "fuel/IR/Constant.h"
#include "fuel/Support/DType.h"
#include "fuel/Support/Expected.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuel {

/// What the graph declares for a constant: dtype and static extents.
struct TensorDecl {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t byteSize() const;
};

/// Guesses the source kind from a file name's extension.
std::optional<ConstantSourceKind> constantKindForFile(const std::string &file);

class ExternalDataLoader {
public:
  ExternalDataLoader(
      std::string baseDir,
      std::map<std::string, std::shared_ptr<const FileBuffer>> preloaded)
      : baseDir(std::move(baseDir)), files(std::move(preloaded)) {}

  /// Fills `out` (storage, offset, size) for `source`, or says why it
  /// cannot (naming the file).
  Expected<void> load(const ConstantSource &source, const TensorDecl &decl, ConstantData &out);

private:
  struct SafetensorsEntry {
    DType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  struct SafetensorsIndex {
    std::map<std::string, SafetensorsEntry, std::less<>> tensors;
    uint64_t dataStart = 0;
  };

  Expected<std::shared_ptr<const FileBuffer>> open(const std::string &file);
  Expected<void> loadRaw(const ConstantSource &source, const TensorDecl &decl, ConstantData &out);
  Expected<void> loadNpy(const ConstantSource &source, const TensorDecl &decl, ConstantData &out);
  Expected<void> loadSafetensors(const ConstantSource &source, const TensorDecl &decl,
                                 ConstantData &out);
  Expected<const SafetensorsIndex *> indexSafetensors(const std::string &file,
                                                      const FileBuffer &buffer);

  std::string baseDir;
  std::map<std::string, std::shared_ptr<const FileBuffer>> files;
  std::map<std::string, SafetensorsIndex> safetensors;
};

} // namespace fuel

#endif // FUEL_LIB_IMPORT_EXTERNALDATA_H
