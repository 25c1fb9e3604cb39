//===- gemm.h - Shared pieces of the x86 library kernels ------------------===//
//
// The register-tile microkernel, operand views and per-thread scratch that
// gemm.cpp and conv.cpp share. Each ISA variant is compiled with its own
// KERNEL_NAMESPACE, so the variants link into one library side by side.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_GEMM_H
#define FUEL_KERNELS_X86_GEMM_H

#include <cstdint>

#ifndef VECTOR_FLOATS
#error "define VECTOR_FLOATS (16 for AVX-512, 8 for AVX2)"
#endif
#ifndef KERNEL_NAMESPACE
#error "define KERNEL_NAMESPACE, unique per ISA variant"
#endif

namespace KERNEL_NAMESPACE {

constexpr int kWidth = VECTOR_FLOATS;
constexpr int kMR = kWidth == 16 ? 12 : 6; // Rows of the register tile.
constexpr int kNR = 2 * kWidth;            // Columns: two vectors.
// KC x NR B panels (64 KiB) stream from L2; MC x KC A blocks (192 KiB) stay
// in L2; measured best on Zen 5 among KC in {256, 384, 512}, MC in {96..192}.
constexpr int64_t kKC = 512, kMC = 96, kNC = 2048;

typedef float Vec __attribute__((vector_size(kWidth * 4), aligned(4)));

// Flags (bits of the i64 argument). kConstantB: the weight operand never
// changes, so its packed panels are kept and reused by later calls. The
// last four select conv2d's epilogue (conv.h).
constexpr int64_t kTransposeA = 1, kTransposeB = 2, kAccumulate = 4, kConstantB = 8,
                  kBias = 16, kResidual = 32, kRelu = 64, kSilu = 128;

struct UnrankedMemRef {
  int64_t rank;
  int64_t *descriptor; // {allocated, aligned, offset, sizes[rank], strides[rank]}
};

struct View {
  const int64_t *d;
  int64_t rank;
  float *data() const { return reinterpret_cast<float *>(d[1]) + d[2]; }
  int64_t size(int64_t i) const { return d[3 + i]; }
  int64_t stride(int64_t i) const { return d[3 + rank + i]; }
};

struct Matrix {
  const float *data;
  int64_t rows, cols, rowStride, colStride;
};

constexpr int64_t roundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// A buffer of this thread's scratch that grows to `floats` (64-byte
/// aligned, contents not kept). Slots: 0 and 1 hold GEMM's packed A and B
/// blocks; the others are the callers' own.
enum ScratchSlot {
  kPackedA,
  kPackedB,
  kConvPlanes,
  kConvOffsets,
  kConvWeights,
  kConvTile,
  kScratchSlots
};
float *scratch(ScratchSlot slot, int64_t floats);

/// Panels packed once for a constant operand and kept until release: `key`
/// names the operand (what packs it, its data pointer, shape and strides);
/// `pack` fills `floats` floats on the first call.
constexpr int kKeyWords = 11;
const float *cachedPanels(const int64_t (&key)[kKeyWords], int64_t floats,
                          void (*pack)(const void *context, float *out),
                          const void *context);

/// Frees the scratch and the cached panels of every thread.
void releaseAll();

/// C = A * B (+ C), C's rows contiguous with stride `ldc`. `prepacked`: B's
/// panels from packedWeights, or null to pack them here.
void gemm(const Matrix &a, const Matrix &b, float *c, int64_t ldc,
          bool accumulate, const float *prepacked);

/// B's rows as GEMM packs them: NR-float panel rows, one after the other.
struct PackedRows {
  const float *panel;
  const float *operator()(int64_t k) const { return panel + k * kNR; }
};

/// C[0:MR, 0:NV vectors] (+)= Apanel * B over kc, where `rowOfB(k)` points
/// to B's row k; `ldc` is C's row stride. GEMM's tile is kMR x kNR.
template <int MR, int NV, class Rows>
inline void microkernel(int64_t kc, const float *a, Rows rowOfB, float *c,
                        int64_t ldc, bool accumulate) {
  Vec acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = Vec{};
  for (int64_t k = 0; k < kc; ++k) {
    const float *b = rowOfB(k);
    Vec bk[NV];
    for (int v = 0; v < NV; ++v)
      bk[v] = *reinterpret_cast<const Vec *>(b + v * kWidth);
    // A scalar operand broadcasts: an FMA with an embedded broadcast load
    // (`Vec{} + a[r]` would be an add and a shuffle on the FMA port).
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v)
        acc[r][v] += a[r] * bk[v];
    a += MR;
  }
  for (int r = 0; r < MR; ++r) {
    Vec *row = reinterpret_cast<Vec *>(c + r * ldc);
    for (int v = 0; v < NV; ++v)
      row[v] = accumulate ? row[v] + acc[r][v] : acc[r][v];
  }
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_GEMM_H
