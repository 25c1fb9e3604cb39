//===- conv.cpp - f32 conv2d for x86-64 -----------------------------------===//
//
// The library conv2d that fuelc's generated f32 conv2d kernels call: NCHW
// images, OIHW weights, any strides, pads, dilations and groups. There is no
// im2col matrix. A group's zero-padded image is copied once into stride
// phase planes (plane (a, b) of a channel holds the padded pixels (y*sh + a,
// x*sw + b)), in which each tap (c, i, j) of the window reads one contiguous
// run over the flattened output q = oh * Wq + ow. So:
//  - a convolution is a GEMM W[Og, Cg*KH*KW] x B[k, q] whose row k is the
//    run of tap k: gemm.h's microkernel reads it in place, and constant
//    weights are packed into its A panels once (kConstantB);
//  - a depthwise convolution (one channel per group) sums its KH*KW taps
//    over vectors of q.
// Both compute the Wq - OW columns past each output row too and drop them
// when the result is copied out (2 of 58 for a 3x3 pad-1 layer of width 56).
//
// Entry points (MLIR C interfaces, as in gemm.cpp):
//   void _mlir_ciface_<CONV_SYMBOL>(UnrankedMemRef *x, *w, *y, *bias,
//       *residual, int64_t flags, strideH, strideW, padTop, padLeft,
//       dilationH, dilationW, float lo, float hi)
//   void CONV_RELEASE(void)
// computing y = act(conv(x, w) + bias + residual) in one pass over y (the
// epilogue of Epilogue; bias and residual are read with kBias, kResidual).
// The groups are x's channels over w's input channels, so a thread may run
// on any channel slice of a depthwise layer.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"

#include <cstring>

#if !defined(CONV_SYMBOL) || !defined(CONV_RELEASE)
#error "define CONV_SYMBOL and CONV_RELEASE, the conv2d entry points"
#endif

using namespace KERNEL_NAMESPACE;

