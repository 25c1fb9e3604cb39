//===- lanes.h - Masked loads and stores of the x86 library kernels ------===//
//
// Vectors of which only some lanes lie inside an array (the edges of an
// image row, the last columns of an output row): masked loads and stores,
// which neither read nor write the other lanes; the lane shuffle of a
// stride-2 row, and the transpose of a square block. AVX-512 masks are bit
// masks, AVX2's vectors.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_LANES_H
#define FUEL_KERNELS_X86_LANES_H

#include "gemm.h"

#include <immintrin.h>

namespace KERNEL_NAMESPACE {

/// A set of lanes of a vector.
#if VECTOR_FLOATS == 16
using LaneMask = __mmask16;
#else
using LaneMask = __m256i;
#endif

/// The lanes l with 0 <= start + l < n.
inline LaneMask lanesWithin(int64_t start, int64_t n) {
  int64_t lo = start < 0 ? -start : 0, hi = n - start < kWidth ? n - start : kWidth;
  lo = lo < kWidth ? lo : kWidth;
  hi = hi < lo ? lo : hi;
#if VECTOR_FLOATS == 16
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
#else
  __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
                          _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
#endif
}

/// x[l] in the lanes of `lanes`, zero in the others, which are not read
/// (masked loads do not fault there).
inline Vec loadLanes(const float *x, LaneMask lanes) {
#if VECTOR_FLOATS == 16
  return (Vec)_mm512_maskz_loadu_ps(lanes, x);
#else
  return (Vec)_mm256_maskload_ps(x, lanes);
#endif
}

/// x[l] in the lanes of `lanes`, fill[l] in the others, which are not read.
inline Vec loadLanesOr(const float *x, LaneMask lanes, Vec fill) {
#if VECTOR_FLOATS == 16
  return (Vec)_mm512_mask_loadu_ps((__m512)fill, lanes, x);
#else
  return (Vec)_mm256_blendv_ps((__m256)fill, _mm256_maskload_ps(x, lanes),
                               _mm256_castsi256_ps(lanes));
#endif
}

/// v[l] in the lanes of `lanes`, other[l] in the others.
inline Vec selectLanes(LaneMask lanes, Vec v, Vec other) {
#if VECTOR_FLOATS == 16
  return (Vec)_mm512_mask_blend_ps(lanes, (__m512)other, (__m512)v);
#else
  return (Vec)_mm256_blendv_ps((__m256)other, (__m256)v, _mm256_castsi256_ps(lanes));
#endif
}

/// y[l] = v[l] for the lanes of `lanes`.
inline void storeLanes(float *y, LaneMask lanes, Vec v) {
#if VECTOR_FLOATS == 16
  _mm512_mask_storeu_ps(y, lanes, (__m512)v);
#else
  _mm256_maskstore_ps(y, lanes, (__m256)v);
#endif
}

/// Every second lane of lo from lane `First`, then of hi: every second
/// float of a run of 2 * kWidth (a row read with stride 2) from float First.
template <int First> inline Vec everySecondLane(Vec lo, Vec hi) {
#if VECTOR_FLOATS == 16
  const __m512i lanes = _mm512_add_epi32(
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
      _mm512_set1_epi32(First));
  return (Vec)_mm512_permutex2var_ps((__m512)lo, lanes, (__m512)hi);
#else
  // Within each 128-bit half: lo0 lo2 hi0 hi2 (from lane 1: lo1 lo3 hi1
  // hi3); then the 64-bit pairs put in order.
  __m256 pairs = _mm256_shuffle_ps((__m256)lo, (__m256)hi, First ? 0xdd : 0x88);
  return (Vec)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), 0xd8));
#endif
}
inline Vec evenLanes(Vec lo, Vec hi) { return everySecondLane<0>(lo, hi); }
inline Vec oddLanes(Vec lo, Vec hi) { return everySecondLane<1>(lo, hi); }

/// Lanes N to kWidth - 1 of a, then lanes 0 to N - 1 of b: a run of floats
/// N on.
template <int N> inline Vec lanesOn(Vec a, Vec b) {
#if VECTOR_FLOATS == 16
  // The masked form: the plain one's undefined pass-through trips GCC 12's
  // -Wmaybe-uninitialized.
  __m512i lo = _mm512_castps_si512((__m512)a);
  return (Vec)_mm512_castsi512_ps(
      _mm512_mask_alignr_epi32(lo, 0xffff, _mm512_castps_si512((__m512)b), lo, N));
#else
  // Both rotated down N lanes; the last N lanes taken from b.
  const __m256i rotation = _mm256_setr_epi32(N % 8, (N + 1) % 8, (N + 2) % 8, (N + 3) % 8,
                                             (N + 4) % 8, (N + 5) % 8, (N + 6) % 8, (N + 7) % 8);
  return (Vec)_mm256_blend_ps(_mm256_permutevar8x32_ps((__m256)a, rotation),
                              _mm256_permutevar8x32_ps((__m256)b, rotation),
                              (0xff << (8 - N)) & 0xff);
#endif
}
inline Vec nextLanes(Vec a, Vec b) { return lanesOn<1>(a, b); }

