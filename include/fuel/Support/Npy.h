//===- Npy.h - NumPy .npy arrays --------------------------------*- C++ -*-===//
//
// Reading (format versions 1-3) and writing (version 1) of .npy files for
// fuelc's dtypes, little-endian and C order. Used for weights and for the
// tools' tensor inputs and outputs.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_NPY_H
#define FUEL_SUPPORT_NPY_H

#include "fuel/Support/DType.h"
#include "fuel/Support/FileBuffer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

/// Where an array's elements lie in a .npy file's bytes.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t dataOffset = 0;
  size_t dataSize = 0;
};

/// Validates `bytes` as a .npy file (magic, version, header, dtype, C order,
/// exact data size). The error completes the sentence "'file.npy' ..."
/// (e.g. "is truncated: ...").
Expected<NpyArray> parseNpy(std::string_view bytes);

/// A version 1 .npy file holding `data` (dense, little-endian).
std::string writeNpy(DType dtype, const std::vector<int64_t> &shape,
                     std::string_view data);

/// A tool's `NAME=FILE.npy` argument, read and validated.
struct NamedArray {
  std::string name, path;
  NpyArray array;
  std::shared_ptr<const FileBuffer> file;
  std::string_view data() const {
    return file->text().substr(array.dataOffset, array.dataSize);
  }
};

/// Reads `binding` (`NAME=FILE.npy`) into `out`. On failure with `out.path`
/// empty the argument itself is malformed (a usage error), otherwise the
/// file is unreadable or not a valid .npy.
Expected<void> readNamedNpy(std::string_view binding, NamedArray &out);

/// Writes a .npy file; the error names it.
Expected<void> writeNpyFile(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
                            std::string_view data);

/// "[2, 3]", for messages.
std::string formatExtents(const std::vector<int64_t> &shape);

} // namespace fuel

#endif // FUEL_SUPPORT_NPY_H
