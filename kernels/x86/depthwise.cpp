//===- depthwise.cpp - Depthwise conv2d for x86-64 ------------------------===//
//
// Depthwise layers (one input and one output channel per group) of the
// library conv2d, one FMA per tap and vector of outputs.
//
// Layers of narrow outputs (7x7, where a vector of a row's outputs is
// mostly lanes past its end) run kWidth channels at a time with their
// pixels transposed, a vector holding one pixel of every channel of the
// block (NCHW16c for the block's life): every FMA's lanes are outputs. The
// block is transposed into a zero-padded image, each output pixel summed
// over the window's taps, and the sums transposed back, a vector of pixels
// at a time, with the epilogue applied as each channel's are stored. The
// transposes stay in registers (through scratch, they took half the time
// of MobileNetV2's 7x7 layers).
//
// Other layers go a channel at a time. Rows with unit or stride-2 steps are
// read where they are, through the window loops of window.h, and the
// epilogue is applied as the sums are stored; 3x3 and 5x5 windows are
// unrolled. Other strides go through the channel's phase planes
// (conv.cpp), where each tap reads a contiguous run of the flattened
// output q = oh * Wq + ow, summed into a row the epilogue copies out.
//
//===----------------------------------------------------------------------===//

#include "window.h"

#include <algorithm>

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
  // Without a residual or SiLU the epilogue is a clamp (ReLU a lower bound
  // of 0: both keep NaN), applied with no test per row. The tests, and the
  // reloads after each row's store (an intrinsic's store may alias
  // anything), cost as much as the rows' FMAs: MobileNetV2's 144-channel
  // 56x56 layer took 0.133 -> 0.104 ms so, its 384-channel 14x14 one 0.029
  // -> 0.025 ms.
  bool clampOnly, siluOnly;
  Vec lo, hi;

  WeightedSum(const Conv &s, const float (&taps)[Taps], float bias, const View &y, float *out,
              const Epilogue &e)
      : bias(bias), s(s), y(y), out(out), e(e), clampOnly(!e.residual && !e.silu),
        siluOnly(activationOf(e) == Activation::kSilu),
        lo(Vec{} + (e.relu ? std::max(e.lo, 0.0f) : e.lo)), hi(Vec{} + e.hi) {
    for (int64_t t = 0; t < s.taps(); ++t)
      tap[t] = Vec{} + taps[t];
  }

  template <int Rows> void begin(Vec (&acc)[Rows]) const {
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k)
      acc[k] = Vec{} + bias;
  }
  void inputs(Vec) const {}
  void add(Vec &acc, int64_t t, Vec v) const { acc += tap[t] * v; }
  /// Output rows [oh0, oh0 + Rows) from column ow0: rows past OH and lanes
  /// past OW dropped.
  template <int Rows> void end(const Vec (&acc)[Rows], int64_t oh0, int64_t ow0) const {
    LaneMask written = lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth);
    if (clampOnly) {
      int64_t rows = s.OH - oh0, rowStride = y.stride(2);
      float *first = out + oh0 * rowStride + ow0;
#pragma GCC unroll 8
      for (int k = 0; k < Rows; ++k)
        if (k < rows)
          storeLanes(first + k * rowStride, written, clamp(acc[k], lo, hi));
      return;
    }
    const View *r = e.residualView;
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k) {
      int64_t oh = oh0 + k;
      if (oh >= s.OH)
        break;
      Vec v = acc[k];
      if (e.residual)
        v += loadLanes(e.residual + oh * r->stride(2) + ow0, written);
      storeLanes(out + oh * y.stride(2) + ow0, written, siluOnly ? silu(v) : activate(e, v));
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

/// Output pixels of a row summed at once, each its own chain of FMAs: a
/// tap's vector is loaded once for all of them, and the chains hide the
/// FMA's latency.
constexpr int kBlockedPixels = 8;

/// The zero-padded image of the kWidth channels from `channels` (H x W
/// pixels contiguous in each), pixel-major: pixel (ih, iw) at
/// padded[((ih + padTop) * Wp + iw + padLeft) * kWidth], for the Hp x Wp
/// pixels the windows reach. kWidth pixels are transposed at a time in
/// registers and each stored where it lies; only the margins are zeroed.
void transposeIn(const Conv &s, const View &x, const float *channels, int64_t Hp, int64_t Wp,
                 float *padded) {
  int64_t from = std::clamp<int64_t>(s.padLeft, 0, Wp);
  int64_t to = std::clamp<int64_t>(s.padLeft + s.W, from, Wp);
  for (int64_t row = 0; row < Hp; ++row) {
    float *line = padded + row * Wp * kWidth;
    int64_t ih = row - s.padTop;
    bool inside = ih >= 0 && ih < s.H;
    std::fill(line, line + (inside ? from : Wp) * kWidth, 0.0f);
    if (inside)
      std::fill(line + to * kWidth, line + Wp * kWidth, 0.0f);
  }
  int64_t pixels = s.H * s.W, channelStride = x.stride(1), ih = 0, iw = 0;
  for (int64_t p = 0; p < pixels; p += kWidth) {
    LaneMask lanes = lanesWithin(p, pixels);
    // Unrolled, so that the rows stay in registers.
    Vec rows[kWidth];
#pragma GCC unroll 16
    for (int c = 0; c < kWidth; ++c)
      rows[c] = loadLanes(channels + c * channelStride + p, lanes);
    transposeVectors(rows);
#pragma GCC unroll 16
    for (int i = 0; i < kWidth; ++i) {
      if (p + i == pixels)
        break;
      int64_t row = ih + s.padTop, column = iw + s.padLeft;
      if (row < Hp && column < Wp)
        *reinterpret_cast<Vec *>(padded + (row * Wp + column) * kWidth) = rows[i];
      if (++iw == s.W) {
        iw = 0;
        ++ih;
      }
    }
  }
}

/// The kWidth channel rows of y from `out` = the epilogue of the
/// pixel-major tile (pixel q's channels at tile[q * kWidth]), kWidth pixels
/// transposed at a time in registers and stored as a vector of each
/// channel's row.
template <Activation A>
void transposeOutAs(const Conv &s, const float *tile, const View &y, float *out,
                    const Epilogue &e) {
  int64_t pixels = s.OH * s.OW, channelStride = y.stride(1);
  int64_t residualStride = e.residual ? e.residualView->stride(1) : 0;
  Vec lo = Vec{} + e.lo, hi = Vec{} + e.hi;
  float bias[kWidth];
  for (int c = 0; c < kWidth; ++c)
    bias[c] = e.bias ? e.bias[c * e.biasStride] : 0.0f;
  for (int64_t p = 0; p < pixels; p += kWidth) {
    LaneMask lanes = lanesWithin(p, pixels);
    // Unrolled, so that the rows stay in registers.
    Vec rows[kWidth];
#pragma GCC unroll 16
    for (int i = 0; i < kWidth; ++i)
      rows[i] = p + i < pixels ? *reinterpret_cast<const Vec *>(tile + (p + i) * kWidth) : Vec{};
    transposeVectors(rows);
#pragma GCC unroll 16
    for (int c = 0; c < kWidth; ++c) {
      Vec v = rows[c] + bias[c];
      if (e.residual)
        v += loadLanes(e.residual + c * residualStride + p, lanes);
      storeLanes(out + c * channelStride + p, lanes, activateAs<A>(e, v, lo, hi));
    }
  }
}

/// tile[(oh * OW + ow) * kWidth + c] = the window's sum at (oh, ow) in
/// channel c of the padded block; `taps` holds each tap's kWidth weights.
template <int Pixels>
inline void sumPixels(const Conv &s, const float *padded, int64_t Wp, const Vec *taps, int64_t oh,
                      int64_t ow0, float *tile) {
  Vec acc[Pixels] = {};
  for (int64_t i = 0; i < s.KH; ++i)
    for (int64_t j = 0; j < s.KW; ++j) {
      Vec tap = taps[i * s.KW + j];
      const float *at = padded + ((oh * s.sh + i * s.dh) * Wp + ow0 * s.sw + j * s.dw) * kWidth;
#pragma GCC unroll 8
      for (int r = 0; r < Pixels; ++r)
        acc[r] += tap * *reinterpret_cast<const Vec *>(at + r * s.sw * kWidth);
    }
#pragma GCC unroll 8
  for (int r = 0; r < Pixels; ++r)
    *reinterpret_cast<Vec *>(tile + (oh * s.OW + ow0 + r) * kWidth) = acc[r];
}

/// sumPixels for `count` pixels, 1 to Pixels.
template <int Pixels>
void sumPixelsUpTo(int64_t count, const Conv &s, const float *padded, int64_t Wp, const Vec *taps,
                   int64_t oh, int64_t ow0, float *tile) {
  if constexpr (Pixels > 1)
    if (count < Pixels)
      return sumPixelsUpTo<Pixels - 1>(count, s, padded, Wp, taps, oh, ow0, tile);
  sumPixels<Pixels>(s, padded, Wp, taps, oh, ow0, tile);
}

/// The first channel of block b of kWidth channels. The last block overlaps
/// the one before when the channels are not a whole number of blocks: its
/// channels are computed twice, alike.
int64_t firstOfBlock(int64_t b, int64_t channels) {
  return std::min(b * kWidth, channels - kWidth);
}

struct BlockedTaps {
  const Conv *s;
  const View *w;
  int64_t channels;
};

/// out[(b * taps + t) * kWidth + l] = tap t of channel firstOfBlock(b) + l:
/// each tap's weights of a block as one vector.
void packBlockedTaps(const void *context, float *out) {
  const auto &[s, w, channels] = *static_cast<const BlockedTaps *>(context);
  float channelTaps[kMaxDepthwiseTaps];
  int64_t taps = s->taps();
  for (int64_t b = 0; b * kWidth < channels; ++b)
    for (int64_t l = 0; l < kWidth; ++l) {
      depthwiseTaps(*s, *w, w->data() + (firstOfBlock(b, channels) + l) * w->stride(0),
                    channelTaps);
      for (int64_t t = 0; t < taps; ++t)
        out[(b * taps + t) * kWidth + l] = channelTaps[t];
    }
}

} // namespace

