//===- Capsule.h - Kernels that can run an op, and their registry -*- C++ -*-===//
//
// A capsule is one kernel able to run one op kind on one backend: generated
// by fuelc's code generators or hand-written (kernels/). It carries what the
// planner needs to decide without running it: accepted dtypes, a shape
// predicate, trust level, precision guarantee, capabilities, and cost
// parameters for the roofline model.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_PLANNER_CAPSULE_H
#define FUEL_PLANNER_CAPSULE_H

#include "fuel/IR/Device.h"
#include "fuel/Support/DType.h"
#include "fuel/IR/OpKind.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

/// How far a kernel has been checked; ordered from most to least trusted.
enum class TrustLevel : uint8_t { Verified, Checked, Fuzzed, TrustedExternal };

std::string_view trustLevelName(TrustLevel level);
std::optional<TrustLevel> parseTrustLevel(std::string_view name);

/// Which shapes a capsule accepts; checked at enumeration so a shape it cannot
/// run is never planned on it.
struct ShapePredicate {
  unsigned maxRank = 64;
  /// Largest element count of any operand or result (e.g. 2^31 - 1 for
  /// kernels with 32-bit indexing).
  int64_t maxElements = int64_t(1) << 59;
};

struct Capsule {
  std::string id;
  OpKind op;
  DeviceKind backend;
  /// Bit i set: dtype i accepted (for the op's data operands and results).
  uint32_t dtypes = 0;
  /// When not 0, the dtypes its data operands may have (a subset of
  /// `dtypes`): an 8-bit GEMM's operands are u8 or i8, its result i32.
  uint32_t operandDTypes = 0;
  std::string provider;
  TrustLevel trust = TrustLevel::Checked;
  /// Worst-case relative error against the exact result (0: exact).
  double maxRelativeError = 0;
  /// Same bits on every run (no order-dependent parallel reductions).
  bool bitStable = true;
  /// Reads non-contiguous views without a copy.
  bool stridedInputs = true;
  ShapePredicate predicate;
  /// Fraction of the roofline the kernel reaches, and its own fixed cost per
  /// call on top of the device's launch overhead.
  double efficiency = 0.5;
  double fixedOverhead = 0;
  /// Scratch memory the kernel needs on its device while it runs.
  uint64_t workspaceBytes = 0;
  /// Content hash of the kernel's source (identifies the exact revision).
  std::string revision;
  /// A library kernel's entry point, which fuelc's generated kernels call
  /// (empty for generated capsules), and the CPU features it needs: devices
  /// whose target level lacks one cannot run it.
  std::string symbol;
  std::vector<std::string> cpuFeatures;
  /// A matmul library's entry point for scaled dot-product attention
  /// (softmax(scale(Q K) + mask) V as one kernel, planned by
  /// AttentionFusion.h), or empty.
  std::string attentionSymbol;
  /// A conv2d library's entry point for a convolution whose result only a
  /// max pooling reads (both as one kernel, planned by PoolFusion.h), or
  /// empty.
  std::string pooledSymbol;

  bool acceptsDType(DType t) const { return dtypes & (1u << static_cast<unsigned>(t)); }
  bool acceptsOperandDType(DType t) const {
    return (operandDTypes ? operandDTypes : dtypes) & (1u << static_cast<unsigned>(t));
  }
};

/// The kernels a code generation target generates, as the target declares
/// them (lib/Codegen/<Target>/): the registry gets one capsule
/// `codegen.<target>.<op>` per op kind the target generates.
struct GeneratedKernels {
  std::string_view target;
  DeviceKind backend;
  /// The dtypes the target generates `op` for; 0 when it has no kernel.
  uint32_t (*dtypesFor)(OpKind op);
  /// Reductions split across threads or blocks (their bits then depend on
  /// the split).
  bool parallelReductions = false;
  ShapePredicate predicate;
  double efficiency = 0.5;
};

class CapsuleRegistry {
public:
  void add(Capsule capsule);
  /// Adds the capsules of a target's generated kernels.
  void addGenerated(const GeneratedKernels &kernels);
  /// Adds the capsules of a fuel.capsules manifest (docs/capsule-format.md);
  /// each capsule's revision is the SHA-256 of its kernel source files (and
  /// the headers they include), looked up relative to the manifest. Reports
  /// every problem.
  LogicalResult addManifest(std::string_view text, std::string_view fileName,
                            const std::string &baseDir, DiagnosticEngine &diag);
  /// Adds every `*.json` manifest under `dir` (recursively, in path order).
  LogicalResult addManifestDirectory(const std::string &dir,
                                     DiagnosticEngine &diag);
  /// Indices into all() of the capsules for `op`, in registration order.
  const std::vector<uint32_t> &forOp(OpKind op) const {
    return byOp[static_cast<unsigned>(op)];
  }
  const std::vector<Capsule> &all() const { return capsules; }

private:
  std::vector<Capsule> capsules;
  std::array<std::vector<uint32_t>, kNumOpKinds> byOp;
};

/// Whether fuelc runs `kind` as a kernel (views, constants and inputs are not
/// kernels; they are metadata or data).
bool isKernelOp(OpKind kind);
/// Whether `kind` is computed with exp, log, tanh, sin, cos or pow.
bool isTranscendentalOp(OpKind kind);

} // namespace fuel

#endif // FUEL_PLANNER_CAPSULE_H
