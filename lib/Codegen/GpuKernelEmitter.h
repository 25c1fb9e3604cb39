//===- GpuKernelEmitter.h - Writing one kernel as gpu.func ---------*- C++ -*-===//
//
// Emits a kernel (KernelSpec.h) as gpu.func compute functions over flat
// storage buffers (the dispatch ABI of fuel/Codegen/GpuKernels.h). Elements
// are addressed explicitly: a thread turns its linear index into
// coordinates and each operand's coordinates into an element offset with
// the operand's strides, static where the graph's shape is, read from the
// parameter buffer where it is symbolic or strided.
//
// Fused nodes are evaluated per element (`valueAt`), so an elementwise
// prologue is recomputed where its consumer reads it and an epilogue is
// applied where the head's value is produced; intermediates never reach
// memory. The scalar arith/math of each node is the x86 emitter's
// (emitScalarOp), so both targets compute the same thing.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_CODEGEN_GPUKERNELEMITTER_H
#define FUEL_LIB_CODEGEN_GPUKERNELEMITTER_H

#include "KernelEmitter.h"

#include "fuel/Codegen/GpuKernels.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuel::codegen {

class GpuKernelEmitter {
public:
  /// Workgroups per dispatch at most (Vulkan guarantees 65535 per axis).
  static constexpr int64_t kMaxGroups = 65535;

  GpuKernelEmitter(const Graph &graph, const KernelSpec &spec,
                   const GpuDialectTarget &target)
      : graph(graph), spec(spec), target(target), s(graph, spec),
        workgroupSize(target.workgroupSize) {}

  /// Appends the kernel's generated gpu.funcs to `module` and describes its
  /// dispatches in `kernel`.
  LogicalResult emit(std::string &module, GpuKernel &kernel, DiagnosticEngine &diag);

  //===--- Used by the per-family emitters --------------------------------===//
  using Coords = std::vector<std::string>;
  /// An element of a domain of extents `shape`: its coordinates and, when
  /// the domain is walked in row-major order, its linear index (contiguous
  /// operands of the domain's own shape are then read without the
  /// coordinates, whose arithmetic is left dead).
  struct Point {
    Shape shape;
    Coords at;
    std::string linear;
  };
  /// Values already computed in the current region (SSA names are only
  /// valid in the region that defines them).
  using Memo = std::map<ValueRef, std::string>;

  const Graph &graph;
  const KernelSpec &spec;
  const GpuDialectTarget &target;
  /// Scalar writer: its body is the current function's.
  KernelEmitter s;
  /// Threads per workgroup of generated dispatches.
  const int64_t workgroupSize;
  std::string threadId, groupId, numGroups;

  /// Starts a generated dispatch over every kernel argument.
  void beginDispatch(const GpuGrid &grid);
  /// Adds a dispatch of the library kernel computing the group's head.
  void addLibraryDispatch(std::vector<unsigned> args, GpuGrid grid,
                          std::vector<int32_t> constants, unsigned workgroup);
  /// The kernel argument index of `value` (a result or an external operand).
  std::optional<unsigned> argOf(ValueRef value) const;
  bool inGroup(NodeId node) const;

  std::string c(int64_t v) { return s.index(v); }
  std::string ix(const char *op, const std::string &a, const std::string &b) {
    return s.op(std::string("arith.") + op + " " + a + ", " + b, "index");
  }
  /// Extents of `value`: constants where static, else the parameter words
  /// of an argument with the same symbolic dim.
  Coords extents(ValueRef value);
  std::string product(const Coords &extents);
  Coords delinearize(const std::string &linear, const Coords &extents);

