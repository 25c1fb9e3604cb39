//===- Capsule.cpp - Kernels that can run an op, and their registry -------===//

#include "fuel/Planner/Capsule.h"

#include <algorithm>

using namespace fuel;

std::string_view fuel::trustLevelName(TrustLevel level) {
  switch (level) {
  case TrustLevel::Verified:
    return "verified";
  case TrustLevel::Checked:
    return "checked";
  case TrustLevel::Fuzzed:
    return "fuzzed";
  case TrustLevel::TrustedExternal:
    return "trusted-external";
  }
  return "checked";
}

std::optional<TrustLevel> fuel::parseTrustLevel(std::string_view name) {
  for (TrustLevel level : {TrustLevel::Verified, TrustLevel::Checked,
                           TrustLevel::Fuzzed, TrustLevel::TrustedExternal})
    if (trustLevelName(level) == name)
      return level;
  return std::nullopt;
}

bool fuel::isKernelOp(OpKind kind) {
  return kind != OpKind::Input && kind != OpKind::Constant && !isViewOp(kind);
}

void CapsuleRegistry::add(Capsule capsule) {
  byOp[static_cast<unsigned>(capsule.op)].push_back(
      static_cast<uint32_t>(capsules.size()));
  capsules.push_back(std::move(capsule));
}

/// Ops whose result depends on the order of a parallel reduction.
static bool reducesInParallel(OpKind kind) {
  switch (opFamily(kind)) {
  case OpFamily::Reduction:
    return true;
  case OpFamily::Linalg:
    return kind != OpKind::MaxPool2D;
  default:
    return false;
  }
}

bool fuel::isTranscendentalOp(OpKind kind) {
  switch (kind) {
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Tanh:
  case OpKind::Sigmoid:
  case OpKind::Gelu:
  case OpKind::Silu:
  case OpKind::Erf:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Pow:
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return true;
  default:
    return false;
  }
}

/// Ops computed with rounded transcendental approximations (or a square
/// root).
static bool isApproximate(OpKind kind) {
  return isTranscendentalOp(kind) || kind == OpKind::Sqrt || kind == OpKind::Rsqrt ||
         kind == OpKind::LayerNorm || kind == OpKind::RmsNorm;
}

void CapsuleRegistry::addGenerated(const GeneratedKernels &kernels) {
  for (unsigned k = 0; k < kNumOpKinds; ++k) {
    OpKind op = static_cast<OpKind>(k);
    uint32_t dtypes = isKernelOp(op) ? kernels.dtypesFor(op) : 0;
    if (!dtypes)
      continue;
    Capsule c;
    c.id = "codegen." + std::string(kernels.target) + "." + std::string(opName(op));
    c.op = op;
    c.backend = kernels.backend;
    c.dtypes = dtypes;
    c.provider = "fuelc-codegen";
    c.trust = TrustLevel::Checked;
    c.maxRelativeError = isApproximate(op) ? 1e-6 : 0;
    c.bitStable = !(kernels.parallelReductions && reducesInParallel(op));
    c.predicate = kernels.predicate;
    c.efficiency = kernels.efficiency;
    // Code generation stamps each generated kernel with the hash of its code;
    // the capsule stands for the generator.
    c.revision = "fuelc-codegen";
    add(std::move(c));
  }
}
