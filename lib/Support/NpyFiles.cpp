//===- NpyFiles.cpp - .npy files given to the tools -----------------------===//

#include "fuel/Support/Npy.h"

#include <fstream>

using namespace fuel;

bool fuel::readNamedNpy(std::string_view binding, NamedArray &out,
                        std::string &error) {
  size_t eq = binding.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == binding.size()) {
    error = "--input expects NAME=FILE.npy, got '" + std::string(binding) + "'";
    return false;
  }
  out.name = binding.substr(0, eq);
  out.path = binding.substr(eq + 1);
  std::string why;
  out.file = FileBuffer::open(out.path, why, /*regularOnly=*/true);
  if (!out.file) {
    error = "cannot read tensor file: " + why;
    return false;
  }
  if (!parseNpy(out.file->text(), out.array, why)) {
    error = "'" + out.path + "' " + why;
    return false;
  }
  return true;
}

bool fuel::writeNpyFile(const std::string &path, DType dtype,
                        const std::vector<int64_t> &shape, std::string_view data,
                        std::string &error) {
  return writeFileAtomically(path, writeNpy(dtype, shape, data), error);
}
