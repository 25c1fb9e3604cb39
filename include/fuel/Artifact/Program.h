//===- Program.h - The lowered program of one artifact route ----*- C++ -*-===//
//
// What the runtime executes (artifact format version 2): the compiler lowers
// a placed, fused, memory-planned graph into explicit, indexed tables, so
// loading needs no graph and re-does no compiler work:
//   - symbols: free ones (bound from input shapes or set by the caller) and
//     products of them (`4*B`), each with the largest value buffers hold;
//   - devices with their arenas and kernel sections, buffers in arenas,
//     constants in the `weights` section;
//   - tensors: storage (buffer or constant), dtype, extents and layout:
//     offset and strides when the compiler could fold them, else the views
//     from the storage's contiguous layout, applied when symbols are bound;
//   - kernels with their arguments, copies between devices, and steps
//     (launch, copy) in execution order with explicit dependencies.
// readProgram checks every index, offset, size and stride against the
// arenas, the weights and the kernel table, and that every step reads only
// what an earlier step it depends on wrote, so a hash-valid but edited
// program is refused with the member at fault, never run out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_ARTIFACT_PROGRAM_H
#define FUEL_ARTIFACT_PROGRAM_H

#include "fuel/Support/DType.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/Layout.h"
#include "fuel/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fuel::artifact {

inline constexpr int kProgramVersion = 2;

/// An extent: a constant, or the value of program symbol `symbol`.
struct Extent {
  int64_t constant = 0;
  int32_t symbol = -1;
  bool isStatic() const { return symbol < 0; }
  int64_t value(std::span<const int64_t> symbolValues) const {
    return isStatic() ? constant : symbolValues[symbol];
  }
  bool operator==(const Extent &o) const = default;
};

struct Symbol {
  std::string name;
  /// The largest value the plan's buffers hold (the planned extent).
  int64_t bound = 1;
  /// A derived symbol is `factor` times the product of free symbols `of`;
  /// a free one has no `of`.
  int64_t factor = 1;
  std::vector<uint32_t> of;
  bool isFree() const { return of.empty(); }
};

/// A device of the machine the route uses, as the `meta` section describes
/// it, with what the program needs of it.
struct Device {
  std::string id;   // "cpu:0"
  std::string kind; // The runtime backend: "cpu", "vulkan", "cuda".
  std::string name; // As the machine description names it.
  std::string target;
  std::vector<std::string> cpuFeatures;
  uint64_t arenaBytes = 0;
  /// The section holding the device's kernel binary; empty without kernels.
  std::string kernelSection;
};

struct Buffer {
  uint32_t device = 0;
  uint64_t offset = 0, size = 0;
  /// The buffer whose range holds this one (an operand of a concat the
  /// compiler ran in place, written into its slice of the result), or -1.
  /// Reading the whole needs every slice written.
  int64_t sliceOf = -1;
};

/// A constant's bytes in the `weights` section.
struct Constant {
  uint64_t offset = 0, size = 0;
};

enum class ViewKind : uint8_t { Transpose, Slice, Broadcast, Reshape };

/// One metadata-only view (Support/Layout.h), applied to the layout so far.
struct View {
  ViewKind kind = ViewKind::Reshape;
  /// transpose: `perm`; slice: `axes`, `starts`, `ends`, `steps`.
  std::vector<int64_t> perm, axes, starts, ends, steps;
  /// broadcast, reshape: the result's extents.
  std::vector<Extent> sizes;
};

enum class StorageKind : uint8_t { Buffer, Constant };

/// A tensor in memory.
struct Tensor {
  StorageKind storage = StorageKind::Buffer;
  uint32_t index = 0; // Into Program::buffers or Program::constants.
  DType dtype = DType::F32;
  std::vector<Extent> sizes;
  /// Folded layout (`symbolic` false): element offset and strides.
  int64_t offset = 0;
  std::vector<int64_t> strides;
  /// Unfolded (`symbolic`): the storage's contiguous extents, then views.
  bool symbolic = false;
  std::vector<Extent> root;
  std::vector<View> views;

