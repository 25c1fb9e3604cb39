//===- Accumulator.h - Result accumulation for contractions ------*- C++ -*-===//
//
// Contractions, convolution and pooling accumulate into their result in the
// compute type: directly when the result is stored in that type, otherwise in
// a wide scratch buffer (f32 for f16/bf16) narrowed once at the end. The
// accumulator starts at a constant or at a broadcast bias.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_ACCUMULATOR_H
#define FUEL_LIB_CODEGEN_ACCUMULATOR_H

#include "KernelEmitter.h"

#include <optional>

namespace fuel::codegen {

struct Accumulator {
  std::string buffer, type, elemType;
  unsigned rank = 0;
  bool wide = false;
  /// The accumulator as a generic output indexed by `map`.
  GenericOperand operand(const std::string &map) const {
    return {buffer, type, map, elemType};
  }
};

/// Starts accumulating result `y`: filled with `init`, or with `bias`
/// broadcast along the result's axis `biasAxis` when given.
Accumulator beginAccumulation(KernelEmitter &e, ValueRef y, double init,
                              std::optional<ValueRef> bias = std::nullopt,
                              unsigned biasAxis = 0);
/// Writes a wide accumulator back into `y`; `divisor` (an accumulator-shaped
/// scratch, optional) divides each element first.
void finishAccumulation(KernelEmitter &e, const Accumulator &acc, ValueRef y,
                        const std::string &divisor = "",
                        const std::string &divisorType = "");

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_ACCUMULATOR_H