namespace {

/// The register tile: kMRc output channels (they come in multiples of 8)
/// x up to kMaxVectors vectors of columns. 8 x 3 AVX-512 vectors hold as many
/// accumulators as GEMM's 12 x 2 with fewer loads; AVX2 has 16 registers.
constexpr int kMRc = kWidth == 16 ? 8 : kMR, kMaxVectors = kWidth == 16 ? 3 : 2;
constexpr int64_t kMaxNRc = kMaxVectors * kWidth;
/// Taps per block: the B rows of a tile (kKCc x 3 vectors) stay in L1
/// (measured on Sapphire Rapids among 96..512).
constexpr int64_t kKCc = 192;
/// Columns q of a depthwise convolution summed per step: four vectors.
constexpr int64_t kDepthwiseStep = 4 * kWidth;

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

/// Copies the Cg channels of `image` into phase planes, zero-padded.
void buildPlanes(const Conv &s, const View &x, const float *image, float *planes) {
  for (int64_t c = 0; c < s.Cg; ++c)
    for (int64_t a = 0; a < s.sh; ++a)
      for (int64_t b = 0; b < s.sw; ++b) {
        float *plane = planes + ((c * s.sh + a) * s.sw + b) * s.planeFloats();
        // Plane columns whose pixel lies inside the image:
        // x * sw + b - padLeft in [0, W).
        int64_t shift = b - s.padLeft;
        int64_t lo = shift >= 0 ? 0 : (-shift + s.sw - 1) / s.sw;
        int64_t hi = s.W - shift <= 0 ? 0 : (s.W - shift + s.sw - 1) / s.sw;
        lo = lo < s.Wq ? lo : s.Wq;
        hi = hi < lo ? lo : hi < s.Wq ? hi : s.Wq;
        for (int64_t y = 0; y < s.Hq; ++y) {
          float *row = plane + y * s.Wq;
          int64_t ih = y * s.sh + a - s.padTop;
          if (ih < 0 || ih >= s.H) {
            std::memset(row, 0, s.Wq * sizeof(float));
            continue;
          }
          const float *in = image + c * x.stride(1) + ih * x.stride(2);
          std::memset(row, 0, lo * sizeof(float));
          if (s.sw == 1 && x.stride(3) == 1) {
            std::memcpy(row + lo, in + lo + shift, (hi - lo) * sizeof(float));
          } else if (s.sw == 2 && x.stride(3) == 1) { // Vectorizes.
            for (int64_t p = lo; p < hi; ++p)
              row[p] = in[2 * p + shift];
          } else {
            for (int64_t p = lo; p < hi; ++p)
              row[p] = in[(p * s.sw + shift) * x.stride(3)];
          }
          std::memset(row + hi, 0, (s.Wq - hi) * sizeof(float));
        }
      }
  int64_t used = s.Cg * s.sh * s.sw * s.planeFloats();
  std::memset(planes + used, 0, (s.planesFloats() - used) * sizeof(float));
}

/// Where the run of tap k = (c, i, j) starts in the planes.
void tapOffsets(const Conv &s, int64_t *offsets) {
  for (int64_t c = 0; c < s.Cg; ++c)
    for (int64_t i = 0; i < s.KH; ++i)
      for (int64_t j = 0; j < s.KW; ++j) {
        int64_t row = i * s.dh, col = j * s.dw;
        int64_t plane = (c * s.sh + row % s.sh) * s.sw + col % s.sw;
        *offsets++ = plane * s.planeFloats() + row / s.sh * s.Wq + col / s.sw;
      }
}

/// B's row k: the run of tap k from column `q`.
struct TapRows {
  const float *planes;
  const int64_t *offsets;
  const float *operator()(int64_t k) const { return planes + offsets[k]; }
};

/// Packs one group's weights [Og, taps] into MR-row panels per KC block of
/// taps, in the order convolveGroup reads them; rows past Og are zero.
struct WeightsOfGroup {
  const Conv *s;
  const View *w;
  const float *data;
};

void packWeights(const void *context, float *out) {
  const WeightsOfGroup &g = *static_cast<const WeightsOfGroup *>(context);
  const Conv &s = *g.s;
  int64_t K = s.taps(), rows = roundUp(s.Og, kMRc);
  for (int64_t pc = 0; pc < K; pc += kKCc) {
    int64_t kc = K - pc < kKCc ? K - pc : kKCc;
    for (int64_t ir = 0; ir < rows; ir += kMRc)
      for (int64_t k = pc; k < pc + kc; ++k) {
        int64_t c = k / (s.KH * s.KW), i = k / s.KW % s.KH, j = k % s.KW;
        const float *tap = g.data + c * g.w->stride(1) + i * g.w->stride(2) +
                           j * g.w->stride(3);
        for (int64_t r = 0; r < kMRc; ++r)
          *out++ = ir + r < s.Og ? tap[(ir + r) * g.w->stride(0)] : 0.0f;
      }
  }
}

const float *weightPanels(const Conv &s, const View &w, const float *data,
                          bool constant) {
  WeightsOfGroup group{&s, &w, data};
  int64_t floats = roundUp(s.Og, kMRc) * s.taps();
  if (!constant) {
    float *panels = scratch(kConvWeights, floats);
    packWeights(&group, panels);
    return panels;
  }
  const int64_t key[kKeyWords] = {reinterpret_cast<int64_t>(&packWeights),
                                  reinterpret_cast<int64_t>(data),
                                  s.Og, s.Cg, s.KH, s.KW,
                                  w.stride(0), w.stride(1), w.stride(2), w.stride(3)};
  return cachedPanels(key, floats, packWeights, &group);
}

/// How many vectors of columns the tile has: the fewest wasted columns
/// (a 7x7 layer has 63 of them), at 3/4 the speed for fewer than three.
int columnVectors(const Conv &s) {
  int best = kMaxVectors;
  for (int v = kMaxVectors - 1; v >= 1; --v)
    if (4 * roundUp(s.columns(), v * kWidth) <
        3 * roundUp(s.columns(), best * kWidth))
      best = v;
  return best;
}

/// tile[o, q] = sum over taps k of A[o, k] * planes[offsets[k] + q], for the
/// rows of A rounded up to kMRc and the columns (ldt) to NV vectors.
template <int NV>
void convolveGroup(const Conv &s, const float *panels, const float *planes,
                   const int64_t *offsets, float *tile, int64_t ldt) {
  constexpr int64_t kNRc = NV * kWidth, kNCc = kNC / kNRc * kNRc;
  int64_t K = s.taps(), rows = roundUp(s.Og, kMRc);
  for (int64_t jc = 0; jc < ldt; jc += kNCc) {
    int64_t nc = ldt - jc < kNCc ? ldt - jc : kNCc;
    for (int64_t pc = 0; pc < K; pc += kKCc) {
      int64_t kc = K - pc < kKCc ? K - pc : kKCc;
      const float *blockA = panels + pc * rows;
      for (int64_t ic = 0; ic < rows; ic += kMC) {
        int64_t mc = rows - ic < kMC ? rows - ic : kMC;
        for (int64_t jr = jc; jr < jc + nc; jr += kNRc) {
          TapRows shifted{planes + jr, offsets + pc};
          for (int64_t ir = ic; ir < ic + mc; ir += kMRc)
            microkernel<kMRc, NV>(kc, blockA + ir * kc, shifted,
                                    tile + ir * ldt + jr, ldt, pc > 0);
        }
      }
    }
  }
}

/// row[q] = sum over the taps of weight[t] * planes[offsets[t] + q] for one
/// channel, the columns rounded up to kDepthwiseStep.
void convolveDepthwise(const Conv &s, const float *weights, const float *planes,
                       const int64_t *offsets, float *row) {
  int64_t taps = s.taps();
  for (int64_t q = 0; q < s.columns(); q += kDepthwiseStep) {
    Vec acc[kDepthwiseStep / kWidth] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const float *run = planes + offsets[t] + q;
#pragma GCC unroll 4
      for (int64_t u = 0; u < kDepthwiseStep / kWidth; ++u)
        acc[u] += weights[t] * *reinterpret_cast<const Vec *>(run + u * kWidth);
    }
    for (int64_t u = 0; u < kDepthwiseStep / kWidth; ++u)
      *reinterpret_cast<Vec *>(row + q + u * kWidth) = acc[u];
  }
}