/// The lanes where a or b is a NaN.
inline LaneMask unorderedLanes(Vec a, Vec b) {
#if VECTOR_FLOATS == 16
  return _mm512_cmp_ps_mask((__m512)a, (__m512)b, _CMP_UNORD_Q);
#else
  return _mm256_castps_si256(_mm256_cmp_ps((__m256)a, (__m256)b, _CMP_UNORD_Q));
#endif
}

/// The lanes of a and those of b.
inline LaneMask eitherLanes(LaneMask a, LaneMask b) {
#if VECTOR_FLOATS == 16
  return a | b;
#else
  return _mm256_or_si256(a, b);
#endif
}

/// Whether a set holds any lane.
inline bool anyLane(LaneMask lanes) {
#if VECTOR_FLOATS == 16
  return lanes != 0;
#else
  return !_mm256_testz_si256(lanes, lanes);
#endif
}

/// Lane j of the result is lane lanes[j] of a's and b's lanes in a row
/// (b's from kWidth on).
inline Vec shuffle(Vec a, Vec b, const int32_t *lanes) {
#if VECTOR_FLOATS == 16
  __m512i index = _mm512_loadu_si512(lanes);
  return (Vec)_mm512_permutex2var_ps((__m512)a, index, (__m512)b);
#else
  // Both sources permuted, then blended by the index's bit 3 (shifted into
  // the sign bit, which blendv reads).
  __m256i index = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(lanes));
  __m256 fromA = _mm256_permutevar8x32_ps((__m256)a, index),
         fromB = _mm256_permutevar8x32_ps((__m256)b, index);
  return (Vec)_mm256_blendv_ps(fromA, fromB, _mm256_castsi256_ps(_mm256_slli_epi32(index, 28)));
#endif
}

/// The lanes of transposeBlock's two-vector shuffles: for each round (the
/// block side d = kWidth / 2, ..., 1), those of the pair's upper row, then
/// of its lower row. Lanes j with j & d take the lower row's lane j - d into
/// the upper row, and the lower row keeps them; the others go the reverse
/// way.
struct TransposeLanes {
  int32_t lanes[2 * 5][kWidth];
  constexpr TransposeLanes() : lanes() {
    int round = 0;
    for (int d = kWidth / 2; d >= 1; d /= 2, round += 2)
      for (int j = 0; j < kWidth; ++j) {
        lanes[round][j] = j & d ? kWidth + j - d : j;
        lanes[round + 1][j] = j & d ? kWidth + j : j + d;
      }
  }
};

/// rows[j][i] = rows[i][j]: log2(kWidth) rounds that swap the off-diagonal
/// quarters of ever smaller square blocks, two two-vector shuffles per pair
/// of rows.
inline void transposeVectors(Vec (&rows)[kWidth]) {
  alignas(64) static constexpr TransposeLanes kLanes;
  // Unrolled, so that the rows stay in registers.
  int round = 0;
#pragma GCC unroll 4
  for (int d = kWidth / 2; d >= 1; d /= 2, round += 2) {
    const int32_t *upper = kLanes.lanes[round], *lower = kLanes.lanes[round + 1];
#pragma GCC unroll 16
    for (int i = 0; i < kWidth; ++i)
      if (!(i & d)) {
        Vec a = rows[i], b = rows[i + d];
        rows[i] = shuffle(a, b, upper);
        rows[i + d] = shuffle(a, b, lower);
      }
  }
}

/// to[j * toStride + i] = from[i * fromStride + j] for a kWidth x kWidth
/// block.
inline void transposeBlock(const float *from, int64_t fromStride, float *to, int64_t toStride) {
  Vec rows[kWidth];
  for (int i = 0; i < kWidth; ++i)
    rows[i] = *reinterpret_cast<const Vec *>(from + i * fromStride);
  transposeVectors(rows);
  for (int i = 0; i < kWidth; ++i)
    *reinterpret_cast<Vec *>(to + i * toStride) = rows[i];
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_LANES_H
