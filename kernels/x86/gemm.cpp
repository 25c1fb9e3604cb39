//===- gemm.cpp - f32 GEMM-based kernels for x86-64 -----------------------===//
//
// Library microkernels (IREE calls these ukernels) that fuelc's generated
// f32 matmul, linear and conv2d kernels call. GotoBLAS/BLIS blocking: B is
// packed in KC x NR column panels, A in MR x KC row panels, and an MR x NR
// register tile of C accumulates with FMAs; conv2d lowers each image and
// group to im2col + GEMM. Built twice from this file: VECTOR_FLOATS=16
// (AVX-512, 12x32 tile) and VECTOR_FLOATS=8 (AVX2, 6x16).
//
// Entry points (MLIR C interfaces of functions taking unranked memrefs and
// i64 scalars):
//   void _mlir_ciface_<SYMBOL>(UnrankedMemRef *a, *b, *c, int64_t flags)
//   void _mlir_ciface_<CONV_SYMBOL>(UnrankedMemRef *x, *w, *y, int64_t flags,
//       strideH, strideW, padTop, padLeft, dilationH, dilationW, groups)
//   void RELEASE(void), CONV_RELEASE(void)   free the per-thread buffers
//     and the packed weights
//     (one release per entry point, as fuelc calls `<symbol>_release`)
// computing C = op(A) * op(B) (+ C with kAccumulate) over the last two axes,
// leading (batch) axes broadcast numpy-style; strides are arbitrary except
// that C is contiguous in its last axis.
//
//===----------------------------------------------------------------------===//

#include <pthread.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifndef VECTOR_FLOATS
#error "define VECTOR_FLOATS (16 for AVX-512, 8 for AVX2)"
#endif
#ifndef SYMBOL
#error "define SYMBOL, the entry point's name"
#endif
#ifndef RELEASE
#error "define RELEASE, the name of the function freeing its memory"
#endif
#if !defined(CONV_SYMBOL) || !defined(CONV_RELEASE)
#error "define CONV_SYMBOL and CONV_RELEASE, the conv2d entry points"
#endif

