//===- depthwise.cpp - Depthwise conv2d for x86-64 ------------------------===//
//
// Depthwise layers (one input and one output channel per group) of the
// library conv2d, a channel at a time, one FMA per tap and vector of
// outputs.
//
// Rows with unit or stride-2 steps are read where they are: a tap's inputs
// for a vector of outputs are one load from the image row, masked where the
// window overhangs the padding (stride 2: two loads and their even lanes),
// so nothing is copied, and the epilogue is applied as the sums are
// stored. Common windows (3x3 and 5x5) are unrolled and load each input row
// of a block of output rows once (convolveWindow); the others loop over
// their taps. Other strides go through the channel's phase planes
// (conv.cpp), where each tap reads a contiguous run of the flattened output
// q = oh * Wq + ow, summed into a row the epilogue copies out.
//
//===----------------------------------------------------------------------===//

#include "conv.h"

namespace KERNEL_NAMESPACE {
namespace {

/// Output rows summed at once: independent chains of FMAs, so that their
/// latency is hidden.
constexpr int kRows = 4;

/// Which lanes of each tap column's loads lie inside an image row, for
/// every vector of output columns: lanes(b)[j] for the load of tap column j
/// from column b * kWidth, lanes(b)[KW + j] for the second load of stride 2.
/// The same for every channel, so computed once per layer.
struct ColumnLanes {
  const LaneMask *table;
  int64_t perBlock;
  const LaneMask *operator()(int64_t b) const { return table + b * perBlock; }
};

/// Where the load of tap column j for output columns from ow0 starts in an
/// image row.
inline int64_t columnOf(const Conv &s, int64_t ow0, int64_t j) {
  return ow0 * s.sw + j * s.dw - s.padLeft;
}

/// Output rows [oh0, oh0 + kRows) of the block from column ow0: the
/// epilogue applied to `acc`, rows past OH and lanes past OW dropped.
inline void storeRows(const Conv &s, const Vec (&acc)[kRows], int64_t oh0, int64_t ow0,
                      const View &y, float *out, const Epilogue &e) {
  LaneMask written = lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth);
  const View *r = e.residualView;
#pragma GCC unroll 8
  for (int k = 0; k < kRows; ++k) {
    int64_t oh = oh0 + k;
    if (oh >= s.OH)
      break;
    Vec v = acc[k];
    if (e.residual)
      v += loadLanes(e.residual + oh * r->stride(2) + ow0, written);
    storeLanes(out + oh * y.stride(2) + ow0, written, activate(e, v));
  }
}

/// The pointer to image row ih, or to `zeros` for a row of padding.
inline const float *rowOf(const Conv &s, const float *image, int64_t rowStride, const float *zeros,
                          int64_t ih) {
  return ih >= 0 && ih < s.H ? image + ih * rowStride : zeros;
}

/// y = epilogue(the depthwise convolution of one channel's image) for a
/// K x K window, strides Stride, no dilation: kRows output rows and a vector
/// of columns at a time, every loop unrolled. Each input row the block
/// reads is loaded once per tap column and multiplied into every output
/// row whose window holds it (a 3x3 window of 4 rows loads 6 rows, not
/// 12).
template <int Stride, int K>
void convolveWindow(const Conv &s, const float *weights, const float *image, int64_t rowStride,
                    const float *zeros, ColumnLanes columns, const View &y, float *out,
                    const Epilogue &e) {
  constexpr int kInputRows = (kRows - 1) * Stride + K;
  alignas(64) Vec tap[K * K];
  for (int t = 0; t < K * K; ++t)
    tap[t] = Vec{} + weights[t];
  float bias = e.bias ? e.bias[0] : 0.0f;
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += kRows) {
    const float *rows[kInputRows];
    for (int t = 0; t < kInputRows; ++t)
      rows[t] = rowOf(s, image, rowStride, zeros, oh0 * Stride + t - s.padTop);
    for (int64_t ow0 = 0, b = 0; ow0 < s.OW; ow0 += kWidth, ++b) {
      const LaneMask *lanes = columns(b);
      int64_t from = columnOf(s, ow0, 0);
      alignas(64) Vec acc[kRows]; // Read by storeRows: clang assumes vector alignment.
#pragma GCC unroll 8
      for (int k = 0; k < kRows; ++k)
        acc[k] = Vec{} + bias;
#pragma GCC unroll 16
      for (int t = 0; t < kInputRows; ++t)
#pragma GCC unroll 8
        for (int j = 0; j < K; ++j) {
          const float *at = rows[t] + from + j;
          Vec v = Stride == 1
                      ? loadLanes(at, lanes[j])
                      : evenLanes(loadLanes(at, lanes[j]), loadLanes(at + kWidth, lanes[K + j]));
#pragma GCC unroll 8
          for (int k = 0; k < kRows; ++k) {
            int i = t - k * Stride; // The tap row of output row k that row t is.
            if (i >= 0 && i < K)
              acc[k] += tap[i * K + j] * v;
          }
        }
      storeRows(s, acc, oh0, ow0, y, out, e);
    }
  }
}

