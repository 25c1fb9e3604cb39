//===- OpCost.h - Arithmetic per element of an op ---------------*- C++ -*-===//
//
// How much arithmetic an op does per output element, apart from reading
// and writing memory: what the cost model prices and what fusion weighs
// before computing a value again at every position of a broadcast.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_OPCOST_H
#define FUEL_IR_OPCOST_H

#include "fuel/IR/OpKind.h"

namespace fuel {

/// Arithmetic operations per output element of elementwise and row ops
/// (softmax, normalizations): 1 for most, about 20 for transcendentals.
double opsPerElement(OpKind kind);

/// Whether `kind` costs far more to compute than to read (exp, log, tanh,
/// sigmoid, ...): a broadcast operand computed by it is worth a buffer.
inline bool isTranscendental(OpKind kind) { return opsPerElement(kind) >= 20; }

} // namespace fuel

#endif // FUEL_IR_OPCOST_H
