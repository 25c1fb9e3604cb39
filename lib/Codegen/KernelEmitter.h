//===- KernelEmitter.h - Writing one kernel as MLIR ---------------*- C++ -*-===//
//
// Emits a kernel (KernelSpec.h) as a func.func over memrefs in destination-
// passing style: linalg.generic ops whose regions hold the scalar arith/math
// of the fused nodes. Inputs and results are function arguments; scratch
// buffers (row statistics of softmax and normalizations, wide accumulators
// of half-precision reductions) are allocated inside the kernel.
//
// Types: f16/bf16 compute in f32; bool is stored as i8 and computed as i1;
// u8 is i8 with unsigned arithmetic.
//
// The emitter writes MLIR text (parsed back by the MLIR backend), which keeps
// MLIR headers out of everything but the backend and makes a kernel easy to
// read and replay with mlir-opt (`fuelc plan --emit=mlir`).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_KERNELEMITTER_H
#define FUEL_LIB_CODEGEN_KERNELEMITTER_H

#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/LogicalResult.h"
#include "fuel/Transforms/KernelSpec.h"

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fuel::codegen {

/// MLIR element type a dtype is stored as, and the type it is computed in.
std::string storageType(DType t);
std::string computeType(DType t);
/// An MLIR float/int constant attribute text for `value` in `type`.
std::string scalarLiteral(double value, const std::string &type);

/// One extent of an iteration domain: static, or an `index` SSA value.
struct Extent {
  int64_t size = -1; // -1: dynamic, see `ssa`.
  std::string ssa;
  bool isStatic() const { return size >= 0; }
};

/// An operand of a linalg.generic. An operand with `parts` is computed in
/// the region (a fused prologue): the parts are read instead, and `compute`
/// turns their block arguments into this operand's element.
struct GenericOperand {
  GenericOperand(std::string value, std::string type, std::string map,
                 std::string elemType)
      : value(std::move(value)), type(std::move(type)), map(std::move(map)),
        elemType(std::move(elemType)) {}
  std::string value, type, map, elemType;
  std::vector<GenericOperand> parts;
  std::function<std::string(const std::vector<std::string> &)> compute;
};

class KernelEmitter {
public:
  KernelEmitter(const Graph &graph, const KernelSpec &spec)
      : graph(graph), spec(spec) {}

  /// Appends the kernel's func.func to `out`; on failure `diag` is told
  /// which node or pattern the backend cannot generate.
  LogicalResult emit(std::string &out, DiagnosticEngine &diag);
  /// Hands over the function written so far (its constants, then its body)
  /// and starts an empty one: other function forms (gpu.func) use the
  /// scalar helpers below.
  void takeFunction(std::string &constants, std::string &body);

  //===--- Used by the per-family emitters --------------------------------===//
  const Graph &graph;
  const KernelSpec &spec;

  std::string fresh() { return "%v" + std::to_string(nextValue++); }
  std::ostringstream &body() { return text; }
  /// An `index` constant, defined once at the top of the function.
  std::string index(int64_t value);
  /// The SSA value holding argument `value`'s memref, and its type.
  bool hasArg(ValueRef value) const { return argIndex.count(value); }
  /// The kernel argument `value` is.
  const KernelArg &arg(ValueRef value) const { return spec.args[argIndex.at(value)]; }
  const std::string &argName(ValueRef value) const;
  const std::string &argType(ValueRef value) const;
  /// Makes `value` (internal to the kernel) live in argument `arg`'s memory.
  void alias(ValueRef value, ValueRef arg);
  /// The extents of argument `value` (static or read with memref.dim).
  std::vector<Extent> extents(ValueRef value);
  /// The run-time value of symbolic dim `symbol` (one of spec.symbols) as
  /// an `index`.
  std::string symbolValue(uint32_t symbol);
  /// The product of `shape[from, to)` as an `index` value.
  std::string extentProduct(const std::vector<Extent> &shape, size_t from,
                            size_t to);
  /// An `index` value converted to float type `type`.
  std::string indexToFloat(const std::string &value, const std::string &type);
  /// A scratch buffer of `elemType` with `shape`, freed at the end.
  std::string scratch(const std::vector<Extent> &shape,
                      const std::string &elemType, std::string &type);
  /// `linalg.fill` of `buffer` with `value` (a literal of its element type).
  void fill(const std::string &buffer, const std::string &type,
            const std::string &elemType, const std::string &literal);
  /// A linalg.generic over a domain of `rank` axes (true in `reduction` for
  /// reduction axes). `bodyFn` gets the block arguments (ins then outs) and
  /// returns the values to yield, one per out.
  using BodyFn =
      std::function<std::vector<std::string>(const std::vector<std::string> &)>;
  void generic(unsigned rank, const std::vector<bool> &reduction,
               const std::vector<GenericOperand> &ins,
               const std::vector<GenericOperand> &outs, const BodyFn &bodyFn);
  /// Whether argument `value` is contiguous (not a strided view).
  bool isContiguousArg(ValueRef value) const;
  /// Whether contiguous argument `value`'s axes [0, to) index like one axis
  /// in every slice of a split launch: the runtime narrows the split axis
  /// and keeps the whole tensor's strides, so axes before it (unless all of
  /// extent 1) do not merge with it.
  bool mergesLeadingAxes(ValueRef value, unsigned to) const;
  /// Contiguous argument `value`'s memref with its axes [from, to)
  /// collapsed into one (memref.collapse_shape; `to` 0: the rank), and that
  /// memref's type.
  std::pair<std::string, std::string> collapseArg(ValueRef value, unsigned from, unsigned to = 0);
  /// The arguments the kernel's prologue (every node but the root) reads,
  /// in the order of operand()'s parts.
  std::vector<ValueRef> prologueInputs() const;
  /// A generic operand for argument `value` indexed by `map`; for a value
  /// the kernel's prologue computes (read with an identity map), the
  /// prologue's inputs and its computation.
  GenericOperand operand(ValueRef value, const std::string &map);

  /// Scalar helpers writing into the current region; `op` appends
  /// ` : type` unless `type` is empty (ops that spell their types).
  std::string op(const std::string &text, const std::string &type);
  std::string constant(double value, const std::string &type);
  /// The first index of the kernel's slice along its split axis (an i64;
  /// KernelSpec::takesSliceOrigin).
  std::string sliceOrigin();
  /// Converts a loaded element of `t` to its compute type and back.
  std::string toCompute(const std::string &v, DType t);
  /// `v` (an element of `t`, in its compute type) in type `acc`, a
  /// contraction's accumulator: an 8-bit integer extends to i32 by its
  /// signedness (u8 by zeros); other values are already there.
  std::string toAccumulator(const std::string &v, DType t, const std::string &acc);
  std::string toStorage(const std::string &v, DType t);

private:
  std::vector<Extent> computedExtents(ValueRef value);

  std::map<ValueRef, unsigned> argIndex;
  std::vector<std::string> argNames, argTypes;
  std::map<int64_t, std::string> indexConstants;
  std::ostringstream prologue, text, epilogue;
  unsigned nextValue = 0;
};

/// The MLIR function type of the library kernel (kernels/x86/gemm.cpp,
/// igemm.cpp, conv.cpp, pool.cpp, attention.cpp) that kernel `spec` calls:
/// its head's (matmul and linear share one; a matmul of 8-bit operands has
/// its own), or the attention kernel's.
std::string librarySignature(const Graph &graph, const KernelSpec &spec);

/// `value`'s memref cast to an unranked one, as library kernels take them.
std::string unranked(KernelEmitter &e, ValueRef value);

/// A call of the kernel's library symbol (librarySignature).
/// `scalars` (values) are passed after `operands`, then `floats` as f32
/// constants.
void callLibrary(KernelEmitter &e, const std::vector<std::string> &operands,
                 const std::vector<std::string> &scalars,
                 std::initializer_list<double> floats = {});
/// `ints` as i64 constants.
std::vector<std::string> i64Constants(KernelEmitter &e, std::initializer_list<int64_t> ints);

/// Whether `value` is a constant or a view of one (a library kernel keeps
/// such an operand packed across calls).
bool isConstant(const Graph &graph, ValueRef value);

/// Affine map text `(d0, ..., dN-1) -> (results)`.
std::string affineMap(unsigned rank, const std::vector<std::string> &results);
/// The map of an operand broadcast (numpy rules) into a domain of extents
/// `domain`: trailing-aligned, unit axes of the operand pinned to 0.
std::string broadcastMap(const Graph &graph, ValueRef value,
                         ShapeRef domain);

/// Writes the computation of one non-elementwise node.
LogicalResult emitNode(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);

// Per-family emitters: each writes the kernel body for its root node.
LogicalResult emitElementwiseGroup(KernelEmitter &e, DiagnosticEngine &diag);
LogicalResult emitReduction(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);
LogicalResult emitNormalization(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);
LogicalResult emitContraction(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);
LogicalResult emitWindowed(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);
/// Emits a kernel whose head is a library conv2d and whose elementwise tail
/// (a residual add, then ReLU, SiLU or a clamp) the library applies as it
/// writes the result, in one pass; false (nothing emitted) for any other
/// kernel.
bool emitConvWithEpilogue(KernelEmitter &e);
/// The same for a library f32 matmul or linear whose tail is a bias over
/// the result's last axis, then at most a ReLU (kernels/x86/gemm.cpp).
bool emitMatMulWithEpilogue(KernelEmitter &e);
/// Emits an attention kernel (Attention.h) as one call of the library's
/// attention entry.
LogicalResult emitAttention(KernelEmitter &e);
/// Emits a pooled convolution's kernel (ConvEpilogue.h) as one call of the
/// library's pooled conv2d entry.
LogicalResult emitPooledConv(KernelEmitter &e);
LogicalResult emitMovement(KernelEmitter &e, NodeId node, DiagnosticEngine &diag);

/// The identity a reduce_* of `kind` over `t` starts from, and one step of
/// it: `acc` combined with the next compute-typed element `v` (`fastmath`
/// is appended to float ops).
double reductionIdentity(OpKind kind, DType t);
/// The lowest and highest values of `t` (floats: -inf and inf), as literals
/// of its storage type take them (unsigned 64-bit: all ones, -1).
double lowestValue(DType t);
double highestValue(DType t);
std::string combineReduction(KernelEmitter &e, OpKind kind, DType t,
                             const std::string &acc, const std::string &v,
                             const std::string &fastmath);
/// Whether element `v` replaces `best` in an arg max (arg min) scan: it is
/// strictly greater (smaller), so the first extreme wins, or it is the
/// first NaN, which then stays (numpy.argmax). An i1.
std::string argBeats(KernelEmitter &e, DType in, bool isMax, const std::string &v,
                     const std::string &best);

/// The scalar computation of an elementwise node on compute-typed operands.
std::string emitScalarOp(KernelEmitter &e, NodeId node,
                         const std::vector<std::string> &operands);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_KERNELEMITTER_H