/// What is applied as results are copied out: y = act(conv + bias[o] +
/// residual[o, oh, ow]), act being ReLU (NaN to 0, as `v > 0 ? v : 0`)
/// and/or a clamp to [lo, hi] (NaN kept), the order fuelc's graph has.
struct Epilogue {
  const float *bias;     // Of the first channel, or null.
  int64_t biasStride;
  const float *residual; // Of the first channel, image n, or null.
  const View *residualView;
  bool relu;
  float lo, hi;
};

/// y[o, oh, ow] = epilogue(tile[o * ldt + oh * Wq + ow]) for `channels`
/// channels of y from `out`.
void copyOut(const Conv &s, const float *tile, int64_t ldt, int64_t channels,
             const View &y, float *out, const Epilogue &e) {
  for (int64_t o = 0; o < channels; ++o) {
    float bias = e.bias ? e.bias[o * e.biasStride] : 0.0f;
    for (int64_t oh = 0; oh < s.OH; ++oh) {
      const float *from = tile + o * ldt + oh * s.Wq;
      float *to = out + o * y.stride(1) + oh * y.stride(2);
      const float *residual =
          e.residual ? e.residual + o * e.residualView->stride(1) +
                           oh * e.residualView->stride(2)
                     : nullptr;
      int64_t step = y.stride(3), residualStep = e.residual ? e.residualView->stride(3) : 0;
      for (int64_t ow = 0; ow < s.OW; ++ow) {
        float v = from[ow] + bias;
        if (residual)
          v += residual[ow * residualStep];
        if (e.relu)
          v = v > 0.0f ? v : 0.0f;
        v = v < e.lo ? e.lo : v;
        v = e.hi < v ? e.hi : v;
        to[ow * step] = v;
      }
    }
  }
}
} // namespace

