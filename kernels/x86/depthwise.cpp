//===- depthwise.cpp - Depthwise conv2d for x86-64 ------------------------===//
//
// Depthwise layers (one input and one output channel per group) of the
// library conv2d, a channel at a time, one FMA per tap and vector of
// outputs.
//
// Rows with unit or stride-2 steps are read where they are, through the
// window loops of window.h, and the epilogue is applied as the sums are
// stored; 3x3 and 5x5 windows are unrolled. Other strides go through the
// channel's phase planes (conv.cpp), where each tap reads a contiguous run
// of the flattened output q = oh * Wq + ow, summed into a row the epilogue
// copies out.
//
//===----------------------------------------------------------------------===//

#include "window.h"

namespace KERNEL_NAMESPACE {
namespace {

/// A depthwise channel's reduction: the weighted sum of the taps, from its
/// bias; the epilogue applied as the block's rows are stored.
template <int Taps> struct WeightedSum {
  static constexpr bool kZeroPadding = true;
  Vec padding{};
  alignas(64) Vec tap[Taps]; // Not zeroed first: the window reads s.taps() of them.
  float bias;
  const Conv &s;
  const View &y;
  float *out;
  const Epilogue &e;

  WeightedSum(const Conv &s, const float (&taps)[Taps], float bias, const View &y, float *out,
              const Epilogue &e)
      : bias(bias), s(s), y(y), out(out), e(e) {
    for (int64_t t = 0; t < s.taps(); ++t)
      tap[t] = Vec{} + taps[t];
  }

  template <int Rows> void begin(Vec (&acc)[Rows]) const {
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k)
      acc[k] = Vec{} + bias;
  }
  void add(Vec &acc, int64_t t, Vec v) const { acc += tap[t] * v; }
  /// Output rows [oh0, oh0 + Rows) from column ow0: rows past OH and lanes
  /// past OW dropped.
  template <int Rows> void end(const Vec (&acc)[Rows], int64_t oh0, int64_t ow0) const {
    LaneMask written = lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth);
    const View *r = e.residualView;
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k) {
      int64_t oh = oh0 + k;
      if (oh >= s.OH)
        break;
      Vec v = acc[k];
      if (e.residual)
        v += loadLanes(e.residual + oh * r->stride(2) + ow0, written);
      storeLanes(out + oh * y.stride(2) + ow0, written, activate(e, v));
    }
  }
};

/// The channels of the layer with `Taps` taps at most, the square windows
/// `Unrolled` lists unrolled.
template <int Taps, int... Unrolled>
void convolveChannels(const Conv &s, const View &x, const View &w, const View &y, const Epilogue &e,
                      const float *zeros, ColumnLanes columns) {
  const View *r = e.residualView;
  for (int64_t n = 0; n < x.size(0); ++n)
    for (int64_t c = 0; c < x.size(1); ++c) {
      Epilogue channel = e;
      if (e.bias)
        channel.bias += c * e.biasStride;
      if (e.residual)
        channel.residual += n * r->stride(0) + c * r->stride(1);
      float *out = y.data() + n * y.stride(0) + c * y.stride(1);
      float taps[Taps];
      depthwiseTaps(s, w, w.data() + c * w.stride(0), taps);
      WeightedSum<Taps> sum(s, taps, e.bias ? channel.bias[0] : 0.0f, y, out, channel);
      reduceChannel<WeightedSum<Taps>, Unrolled...>(s, x.data() + n * x.stride(0) + c * x.stride(1),
                                                    x.stride(2), zeros, columns, sum);
    }
}

} // namespace

bool depthwiseInPlace(const Conv &s, const View &x, const View &y, const Epilogue &e) {
  return rowsInPlace(s, x, y) && (!e.residual || e.residualView->stride(3) == 1);
}

void convolveDepthwiseInPlace(const Conv &s, const View &x, const View &w, const View &y,
                              const Epilogue &e) {
  // A row of padding: the loads read only the lanes inside a row.
  const float *zeros = paddingRow(s, 0.0f);
  ColumnLanes columns = columnLanes(s);
  // The taps as vectors, as many as the window has: those of the
  // unrolled windows stay in registers.
  if (s.taps() <= 9)
    convolveChannels<9, 3>(s, x, w, y, e, zeros, columns);
  else if (s.taps() <= 25)
    convolveChannels<25, 5>(s, x, w, y, e, zeros, columns);
  else
    convolveChannels<kMaxDepthwiseTaps>(s, x, w, y, e, zeros, columns);
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