/// The same for any window, strides and dilations (a row step of 1 or 2):
/// the taps in loops.
template <int Step>
void convolveAnyWindow(const Conv &s, const float *weights, const float *image, int64_t rowStride,
                       const float *zeros, ColumnLanes columns, const View &y, float *out,
                       const Epilogue &e) {
  float bias = e.bias ? e.bias[0] : 0.0f;
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += kRows) {
    const float *rows[kMaxDepthwiseTaps][kRows];
    for (int64_t i = 0; i < s.KH; ++i)
      for (int k = 0; k < kRows; ++k)
        rows[i][k] = rowOf(s, image, rowStride, zeros, (oh0 + k) * s.sh + i * s.dh - s.padTop);
    for (int64_t ow0 = 0, b = 0; ow0 < s.OW; ow0 += kWidth, ++b) {
      const LaneMask *lanes = columns(b);
      alignas(64) Vec acc[kRows]; // Read by storeRows: clang assumes vector alignment.
#pragma GCC unroll 8
      for (int k = 0; k < kRows; ++k)
        acc[k] = Vec{} + bias;
      for (int64_t i = 0; i < s.KH; ++i)
        for (int64_t j = 0; j < s.KW; ++j) {
          float weight = weights[i * s.KW + j];
          int64_t from = columnOf(s, ow0, j);
#pragma GCC unroll 8
          for (int k = 0; k < kRows; ++k) {
            const float *at = rows[i][k] + from;
            Vec v = Step == 1 ? loadLanes(at, lanes[j])
                              : evenLanes(loadLanes(at, lanes[j]),
                                          loadLanes(at + kWidth, lanes[s.KW + j]));
            acc[k] += weight * v;
          }
        }
      storeRows(s, acc, oh0, ow0, y, out, e);
    }
  }
}

using ChannelKernel = void (*)(const Conv &, const float *, const float *, int64_t, const float *,
                               ColumnLanes, const View &, float *, const Epilogue &);

/// The kernel for the layer's window: unrolled for the square windows of
/// common networks (3x3 and 5x5, strides 1 and 2).
ChannelKernel channelKernel(const Conv &s) {
  bool square = s.KH == s.KW && s.sh == s.sw && s.dh == 1 && s.dw == 1;
  if (square && s.KH == 3)
    return s.sw == 1 ? convolveWindow<1, 3> : convolveWindow<2, 3>;
  if (square && s.KH == 5)
    return s.sw == 1 ? convolveWindow<1, 5> : convolveWindow<2, 5>;
  return s.sw == 1 ? convolveAnyWindow<1> : convolveAnyWindow<2>;
}

} // namespace

bool depthwiseInPlace(const Conv &s, const View &x, const View &y, const Epilogue &e) {
  return (s.sw == 1 || s.sw == 2) && x.stride(3) == 1 && y.stride(3) == 1 &&
         (!e.residual || e.residualView->stride(3) == 1);
}

void convolveDepthwiseInPlace(const Conv &s, const View &x, const View &w, const View &y,
                              const Epilogue &e) {
  // A row of padding: the loads read only the lanes inside a row.
  float *zeros = scratch(kConvPlanes, s.W);
  for (int64_t i = 0; i < s.W; ++i)
    zeros[i] = 0.0f;
  int64_t blocks = (s.OW + kWidth - 1) / kWidth, perBlock = 2 * s.KW;
  int64_t bytes = blocks * perBlock * static_cast<int64_t>(sizeof(LaneMask));
  auto *table = reinterpret_cast<LaneMask *>(scratch(kConvOffsets, (bytes + 3) / 4));
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < s.KW; ++j) {
      int64_t from = columnOf(s, b * kWidth, j);
      table[b * perBlock + j] = lanesWithin(from, s.W);
      table[b * perBlock + s.KW + j] = lanesWithin(from + kWidth, s.W);
    }
  ColumnLanes columns{table, perBlock};
  ChannelKernel kernel = channelKernel(s);
  const View *r = e.residualView;
  float weights[kMaxDepthwiseTaps];
  for (int64_t n = 0; n < x.size(0); ++n)
    for (int64_t c = 0; c < x.size(1); ++c) {
      for (int64_t t = 0; t < s.taps(); ++t)
        weights[t] = w.data()[c * w.stride(0) + t / s.KW * w.stride(2) + t % s.KW * w.stride(3)];
      Epilogue channel = e;
      if (e.bias)
        channel.bias += c * e.biasStride;
      if (e.residual)
        channel.residual += n * r->stride(0) + c * r->stride(1);
      kernel(s, weights, x.data() + n * x.stride(0) + c * x.stride(1), x.stride(2), zeros, columns,
             y, y.data() + n * y.stride(0) + c * y.stride(1), channel);
    }
}

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

} // namespace KERNEL_NAMESPACE
