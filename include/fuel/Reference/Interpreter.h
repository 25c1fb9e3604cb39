//===- Interpreter.h - Naive reference evaluation of graphs -----*- C++ -*-===//
//
// Evaluates a verified graph on the host with plain loops, computing in double
// precision and rounding every value to its dtype (f32, f16 and bf16 round to
// nearest even; integers wrap to their width; integers are exact up to 2^53).
// It is slow by design and exists to check compiled kernels against; it is
// itself checked against numpy (test/lit/reference).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_REFERENCE_INTERPRETER_H
#define FUEL_REFERENCE_INTERPRETER_H

#include "fuel/IR/Graph.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"

#include <map>
#include <string>
#include <vector>

namespace fuel {

/// A dense row-major host tensor; values held as doubles.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values;

  int64_t numElements() const;
  /// Little-endian bytes of the values in `dtype`.
  std::string toBytes() const;
  static HostTensor fromBytes(DType dtype, std::vector<int64_t> shape,
                              std::string_view bytes);
};

/// Rounds `value` to what `dtype` can hold (see the file comment).
double roundToDType(double value, DType dtype);

/// Runs `graph` on `inputs` (by input name); symbolic dims are bound from the
/// inputs' shapes. Reports mismatched, missing or unknown inputs.
LogicalResult interpret(const Graph &graph,
                        const std::map<std::string, HostTensor> &inputs,
                        std::vector<HostTensor> &outputs,
                        DiagnosticEngine &diag);

} // namespace fuel

#endif // FUEL_REFERENCE_INTERPRETER_H
