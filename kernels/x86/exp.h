//===- exp.h - The vector exponential of the x86 library kernels --*- C++ -*-===//
//
// exp of every lane (relative error 2e-7 near 0, at most 1.4e-6 over the
// float range): SiLU's epilogue (conv.h) and attention's softmax
// (attention.cpp) share it.
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_EXP_H
#define FUEL_KERNELS_X86_EXP_H

#include "gemm.h"

#include <immintrin.h>

namespace KERNEL_NAMESPACE {

typedef int32_t VecInt __attribute__((vector_size(kWidth * 4)));

/// 2^f for f in [-1/2, 1/2]: a degree-5 polynomial fitted for least maximum
/// relative error (2.0e-7 in float arithmetic), by Horner's scheme: the
/// vectors of an epilogue are independent, so its throughput counts, not the
/// chain's length.
inline Vec exp2Fraction(Vec f) {
  Vec p = 1.330882078e-3f * f + 9.671517648e-3f;
  p = p * f + 5.550582334e-2f;
  p = p * f + 2.402224243e-1f;
  p = p * f + 6.931470633e-1f;
  return p * f + 1.0f;
}

/// exp(x) for k = log2(e), exp(-x) for k = -log2(e): 2^n 2^f, n = round(x k)
/// and f = x k - n in one FMA (the product unrounded, so f stays within
/// [-1/2, 1/2] for any finite x, the error of k's float adding at most
/// 2.5e-6 relative where exp is a normal float). With AVX-512 nothing is
/// clamped (VSCALEFPS gives 0 or inf past the float range) and an infinite
/// x k gives NaN; with AVX2, whose 2^n is built from n's bits, x is clamped
/// to [-104, 104] first. (SiLU's epilogue so takes 11 operations a vector
/// besides its division, where a clamped exp with a two-part ln 2 took 15:
/// SiLU was 12% of EfficientNet-B0's time with one thread, its operations
/// competing with the convolutions' FMAs for the same two ports, and the
/// model took 0.965 of its time so, Zen 5.)
inline Vec expTimes(Vec x, float k) {
#if VECTOR_FLOATS == 16
  __m512 scale = _mm512_set1_ps(k);
  __m512 n = _mm512_maskz_roundscale_ps(0xffff, _mm512_mul_ps((__m512)x, scale),
                                        _MM_FROUND_TO_NEAREST_INT);
  Vec f = (Vec)_mm512_fmsub_ps((__m512)x, scale, n);
  return (Vec)_mm512_maskz_scalef_ps(0xffff, (__m512)exp2Fraction(f), n);
#else
  // The bound first: MINPS and MAXPS give their second operand where
  // either is NaN, which keeps a NaN x.
  __m256 z =
      _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(104.0f), (__m256)x));
  __m256 scale = _mm256_set1_ps(k);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(z, scale), _MM_FROUND_TO_NEAREST_INT);
  Vec p = exp2Fraction((Vec)_mm256_fmsub_ps(z, scale, n));
  // 2^n as two factors, each a normal float for n in [-150, 150].
  VecInt whole = __builtin_convertvector((Vec)n, VecInt), half = whole >> 1;
  Vec first = (Vec)((half + 127) << 23), second = (Vec)((whole - half + 127) << 23);
  return p * first * second;
#endif
}

constexpr float kLog2e = 1.44269504f;

/// exp(x), x clamped to [-104, 104] first: past the bounds exp is 0 or
/// overflows to inf in float anyway. A NaN x gives NaN.
inline Vec expOf(Vec x) {
#if VECTOR_FLOATS == 16
  // (The maskz forms: GCC 12 warns about the others' undefined source.
  // The bound first: VMINPS and VMAXPS give their second operand where
  // either is NaN, which keeps a NaN x.)
  x = (Vec)_mm512_maskz_max_ps(0xffff, _mm512_set1_ps(-104.0f),
                               _mm512_maskz_min_ps(0xffff, _mm512_set1_ps(104.0f), (__m512)x));
#endif
  return expTimes(x, kLog2e);
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_EXP_H
