//===- igemm.cpp - Exact 8-bit integer GEMM for x86-64 --------------------===//
//
// The library kernel of fuelc's 8-bit matmuls (a QDQ MatMul or Gemm,
// MatMulInteger, QLinearMatMul): C[i32] = A * B for u8 or s8 operands in any
// mix, exact as ONNX defines it. Built once per instruction that multiplies:
//
// - VNNI (vpdpbusd: AVX512-VNNI on zmm, AVX-VNNI on ymm) multiplies four
//   adjacent k of u8 A by s8 B and adds them to a 32-bit lane: 4 products
//   per lane, four times an f32 FMA's. Its four-product sums cannot
//   saturate (vpmaddubsw's pair sums can; ONNX Runtime accepts that on
//   AVX2). An operand of the other signedness is packed with its sign bit
//   flipped, s8 A as A' = A + 128 and u8 B as B' = B - 128, and the product
//   corrected once at the end (correctFlips).
// - AVX2 without VNNI: operands widen to 16 bits as they are packed and
//   multiply with vpmaddwd, two adjacent k per lane, exact.
//
// Either way a 32-bit word of a packed operand holds one row's (A) or one
// column's (B) group of adjacent k, so the blocking is gemm.cpp's: B packed
// in KC x NR column panels of groups (once for constant weights), A in
// MR-row panels, and an MR x NR tile of C accumulating in registers.
//
// The product itself is igemm.h's igemm(), which iconv.cpp calls too.
//
// Entry points (MLIR C interfaces, as gemm.cpp's):
//   void _mlir_ciface_<IGEMM_SYMBOL>(UnrankedMemRef *a, *b, *c, int64_t flags)
//   void IGEMM_RELEASE(void)
// flags: kTransposeA, kTransposeB, kConstantB (gemm.h), kUnsignedA and
// kUnsignedB (the operand is u8, else s8).
//
//===----------------------------------------------------------------------===//

#include "igemm.h"

#include <immintrin.h>

#include <cstring>

#if !defined(IGEMM_SYMBOL) || !defined(IGEMM_RELEASE)
#error "define IGEMM_SYMBOL and IGEMM_RELEASE, the entry points' names"
#endif

#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
#define IGEMM_VNNI 1
#endif

namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE {
namespace {

#if defined(__AVX512VNNI__)
constexpr int kLanes = 16, kIMR = 12;
#else
constexpr int kLanes = 8, kIMR = 6;
#endif
// A vector of i32 lanes in GCC's notation: GCC keeps a tile of them in
// registers, where it spills a tile of __m512i to the stack on every step.
typedef int IVec __attribute__((vector_size(4 * kLanes)));
inline IVec splat(uint32_t word) { return IVec{} + int(word); }
inline IVec load(const void *p) { return *static_cast<const IVec *>(p); }
inline IVec loadUnaligned(const void *p) {
  IVec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storeUnaligned(void *p, IVec v) { std::memcpy(p, &v, sizeof v); }
#if defined(__AVX512VNNI__)
inline IVec multiplyAdd(IVec acc, IVec a, IVec b) {
  return (IVec)_mm512_dpbusd_epi32((__m512i)acc, (__m512i)a, (__m512i)b);
}
#elif defined(__AVXVNNI__)
inline IVec multiplyAdd(IVec acc, IVec a, IVec b) {
  return (IVec)_mm256_dpbusd_avx_epi32((__m256i)acc, (__m256i)a, (__m256i)b);
}
#else
inline IVec multiplyAdd(IVec acc, IVec a, IVec b) {
  return acc + (IVec)_mm256_madd_epi16((__m256i)a, (__m256i)b);
}
#endif

constexpr int kINR = 2 * kLanes;
// K in groups: a KC-group B panel is 32 KiB (ymm) or 64 KiB (zmm), an
// MC x KC A block 96 or 192 KiB, as gemm.cpp's.
constexpr int64_t kIKC = 512, kIMC = 8 * kIMR, kINC = 1024;

/// How an operand's bytes become packed words.
struct Encoding {
  bool isUnsigned; // u8, else s8.
  bool isA;        // The left operand.
};

#ifdef IGEMM_VNNI
constexpr int kGroup = 4;

/// The byte that flips the sign bit of an operand vpdpbusd reads with the
/// other signedness (A as u8, B as s8), or 0.
inline uint8_t flipOf(Encoding e) { return e.isA != e.isUnsigned ? 0x80 : 0; }

/// Row i's bytes 4g .. 4g + 3 of `m` (flipped as `e` says; 0 outside).
inline uint32_t word(const Bytes &m, Encoding e, int64_t i, int64_t g) {
  uint8_t flip = flipOf(e);
  if (m.colStride == 1 && kGroup * (g + 1) <= m.cols) { // Four adjacent bytes.
    uint32_t w;
    std::memcpy(&w, m.data + i * m.rowStride + kGroup * g, sizeof w);
    return w ^ flip * 0x01010101u;
  }
  uint32_t w = 0;
  for (int t = 0; t < kGroup; ++t)
    if (kGroup * g + t < m.cols)
      w |= uint32_t(m.data[i * m.rowStride + (kGroup * g + t) * m.colStride] ^ flip) << (8 * t);
  return w;
}
#else
constexpr int kGroup = 2;

/// Element (i, k) of `m` widened to 16 bits by its signedness; 0 outside.
inline uint16_t widened(const Bytes &m, Encoding e, int64_t i, int64_t k) {
  if (k >= m.cols)
    return 0;
  uint8_t v = m.data[i * m.rowStride + k * m.colStride];
  return uint16_t(e.isUnsigned ? int16_t(v) : int16_t(int8_t(v)));
}

/// Row i's elements 2g and 2g + 1 of `m`, widened.
inline uint32_t word(const Bytes &m, Encoding e, int64_t i, int64_t g) {
  return widened(m, e, i, 2 * g) | uint32_t(widened(m, e, i, 2 * g + 1)) << 16;
}
#endif

int64_t groups(int64_t k) { return (k + kGroup - 1) / kGroup; }

/// Rows [i0, i0 + n) x groups [g0, g0 + gc) of `m` as `width`-row panels:
/// per group, each row's word (the last panel padded with zero words).
void packWords(const Bytes &m, Encoding e, int64_t width, int64_t i0, int64_t n, int64_t g0,
               int64_t gc, uint32_t *out) {
  for (int64_t ip = 0; ip < n; ip += width)
    for (int64_t g = g0; g < g0 + gc; ++g)
      for (int64_t r = 0; r < width; ++r)
        *out++ = ip + r < n ? word(m, e, i0 + ip + r, g) : 0;
}

/// B's groups [g0, g0 + gc) x columns [j0, j0 + nc) as kINR-column panels.
void packB(const Bytes &b, bool isUnsigned, int64_t g0, int64_t gc, int64_t j0, int64_t nc,
           uint32_t *out) {
  Bytes columns{b.data, b.cols, b.rows, b.colStride, b.rowStride};
  packWords(columns, {isUnsigned, false}, kINR, j0, nc, g0, gc, out);
}

#ifdef IGEMM_VNNI
/// Column sums of B as packed (B', with its sign bit flipped when u8).
void columnSums(const Bytes &b, bool isUnsigned, int32_t *sums) {
  uint8_t flip = flipOf({isUnsigned, false});
  for (int64_t j = 0; j < b.cols; ++j) {
    int32_t sum = 0;
    for (int64_t k = 0; k < b.rows; ++k)
      sum += int8_t(b.data[k * b.rowStride + j * b.colStride] ^ flip);
    sums[j] = sum;
  }
}
#endif

/// Words of B's panels for every (jc, gc) block, in igemm's loop order.
int64_t panelWords(const Bytes &b) {
  int64_t words = 0;
  for (int64_t jc = 0; jc < b.cols; jc += kINC)
    words += roundUp(b.cols - jc < kINC ? b.cols - jc : kINC, kINR) * groups(b.rows);
  return words;
}

struct PackContext {
  const Bytes *b;
  bool isUnsigned;
};

/// B packed once for every (jc, gc) block, in igemm's loop order, then
/// (VNNI) its column sums.
void packAllOfB(const void *context, float *out) {
  const auto &ctx = *static_cast<const PackContext *>(context);
  const Bytes &b = *ctx.b;
  auto *packed = reinterpret_cast<uint32_t *>(out);
  for (int64_t jc = 0; jc < b.cols; jc += kINC) {
    int64_t nc = b.cols - jc < kINC ? b.cols - jc : kINC;
    for (int64_t g = 0; g < groups(b.rows); g += kIKC) {
      int64_t gc = groups(b.rows) - g < kIKC ? groups(b.rows) - g : kIKC;
      packB(b, ctx.isUnsigned, g, gc, jc, nc, packed);
      packed += gc * roundUp(nc, kINR);
    }
  }
#ifdef IGEMM_VNNI
  columnSums(b, ctx.isUnsigned, reinterpret_cast<int32_t *>(packed));
#endif
}

} // namespace

PackedWeights packedWeights(const Bytes &b, bool isUnsigned) {
  int64_t words = panelWords(b);
#ifdef IGEMM_VNNI
  int64_t sums = b.cols;
#else
  int64_t sums = 0;
#endif
  const int64_t key[kKeyWords] = {reinterpret_cast<int64_t>(&packAllOfB),
                                  reinterpret_cast<int64_t>(b.data),
                                  b.rows,
                                  b.cols,
                                  b.rowStride,
                                  b.colStride,
                                  isUnsigned};
  PackContext context{&b, isUnsigned};
  auto *panels =
      reinterpret_cast<const uint32_t *>(cachedPanels(key, words + sums, packAllOfB, &context));
  return {panels, reinterpret_cast<const int32_t *>(panels + words)};
}

namespace {

/// C[0:MR, 0:kINR] (+)= A panel * B panel over `gc` groups.
template <int MR>
__attribute__((always_inline)) inline void microkernel(int64_t gc, const uint32_t *a,
                                                       const uint32_t *b, int32_t *c, int64_t ldc,
                                                       bool accumulate) {
  IVec acc[MR][2];
  for (int r = 0; r < MR; ++r)
    acc[r][0] = acc[r][1] = IVec{};
  for (int64_t g = 0; g < gc; ++g) {
    IVec b0 = load(b), b1 = load(b + kLanes);
    for (int r = 0; r < MR; ++r) {
      IVec ar = splat(a[r]);
      acc[r][0] = multiplyAdd(acc[r][0], ar, b0);
      acc[r][1] = multiplyAdd(acc[r][1], ar, b1);
    }
    a += MR;
    b += kINR;
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 2; ++v) {
      int32_t *out = c + r * ldc + kLanes * v;
      storeUnaligned(out, accumulate ? acc[r][v] + loadUnaligned(out) : acc[r][v]);
    }
}

#ifdef IGEMM_VNNI
/// C = A'.B' + the terms of the flipped sign bits, which make it A.B:
/// with A = A' - 128 (s8 A) and B = B' + 128 (u8 B),
///   A.B = A'.B' + 128 rowsum(A') [B u8] - 128 colsum(B') [A s8] - 16384 K [both].
/// In i32 arithmetic modulo 2^32, as the products' sums.
void correctFlips(const Bytes &a, const Bytes &b, bool unsignedA, bool unsignedB,
                  const int32_t *sumsOfB, int32_t *c, int64_t ldc) {
  if (unsignedA && !unsignedB)
    return;
  if (!unsignedA && !sumsOfB) {
    auto *sums = reinterpret_cast<int32_t *>(scratch(kColumnSums, b.cols));
    columnSums(b, unsignedB, sums);
    sumsOfB = sums;
  }
  uint8_t flipA = flipOf({unsignedA, true});
  uint32_t both = !unsignedA && unsignedB ? uint32_t(16384) * uint32_t(a.cols) : 0;
  for (int64_t i = 0; i < a.rows; ++i) {
    uint32_t rowTerm = 0;
    if (unsignedB)
      for (int64_t k = 0; k < a.cols; ++k)
        rowTerm += 128u * uint8_t(a.data[i * a.rowStride + k * a.colStride] ^ flipA);
    rowTerm -= both;
    int32_t *row = c + i * ldc;
    for (int64_t j = 0; j < b.cols; ++j) {
      uint32_t columnTerm = unsignedA ? 0 : 128u * uint32_t(sumsOfB[j]);
      row[j] = int32_t(uint32_t(row[j]) + rowTerm - columnTerm);
    }
  }
}
#endif

} // namespace

void igemm(const Bytes &a, const Bytes &b, int32_t *c, int64_t ldc, int64_t flags,
           const PackedWeights *weights) {
  int64_t m = a.rows, n = b.cols, kGroups = groups(a.cols);
  bool unsignedA = flags & kUnsignedA, unsignedB = flags & kUnsignedB;
  if (m == 0 || n == 0)
    return;
  if (kGroups == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::memset(c + i * ldc, 0, n * sizeof(int32_t));
    return;
  }
  auto *packedA = reinterpret_cast<uint32_t *>(scratch(kPackedA, kIMC * kIKC));
  auto *packedB = reinterpret_cast<uint32_t *>(scratch(kPackedB, kIKC * kINC));
  const uint32_t *prepacked = weights ? weights->panels : nullptr;
  alignas(64) int32_t edge[kIMR * kINR];
  // One row of A (a classifier, a decoder's token) streams B through a
  // 1-row tile: the full tile would multiply rows of zeros.
  int64_t mr = m == 1 ? 1 : kIMR;
  for (int64_t jc = 0; jc < n; jc += kINC) {
    int64_t nc = n - jc < kINC ? n - jc : kINC;
    for (int64_t g0 = 0; g0 < kGroups; g0 += kIKC) {
      int64_t gc = kGroups - g0 < kIKC ? kGroups - g0 : kIKC;
      bool add = g0 > 0;
      const uint32_t *blockB = packedB;
      if (prepacked) {
        blockB = prepacked;
        prepacked += gc * roundUp(nc, kINR);
      } else {
        packB(b, unsignedB, g0, gc, jc, nc, packedB);
      }
      for (int64_t ic = 0; ic < m; ic += kIMC) {
        int64_t mc = m - ic < kIMC ? m - ic : kIMC;
        packWords(a, {unsignedA, true}, mr, ic, mc, g0, gc, packedA);
        for (int64_t jr = 0; jr < nc; jr += kINR) {
          int64_t cols = nc - jr < kINR ? nc - jr : kINR;
          const uint32_t *bp = blockB + jr * gc;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            int64_t rows = mc - ir < mr ? mc - ir : mr;
            const uint32_t *ap = packedA + ir * gc;
            computeTile(c + (ic + ir) * ldc + jc + jr, ldc, rows, cols, mr, kINR, add, edge,
                        [&](int32_t *out, int64_t ld, bool accumulate) {
                          if (mr == 1)
                            microkernel<1>(gc, ap, bp, out, ld, accumulate);
                          else
                            microkernel<kIMR>(gc, ap, bp, out, ld, accumulate);
                        });
          }
        }
      }
    }
  }
#ifdef IGEMM_VNNI
  correctFlips(a, b, unsignedA, unsignedB, weights ? weights->columnSums : nullptr, c, ldc);
#endif
}
} // namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE

using namespace KERNEL_NAMESPACE;
using namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE;

extern "C" void IGEMM_SYMBOL(UnrankedMemRef *a, UnrankedMemRef *b, UnrankedMemRef *c,
                             int64_t flags) {
  bool constantB = flags & kConstantB;
  forEachMatrixProduct<uint8_t, uint8_t, int32_t>(
      View{a->descriptor, a->rank}, View{b->descriptor, b->rank}, View{c->descriptor, c->rank},
      flags & kTransposeA, flags & kTransposeB,
      [&](const Bytes &ma, const Bytes &mb, int32_t *pc, int64_t ldc) {
        PackedWeights weights;
        if (constantB)
          weights = packedWeights(mb, flags & kUnsignedB);
        igemm(ma, mb, pc, ldc, flags, constantB ? &weights : nullptr);
      });
}

extern "C" void IGEMM_RELEASE() { releaseAll(); }
