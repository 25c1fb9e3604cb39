//===- winograd.cpp - 3x3 stride-1 conv2d by Winograd's F(2x2, 3x3) -------===//
//
// A 2x2 block of one output channel's results (a "tile") is
//   A^T [sum over input channels c of (G g G^T) * (B^T d B)] A,
// g the 3x3 filter of (o, c), d the 4x4 patch of channel c over the tile
// and * elementwise (Lavin and Gray, 2015). The sum is 16 GEMMs, one per
// element (xi, nu) of the 4x4 transforms: [tiles, Cg] x [Cg, Og], 16
// multiplies per tile and channel pair where the direct convolution has 36.
// The transforms are additions only (G's halves aside).
//
//  - Weights: transformed and packed once (constant weights are cached) in
//    channels.cpp's panels, per (xi, nu).
//  - Inputs: the phase planes are the zero-padded image (stride 1). B^T d B
//    is computed a vector of tiles of a tile row at a time, from rows read
//    with stride 2, into V[(xi, nu)][c][tile].
//  - GEMMs: gemm.h's microkernel, output channels in vectors, MR tiles of
//    V broadcast: M[(xi, nu)][tile][o].
//  - Outputs: A^T M A, a vector of channels at a time, into a tile of
//    pixels x channels that copyOutPixels writes with the epilogue.
//
// Rounding differs from the direct sum's: the transforms add up to 4 inputs
// (and weights) before they are multiplied, which loses about 2 bits more
// on cancelling terms; an infinity in a patch makes its tile's results NaN
// where some direct ones would be infinite.
//
//===----------------------------------------------------------------------===//

#include "conv.h"
#include "lanes.h"

using namespace KERNEL_NAMESPACE;

