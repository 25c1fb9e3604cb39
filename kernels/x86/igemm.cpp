//===- igemm.cpp - Exact 8-bit integer GEMM for x86-64 (AVX2) -------------===//
//
// The library kernel of fuelc's 8-bit matmuls (a QDQ MatMul or Gemm,
// MatMulInteger, QLinearMatMul): C[i32] = A * B for u8 or s8 operands in any
// mix, exact as ONNX defines it. Operands widen to 16 bits as they are
// packed and multiply with vpmaddwd, two adjacent k per 32-bit lane: 16
// products per instruction against an f32 FMA's 8, and a weight takes a
// quarter of its f32 bytes in the model. (vpmaddubsw would multiply 32 but
// saturates its 16-bit pair sums; ONNX Runtime accepts that on AVX2, fuelc
// gives the exact result.)
//
// BLIS blocking as gemm.cpp: B packed in KC x 16 column panels of k pairs
// (once for constant weights), A in 6-row panels of k pairs, and a 6 x 16
// tile of C accumulating in 12 registers.
//
// Entry points (MLIR C interfaces, as gemm.cpp's):
//   void _mlir_ciface_<IGEMM_SYMBOL>(UnrankedMemRef *a, *b, *c, int64_t flags)
//   void IGEMM_RELEASE(void)
// flags: kTransposeA, kTransposeB, kConstantB (gemm.h), kUnsignedA and
// kUnsignedB (the operand is u8, else s8).
//
//===----------------------------------------------------------------------===//

#include "gemm.h"

#include <immintrin.h>

#include <cstring>

#if !defined(IGEMM_SYMBOL) || !defined(IGEMM_RELEASE)
#error "define IGEMM_SYMBOL and IGEMM_RELEASE, the entry points' names"
#endif

namespace KERNEL_NAMESPACE {
namespace {

constexpr int64_t kUnsignedA = 16, kUnsignedB = 32;
constexpr int kIMR = 6, kINR = 16;
// K in pairs: a KC-pair B panel is 32 KiB, an MC x KC A block 96 KiB.
constexpr int64_t kIKC = 512, kIMC = 48, kINC = 1024;

using Bytes = MatrixOf<uint8_t>;

/// Element (i, j) of `m` widened to 16 bits by its signedness; 0 outside.
inline int16_t element(const Bytes &m, bool isUnsigned, int64_t i, int64_t j) {
  if (i >= m.rows || j >= m.cols)
    return 0;
  uint8_t v = m.data[i * m.rowStride + j * m.colStride];
  return isUnsigned ? int16_t(v) : int16_t(int8_t(v));
}

/// Rows [i0, i0 + n) x column pairs [p0, p0 + pc) of `m` as `width`-row
/// panels: per pair, each row's two values adjacent, in one 32-bit word
/// (the last panel padded with zero rows).
void packPairs(const Bytes &m, bool isUnsigned, int64_t width, int64_t i0, int64_t n, int64_t p0,
               int64_t pc, int16_t *out) {
  for (int64_t ip = 0; ip < n; ip += width)
    for (int64_t p = p0; p < p0 + pc; ++p)
      for (int64_t r = 0; r < width; ++r) {
        bool inside = ip + r < n;
        *out++ = inside ? element(m, isUnsigned, i0 + ip + r, 2 * p) : 0;
        *out++ = inside ? element(m, isUnsigned, i0 + ip + r, 2 * p + 1) : 0;
      }
}

/// A's rows [i0, i0 + mc) x k pairs [p0, p0 + pc) as `mr`-row panels.
void packA(const Bytes &a, bool isUnsigned, int64_t mr, int64_t i0, int64_t mc, int64_t p0,
           int64_t pc, int16_t *out) {
  packPairs(a, isUnsigned, mr, i0, mc, p0, pc, out);
}

/// B's k pairs [p0, p0 + pc) x columns [j0, j0 + nc) as kINR-column
/// panels: per pair, columns 0-7 then 8-15, each column's two values
/// adjacent (what vpmaddwd multiplies against A's word).
void packB(const Bytes &b, bool isUnsigned, int64_t p0, int64_t pc, int64_t j0, int64_t nc,
           int16_t *out) {
  Bytes columns{b.data, b.cols, b.rows, b.colStride, b.rowStride};
  packPairs(columns, isUnsigned, kINR, j0, nc, p0, pc, out);
}

int64_t pairs(int64_t k) { return (k + 1) / 2; }

struct PackContext {
  const Bytes *b;
  bool isUnsigned;
};

/// B packed once for every (jc, pc) block, in igemm's loop order.
void packAllOfB(const void *context, float *out) {
  const auto &ctx = *static_cast<const PackContext *>(context);
  const Bytes &b = *ctx.b;
  auto *packed = reinterpret_cast<int16_t *>(out);
  for (int64_t jc = 0; jc < b.cols; jc += kINC) {
    int64_t nc = b.cols - jc < kINC ? b.cols - jc : kINC;
    for (int64_t p = 0; p < pairs(b.rows); p += kIKC) {
      int64_t pc = pairs(b.rows) - p < kIKC ? pairs(b.rows) - p : kIKC;
      packB(b, ctx.isUnsigned, p, pc, jc, nc, packed);
      packed += 2 * pc * roundUp(nc, kINR);
    }
  }
}

const int16_t *packedWeights(const Bytes &b, bool isUnsigned) {
  int64_t values = 0;
  for (int64_t jc = 0; jc < b.cols; jc += kINC)
    values += roundUp(b.cols - jc < kINC ? b.cols - jc : kINC, kINR) * 2 * pairs(b.rows);
  const int64_t key[kKeyWords] = {reinterpret_cast<int64_t>(&packAllOfB),
                                  reinterpret_cast<int64_t>(b.data),
                                  b.rows,
                                  b.cols,
                                  b.rowStride,
                                  b.colStride,
                                  isUnsigned};
  PackContext context{&b, isUnsigned};
  return reinterpret_cast<const int16_t *>(
      cachedPanels(key, (values + 1) / 2, packAllOfB, &context));
}

/// C[0:MR, 0:16] (+)= A panel * B panel over `pc` k pairs.
template <int MR>
__attribute__((always_inline)) inline void microkernel(int64_t pc, const int16_t *a,
                                                       const int16_t *b, int32_t *c, int64_t ldc,
                                                       bool accumulate) {
  __m256i acc[MR][2];
  for (int r = 0; r < MR; ++r)
    acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t p = 0; p < pc; ++p) {
    __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i *>(b));
    __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i *>(b + 16));
    for (int r = 0; r < MR; ++r) {
      int32_t word;
      std::memcpy(&word, a + 2 * r, sizeof word);
      __m256i ar = _mm256_set1_epi32(word);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(ar, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(ar, b1));
    }
    a += 2 * MR;
    b += 2 * kINR;
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < 2; ++v) {
      auto *out = reinterpret_cast<__m256i *>(c + r * ldc + 8 * v);
      __m256i sum = acc[r][v];
      if (accumulate)
        sum = _mm256_add_epi32(sum, _mm256_loadu_si256(out));
      _mm256_storeu_si256(out, sum);
    }
}

