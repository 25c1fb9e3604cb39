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
// last four select conv2d's epilogue (conv.h); kBias and kRelu also the
// f32 GEMM's.
constexpr int64_t kTransposeA = 1, kTransposeB = 2, kAccumulate = 4, kConstantB = 8,
                  kBias = 16, kResidual = 32, kRelu = 64, kSilu = 128;

struct UnrankedMemRef {
  int64_t rank;
  int64_t *descriptor; // {allocated, aligned, offset, sizes[rank], strides[rank]}
};

struct View {
  const int64_t *d;
  int64_t rank;
  template <class T = float> T *data() const { return reinterpret_cast<T *>(d[1]) + d[2]; }
  int64_t size(int64_t i) const { return d[3 + i]; }
  int64_t stride(int64_t i) const { return d[3 + rank + i]; }
};

template <class T> struct MatrixOf {
  const T *data;
  int64_t rows, cols, rowStride, colStride;
};
using Matrix = MatrixOf<float>;

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
  kColumnSums,
  kTapRows,
  kConvPatches,
  kConvResults,
  kConvPixels,
  kConvBand,
  kGatheredRows,
  kAttentionKeys,
  kAttentionValues,
  kAttentionScores,
  kScratchSlots
};
float *scratch(ScratchSlot slot, int64_t floats);

/// Whether the library's kernels have run on more than one thread (taken
/// scratch on two): the runtime then splits kernels over its threads, and a
/// kernel's input was often written by another core, whose cache a line
/// takes several times as long to come from as from this core's L2.
bool runsOnSeveralThreads();

/// Panels packed once for a constant operand and kept until release: `key`
/// names the operand (what packs it, its data pointer, shape and strides);
/// `pack` fills `floats` floats on the first call.
constexpr int kKeyWords = 11;
const float *cachedPanels(const int64_t (&key)[kKeyWords], int64_t floats,
                          void (*pack)(const void *context, float *out),
                          const void *context);

/// Panels that `pack(context, out)` fills with `floats` floats from the
/// filters of `outputs` output channels at `filters` in conv2d weights `w`
/// ([O, Cg, KH, KW]), `blocking` being what else shapes them: kept until
/// release when `constant` (cachedPanels), else packed into this thread's
/// scratch.
const float *packedFilters(const View &w, const void *filters, int64_t outputs, int64_t blocking,
                           int64_t floats, bool constant, void (*pack)(const void *, float *),
                           const void *context);

/// Frees the scratch and the cached panels of every thread.
void releaseAll();

/// What GEMM applies to C's final values as it writes them: a bias per
/// column (null: none), then ReLU.
struct GemmEpilogue {
  const float *bias = nullptr;
  bool relu = false;
};

/// The floats of B packed for every (jc, pc) block, in gemm's loop order
/// (packAllOfB): what `prepacked` holds.
int64_t packedFloats(const Matrix &b);
void packAllOfB(const Matrix &b, float *out);

/// C = epilogue(A * B (+ C)), C's rows contiguous with stride `ldc`.
/// `prepacked`: B's panels from packedWeights, or null to pack them here.
void gemm(const Matrix &a, const Matrix &b, float *c, int64_t ldc, bool accumulate,
          const float *prepacked, const GemmEpilogue &epilogue);

/// B's rows as GEMM packs them: NR-float panel rows, one after the other.
struct PackedRows {
  const float *panel;
  const float *operator()(int64_t k) const { return panel + k * kNR; }
};

/// A's columns as GEMM packs them: MR floats each, one after the other.
template <int MR> struct PackedColumns {
  const float *panel;
  const float *operator()(int64_t k) const { return panel + k * MR; }
};

/// A's rows where they lie, `ld` floats apart: column k's MR floats start at
/// `rows + k`.
struct StridedColumns {
  const float *rows;
  int64_t ld;
  const float *operator()(int64_t k) const { return rows + k; }
};

/// Where the microkernel's sums go by default: C's rows at `c`, `ldc`
/// floats apart, the sums added to C's values when `accumulate`.
struct TileOfC {
  float *c;
  int64_t ldc;
  bool accumulate;
  void operator()(int r, int v, Vec sum) const {
    Vec *at = reinterpret_cast<Vec *>(c + r * ldc) + v;
    *at = accumulate ? *at + sum : sum;
  }
};

