//===- Constant.h - Constant tensor payloads --------------------*- C++ -*-===//
//
// The bytes of a constant (little-endian, dense, row-major) plus where they
// came from, so the printer can write the same reference back: inline values
// stay inline, external ones keep their file and tensor name.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_CONSTANT_H
#define FUEL_IR_CONSTANT_H

#include "fuel/Support/FileBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fuel {

enum class ConstantSourceKind : uint8_t { Inline, Raw, Npy, Safetensors };

struct ConstantSource {
  ConstantSourceKind kind = ConstantSourceKind::Inline;
  /// The file as written in the graph (relative to the graph file).
  std::string file;
  /// Raw files: byte offset of the tensor.
  uint64_t offset = 0;
  /// Safetensors: the tensor's name in the file.
  std::string tensor;
};

struct ConstantData {
  std::shared_ptr<const FileBuffer> storage;
  size_t offset = 0;
  size_t size = 0;
  ConstantSource source;

  std::string_view bytes() const {
    return storage ? storage->text().substr(offset, size) : std::string_view();
  }
};

} // namespace fuel

#endif // FUEL_IR_CONSTANT_H