void igemm(const Bytes &a, const Bytes &b, int32_t *c, int64_t ldc, int64_t flags,
           const int16_t *prepacked) {
  int64_t m = a.rows, n = b.cols, kPairs = pairs(a.cols);
  bool unsignedA = flags & kUnsignedA, unsignedB = flags & kUnsignedB;
  if (m == 0 || n == 0)
    return;
  if (kPairs == 0) {
    for (int64_t i = 0; i < m; ++i)
      std::memset(c + i * ldc, 0, n * sizeof(int32_t));
    return;
  }
  auto *packedA = reinterpret_cast<int16_t *>(scratch(kPackedA, kIMC * kIKC));
  auto *packedB = reinterpret_cast<int16_t *>(scratch(kPackedB, kIKC * kINC));
  alignas(32) int32_t edge[kIMR * kINR];
  // One row of A (a classifier, a decoder's token) streams B through a
  // 1-row tile: the full tile would multiply 5 rows of zeros.
  int64_t mr = m == 1 ? 1 : kIMR;
  for (int64_t jc = 0; jc < n; jc += kINC) {
    int64_t nc = n - jc < kINC ? n - jc : kINC;
    for (int64_t p0 = 0; p0 < kPairs; p0 += kIKC) {
      int64_t pc = kPairs - p0 < kIKC ? kPairs - p0 : kIKC;
      bool add = p0 > 0;
      const int16_t *blockB = packedB;
      if (prepacked) {
        blockB = prepacked;
        prepacked += 2 * pc * roundUp(nc, kINR);
      } else {
        packB(b, unsignedB, p0, pc, jc, nc, packedB);
      }
      for (int64_t ic = 0; ic < m; ic += kIMC) {
        int64_t mc = m - ic < kIMC ? m - ic : kIMC;
        packA(a, unsignedA, mr, ic, mc, p0, pc, packedA);
        for (int64_t jr = 0; jr < nc; jr += kINR) {
          int64_t cols = nc - jr < kINR ? nc - jr : kINR;
          const int16_t *bp = blockB + 2 * jr * pc;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            int64_t rows = mc - ir < mr ? mc - ir : mr;
            const int16_t *ap = packedA + 2 * ir * pc;
            computeTile(c + (ic + ir) * ldc + jc + jr, ldc, rows, cols, mr, kINR, add, edge,
                        [&](int32_t *out, int64_t ld, bool accumulate) {
                          if (mr == 1)
                            microkernel<1>(pc, ap, bp, out, ld, accumulate);
                          else
                            microkernel<kIMR>(pc, ap, bp, out, ld, accumulate);
                        });
          }
        }
      }
    }
  }
}
} // namespace
} // namespace KERNEL_NAMESPACE

using namespace KERNEL_NAMESPACE;

extern "C" void IGEMM_SYMBOL(UnrankedMemRef *a, UnrankedMemRef *b, UnrankedMemRef *c,
                             int64_t flags) {
  bool constantB = flags & kConstantB;
  forEachMatrixProduct<uint8_t, uint8_t, int32_t>(
      View{a->descriptor, a->rank}, View{b->descriptor, b->rank}, View{c->descriptor, c->rank},
      flags & kTransposeA, flags & kTransposeB,
      [&](const Bytes &ma, const Bytes &mb, int32_t *pc, int64_t ldc) {
        igemm(ma, mb, pc, ldc, flags, constantB ? packedWeights(mb, flags & kUnsignedB) : nullptr);
      });
}

extern "C" void IGEMM_RELEASE() { releaseAll(); }