/// results(r, v, sum of A[r, k] * B[k, vector v] over kc) for the MR x NV
/// vectors of a tile, where `columnOfA(k)` points to the first of the MR
/// floats of A's column k (one after the other, or `ld` apart for
/// StridedColumns) and `rowOfB(k)` to B's row k. GEMM's tile is kMR x kNR.
/// Operands read in place that have an `ahead` (TapRows) also prefetch
/// that many floats past what each k reads, when it is not 0: the next
/// tile's.
template <int MR, int NV, class Columns, class Rows, class Results>
inline void microkernelInto(int64_t kc, Columns columnOfA, Rows rowOfB, Results results) {
  Vec acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = Vec{};
  for (int64_t k = 0; k < kc; ++k) {
    const float *a = columnOfA(k), *b = rowOfB(k);
    Vec bk[NV];
    for (int v = 0; v < NV; ++v)
      bk[v] = *reinterpret_cast<const Vec *>(b + v * kWidth);
    if constexpr (requires { rowOfB.ahead; }) {
      if (rowOfB.ahead)
        for (int v = 0; v < NV; ++v)
          __builtin_prefetch(b + rowOfB.ahead + v * kWidth);
    }
    if constexpr (requires { columnOfA.ahead; }) {
      if (columnOfA.ahead)
        __builtin_prefetch(a + columnOfA.ahead);
    }
    // A scalar operand broadcasts: an FMA with an embedded broadcast load
    // (`Vec{} + a[r]` would be an add and a shuffle on the FMA port).
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      for (int v = 0; v < NV; ++v) {
        if constexpr (requires { columnOfA.ld; })
          acc[r][v] += a[r * columnOfA.ld] * bk[v];
        else
          acc[r][v] += a[r] * bk[v];
      }
  }
  // A vector of columns at a time, so that what `results` keeps per vector
  // is loaded once; unrolled, so that the accumulators stay in registers.
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      results(r, v, acc[r][v]);
}

/// C[0:MR, 0:NV vectors] (+)= A * B over kc, `ldc` being C's row stride.
template <int MR, int NV, class Columns, class Rows>
inline void microkernel(int64_t kc, Columns columnOfA, Rows rowOfB, float *c, int64_t ldc,
                        bool accumulate) {
  microkernelInto<MR, NV>(kc, columnOfA, rowOfB, TileOfC{c, ldc, accumulate});
}

/// The microkernel on A packed as GEMM packs it (MR-float columns at `a`).
template <int MR, int NV, class Rows>
inline void microkernel(int64_t kc, const float *a, Rows rowOfB, float *c, int64_t ldc,
                        bool accumulate) {
  microkernel<MR, NV>(kc, PackedColumns<MR>{a}, rowOfB, c, ldc, accumulate);
}

/// One mr x nr tile of C at `c` (row stride `ldc`) by `product(out, ld,
/// accumulate)`, which writes a whole tile: in place when the tile is whole,
/// else into `edge` (mr x nr), whose `rows` x `cols` corner is then stored
/// (added with `add`).
template <class T, class Product>
inline void computeTile(T *c, int64_t ldc, int64_t rows, int64_t cols, int64_t mr, int64_t nr,
                        bool add, T *edge, Product product) {
  if (rows == mr && cols == nr) {
    product(c, ldc, add);
    return;
  }
  product(edge, nr, false);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      c[r * ldc + j] = (add ? c[r * ldc + j] : T(0)) + edge[r * nr + j];
}

/// The matrix of the last two axes of `v` at `base` (a rank-1 operand is a
/// row, or a column with `column`), transposed with `transpose`.
template <class T> MatrixOf<T> matrixOf(const View &v, const T *base, bool transpose, bool column) {
  MatrixOf<T> m{base, 1, 1, 0, 0};
  if (v.rank == 1) {
    m.rows = column ? v.size(0) : 1;
    m.cols = column ? 1 : v.size(0);
    m.rowStride = column ? v.stride(0) : 0;
    m.colStride = column ? 0 : v.stride(0);
  } else {
    m.rows = v.size(v.rank - 2);
    m.cols = v.size(v.rank - 1);
    m.rowStride = v.stride(v.rank - 2);
    m.colStride = v.stride(v.rank - 1);
  }
  if (transpose) {
    int64_t t = m.rows;
    m.rows = m.cols;
    m.cols = t;
    t = m.rowStride;
    m.rowStride = m.colStride;
    m.colStride = t;
  }
  return m;
}

