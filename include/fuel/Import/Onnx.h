//===- Onnx.h - Importing ONNX models ---------------------------*- C++ -*-===//
//
// Reads an ONNX ModelProto (opsets 11-21 of the default domain) into a
// verified fuel Graph: initializers and Constant nodes become constants,
// graph inputs become inputs (dynamic dims become symbolic dims, named by
// their dim_param), each ONNX node becomes one or more IR nodes, shape
// inputs that are constants (Reshape's shape, Slice's starts, ...) are
// folded into attributes, and exporters' integer shape arithmetic over
// known tensors (Shape, Gather, Concat, Range, ConstantOfShape, ...) is
// computed at import. Every node that cannot be imported is reported,
// naming the node, its op type, the opset and what is missing; nothing is
// silently approximated.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IMPORT_ONNX_H
#define FUEL_IMPORT_ONNX_H

#include "fuel/IR/Graph.h"
#include "fuel/Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

/// A graph input replaced by a constant at import (`--freeze NAME=FILE`):
/// ahead-of-time compilation needs shapes, axes and pads given as runtime
/// inputs (a Reshape's shape, a Slice's starts) to be known.
struct FrozenInput {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::optional<Graph> importOnnx(std::string_view bytes, std::string_view fileName,
                                DiagnosticEngine &diag,
                                const std::map<std::string, FrozenInput> &frozen = {});

/// Points every constant of `graph` at raw data in a file named
/// `weightsFile` (relative to the graph) and returns that file's bytes
/// (each constant 64-byte aligned): `fuelc import` writes both.
std::string externalizeConstants(Graph &graph, const std::string &weightsFile);

} // namespace fuel

#endif // FUEL_IMPORT_ONNX_H