extern "C" void CONV_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w,
                            UnrankedMemRef *y, UnrankedMemRef *bias,
                            UnrankedMemRef *residual, int64_t flags,
                            int64_t strideH, int64_t strideW, int64_t padTop,
                            int64_t padLeft, int64_t dilationH,
                            int64_t dilationW, float lo, float hi) {
  View vx{x->descriptor, x->rank}, vw{w->descriptor, w->rank},
      vy{y->descriptor, y->rank}, vb{bias->descriptor, bias->rank},
      vr{residual->descriptor, residual->rank};
  int64_t groups = vx.size(1) / vw.size(1);
  Conv s{vx.size(2), vx.size(3), vw.size(1), vw.size(2), vw.size(3),
         vy.size(2), vy.size(3), vw.size(0) / groups,
         strideH, strideW, padTop, padLeft, dilationH, dilationW, 0, 0};
  if (s.OH <= 0 || s.OW <= 0 || s.Og <= 0)
    return;
  // The padded extent the windows reach, split into stride phases.
  s.Hq = ((s.OH - 1) * s.sh + (s.KH - 1) * s.dh + s.sh) / s.sh;
  s.Wq = ((s.OW - 1) * s.sw + (s.KW - 1) * s.dw + s.sw) / s.sw;
  bool constant = flags & kConstantB;
  // A depthwise window's taps, read once per channel, when they fit.
  float weights[64];
  bool depthwise = s.Cg == 1 && s.Og == 1 && s.taps() <= 64;
  float *planes = scratch(kConvPlanes, s.planesFloats());
  auto *offsets = reinterpret_cast<int64_t *>(scratch(kConvOffsets, 2 * s.taps()));
  tapOffsets(s, offsets);
  int vectors = columnVectors(s);
  int64_t ldt = roundUp(s.columns(), depthwise ? kDepthwiseStep : vectors * kWidth);
  float *tile = scratch(kConvTile, (depthwise ? 1 : roundUp(s.Og, kMRc)) * ldt);
  for (int64_t n = 0; n < vx.size(0); ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const float *image = vx.data() + n * vx.stride(0) + g * s.Cg * vx.stride(1);
      Epilogue epilogue{flags & kBias ? vb.data() + g * s.Og * vb.stride(0) : nullptr,
                        vb.stride(0),
                        flags & kResidual ? vr.data() + n * vr.stride(0) +
                                                g * s.Og * vr.stride(1)
                                          : nullptr,
                        &vr, (flags & kRelu) != 0, lo, hi};
      const float *filters = vw.data() + g * s.Og * vw.stride(0);
      float *out = vy.data() + n * vy.stride(0) + g * s.Og * vy.stride(1);
      buildPlanes(s, vx, image, planes);
      if (depthwise) {
        for (int64_t t = 0; t < s.taps(); ++t)
          weights[t] = filters[t / s.KW * vw.stride(2) + t % s.KW * vw.stride(3)];
        convolveDepthwise(s, weights, planes, offsets, tile);
      } else {
        const float *panels = weightPanels(s, vw, filters, constant);
        if (vectors == 3)
          convolveGroup<kMaxVectors>(s, panels, planes, offsets, tile, ldt);
        else if (vectors == 2)
          convolveGroup<2>(s, panels, planes, offsets, tile, ldt);
        else
          convolveGroup<1>(s, panels, planes, offsets, tile, ldt);
      }
      copyOut(s, tile, ldt, s.Og, vy, out, epilogue);
    }
}

extern "C" void CONV_RELEASE() { releaseAll(); }
