//===- ImportModel.cpp - The model a compilation starts from --------------===//

#include "fuel/Compiler/Pipeline.h"

#include "fuel/Import/Onnx.h"
#include "fuel/Support/Npy.h"

#include <map>

using namespace fuel;

std::optional<GraphFile> fuel::importModel(const std::string &path,
                                           const std::vector<std::string> &freeze,
                                           DiagnosticEngine &diag) {
  if (!path.ends_with(".onnx")) {
    if (!freeze.empty()) {
      diag.error({}, "--freeze applies to ONNX models only");
      return std::nullopt;
    }
    return readGraphFile(path, diag);
  }
  std::map<std::string, FrozenInput> frozen;
  for (const std::string &binding : freeze) {
    NamedArray array;
    if (Expected<void> read = readNamedNpy(binding, array); !read) {
      SourceLocation loc;
      loc.file = array.path;
      diag.error(std::move(loc), "--freeze: " + read.error());
      return std::nullopt;
    }
    frozen[array.name] = {array.array.dtype, array.array.shape, std::string(array.data())};
  }
  std::shared_ptr<const FileBuffer> bytes = openInputFile(path, "model", diag);
  if (!bytes)
    return std::nullopt;
  std::optional<Graph> graph = importOnnx(bytes->text(), path, diag, frozen);
  if (!graph)
    return std::nullopt;
  return GraphFile{std::move(*graph), bytes, std::make_unique<SourceLocator>()};
}
