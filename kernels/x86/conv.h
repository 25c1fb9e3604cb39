//===- conv.h - Shared pieces of the x86 library conv2d ------------------===//
//
// The layer shape, the epilogue and the entry points of conv2d's algorithms
// (conv.cpp: phase planes and a register-tiled GEMM; depthwise.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_CONV_H
#define FUEL_KERNELS_X86_CONV_H

#include "gemm.h"

namespace KERNEL_NAMESPACE {

/// The register tile: kMRc output channels (they come in multiples of 8)
/// x up to kMaxVectors vectors of columns. 8 x 3 AVX-512 vectors hold as many
/// accumulators as GEMM's 12 x 2 with fewer loads; AVX2 has 16 registers.
constexpr int kMRc = kWidth == 16 ? 8 : kMR, kMaxVectors = kWidth == 16 ? 3 : 2;
constexpr int64_t kMaxNRc = kMaxVectors * kWidth;
/// Taps per block for a tile of `vectors` vectors: its B rows (kc x NR)
/// take half of L1, the rest is for A (measured on Sapphire Rapids).
constexpr int64_t tapsPerBlock(int vectors) { return (24 << 10) / (vectors * kWidth * 4); }

/// Columns q of a depthwise channel summed per step: four vectors.
constexpr int64_t kDepthwiseStep = 4 * kWidth;

/// Output pixels at or below which a depthwise layer runs interleaved
/// (convolveChannelBlock), and how many it computes at once.
constexpr int64_t kInterleavedPixels = 256, kDepthwisePixels = 8;

struct Conv {
  int64_t H, W, Cg, KH, KW, OH, OW, Og;
  int64_t sh, sw, padTop, padLeft, dh, dw;
  int64_t Hq, Wq; // One phase plane.

  int64_t taps() const { return Cg * KH * KW; }
  int64_t planeFloats() const { return Hq * Wq; }
  /// Columns per output channel, each output row padded to Wq.
  int64_t columns() const { return OH * Wq; }
  /// The planes of a group, and room for the runs of the last columns,
  /// which read past its last plane.
  int64_t planesFloats() const {
    return Cg * sh * sw * planeFloats() + Wq + kDepthwiseStep + kMaxNRc;
  }
};

/// What is applied as results are copied out: y = act(conv + bias[o] +
/// residual[o, oh, ow]), act being ReLU (NaN kept, as numpy.maximum(v, 0)),
/// SiLU (v * sigmoid(v)), and a clamp to [lo, hi] (NaN kept), in that
/// order, as fuelc's graph has them.
struct Epilogue {
  const float *bias;     // Of the first channel, or null.
  int64_t biasStride;
  const float *residual; // Of the first channel, image n, or null.
  const View *residualView;
  bool relu, silu;
  float lo, hi;
};

typedef int32_t VecInt __attribute__((vector_size(kWidth * 4)));

/// exp(x) within 2 ulp (Cephes' expf polynomial on x - n ln 2, scaled by
/// 2^n through the exponent bits); inf above 88.72, 0 below -87.33, NaN
/// kept.
inline Vec exp(Vec x) {
  Vec clamped = x > 88.0f ? 88.0f : x < -87.0f ? -87.0f : x;
  Vec n = clamped * 1.44269504f + 0.5f;
  n = __builtin_convertvector(__builtin_convertvector(n, VecInt), Vec);
  n = n > clamped * 1.44269504f + 0.5f ? n - 1.0f : n; // floor
  Vec r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  Vec p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
            4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  VecInt scale = (__builtin_convertvector(n, VecInt) + 127) << 23;
  Vec e = p * (Vec)scale;
  e = x > 88.72283f ? __builtin_inff() : e;
  return x < -87.33654f ? 0.0f : e;
}

/// The epilogue's activation of a vector of results.
inline Vec activate(const Epilogue &e, Vec v) {
  if (e.relu) // NaN kept, as numpy.maximum(v, 0).
    v = v < 0.0f ? 0.0f : v;
  if (e.silu)
    v = v * (1.0f / (1.0f + exp(-v)));
  v = v < e.lo ? e.lo : v;
  return e.hi < v ? e.hi : v;
}

/// Copies the Cg channels of `image` into phase planes, zero-padded.
void buildPlanes(const Conv &s, const View &x, const float *image, float *planes);

/// Where the run of tap k = (c, i, j) starts in the planes.
void tapOffsets(const Conv &s, int64_t *offsets);

/// y[o, oh, ow] = epilogue(tile[o * ldt + q - q0]) for q = oh * Wq + ow in
/// [q0, q1) (ow < OW), for `channels` channels of y from `out`.
void copyOut(const Conv &s, const float *tile, int64_t ldt, int64_t q0, int64_t q1,
             int64_t channels, const View &y, float *out, const Epilogue &e);

/// row[q] = sum over the taps of weight[t] * planes[offsets[t] + q] for one
/// channel of a depthwise layer, the columns rounded up to kDepthwiseStep.
void convolveChannel(const Conv &s, const float *weights, const float *planes,
                     const int64_t *offsets, float *row);

/// kWidth channels of a depthwise layer at a time: their zero-padded images
/// are interleaved ([y][x][channel]) so that one vector holds a pixel of
/// every channel and each tap is one FMA with that tap's weights, for
/// `kDepthwisePixels` output pixels at once. For small images, where a
/// channel at a time leaves the vectors mostly empty; on large ones the
/// interleaving costs more than it saves (measured: 1.2-2x slower from 28x28
/// outputs up, 1.5-3x faster at 14x14 and below). Computes channels
/// [c0, c0 + lanes) of image n, written with `e`; `pixels` holds the
/// interleaved image and a step past it.
void convolveChannelBlock(const Conv &s, const View &x, const View &w, const View &y,
                          const Epilogue &e, int64_t n, int64_t c0, int64_t lanes,
                          float *pixels);

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_CONV_H