namespace {

constexpr int kPoints = 16; // Elements of a 4x4 transform.

/// Packs G g G^T of a group's filters, per (xi, nu), into panels of
/// `columns` channels by tapsPerBlock input channels, as
/// packChannelPanels packs a layer's taps; channels past Og are zero.
/// Every filter's transform goes first into scratch, [xi, nu][c][o], so
/// that the packing reads runs of channels: with a malloc'd buffer of
/// [o][c][xi, nu] (fresh pages, their faults trapping to the VM's host,
/// and a cache line per element), SqueezeNet's 64 -> 256 layer took 3 ms
/// to pack.
void packWinogradWeights(const void *context, float *out) {
  const ChannelPanels &p = *static_cast<const ChannelPanels *>(context);
  const Conv &s = *p.s;
  const View &w = *p.w;
  int64_t pairs = s.Cg * s.Og;
  // This thread's scratch exists (conv.cpp took the offsets): scratch() of a
  // new thread takes the lock that cachedPanels holds around this.
  float *transformed = scratch(kConvPatches, kPoints * pairs);
  for (int64_t o = 0; o < s.Og; ++o)
    for (int64_t c = 0; c < s.Cg; ++c) {
      const float *g = p.data + o * w.stride(0) + c * w.stride(1);
      float rows[4][3]; // G g
      for (int j = 0; j < 3; ++j) {
        float g0 = g[j * w.stride(3)], g1 = g[w.stride(2) + j * w.stride(3)],
              g2 = g[2 * w.stride(2) + j * w.stride(3)];
        rows[0][j] = g0;
        rows[1][j] = 0.5f * (g0 + g1 + g2);
        rows[2][j] = 0.5f * (g0 - g1 + g2);
        rows[3][j] = g2;
      }
      float *u = transformed + c * s.Og + o;
      for (int i = 0; i < 4; ++i) { // (G g) G^T
        u[(i * 4 + 0) * pairs] = rows[i][0];
        u[(i * 4 + 1) * pairs] = 0.5f * (rows[i][0] + rows[i][1] + rows[i][2]);
        u[(i * 4 + 2) * pairs] = 0.5f * (rows[i][0] - rows[i][1] + rows[i][2]);
        u[(i * 4 + 3) * pairs] = rows[i][2];
      }
    }
  int64_t taps = tapsPerBlock(p.columns / kWidth);
  for (int point = 0; point < kPoints; ++point)
    for (int64_t k0 = 0; k0 < s.Cg; k0 += taps)
      for (int64_t o0 = 0; o0 < s.Og; o0 += p.columns)
        for (int64_t c = k0; c < k0 + taps && c < s.Cg; ++c) {
          const float *channels = transformed + point * pairs + c * s.Og;
          for (int64_t o = o0; o < o0 + p.columns; ++o)
            *out++ = o < s.Og ? channels[o] : 0.0f;
        }
}

/// V[point][c][tile] = B^T d B for the tiles of tile rows [ty0, ty0 + rows)
/// (`stride` tiles per point and channel), d read from the planes.
void transformInputs(const Conv &s, const float *planes, int64_t tilesWide, int64_t ty0,
                     int64_t rows, int64_t stride, float *v) {
  for (int64_t c = 0; c < s.Cg; ++c)
    for (int64_t ty = ty0; ty < ty0 + rows; ++ty) {
      // The patch rows 2 ty .. 2 ty + 3; the last may be one past the plane
      // (odd OH) and feed only results that are dropped.
      const float *row = planes + c * s.planeFloats() + 2 * ty * s.Wq;
      for (int64_t tx0 = 0; tx0 < tilesWide; tx0 += kWidth) {
        Vec x[4][4]; // x[r][j]: element (r, j) of the patches of kWidth tiles.
        for (int r = 0; r < 4; ++r)
          for (int j = 0; j < 4; ++j) {
            int64_t at = 2 * tx0 + j;
            const float *run = row + r * s.Wq + at;
            x[r][j] = evenLanes(loadLanes(run, lanesWithin(at, s.Wq)),
                                loadLanes(run + kWidth, lanesWithin(at + kWidth, s.Wq)));
          }
        Vec t[4][4]; // B^T d
        for (int j = 0; j < 4; ++j) {
          t[0][j] = x[0][j] - x[2][j];
          t[1][j] = x[1][j] + x[2][j];
          t[2][j] = x[2][j] - x[1][j];
          t[3][j] = x[1][j] - x[3][j];
        }
        LaneMask tiles = lanesWithin(tx0, tilesWide);
        float *to = v + c * stride + (ty - ty0) * tilesWide + tx0;
        int point = 0;
        for (int i = 0; i < 4; ++i, point += 4) { // (B^T d) B
          storeLanes(to + (point + 0) * s.Cg * stride, tiles, t[i][0] - t[i][2]);
          storeLanes(to + (point + 1) * s.Cg * stride, tiles, t[i][1] + t[i][2]);
          storeLanes(to + (point + 2) * s.Cg * stride, tiles, t[i][2] - t[i][1]);
          storeLanes(to + (point + 3) * s.Cg * stride, tiles, t[i][1] - t[i][3]);
        }
      }
    }
}

/// The 2x2 results of `tiles` tiles (`tilesWide` a row) from M[point][tile]
/// [channels] into pixels [(2 ty + i) * 2 tilesWide + 2 tx + j][channels],
/// those of the first `used` channels.
void transformOutputs(const float *m, int64_t tiles, int64_t tilesWide, int64_t stride,
                      int64_t channels, int64_t used, float *pixels) {
  for (int64_t tile = 0; tile < tiles; ++tile) {
    int64_t ty = tile / tilesWide, tx = tile % tilesWide;
    float *to = pixels + (2 * ty * 2 * tilesWide + 2 * tx) * channels;
    for (int64_t o = 0; o < used; o += kWidth) {
      Vec in[kPoints];
      for (int point = 0; point < kPoints; ++point)
        in[point] = *reinterpret_cast<const Vec *>(m + (point * stride + tile) * channels + o);
      Vec t[2][4]; // A^T M
      for (int j = 0; j < 4; ++j) {
        t[0][j] = in[j] + in[4 + j] + in[8 + j];
        t[1][j] = in[4 + j] - in[8 + j] - in[12 + j];
      }
      for (int i = 0; i < 2; ++i) { // (A^T M) A
        float *left = to + i * 2 * tilesWide * channels + o;
        *reinterpret_cast<Vec *>(left) = t[i][0] + t[i][1] + t[i][2];
        *reinterpret_cast<Vec *>(left + channels) = t[i][1] - t[i][2] - t[i][3];
      }
    }
  }
}

template <int MR, int NV>
void convolveTiles(const Conv &s, const float *panels, const float *planes, const View &y,
                   float *out, const Epilogue &e, int64_t blockRows) {
  constexpr int64_t kColumns = NV * kWidth, kTaps = tapsPerBlock(NV);
  int64_t tilesHigh = (s.OH + 1) / 2, tilesWide = (s.OW + 1) / 2;
  int64_t channels = roundUp(s.Og, kColumns), stride = roundUp(blockRows * tilesWide, MR);
  float *v = scratch(kConvPatches, kPoints * s.Cg * stride);
  float *m = scratch(kConvTile, kPoints * stride * channels);
  float *pixels = scratch(kConvPixels, 4 * blockRows * tilesWide * channels);
  float *transposed = scratch(kConvResults, kWidth * 4 * blockRows * tilesWide);
  // copyOutPixels' rows: 2 tilesWide pixels, those past OW dropped.
  Conv padded = s;
  padded.Wq = 2 * tilesWide;
  const float *end = panels + kPoints * s.Cg * channels;
  for (int64_t ty0 = 0; ty0 < tilesHigh; ty0 += blockRows) {
    int64_t rows = tilesHigh - ty0 < blockRows ? tilesHigh - ty0 : blockRows;
    int64_t tiles = rows * tilesWide;
    transformInputs(s, planes, tilesWide, ty0, rows, stride, v);
    for (int point = 0; point < kPoints; ++point)
      for (int64_t k0 = 0; k0 < s.Cg; k0 += kTaps) {
        int64_t kc = s.Cg - k0 < kTaps ? s.Cg - k0 : kTaps;
        for (int64_t o0 = 0; o0 < channels; o0 += kColumns) {
          Panel weights{panels + (point * s.Cg + k0) * channels + o0 * kc, kColumns};
          PanelPrefetch next(weights.rows + kc * kColumns, kc * kColumns, end,
                             (tiles + MR - 1) / MR);
          for (int64_t t = 0; t < tiles; t += MR, next.step())
            microkernel<MR, NV>(kc, Panel{v + (point * s.Cg + k0) * stride + t, stride}, weights,
                                m + (point * stride + t) * channels + o0, channels, k0 > 0);
        }
      }
    transformOutputs(m, tiles, tilesWide, stride, channels, roundUp(s.Og, kWidth), pixels);
    int64_t lastRow = 2 * (ty0 + rows) < s.OH ? 2 * (ty0 + rows) : s.OH;
    copyOutPixels(padded, pixels, channels, 2 * ty0 * padded.Wq, lastRow * padded.Wq, transposed, y,
                  out, e);
  }
}

} // namespace

