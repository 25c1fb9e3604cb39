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

bool fuel::isGpuCodegenOp(OpKind kind) {
  if (isElementwiseOp(kind))
    return true;
  switch (kind) {
  case OpKind::MatMul:
  case OpKind::Linear:
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::ArgMax:
  case OpKind::ArgMin:
  case OpKind::Conv2D:
  case OpKind::MaxPool2D:
  case OpKind::AvgPool2D:
  case OpKind::Contiguous:
  case OpKind::Concat:
  case OpKind::Split:
  case OpKind::Gather:
  case OpKind::Pad:
  case OpKind::Copy:
  case OpKind::Move:
  case OpKind::Alloc:
    return true;
  default: // write_slice reads symbol values, which GPU kernels do not take.
    return false;
  }
}

void CapsuleRegistry::add(Capsule capsule) {
  byOp[static_cast<unsigned>(capsule.op)].push_back(
      static_cast<uint32_t>(capsules.size()));
  capsules.push_back(std::move(capsule));
}

static uint32_t maskOf(std::initializer_list<DType> dtypes) {
  uint32_t mask = 0;
  for (DType t : dtypes)
    mask |= 1u << static_cast<unsigned>(t);
  return mask;
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

/// Ops computed with exp, log, sin or cos, which SPIR-V (GLSL.std.450) has
/// only for 16- and 32-bit floats.
static bool usesTranscendentals(OpKind kind) {
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
  return usesTranscendentals(kind) || kind == OpKind::Sqrt ||
         kind == OpKind::Rsqrt || kind == OpKind::LayerNorm ||
         kind == OpKind::RmsNorm;
}

CapsuleRegistry CapsuleRegistry::builtin() {
  using enum DType;
  struct Backend {
    DeviceKind kind;
    std::string_view name;
    uint32_t dtypes;
    bool parallelReductions; // Reductions split across threads/blocks.
    bool strided;
    ShapePredicate predicate;
    double efficiency;
  };
  // SPIR-V kernels use 32-bit indexing and have no bf16 (SPIR-V has no such
  // type); other dtypes need device features the runtime checks at load
  // (8/16-bit storage, shaderInt8/Float16/Int64/Float64). x86 covers every
  // dtype, PTX all but the 16-bit and unsigned 32/64-bit integers (not yet
  // run on a GPU), Vulkan the same less bf16.
  const Backend backends[] = {
      {DeviceKind::CPU, "x86",
       maskOf({F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool}), false, true,
       {}, 0.6},
      {DeviceKind::CUDA, "ptx", maskOf({F32, F16, BF16, F64, I8, I32, I64, U8, Bool}),
       true, true, {}, 0.6},
      {DeviceKind::Vulkan, "spirv", maskOf({F32, F16, F64, I8, I32, I64, U8, Bool}), false, true,
       {8, (int64_t(1) << 31) - 1}, 0.4},
  };
  CapsuleRegistry registry;
  for (const Backend &b : backends) {
    for (unsigned k = 0; k < kNumOpKinds; ++k) {
      OpKind op = static_cast<OpKind>(k);
      if (!isKernelOp(op) || (b.kind != DeviceKind::CPU && !isGpuCodegenOp(op)))
        continue;
      Capsule c;
      c.id = "codegen." + std::string(b.name) + "." + std::string(opName(op));
      c.op = op;
      c.backend = b.kind;
      c.dtypes = b.dtypes;
      if (b.kind == DeviceKind::Vulkan && usesTranscendentals(op))
        c.dtypes &= ~maskOf({F64});
      c.provider = "fuelc-codegen";
      c.trust = TrustLevel::Checked;
      c.maxRelativeError = isApproximate(op) ? 1e-6 : 0;
      c.bitStable = !(b.parallelReductions && reducesInParallel(op));
      c.stridedInputs = b.strided;
      c.predicate = b.predicate;
      c.efficiency = b.efficiency;
      // The revision of generated kernels is the compiler's; code generation
      // stamps the hash of the emitted module.
      c.revision = "fuelc-codegen-1";
      registry.add(std::move(c));
    }
  }
  return registry;
}
