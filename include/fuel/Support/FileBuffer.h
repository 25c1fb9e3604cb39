//===- FileBuffer.h - Read-only file contents -------------------*- C++ -*-===//
//
// Whole-file contents, memory-mapped when possible so that large weight files
// cost no copy. Errors are returned as messages (strerror text) for the
// caller to attach a location to.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_FILEBUFFER_H
#define FUEL_SUPPORT_FILEBUFFER_H

#include "fuel/Support/Expected.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace fuel {

class FileBuffer {
public:
  /// Maps or reads `path`, or says why it cannot. With `regularOnly`,
  /// devices and pipes are refused (a weight file naming /dev/zero must not
  /// read forever).
  static Expected<std::shared_ptr<const FileBuffer>> open(const std::string &path,
                                                          bool regularOnly = false);
  /// A buffer owning a copy of `bytes` (for inline data and tests).
  static std::shared_ptr<const FileBuffer> fromBytes(std::string bytes);
  /// Bytes [offset, offset + size) of `parent`, sharing its memory (the
  /// parent stays alive as long as the slice).
  static std::shared_ptr<const FileBuffer>
  slice(std::shared_ptr<const FileBuffer> parent, size_t offset, size_t size);

  ~FileBuffer();
  FileBuffer(const FileBuffer &) = delete;
  FileBuffer &operator=(const FileBuffer &) = delete;

  const char *data() const { return begin; }
  size_t size() const { return length; }
  std::string_view text() const { return {begin, length}; }

private:
  FileBuffer() = default;
  const char *begin = nullptr;
  size_t length = 0;
  bool mapped = false;
  std::string owned;
  std::shared_ptr<const FileBuffer> parent;
};

class DiagnosticEngine;

/// Opens an input file for a reader, reporting "cannot read <what> file: why"
/// at the file on failure.
std::shared_ptr<const FileBuffer> openInputFile(const std::string &path,
                                                std::string_view what,
                                                DiagnosticEngine &diag);

/// Writes `bytes` to `path` through a temporary file beside it, renamed over
/// it once complete: a full disk or a kill never leaves a truncated file
/// (and keeps the old one). The error names the file.
Expected<void> writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace fuel

#endif // FUEL_SUPPORT_FILEBUFFER_H