bool depthwiseBlocked(const Conv &s, const View &x, const View &y, const Epilogue &e) {
  // Per block of kWidth channels, the blocked path costs about two
  // operations per pixel transposed, in and out (in registers: a round of
  // shuffles per halving of the block), and an FMA per tap and output;
  // rows, an FMA per tap and vector of each channel's output row, those of
  // stride 2 about 1.6 (a vector of outputs reads two of the input row).
  // Fitted on MobileNetV2's 3x3 layers (Zen 5, AVX-512, one thread,
  // 2026-12-06): the blocked path took 960 channels of 7x7 in 0.019 ms
  // (rows 0.050), 576 of 14x14 -> 7x7 in 0.017 (rows 0.039), and ran even
  // with rows on 576 of 14x14, 1.3x slower on 192 of 28x28 and 144 of
  // 56x56 -> 28x28; EfficientNet-B0's 5x5 layers of 7x7 outputs were 1.6x
  // faster blocked with the transposes through memory.
  int64_t outputs = s.OH * s.OW;
  int64_t blocked = 2 * (s.H * s.W + outputs) + s.taps() * outputs;
  int64_t rows = s.taps() * s.OH * roundUp(s.OW, kWidth) * (s.sw == 2 ? 8 : 5) / 5;
  // Each channel's pixels contiguous: x's read, y's and the residual's
  // written and read a vector of pixels at a time.
  auto contiguous = [](const View &v, int64_t width) {
    return v.stride(3) == 1 && v.stride(2) == width;
  };
  return blocked < rows && x.size(1) >= kWidth && contiguous(x, s.W) && contiguous(y, s.OW) &&
         (!e.residual || contiguous(*e.residualView, s.OW));
}