bool KERNEL_NAMESPACE::winogradPays(const Conv &s) {
  // The transforms cost about what the saved multiplies would with fewer
  // than 16 channels in or 32 out. Images below 10x10 waste tiles (a 7x7
  // one is 4x4 tiles, 64 pixels) and their layers have the most channels,
  // whose transformed weights (16/9 of the filters') come from memory in
  // a model: ResNet-18's 512-channel 7x7 layers ran as fast either way
  // with one thread and slower by Winograd with two. (Measured on the
  // layers of ResNet-18, GoogLeNet and SqueezeNet, Zen 5.) With 16 to 31
  // channels in, only on images up to 32x32: each tile's 16 points then
  // carry a GEMM of few terms against transforms of a whole image, which
  // on SqueezeNet's 16 -> 64 layers of 55x55 stream through L3 (0.35 ->
  // 0.32 ms direct in the model, 2026-12-04), where GoogLeNet's 16 -> 32
  // layer of 28x28 and 24 -> 64 layers of 14x14 still gain 6-12%.
  bool window = s.KH == 3 && s.KW == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1;
  bool enoughChannels = s.Cg >= 32 || (s.Cg >= 16 && s.OH * s.OW <= 32 * 32);
  return window && enoughChannels && s.Og >= 32 && s.OH * s.OW >= 100;
}

void KERNEL_NAMESPACE::convolveWinograd(const Conv &s, const View &w, const float *filters,
                                        bool constant, const float *planes, const View &y,
                                        float *out, const Epilogue &e) {
  // Tile rows per block: its transforms and results (about 2 MiB) stay in
  // L2 and L3 between the steps; per point, a GEMM's share stays in L2.
  int64_t tilesHigh = (s.OH + 1) / 2, tilesWide = (s.OW + 1) / 2;
  int64_t rowBytes = 4 * tilesWide * (kPoints * s.Cg + (kPoints + 4) * roundUp(s.Og, kWidth));
  int64_t blockRows = (2 << 20) / rowBytes;
  blockRows = blockRows < 1 ? 1 : blockRows < tilesHigh ? blockRows : tilesHigh;
  TileShape shape = bestTileShape(blockRows * tilesWide, s.Og);
  int64_t columns = shape.vectors * kWidth, floats = kPoints * s.Cg * roundUp(s.Og, columns);
  ChannelPanels context{&s, &w, filters, columns};
  const float *panels =
      packedFilters(w, filters, s.Og, columns, floats, constant, packWinogradWeights, &context);
  withTileShape(shape, [&]<int MR, int NV>() {
    convolveTiles<MR, NV>(s, panels, planes, y, out, e, blockRows);
  });
}
