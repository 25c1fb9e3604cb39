//===- ApproximateMath.h - Polynomial math for every target -------*- C++ -*-===//
//
// f32 transcendental functions (exp, log, tanh, erf, sin, cos, ...) become
// the math dialect's polynomial approximations: plain arithmetic that the
// x86 loop vectorizer handles, and that computes the same values on every
// target (GPU built-ins differ in accuracy, and have no erf).
//
// Included only by the MLIR-based backends.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_APPROXIMATEMATH_H
#define FUEL_LIB_CODEGEN_APPROXIMATEMATH_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace fuel::codegen {

std::unique_ptr<mlir::Pass> createApproximateMathPass();

/// Rewrites math.powf as exp(b * log|a|) with the sign of a negative base
/// for an odd integral exponent, NaN for a non-integral one, and 1 for a
/// zero exponent: GPU built-ins (GLSL pow) are undefined for a < 0.
std::unique_ptr<mlir::Pass> createExpandPowfPass();

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_APPROXIMATEMATH_H
