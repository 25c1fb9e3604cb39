//===- KernelSpec.h - What one generated kernel computes ---------*- C++ -*-===//
//
// A kernel is one fused group of graph nodes placed on one device. Its
// arguments are the values it reads from memory (operands produced outside
// the group, constants included) followed by the values it writes (results
// read outside the group or by the host). Everything else stays in registers
// or in scratch memory of the kernel.
//
// Calling convention of every kernel (generated or hand-written):
//   extern "C" void symbol(void **args);
// args[i] points to a strided memref descriptor of argument i
//   { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
//     int64_t strides[rank]; }
// The binary also exports `void fuel_release(void)`, which frees what
// library kernels keep between calls; the runtime calls it before unloading.
// A kernel that reads symbol values takes one more descriptor, of a 1-D i64
// memref holding them. Arguments whose `splitAxis` is set may be cut along that axis: the runtime
// runs the kernel on disjoint slices [lo, hi) of the kernel's split axis
// (the result's `splitAxis`: its first, or a weight product's output
// channels or columns) on several threads by narrowing those descriptors.
// A kernel that `takesSliceOrigin` takes one more descriptor (after the
// symbols'), of a 1-D i64 memref holding lo (0 when it runs whole): it reads
// arguments that are not narrowed (a convolution's input rows, halo included)
// at positions that depend on where its slice begins.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_KERNELSPEC_H
#define FUEL_TRANSFORMS_KERNELSPEC_H

#include "fuel/IR/Graph.h"

#include <string>
#include <vector>

namespace fuel {

struct KernelArg {
  ValueRef value;
  bool isResult = false;
  /// The axis of this argument that follows the kernel's split axis, or -1
  /// when the argument is read whole by every slice.
  int splitAxis = -1;
  /// The kernel assumes a contiguous row-major layout at offset 0 (values
  /// that own their buffer, and reshapes of them); otherwise any strides.
  bool contiguous = true;
};

struct KernelSpec {
  std::string symbol;
  /// The fused nodes in execution order; the last one is the group's root.
  std::vector<NodeId> nodes;
  std::vector<KernelArg> args;
  /// Whether slices of the first result's axis 0 may run concurrently.
  bool splittable = false;
  /// Symbolic dims whose values the kernel reads (e.g. a write_slice
  /// offset), passed after the arguments as a 1-D i64 memref in this order.
  std::vector<uint32_t> symbols;
  /// Whether the kernel takes its slice's first index (see above).
  bool takesSliceOrigin = false;
  /// The library kernel (Capsule::symbol) computing the group's first node,
  /// which the generated kernel calls; empty when fuelc generates it all.
  std::string librarySymbol;
};

} // namespace fuel

#endif // FUEL_TRANSFORMS_KERNELSPEC_H