  /// The point of `value`'s own domain that `p` (of a domain `value`
  /// broadcasts into, numpy rules) reads.
  Point broadcast(ValueRef value, const Point &p);
  /// The value of `v` at `p` (a point of v's domain) in its compute type:
  /// loaded when `v` comes from outside the group, computed when a fused
  /// node makes it.
  std::string valueAt(ValueRef v, const Point &p, Memo &memo);
  /// The kernel's root value (the last node's result).
  ValueRef root() const { return {spec.nodes.back(), 0}; }
  /// The point of `v`'s domain at coordinates `at`.
  Point pointOf(ValueRef v, Coords at, std::string linear = "") const;
  /// `v` of dtype `t` rounded as if stored (half precision), for the
  /// nodes that read it inside the kernel.
  std::string rounded(const std::string &v, DType t);
  /// Stores the results at `p` given the head's value there.
  void storeWithHead(NodeId head, const std::string &value, const Point &p);
  /// Loads argument value `v` at `p`, in its compute type.
  std::string load(ValueRef v, const Point &p);
  /// Stores `value` (compute-typed) into result `v` at `p` of v's domain.
  void store(ValueRef v, const Point &p, const std::string &value);
  /// Stores every result argument at `p` of the root's domain.
  void storeResults(const Point &p, Memo &memo);

  /// `for (iv = lo; iv < hi; iv += step)`, optionally carrying a value of
  /// `type` from `init`: `carried` in the body, `result` after endFor.
  struct Loop {
    std::string iv, carried, result, type, slot;
  };
  Loop beginFor(const std::string &lo, const std::string &hi,
                const std::string &step, const std::string &init = "",
                const std::string &type = "");
  void endFor(Loop &loop, const std::string &next = "");
  /// Grid-stride loops: over [0, n) by the grid's threads, or by its
  /// workgroups (one item per workgroup).
  /// A thread-private variable of `type` (declared at the function's top),
  /// read and written anywhere.
  std::string privateVariable(const std::string &type);
  std::string loadVariable(const std::string &var, const std::string &type);
  void storeVariable(const std::string &var, const std::string &type,
                     const std::string &value);
  Loop beginThreadLoop(const std::string &n);
  Loop beginGroupLoop(const std::string &n);
  void beginIf(const std::string &cond);
  void endIf();
  /// Combines every thread's `value` of `type` with `combine` (a tree in
  /// workgroup memory, in a fixed order); every thread gets the result.
  using Combine =
      std::function<std::string(const std::string &, const std::string &)>;
  std::string workgroupReduce(const std::string &value, const std::string &type,
                              const Combine &combine);
  /// The same for tuples (one workgroup array per element): `combine`
  /// takes the tuples of a lower and a higher thread.
  using CombineTuple = std::function<std::vector<std::string>(
      const std::vector<std::string> &, const std::vector<std::string> &)>;
  std::vector<std::string> workgroupReduce(const std::vector<std::string> &values,
                                           const std::vector<std::string> &types,
                                           const CombineTuple &combine);

private:
  std::string elementOffset(unsigned arg, const Point &p);
  /// Word `word` of argument `arg`'s block of the parameter buffer, loaded
  /// once at the top of the function.
  std::string param(unsigned arg, unsigned word);
  std::string sharedType(const std::string &type) const;
  void finishFunction();

  std::vector<GpuDispatch> dispatches;
  std::string functions;
  /// Workgroup arrays by element type; a tuple reduction uses the n-th of
  /// its type for its n-th element of that type.
  std::map<std::string, std::vector<std::string>> sharedArrays;
  std::map<ValueRef, unsigned> args;
  // The current gpu.func's header: signature, workgroup attributions and
  // attributes.
  std::string open, attributions, attributes;
  std::string top;  // Its thread ids, parameters and workgroup arrays.
  std::map<unsigned, std::string> paramWords;
};

// Per-family emitters: each writes the dispatches of its kernel.
/// One thread per element of the root: elementwise groups, and heads whose
/// every element is computed on its own (contractions, windows, movement).
LogicalResult emitGpuPerElement(GpuKernelEmitter &e, std::optional<NodeId> head,
                                DiagnosticEngine &diag);
/// split: one thread per element of the input, stored into its part.
LogicalResult emitGpuSplit(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &diag);
LogicalResult emitGpuReduction(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &diag);
LogicalResult emitGpuArgReduction(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &diag);
LogicalResult emitGpuNormalization(GpuKernelEmitter &e, NodeId head, DiagnosticEngine &diag);

} // namespace fuel::codegen

#endif // FUEL_LIB_CODEGEN_GPUKERNELEMITTER_H