namespace {

constexpr int kWidth = VECTOR_FLOATS;
constexpr int kMR = kWidth == 16 ? 12 : 6; // Rows of the register tile.
constexpr int kNR = 2 * kWidth;            // Columns: two vectors.
// KC x NR B panels (64 KiB) stream from L2; MC x KC A blocks (192 KiB) stay
// in L2; measured best on Zen 5 among KC in {256, 384, 512}, MC in {96..192}.
constexpr int64_t kKC = 512, kMC = 96, kNC = 2048;

typedef float Vec __attribute__((vector_size(kWidth * 4), aligned(4)));

// Flags (bits of the i64 argument). kConstantB: B never changes (a weight),
// so its packed panels are kept and reused by later calls.
constexpr int64_t kTransposeA = 1, kTransposeB = 2, kAccumulate = 4, kConstantB = 8;

struct UnrankedMemRef {
  int64_t rank;
  int64_t *descriptor; // {allocated, aligned, offset, sizes[rank], strides[rank]}
};

struct Matrix {
  const float *data;
  int64_t rows, cols, rowStride, colStride;
};

/// Packed panels, allocated once per calling thread. They are all listed so
/// that RELEASE (called by the runtime before it unloads the kernels) frees
/// them: nothing here may outlive the library, so no thread-exit hooks.
struct Scratch {
  float *a, *b;
  float *columns; // im2col matrix of conv2d, grown as needed.
  int64_t columnFloats;
  Scratch *next;
};
__thread Scratch *threadScratch;
Scratch *allScratch;
pthread_mutex_t scratchLock = PTHREAD_MUTEX_INITIALIZER;

Scratch *scratchOfThisThread() {
  if (!threadScratch) {
    auto *s = static_cast<Scratch *>(std::malloc(sizeof(Scratch)));
    s->a = static_cast<float *>(std::aligned_alloc(64, kMC * kKC * sizeof(float)));
    s->b = static_cast<float *>(std::aligned_alloc(64, kKC * kNC * sizeof(float)));
    s->columns = nullptr;
    s->columnFloats = 0;
    pthread_mutex_lock(&scratchLock);
    s->next = allScratch;
    allScratch = s;
    pthread_mutex_unlock(&scratchLock);
    threadScratch = s;
  }
  return threadScratch;
}

/// Packs rows [i0, i0 + mc) x cols [k0, k0 + kc) of A into MR-row panels,
/// k-major inside a panel, zero-padding the last panel.
void packA(const Matrix &a, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           float *out) {
  for (int64_t ip = 0; ip < mc; ip += kMR) {
    int64_t rows = mc - ip < kMR ? mc - ip : kMR;
    for (int64_t k = 0; k < kc; ++k) {
      const float *src = a.data + (k0 + k) * a.colStride + (i0 + ip) * a.rowStride;
      for (int64_t r = 0; r < kMR; ++r)
        out[r] = r < rows ? src[r * a.rowStride] : 0.0f;
      out += kMR;
    }
  }
}

/// Packs rows [k0, k0 + kc) x cols [j0, j0 + nc) of B into NR-column panels.
void packB(const Matrix &b, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
           float *out) {
  for (int64_t jp = 0; jp < nc; jp += kNR) {
    int64_t cols = nc - jp < kNR ? nc - jp : kNR;
    for (int64_t k = 0; k < kc; ++k) {
      const float *src = b.data + (k0 + k) * b.rowStride + (j0 + jp) * b.colStride;
      if (cols == kNR && b.colStride == 1) {
        std::memcpy(out, src, kNR * sizeof(float));
      } else {
        for (int64_t c = 0; c < kNR; ++c)
          out[c] = c < cols ? src[c * b.colStride] : 0.0f;
      }
      out += kNR;
    }
  }
}

int64_t paddedColumns(int64_t nc) { return (nc + kNR - 1) / kNR * kNR; }

/// B packed once for every (jc, pc) block, in gemm's loop order: a weight
/// read by many calls with few rows of A would otherwise be repacked (its
/// whole K x N) on each. Listed for RELEASE, like the scratch buffers.
struct PackedWeights {
  Matrix b;
  float *panels;
  PackedWeights *next;
};
PackedWeights *allWeights; // Guarded by scratchLock.

const float *packedWeights(const Matrix &b) {
  pthread_mutex_lock(&scratchLock);
  for (PackedWeights *w = allWeights; w; w = w->next)
    if (w->b.data == b.data && w->b.rows == b.rows && w->b.cols == b.cols &&
        w->b.rowStride == b.rowStride && w->b.colStride == b.colStride) {
      pthread_mutex_unlock(&scratchLock);
      return w->panels;
    }
  int64_t k = b.rows, n = b.cols, floats = 0;
  for (int64_t jc = 0; jc < n; jc += kNC)
    floats += paddedColumns(n - jc < kNC ? n - jc : kNC) * k;
  auto *w = static_cast<PackedWeights *>(std::malloc(sizeof(PackedWeights)));
  w->b = b;
  w->panels = static_cast<float *>(std::aligned_alloc(64, ((floats * 4 + 63) / 64) * 64));
  float *out = w->panels;
  for (int64_t jc = 0; jc < n; jc += kNC) {
    int64_t nc = n - jc < kNC ? n - jc : kNC;
    for (int64_t pc = 0; pc < k; pc += kKC) {
      int64_t kc = k - pc < kKC ? k - pc : kKC;
      packB(b, pc, kc, jc, nc, out);
      out += kc * paddedColumns(nc);
    }
  }
  w->next = allWeights;
  allWeights = w;
  pthread_mutex_unlock(&scratchLock);
  return w->panels;
}

/// C[0:MR, 0:NR] (+)= Apanel * Bpanel over kc; `ldc` is C's row stride.
inline void microkernel(int64_t kc, const float *a, const float *b, float *c,
                        int64_t ldc, bool accumulate) {
  Vec acc[kMR][2];
  for (int r = 0; r < kMR; ++r)
    acc[r][0] = acc[r][1] = Vec{};
  for (int64_t k = 0; k < kc; ++k) {
    Vec b0 = *reinterpret_cast<const Vec *>(b);
    Vec b1 = *reinterpret_cast<const Vec *>(b + kWidth);
#pragma GCC unroll 12
    for (int r = 0; r < kMR; ++r) {
      Vec ar = Vec{} + a[r];
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
    a += kMR;
    b += kNR;
  }
  for (int r = 0; r < kMR; ++r) {
    Vec *row = reinterpret_cast<Vec *>(c + r * ldc);
    if (accumulate) {
      row[0] += acc[r][0];
      row[1] += acc[r][1];
    } else {
      row[0] = acc[r][0];
      row[1] = acc[r][1];
    }
  }
}

/// C = A * B (+ C) for one matrix; C rows are contiguous. `prepacked`: B's
/// panels from packedWeights, or null to pack them here.
void gemm(const Matrix &a, const Matrix &b, float *c, int64_t ldc,
          bool accumulate, const float *prepacked) {
  int64_t m = a.rows, n = b.cols, k = a.cols;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::memset(c + i * ldc, 0, n * sizeof(float));
    return;
  }
  Scratch *scratch = scratchOfThisThread();
  float *packedA = scratch->a, *packedB = scratch->b;
  alignas(64) float edge[kMR * kNR];
  for (int64_t jc = 0; jc < n; jc += kNC) {
    int64_t nc = n - jc < kNC ? n - jc : kNC;
    for (int64_t pc = 0; pc < k; pc += kKC) {
      int64_t kc = k - pc < kKC ? k - pc : kKC;
      bool add = accumulate || pc > 0;
      const float *blockB = packedB;
      if (prepacked) {
        blockB = prepacked;
        prepacked += kc * paddedColumns(nc);
      } else {
        packB(b, pc, kc, jc, nc, packedB);
      }
      for (int64_t ic = 0; ic < m; ic += kMC) {
        int64_t mc = m - ic < kMC ? m - ic : kMC;
        packA(a, ic, mc, pc, kc, packedA);
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          int64_t cols = nc - jr < kNR ? nc - jr : kNR;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            int64_t rows = mc - ir < kMR ? mc - ir : kMR;
            float *tile = c + (ic + ir) * ldc + jc + jr;
            const float *ap = packedA + ir * kc, *bp = blockB + jr * kc;
            if (rows == kMR && cols == kNR) {
              microkernel(kc, ap, bp, tile, ldc, add);
              continue;
            }
            // A partial tile goes through a full-size buffer.
            microkernel(kc, ap, bp, edge, kNR, false);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t j = 0; j < cols; ++j)
                tile[r * ldc + j] = (add ? tile[r * ldc + j] : 0.0f) + edge[r * kNR + j];
          }
        }
      }
    }
  }
}

