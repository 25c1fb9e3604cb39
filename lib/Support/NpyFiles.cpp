//===- NpyFiles.cpp - .npy files given to the tools -----------------------===//

#include "fuel/Support/Npy.h"

using namespace fuel;

Expected<void> fuel::readNamedNpy(std::string_view binding, NamedArray &out) {
  size_t eq = binding.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == binding.size())
    return Error{"--input expects NAME=FILE.npy, got '" + std::string(binding) + "'"};
  out.name = binding.substr(0, eq);
  out.path = binding.substr(eq + 1);
  Expected<std::shared_ptr<const FileBuffer>> file =
      FileBuffer::open(out.path, /*regularOnly=*/true);
  if (!file)
    return Error{"cannot read tensor file: " + file.error()};
  out.file = *file;
  Expected<NpyArray> array = parseNpy(out.file->text());
  if (!array)
    return Error{"'" + out.path + "' " + array.error()};
  out.array = *array;
  return {};
}

Expected<void> fuel::writeNpyFile(const std::string &path, DType dtype,
                                  const std::vector<int64_t> &shape, std::string_view data) {
  return writeFileAtomically(path, writeNpy(dtype, shape, data));
}