  /// The layout for the given symbol values; nullopt when a view cannot be
  /// applied at them (only possible in an edited program).
  std::optional<Layout> layout(std::span<const int64_t> symbolValues) const;
};

struct KernelArg {
  Tensor tensor;
  bool isResult = false;
  /// The axis that follows the kernel's split axis, or -1 (KernelSpec.h).
  int splitAxis = -1;
  /// The kernel assumes a contiguous row-major layout at offset 0.
  bool contiguous = true;
};

struct Kernel {
  std::string symbol;
  uint32_t device = 0;
  /// The capsule of the root node, its revision (for a generated kernel,
  /// the hash of its generated code) and the root node's name.
  std::string capsule, revision, node;
  /// "linear+gelu": what it computes, for profiles.
  std::string label;
  bool splittable = false;
  std::vector<KernelArg> args;
  /// Program symbols whose values the kernel reads, in its order.
  std::vector<uint32_t> symbols;
  /// Whether the kernel takes its slice's first index (KernelSpec.h).
  bool sliceOrigin = false;
};

struct Copy {
  uint32_t source = 0, target = 0; // Buffers, on different devices.
  std::string value;               // The value copied, for messages.
};

enum class StepKind : uint8_t { Launch, Copy };

struct Step {
  StepKind kind = StepKind::Launch;
  uint32_t index = 0; // Kernel or copy.
  /// Earlier steps whose results this one reads.
  std::vector<uint32_t> deps;
};

struct Io {
  std::string name;
  Tensor tensor;
};

struct Program {
  std::vector<Symbol> symbols;
  std::vector<Device> devices;
  std::vector<Buffer> buffers;
  std::vector<Constant> constants;
  std::vector<Kernel> kernels;
  std::vector<Copy> copies;
  std::vector<Step> steps;
  std::vector<Io> inputs, outputs;

  /// Symbol values with every free one at its bound and derived ones
  /// evaluated.
  std::vector<int64_t> boundValues() const;
  /// Fills in derived symbols from free ones (-1 where one is unknown or
  /// the product overflows).
  void evaluateSymbols(std::vector<int64_t> &values) const;
};

/// What a kernel binary says a kernel takes, to be compared with what the
/// program passes it: `dtype:rank` per argument, comma-separated, then
/// `i64:1` for the symbol values of a kernel that reads them, then `origin`
/// for a kernel that takes its slice's first index. x86 kernel binaries
/// export it as the C string `<symbol>_signature`.
std::string kernelSignature(std::span<const std::pair<DType, size_t>> args, bool readsSymbols,
                            bool takesSliceOrigin);
std::string kernelSignature(const Kernel &kernel);

/// The route's program as JSON (`fuel.program`, docs/artifact-format.md).
std::string printProgram(const Program &program);

/// The devices and routes of the `meta` section.
struct Route {
  std::string section;
  std::vector<std::string> devices;
};
struct Meta {
  std::vector<Device> devices;
  std::vector<Route> routes;
};

/// Reads `meta` (named `file` in diagnostics).
std::optional<Meta> readMeta(std::string_view text, std::string_view file,
                             DiagnosticEngine &diag);

/// Reads and validates a program section against the machine of `meta`
/// and a `weights` section of `weightBytes`; reports the first problem with
/// its JSON pointer and returns nullopt.
std::optional<Program> readProgram(std::string_view text, std::string_view file,
                                   const Meta &meta, uint64_t weightBytes,
                                   DiagnosticEngine &diag);

/// The name `meta` gives the kind of device `id` ("cpu" for "cpu:0").
std::string_view deviceKindOf(std::string_view id);

} // namespace fuel::artifact

#endif // FUEL_ARTIFACT_PROGRAM_H
