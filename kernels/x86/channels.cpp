//===- channels.cpp - conv2d with output channels in vectors --------------===//
//
// conv.cpp's other tiling of the same GEMM, for layers whose output rows are
// short (14x14, 7x7). There a tile of vectors of columns q = oh * Wq + ow
// spends most of its lanes on the Wq - OW columns past each row and on the
// last tile's columns past the layer's: a 7x7 layer computes 64 columns for
// 49 pixels. Here the vectors hold output channels (64, 128, ... 512 in
// CNNs, whole multiples of the vector) and the register tile's rows are MR
// pixels, any pixels: C^T[pixel, o] = patches[pixel, k] * W^T[k, o].
//
// The microkernel (gemm.h) broadcasts MR pixels of a tap's run in the
// phase planes, read in place as the columns tiling reads them: the tiles
// of a row of OW pixels cover it rounded up to MR (7 divides 7, 14, 28, 56,
// 112). Constant weights are packed once, transposed, into panels of NV
// vectors of channels per tap. Results go through a tile of pixels x
// channels, transposed into rows of channels as they are copied out by
// conv.cpp's copyOut with the epilogue.
//
//===----------------------------------------------------------------------===//

#include "conv.h"
#include "lanes.h"

using namespace KERNEL_NAMESPACE;

namespace {

/// Taps per block for a tile of `vectors` vectors of channels: the block's
/// panel (16 KiB) and its taps' runs of pixels stay in L1 together. With
/// conv.cpp's 24 KiB (tapsPerBlock) a 7x7 layer's 96-tap block also reads
/// 96 runs of 49 pixels (18 KiB): MobileNetV2's 7x7 pointwise layers and
/// ResNet-18's 512 -> 512 3x3 ran 4-8% slower alone (bench/ConvBench.cpp,
/// Zen 5); 8, 12 and 20 KiB measured between the two.
constexpr int64_t channelTapsPerBlock(int vectors) { return (16 << 10) / (vectors * kWidth * 4); }

/// Packs a group's weights [Og, taps] into panels of `columns` channels by
/// channelTapsPerBlock taps (taps x columns floats each), in the order
/// convolveBlocks reads them: a layer whose weights come from memory (9 MiB
/// for 512 -> 512 channels 3x3) is one stream. Channels past Og are zero.
void packChannelPanels(const void *context, float *out) {
  const ChannelPanels &p = *static_cast<const ChannelPanels *>(context);
  const Conv &s = *p.s;
  int64_t K = s.taps(), taps = channelTapsPerBlock(p.columns / kWidth);
  for (int64_t k0 = 0; k0 < K; k0 += taps)
    for (int64_t o0 = 0; o0 < s.Og; o0 += p.columns) {
      TapWalk walk(s, *p.w, k0);
      for (int64_t k = k0; k < k0 + taps && k < K; ++k, walk.next()) {
        const float *tap = p.data + walk.offset();
        for (int64_t o = o0; o < o0 + p.columns; ++o)
          *out++ = o < s.Og ? tap[o * p.w->stride(0)] : 0.0f;
      }
    }
}

/// y = epilogue(the convolution of one group) in MR x NV tiles: per block of
/// output rows and block of taps, every block of channels.
template <int MR, int NV>
void convolveBlocks(const Conv &s, const float *panels, const float *rows, const int64_t *offsets,
                    const View &y, float *out, const Epilogue &e) {
  constexpr int64_t kColumns = NV * kWidth, kTaps = channelTapsPerBlock(NV);
  int64_t K = s.taps(), width = roundUp(s.OW, MR), channels = roundUp(s.Og, kColumns);
  // Output rows per block: the block's results (pixels x channels) stay in
  // L2 from the first taps to the copy out.
  constexpr int64_t kTileBytes = 256 << 10;
  int64_t block = kTileBytes / (4 * channels * width);
  block = block < 1 ? 1 : block < s.OH ? block : s.OH;
  float *tile = scratch(kConvTile, block * width * channels);
  float *transposed = scratch(kConvResults, kWidth * block * width);
  // The pixels of the last row's last tile, copied with zeros past the
  // layer's: its runs would read past the image when it is read in place.
  alignas(64) float last[kTaps * MR];
  int64_t lastColumn = width - MR;
  bool ragged = width > s.OW;
  // copyOut's columns: rows of `width` pixels, those past OW dropped.
  Conv padded = s;
  padded.Wq = width;
  const float *end = panels + K * channels;
  bool several = runsOnSeveralThreads();
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += block) {
    int64_t count = s.OH - oh0 < block ? s.OH - oh0 : block;
    bool lastRow = oh0 + count == s.OH;
    int64_t calls = count * (width / MR);
    for (int64_t k0 = 0; k0 < K; k0 += kTaps) {
      int64_t kc = K - k0 < kTaps ? K - k0 : kTaps;
      for (int64_t k = 0; ragged && lastRow && k < kc; ++k) {
        const float *run = rows + offsets[k0 + k] + (s.OH - 1) * s.Wq + lastColumn;
        for (int r = 0; r < MR; ++r)
          last[k * MR + r] = lastColumn + r < s.OW ? run[r] : 0.0f;
      }
      for (int64_t o0 = 0; o0 < channels; o0 += kColumns) {
        // The first block of channels to read the pixels prefetches the
        // next line of each tap's run.
        int64_t ahead = o0 == 0 && several ? kWidth : 0;
        Panel weights{panels + k0 * channels + o0 * kc, kColumns};
        PanelPrefetch next(weights.rows + kc * kColumns, kc * kColumns, end, calls);
        for (int64_t oh = oh0; oh < oh0 + count; ++oh)
          for (int64_t ow = 0; ow < width; ow += MR) {
            next.step();
            float *c = tile + ((oh - oh0) * width + ow) * channels + o0;
            if (ragged && oh == s.OH - 1 && ow == lastColumn)
              microkernel<MR, NV>(kc, PackedColumns<MR>{last}, weights, c, channels, k0 > 0);
            else
              microkernel<MR, NV>(kc, TapRows{rows + oh * s.Wq + ow, offsets + k0, ahead}, weights,
                                  c, channels, k0 > 0);
          }
      }
    }
    copyOutPixels(padded, tile, channels, oh0 * width, (oh0 + count) * width, transposed, y, out,
                  e);
  }
}

} // namespace