struct View {
  const int64_t *d;
  int64_t rank;
  float *data() const { return reinterpret_cast<float *>(d[1]) + d[2]; }
  int64_t size(int64_t i) const { return d[3 + i]; }
  int64_t stride(int64_t i) const { return d[3 + rank + i]; }
};

/// The matrix of the last two axes of `v` (a rank-1 operand is a row, or a
/// column with `column`), transposed with `transpose`.
Matrix matrixOf(const View &v, const float *base, bool transpose, bool column) {
  Matrix m{base, 1, 1, 0, 0};
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
} // namespace

/// Whether axes [from, to] of `v` nest row-major, so they index like one
/// axis; `stride` is then that axis's stride. Unit axes are skipped: their
/// strides are arbitrary (a transposed view of a batch of one, say).
bool collapsible(const View &v, int64_t from, int64_t to, int64_t &stride) {
  stride = 0;
  int64_t inner = 0; // Elements spanned by the non-unit axes seen so far.
  for (int64_t i = to; i >= from; --i) {
    if (v.size(i) == 1)
      continue;
    if (inner == 0)
      stride = v.stride(i);
    else if (v.stride(i) != stride * inner)
      return false;
    inner = (inner == 0 ? 1 : inner) * v.size(i);
  }
  return true;
}

extern "C" void SYMBOL(UnrankedMemRef *a, UnrankedMemRef *b, UnrankedMemRef *c,
                       int64_t flags) {
  View va{a->descriptor, a->rank}, vb{b->descriptor, b->rank},
      vc{c->descriptor, c->rank};
  bool transA = flags & kTransposeA, transB = flags & kTransposeB;
  bool accumulate = flags & kAccumulate, constantB = flags & kConstantB;
  bool rowA = va.rank >= 2, columnB = vb.rank < 2;
  int64_t batchA = va.rank - (rowA ? 2 : 1), batchB = vb.rank - (columnB ? 1 : 2);
  int64_t batchRank = vc.rank - rowA - !columnB;
  // C's row stride: its axis of m (the last one when b is a column).
  int64_t ldc = !rowA ? 0 : columnB ? vc.stride(vc.rank - 1) : vc.stride(vc.rank - 2);
  // Batches of A's rows against one B (linear, or a broadcast B) are one
  // taller matrix when A's and C's batch axes nest with their rows.
  int64_t rowStrideA, rowStrideC;
  if (batchRank > 0 && batchB == 0 && rowA && !columnB && !transA &&
      batchA == batchRank && collapsible(va, 0, va.rank - 2, rowStrideA) &&
      collapsible(vc, 0, vc.rank - 2, rowStrideC)) {
    Matrix ma = matrixOf(va, va.data(), false, false);
    for (int64_t i = 0; i < batchRank; ++i)
      ma.rows *= va.size(i);
    ma.rowStride = rowStrideA;
    Matrix mb = matrixOf(vb, vb.data(), transB, true);
    gemm(ma, mb, vc.data(), rowStrideC, accumulate, constantB ? packedWeights(mb) : nullptr);
    return;
  }
  int64_t batches = 1;
  for (int64_t i = 0; i < batchRank; ++i)
    batches *= vc.size(i);
  for (int64_t batch = 0; batch < batches; ++batch) {
    const float *pa = va.data(), *pb = vb.data();
    float *pc = vc.data();
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
    Matrix mb = matrixOf(vb, pb, transB, true);
    gemm(matrixOf(va, pa, transA, false), mb, pc, ldc, accumulate,
         constantB ? packedWeights(mb) : nullptr);
  }
}