void convolveDepthwiseBlocked(const Conv &s, const View &x, const View &w, bool constant,
                              const View &y, const Epilogue &e) {
  int64_t Hp = (s.OH - 1) * s.sh + (s.KH - 1) * s.dh + 1;
  int64_t Wp = (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1;
  int64_t pixels = s.OH * s.OW;
  int64_t channels = x.size(1), blocks = (channels + kWidth - 1) / kWidth;
  BlockedTaps context{&s, &w, channels};
  const float *taps = packedFilters(w, w.data(), channels, kWidth, blocks * s.taps() * kWidth,
                                    constant, packBlockedTaps, &context);
  float *padded = scratch(kConvPlanes, Hp * Wp * kWidth);
  float *tile = scratch(kConvTile, pixels * kWidth);
  const View *r = e.residualView;
  for (int64_t n = 0; n < x.size(0); ++n)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t c0 = firstOfBlock(b, channels);
      transposeIn(s, x, x.data() + n * x.stride(0) + c0 * x.stride(1), Hp, Wp, padded);
      const auto *blockTaps = reinterpret_cast<const Vec *>(taps + b * s.taps() * kWidth);
      for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ow = 0; ow < s.OW; ow += kBlockedPixels)
          sumPixelsUpTo<kBlockedPixels>(std::min<int64_t>(s.OW - ow, kBlockedPixels), s, padded, Wp,
                                        blockTaps, oh, ow, tile);
      Epilogue block = e.ofChannel(c0);
      if (block.residual)
        block.residual += n * r->stride(0);
      float *out = y.data() + n * y.stride(0) + c0 * y.stride(1);
      withActivation(activationOf(block),
                     [&]<Activation A>() { transposeOutAs<A>(s, tile, y, out, block); });
    }
}

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