void KERNEL_NAMESPACE::copyOutPixels(const Conv &padded, const float *tile, int64_t channels,
                                     int64_t q0, int64_t q1, float *transposed, const View &y,
                                     float *out, const Epilogue &e) {
  int64_t pixels = q1 - q0;
  for (int64_t o0 = 0; o0 < padded.Og; o0 += kWidth) {
    int64_t p = 0;
    for (; p + kWidth <= pixels; p += kWidth)
      transposeBlock(tile + p * channels + o0, channels, transposed + p, pixels);
    for (; p < pixels; ++p)
      for (int64_t o = 0; o < kWidth; ++o)
        transposed[o * pixels + p] = tile[p * channels + o0 + o];
    int64_t n = padded.Og - o0 < kWidth ? padded.Og - o0 : kWidth;
    copyOut(padded, transposed, pixels, q0, q1, n, y, out + o0 * y.stride(1), e.ofChannel(o0));
  }
}

void KERNEL_NAMESPACE::convolveByChannels(const Conv &s, const View &w, const float *filters,
                                          bool constant, const float *rows, const int64_t *offsets,
                                          const View &y, float *out, const Epilogue &e) {
  TileShape shape = bestTileShape(s.OW, s.Og);
  int64_t columns = shape.vectors * kWidth, floats = roundUp(s.Og, columns) * s.taps();
  ChannelPanels context{&s, &w, filters, columns};
  const float *panels =
      packedFilters(w, filters, s.Og, columns, floats, constant, packChannelPanels, &context);
  withTileShape(shape, [&]<int MR, int NV>() {
    convolveBlocks<MR, NV>(s, panels, rows, offsets, y, out, e);
  });
}