extern "C" void RELEASE() {
  pthread_mutex_lock(&scratchLock);
  while (allScratch) {
    Scratch *s = allScratch;
    allScratch = s->next;
    std::free(s->a);
    std::free(s->b);
    std::free(s->columns);
    std::free(s);
  }
  while (allWeights) {
    PackedWeights *w = allWeights;
    allWeights = w->next;
    std::free(w->panels);
    std::free(w);
  }
  pthread_mutex_unlock(&scratchLock);
}

/// y[n, o, :, :] (+)= conv(x, w) for NCHW x and OIHW w, as one GEMM per image
/// and group: W_g [Og, Cg*KH*KW] times the im2col matrix [Cg*KH*KW, OH*OW].
extern "C" void CONV_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w,
                            UnrankedMemRef *y, int64_t flags, int64_t strideH,
                            int64_t strideW, int64_t padTop, int64_t padLeft,
                            int64_t dilationH, int64_t dilationW, int64_t groups) {
  View vx{x->descriptor, x->rank}, vw{w->descriptor, w->rank},
      vy{y->descriptor, y->rank};
  int64_t N = vx.size(0), C = vx.size(1), H = vx.size(2), W = vx.size(3);
  int64_t O = vw.size(0), Cg = vw.size(1), KH = vw.size(2), KW = vw.size(3);
  int64_t OH = vy.size(2), OW = vy.size(3), Og = O / groups;
  int64_t K = Cg * KH * KW, P = OH * OW;
  (void)C;
  Scratch *scratch = scratchOfThisThread();
  if (scratch->columnFloats < K * P) {
    std::free(scratch->columns);
    scratch->columns = static_cast<float *>(std::aligned_alloc(64, ((K * P * 4 + 63) / 64) * 64));
    scratch->columnFloats = K * P;
  }
  float *columns = scratch->columns;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const float *image = vx.data() + n * vx.stride(0) + g * Cg * vx.stride(1);
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t i = 0; i < KH; ++i)
          for (int64_t j = 0; j < KW; ++j) {
            float *row = columns + ((c * KH + i) * KW + j) * P;
            // Output columns whose input column lies inside the image:
            // ow * strideW + shift in [0, W).
            int64_t shift = j * dilationW - padLeft;
            int64_t lo = shift >= 0 ? 0 : (-shift + strideW - 1) / strideW;
            int64_t hi = W - shift <= 0 ? 0 : (W - shift + strideW - 1) / strideW;
            lo = lo < OW ? lo : OW;
            hi = hi < lo ? lo : hi < OW ? hi : OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
              float *out = row + oh * OW;
              int64_t ih = oh * strideH - padTop + i * dilationH;
              if (ih < 0 || ih >= H) {
                std::memset(out, 0, OW * sizeof(float));
                continue;
              }
              const float *in = image + c * vx.stride(1) + ih * vx.stride(2);
              std::memset(out, 0, lo * sizeof(float));
              if (strideW == 1 && vx.stride(3) == 1) {
                std::memcpy(out + lo, in + lo + shift, (hi - lo) * sizeof(float));
              } else {
                for (int64_t ow = lo; ow < hi; ++ow)
                  out[ow] = in[(ow * strideW + shift) * vx.stride(3)];
              }
              std::memset(out + hi, 0, (OW - hi) * sizeof(float));
            }
          }
      // Weights [Og, K] with rows strided by w's stride(0) (K contiguous in
      // OIHW); the output rows [Og, P] are contiguous images.
      Matrix a{vw.data() + g * Og * vw.stride(0), Og, K, vw.stride(0), 1};
      Matrix b{columns, K, P, P, 1};
      float *out = vy.data() + n * vy.stride(0) + g * Og * vy.stride(1);
      gemm(a, b, out, vy.stride(1), flags & kAccumulate, nullptr);
    }
}

extern "C" void CONV_RELEASE() { RELEASE(); }
