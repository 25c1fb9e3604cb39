//===- depthwise.cpp - Depthwise conv2d for x86-64 ------------------------===//
//
// Depthwise layers (one input and one output channel per group) of the
// library conv2d: a channel at a time over its phase planes for large
// images, or kWidth channels at a time interleaved for small ones (conv.h).
//
//===----------------------------------------------------------------------===//

#include "conv.h"

namespace KERNEL_NAMESPACE {

void convolveChannel(const Conv &s, const float *weights, const float *planes,
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

void convolveChannelBlock(const Conv &s, const View &x, const View &w, const View &y,
                          const Epilogue &e, int64_t n, int64_t c0, int64_t lanes,
                          float *pixels) {
  int64_t Hp = (s.OH - 1) * s.sh + (s.KH - 1) * s.dh + 1;
  int64_t Wp = (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1;
  for (int64_t i = 0; i < Hp * Wp * kWidth; ++i)
    pixels[i] = 0.0f;
  // Row by row, every channel of a row before the next: a row's pixels
  // ([Wp][kWidth]) stay in L1 while the channels fill them in.
  const float *image = x.data() + n * x.stride(0) + c0 * x.stride(1);
  int64_t from = s.padLeft > 0 ? s.padLeft : 0;
  int64_t to = s.W + s.padLeft < Wp ? s.W + s.padLeft : Wp;
  for (int64_t py = 0; py < Hp; ++py) {
    int64_t ih = py - s.padTop;
    if (ih < 0 || ih >= s.H)
      continue;
    for (int64_t l = 0; l < lanes; ++l) {
      const float *in = image + l * x.stride(1) + ih * x.stride(2);
      float *row = pixels + py * Wp * kWidth + l;
      for (int64_t px = from; px < to; ++px)
        row[px * kWidth] = in[(px - s.padLeft) * x.stride(3)];
    }
  }
  Vec weights[64], bias{};
  for (int64_t t = 0; t < s.taps(); ++t) {
    weights[t] = Vec{};
    for (int64_t l = 0; l < lanes; ++l)
      weights[t][l] = w.data()[(c0 + l) * w.stride(0) + t / s.KW * w.stride(2) +
                               t % s.KW * w.stride(3)];
  }
  for (int64_t l = 0; l < lanes && e.bias; ++l)
    bias[l] = e.bias[(c0 + l) * e.biasStride];
  const View *r = e.residualView;
  float *out = y.data() + n * y.stride(0) + c0 * y.stride(1);
  for (int64_t oh = 0; oh < s.OH; ++oh)
    for (int64_t ow = 0; ow < s.OW; ow += kDepthwisePixels) {
      int64_t count = s.OW - ow < kDepthwisePixels ? s.OW - ow : kDepthwisePixels;
      Vec acc[kDepthwisePixels];
      for (int64_t u = 0; u < kDepthwisePixels; ++u)
        acc[u] = bias;
      for (int64_t i = 0; i < s.KH; ++i) {
        const float *row = pixels + ((oh * s.sh + i * s.dh) * Wp + ow * s.sw) * kWidth;
        for (int64_t j = 0; j < s.KW; ++j) {
          Vec tap = weights[i * s.KW + j];
          const float *at = row + j * s.dw * kWidth;
#pragma GCC unroll 8
          for (int64_t u = 0; u < kDepthwisePixels; ++u)
            acc[u] += tap * *reinterpret_cast<const Vec *>(at + u * s.sw * kWidth);
        }
      }
      for (int64_t u = 0; u < count; ++u) {
        Vec v = acc[u];
        if (e.residual)
          for (int64_t l = 0; l < lanes; ++l)
            v[l] += e.residual[n * r->stride(0) + (c0 + l) * r->stride(1) +
                               oh * r->stride(2) + (ow + u) * r->stride(3)];
        v = activate(e, v);
        float *pixel = out + oh * y.stride(2) + (ow + u) * y.stride(3);
        for (int64_t l = 0; l < lanes; ++l)
          pixel[l * y.stride(1)] = v[l];
      }
    }
}

} // namespace KERNEL_NAMESPACE
