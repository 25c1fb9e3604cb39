//===- exp.h - The vector exponential of the x86 library kernels --*- C++ -*-===//
//
// exp of every lane (relative error about 2e-7): SiLU's epilogue (conv.h) and attention's
// softmax (attention.cpp) share it.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_EXP_H
#define FUEL_KERNELS_X86_EXP_H

#include "gemm.h"

#include <immintrin.h>

namespace KERNEL_NAMESPACE {

typedef int32_t VecInt __attribute__((vector_size(kWidth * 4)));

/// exp(x), x clamped to [-104, 104] first: past the bounds exp is 0 or
/// overflows to inf in float anyway. A NaN x gives NaN.
inline Vec expOf(Vec x) {
#if VECTOR_FLOATS == 16
  // (The maskz forms: GCC 12 warns about the others' undefined source.)
  Vec z = (Vec)_mm512_maskz_max_ps(0xffff,
                                   _mm512_maskz_min_ps(0xffff, (__m512)x, _mm512_set1_ps(104.0f)),
                                   _mm512_set1_ps(-104.0f));
  Vec n =
      (Vec)_mm512_maskz_roundscale_ps(0xffff, (__m512)(z * 1.44269504f), _MM_FROUND_TO_NEAREST_INT);
#else
  Vec z =
      (Vec)_mm256_max_ps(_mm256_min_ps((__m256)x, _mm256_set1_ps(104.0f)), _mm256_set1_ps(-104.0f));
  Vec n = (Vec)_mm256_round_ps((__m256)(z * 1.44269504f), _MM_FROUND_TO_NEAREST_INT);
#endif
  // exp(z) = 2^n exp(r), r = z - n ln 2 in [-ln 2 / 2, ln 2 / 2] (ln 2 in
  // two parts), exp(r) by a degree-5 polynomial fitted for least maximum
  // relative error (1.7e-7 in float arithmetic), by Horner's scheme: the
  // vectors of an epilogue are independent, so its throughput counts, not
  // the chain's length.
  Vec r = z - n * 0.693359375f + n * 2.12194440e-4f;
  Vec p = 8.290315047e-3f * r + 4.189793020e-2f;
  p = p * r + 1.666763574e-1f;
  p = p * r + 4.999915063e-1f;
  p = p * r + 9.999997020e-1f;
  p = p * r + 1.0f;
#if VECTOR_FLOATS == 16
  return (Vec)_mm512_maskz_scalef_ps(0xffff, (__m512)p, (__m512)n);
#else
  // 2^n as two factors, each a normal float for n in [-150, 150].
  VecInt half = __builtin_convertvector(n, VecInt) >> 1;
  Vec first = (Vec)((half + 127) << 23),
      second = (Vec)((__builtin_convertvector(n, VecInt) - half + 127) << 23);
  return p * first * second;
#endif
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_EXP_H