/// Whether axes [from, to] of `v` nest row-major, so they index like one
/// axis; `stride` is then that axis's stride. Unit axes are skipped: their
/// strides are arbitrary (a transposed view of a batch of one, say).
bool collapsible(const View &v, int64_t from, int64_t to, int64_t &stride);

/// The rows of A (all but its last axis, row-major) copied into this
/// thread's scratch, one after the other: one matrix of A's rows, wherever
/// its axes put them.
template <class T> MatrixOf<T> gatheredRows(const View &va) {
  int64_t rows = 1, cols = va.size(va.rank - 1), step = va.stride(va.rank - 1);
  for (int64_t i = 0; i + 1 < va.rank; ++i)
    rows *= va.size(i);
  auto *out =
      reinterpret_cast<T *>(scratch(kGatheredRows, (rows * cols * int64_t(sizeof(T)) + 3) / 4));
  for (int64_t r = 0; r < rows; ++r) {
    const T *in = va.data<T>();
    for (int64_t i = va.rank - 2, rest = r; i >= 0; --i) {
      in += rest % va.size(i) * va.stride(i);
      rest /= va.size(i);
    }
    for (int64_t k = 0; k < cols; ++k)
      out[r * cols + k] = in[k * step];
  }
  return MatrixOf<T>{out, rows, cols, cols, 1};
}

/// Calls `product(A, B, C, ldc)` for each matrix product of C = op(A) *
/// op(B) over the last two axes of the views (leading batch axes broadcast
/// numpy-style; C contiguous in its last axis), A's elements of type `TA`,
/// B's of `TB`, C's of `TC`. Batches of A's rows against one B are one
/// taller product when C's batch axes nest with its rows: A's rows are read
/// where they are when its axes nest too, else gathered where each batch is
/// less than an A block, since each product of few rows streams all of B
/// again (a sequence-first attention's projection of [tokens, batch,
/// width], 128 products of 8 rows: 18 -> 11 ms).
template <class TA, class TB, class TC, class Product>
void forEachMatrixProduct(const View &va, const View &vb, const View &vc, bool transA, bool transB,
                          Product product) {
  bool rowA = va.rank >= 2, columnB = vb.rank < 2;
  int64_t batchA = va.rank - (rowA ? 2 : 1), batchB = vb.rank - (columnB ? 1 : 2);
  int64_t batchRank = vc.rank - rowA - !columnB;
  // C's row stride: its axis of m (the last one when b is a column).
  int64_t ldc = !rowA ? 0 : columnB ? vc.stride(vc.rank - 1) : vc.stride(vc.rank - 2);
  int64_t rowStrideA, rowStrideC;
  bool tall = batchRank > 0 && batchB == 0 && rowA && !columnB && !transA && batchA == batchRank &&
              collapsible(vc, 0, vc.rank - 2, rowStrideC);
  if (tall && collapsible(va, 0, va.rank - 2, rowStrideA)) {
    MatrixOf<TA> ma = matrixOf(va, va.data<TA>(), false, false);
    for (int64_t i = 0; i < batchRank; ++i)
      ma.rows *= va.size(i);
    ma.rowStride = rowStrideA;
    product(ma, matrixOf(vb, vb.data<TB>(), transB, true), vc.data<TC>(), rowStrideC);
    return;
  }
  if (tall && va.size(va.rank - 2) < kMC) {
    product(gatheredRows<TA>(va), matrixOf(vb, vb.data<TB>(), transB, true), vc.data<TC>(),
            rowStrideC);
    return;
  }
  int64_t batches = 1;
  for (int64_t i = 0; i < batchRank; ++i)
    batches *= vc.size(i);
  for (int64_t batch = 0; batch < batches; ++batch) {
    const TA *pa = va.data<TA>();
    const TB *pb = vb.data<TB>();
    TC *pc = vc.data<TC>();
    for (int64_t i = batchRank - 1, rest = batch; i >= 0; --i) {
      int64_t index = rest % vc.size(i);
      rest /= vc.size(i);
      pc += index * vc.stride(i);
      // Operands' batch axes align with C's at the end; unit axes broadcast.
      int64_t ia = i - (batchRank - batchA), ib = i - (batchRank - batchB);
      if (ia >= 0 && va.size(ia) != 1)
        pa += index * va.stride(ia);
      if (ib >= 0 && vb.size(ib) != 1)
        pb += index * vb.stride(ib);
    }
    product(matrixOf(va, pa, transA, false), matrixOf(vb, pb, transB, true), pc, ldc);
  }
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_GEMM_H
