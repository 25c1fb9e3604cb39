//===- TargetKernels.h - What each code generation target generates -*- C++ -*-===//
//
// Each code generation target (lib/Codegen/<Target>/) declares the kernels
// it generates (op kinds, dtypes, shape limits, cost) in its
// `<Target>Kernels.cpp`; the planner gets them as capsules. These
// declarations are MLIR-free and live in their own library
// (FuelTargetInfo, like LLVM's TargetInfo) so tools that only plan (the
// planner fuzzer, the scale benchmarks) need no code generator.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_CODEGEN_TARGETKERNELS_H
#define FUEL_CODEGEN_TARGETKERNELS_H

#include "fuel/Planner/Capsule.h"

#include <span>

namespace fuel {

/// What every code generation target generates, in the order of
/// lib/Codegen/Targets.def.
std::span<const GeneratedKernels *const> targetKernels();

/// The capsules of every target's generated kernels: the registry fuelc
/// plans with before adding library kernels' manifests.
CapsuleRegistry builtinCapsules();

/// Whether the GPU kernel emitter (SPIR-V and PTX) generates `kind`: every
/// kernel op but write_slice.
bool gpuEmitterGenerates(OpKind kind);

#define FUEL_CODEGEN_TARGET(Name) extern const GeneratedKernels Name##GeneratedKernels;
#include "fuel/Codegen/Targets.def"

} // namespace fuel

#endif // FUEL_CODEGEN_TARGETKERNELS_H
