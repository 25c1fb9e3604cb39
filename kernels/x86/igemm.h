//===- igemm.h - The 8-bit GEMM as the other int8 kernels call it ---------===//
//
// igemm.cpp's product, which iconv.cpp runs on an image's rows of taps. The
// 8-bit kernels are built once per instruction that multiplies, several in
// one ISA variant's KERNEL_NAMESPACE (whose scratch they share), so each
// build has its own IGEMM_NAMESPACE inside it.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_IGEMM_H
#define FUEL_KERNELS_X86_IGEMM_H

#include "gemm.h"

#ifndef IGEMM_NAMESPACE
#error "define IGEMM_NAMESPACE, unique per 8-bit build"
#endif

namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE {

using Bytes = MatrixOf<uint8_t>;

/// Flags of the 8-bit kernels, beside gemm.h's: which operands are u8 (else
/// s8).
constexpr int64_t kUnsignedA = 16, kUnsignedB = 32;

/// Constant weights (B) as igemm reads them, packed once and kept until
/// release.
struct PackedWeights {
  const uint32_t *panels;
  const int32_t *columnSums; // Of B' (VNNI only).
};
PackedWeights packedWeights(const Bytes &b, bool isUnsigned);

/// C[i32] = A * B, exact, C's rows contiguous with stride `ldc`; `flags`:
/// kUnsignedA, kUnsignedB. `weights`: B's packedWeights, or null to pack B
/// here.
void igemm(const Bytes &a, const Bytes &b, int32_t *c, int64_t ldc, int64_t flags,
           const PackedWeights *weights);

} // namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE

#endif // FUEL_KERNELS_X86_IGEMM_H
