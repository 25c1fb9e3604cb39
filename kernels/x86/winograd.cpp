//===- winograd.cpp - 3x3 stride-1 conv2d by Winograd's F(m x m, 3x3) -----===//
//
// An m x m block of one output channel's results (a "tile") is
//   A^T [sum over input channels c of (G g G^T) * (B^T d B)] A,
// g the 3x3 filter of (o, c), d the (m + 2) x (m + 2) patch of channel c
// over the tile and * elementwise (Lavin and Gray, 2015). The sum is one
// GEMM per point of the transforms, [tiles, Cg] x [Cg, Og]: F(2x2, 3x3)
// has 16 points, 4 multiplies per result and channel pair where the direct
// convolution has 9; F(4x4, 3x3) has 36, 2.25 per result, and runs the
// images with enough tiles to carry its larger transformed filters
// (largeTilesPay).
//
//  - Weights: transformed and packed once (constant weights are cached) in
//    channels.cpp's panels, per point.
//  - Inputs: the phase planes are the zero-padded image (stride 1). B^T d B
//    is computed a vector of tiles of a tile row at a time, from rows read
//    with stride m (every second or fourth float's lanes, by permutes),
//    into V[point][c][tile].
//  - GEMMs: gemm.h's microkernel, output channels in vectors, MR tiles of
//    V broadcast: M[point][tile][o].
//  - Outputs: A^T M A, a vector of channels at a time, into a tile of
//    pixels x channels that copyOutPixels writes with the epilogue.
//
// Rounding differs from the direct sum's: the transforms add up to 4 (m =
// 2) or 6 inputs (and weights), scaled by up to 8, before they are
// multiplied, which loses about 2 and 4 bits more on cancelling terms; an
// infinity in a patch makes its tile's results NaN where some direct ones
// would be infinite.
//
//===----------------------------------------------------------------------===//

#include "conv.h"
#include "lanes.h"

using namespace KERNEL_NAMESPACE;

namespace {

/// Winograd's F(M x M, 3x3): M x M results of an (M + 2) x (M + 2) patch,
/// from kPoints products per input and output channel pair.
template <int M> struct Tiles { static constexpr int kSide = M + 2, kPoints = kSide * kSide; };

// The 1-D transforms, applied to the rows and then the columns of a tile
// (or the reverse): G (filters), B^T (patches), A^T (products), from the
// Toom-Cook construction. F(2, 3) takes the points 0, 1, -1 and infinity;
// F(4, 3) adds 1/2 and -2, which round less than Lavin and Gray's 2 and
// -2: the largest error of a 4x4 tile of 64 channels of U(-1, 1) data in
// float was 5.9e-5 against 2.3e-4 (numpy), the results being up to 25.

inline void transformFilter(const float (&g)[3], float (&u)[4]) {
  u[0] = g[0];
  u[1] = 0.5f * (g[0] + g[1] + g[2]);
  u[2] = 0.5f * (g[0] - g[1] + g[2]);
  u[3] = g[2];
}

inline void transformFilter(const float (&g)[3], float (&u)[6]) {
  u[0] = g[0];
  u[1] = (g[0] + g[1] + g[2]) / 3.0f;
  u[2] = (-g[0] + g[1] - g[2]) / 3.0f;
  u[3] = -(16.0f * g[0] + 8.0f * g[1] + 4.0f * g[2]) / 15.0f;
  u[4] = (g[0] - 2.0f * g[1] + 4.0f * g[2]) / 15.0f;
  u[5] = g[2];
}

inline void transformPatch(const Vec (&d)[4], Vec (&t)[4]) {
  t[0] = d[0] - d[2];
  t[1] = d[1] + d[2];
  t[2] = d[2] - d[1];
  t[3] = d[1] - d[3];
}

inline void transformPatch(const Vec (&d)[6], Vec (&t)[6]) {
  t[0] = d[0] - 1.5f * d[1] - 2.0f * d[2] + 1.5f * d[3] + d[4];
  t[1] = -d[1] + 0.5f * d[2] + 2.5f * d[3] + d[4];
  t[2] = d[1] - 2.5f * d[2] + 0.5f * d[3] + d[4];
  t[3] = -2.0f * d[1] - d[2] + 2.0f * d[3] + d[4];
  t[4] = 0.5f * d[1] - d[2] - 0.5f * d[3] + d[4];
  t[5] = d[1] - 1.5f * d[2] - 2.0f * d[3] + 1.5f * d[4] + d[5];
}

inline void transformProducts(const Vec (&m)[4], Vec (&y)[2]) {
  y[0] = m[0] + m[1] + m[2];
  y[1] = m[1] - m[2] - m[3];
}

inline void transformProducts(const Vec (&m)[6], Vec (&y)[4]) {
  Vec sum12 = m[1] + m[2], difference12 = m[1] - m[2];
  y[0] = m[0] + sum12 + m[3] + m[4];
  y[1] = difference12 + 0.5f * m[3] - 2.0f * m[4];
  y[2] = sum12 + 0.25f * m[3] + 4.0f * m[4];
  y[3] = difference12 + 0.125f * m[3] - 8.0f * m[4] + m[5];
}

/// Elements j = 0 .. M + 1 of the patches of kWidth tiles from the one at
/// column `at` of a plane row `row` (M columns apart), 0 past the row's Wq
/// columns: columns[j][l] = row[at + M l + j].
template <int M>
inline void patchColumns(const float *row, int64_t at, int64_t Wq, Vec (&columns)[M + 2]) {
  if constexpr (M == 2) {
    for (int j = 0; j < M + 2; ++j)
      columns[j] = evenLanes(loadLanes(row + at + j, lanesWithin(at + j, Wq)),
                             loadLanes(row + at + j + kWidth, lanesWithin(at + j + kWidth, Wq)));
  } else {
#if VECTOR_FLOATS == 16
    // Every fourth float from the run's first five vectors: lanes 0-7 of
    // element j from the first two, 8-15 from the next two (one index for
    // both halves), elements 4 and 5 those of 0 and 1 a tile on. Gathers
    // took a fifth of a 16 -> 64 layer of 55x55.
    Vec run[5];
    for (int v = 0; v < 5; ++v)
      run[v] = loadLanes(row + at + v * kWidth, lanesWithin(at + v * kWidth, Wq));
    for (int j = 0; j < 4; ++j) {
      __m512i lanes = _mm512_setr_epi32(j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, j,
                                        4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j);
      __m512 low = _mm512_permutex2var_ps((__m512)run[0], lanes, (__m512)run[1]);
      __m512 high = _mm512_permutex2var_ps((__m512)run[2], lanes, (__m512)run[3]);
      columns[j] = (Vec)_mm512_mask_blend_ps(0xff00, low, high);
    }
    for (int j = 4; j < 6; ++j) {
      __m512i lanes =
          _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, kWidth + j - 4);
      columns[j] = (Vec)_mm512_permutex2var_ps((__m512)columns[j - 4], lanes, (__m512)run[4]);
    }
#else
    // Every fourth float: a masked gather.
    VecInt lane{};
    for (int l = 0; l < kWidth; ++l)
      lane[l] = M * l;
    for (int j = 0; j < M + 2; ++j) {
      __m256i inside = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(Wq - at - j)), (__m256i)lane);
      columns[j] = (Vec)_mm256_mask_i32gather_ps(_mm256_setzero_ps(), row + at + j, (__m256i)lane,
                                                 _mm256_castsi256_ps(inside), 4);
    }
#endif
  }
}

/// Packs G g G^T of a group's filters, per point, into panels of
/// `columns` channels by tapsPerBlock input channels, as
/// packChannelPanels packs a layer's taps; channels past Og are zero.
/// Every filter's transform goes first into scratch, [point][c][o], so
/// that the packing reads runs of channels: with a malloc'd buffer of
/// [o][c][point] (fresh pages, their faults trapping to the VM's host,
/// and a cache line per element), SqueezeNet's 64 -> 256 layer took 3 ms
/// to pack.
template <int M> void packWinogradWeights(const void *context, float *out) {
  constexpr int kSide = Tiles<M>::kSide, kPoints = Tiles<M>::kPoints;
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
      float columns[3][kSide]; // G g, a column of g at a time.
      for (int j = 0; j < 3; ++j) {
        float column[3] = {g[j * w.stride(3)], g[w.stride(2) + j * w.stride(3)],
                           g[2 * w.stride(2) + j * w.stride(3)]};
        transformFilter(column, columns[j]);
      }
      float *u = transformed + c * s.Og + o;
      for (int i = 0; i < kSide; ++i) { // (G g) G^T
        float row[3] = {columns[0][i], columns[1][i], columns[2][i]}, transformedRow[kSide];
        transformFilter(row, transformedRow);
        for (int j = 0; j < kSide; ++j)
          u[(i * kSide + j) * pairs] = transformedRow[j];
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
template <int M>
void transformInputs(const Conv &s, const float *planes, int64_t tilesWide, int64_t ty0,
                     int64_t rows, int64_t stride, float *v) {
  constexpr int kSide = Tiles<M>::kSide;
  for (int64_t c = 0; c < s.Cg; ++c)
    for (int64_t ty = ty0; ty < ty0 + rows; ++ty) {
      // The patch rows M ty .. M ty + M + 1; those past the plane (OH not a
      // multiple of M) feed only results that are dropped.
      const float *row = planes + c * s.planeFloats() + M * ty * s.Wq;
      int64_t inside = s.Hq - M * ty;
      for (int64_t tx0 = 0; tx0 < tilesWide; tx0 += kWidth) {
        // Passed by reference: clang assumes vector alignment.
        alignas(64) Vec columns[kSide][kSide]; // [j][r]: element (r, j) of kWidth tiles' patches.
        for (int r = 0; r < kSide; ++r) {
          alignas(64) Vec patchRow[kSide];
          if (r < inside)
            patchColumns<M>(row + r * s.Wq, M * tx0, s.Wq, patchRow);
          for (int j = 0; j < kSide; ++j)
            columns[j][r] = r < inside ? patchRow[j] : Vec{};
        }
        alignas(64) Vec t[kSide][kSide]; // B^T d, t[j][i]
        for (int j = 0; j < kSide; ++j)
          transformPatch(columns[j], t[j]);
        LaneMask tiles = lanesWithin(tx0, tilesWide);
        float *to = v + c * stride + (ty - ty0) * tilesWide + tx0;
        for (int i = 0; i < kSide; ++i) { // (B^T d) B
          alignas(64) Vec row[kSide], transformed[kSide];
          for (int j = 0; j < kSide; ++j)
            row[j] = t[j][i];
          transformPatch(row, transformed);
          for (int j = 0; j < kSide; ++j)
            storeLanes(to + (i * kSide + j) * s.Cg * stride, tiles, transformed[j]);
        }
      }
    }
}

/// The M x M results of `tiles` tiles (`tilesWide` a row) from
/// M[point][tile][channels] into pixels [(M ty + i) * M tilesWide + M tx +
/// j][channels], those of the first `used` channels.
template <int M>
void transformOutputs(const float *m, int64_t tiles, int64_t tilesWide, int64_t stride,
                      int64_t channels, int64_t used, float *pixels) {
  constexpr int kSide = Tiles<M>::kSide;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    int64_t ty = tile / tilesWide, tx = tile % tilesWide;
    float *to = pixels + (M * ty * M * tilesWide + M * tx) * channels;
    for (int64_t o = 0; o < used; o += kWidth) {
      // Passed by reference: clang assumes vector alignment.
      alignas(64) Vec t[M][kSide]; // A^T M, a column at a time
      for (int j = 0; j < kSide; ++j) {
        alignas(64) Vec column[kSide], transformed[M];
        for (int i = 0; i < kSide; ++i)
          column[i] =
              *reinterpret_cast<const Vec *>(m + ((i * kSide + j) * stride + tile) * channels + o);
        transformProducts(column, transformed);
        for (int i = 0; i < M; ++i)
          t[i][j] = transformed[i];
      }
      for (int i = 0; i < M; ++i) { // (A^T M) A
        alignas(64) Vec results[M];
        transformProducts(t[i], results);
        for (int j = 0; j < M; ++j)
          *reinterpret_cast<Vec *>(to + (i * M * tilesWide + j) * channels + o) = results[j];
      }
    }
  }
}

template <int M, int MR, int NV>
void convolveTiles(const Conv &s, const float *panels, const float *planes, const View &y,
                   float *out, const Epilogue &e, int64_t blockRows) {
  constexpr int kPoints = Tiles<M>::kPoints;
  constexpr int64_t kColumns = NV * kWidth, kTaps = tapsPerBlock(NV);
  int64_t tilesHigh = (s.OH + M - 1) / M, tilesWide = (s.OW + M - 1) / M;
  int64_t channels = roundUp(s.Og, kColumns), stride = roundUp(blockRows * tilesWide, MR);
  float *v = scratch(kConvPatches, kPoints * s.Cg * stride);
  float *m = scratch(kConvTile, kPoints * stride * channels);
  float *pixels = scratch(kConvPixels, M * M * blockRows * tilesWide * channels);
  float *transposed = scratch(kConvResults, kWidth * M * M * blockRows * tilesWide);
  // copyOutPixels' rows: M tilesWide pixels, those past OW dropped.
  Conv padded = s;
  padded.Wq = M * tilesWide;
  const float *end = panels + kPoints * s.Cg * channels;
  for (int64_t ty0 = 0; ty0 < tilesHigh; ty0 += blockRows) {
    int64_t rows = tilesHigh - ty0 < blockRows ? tilesHigh - ty0 : blockRows;
    int64_t tiles = rows * tilesWide;
    transformInputs<M>(s, planes, tilesWide, ty0, rows, stride, v);
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
    transformOutputs<M>(m, tiles, tilesWide, stride, channels, roundUp(s.Og, kWidth), pixels);
    int64_t lastRow = M * (ty0 + rows) < s.OH ? M * (ty0 + rows) : s.OH;
    copyOutPixels(padded, pixels, channels, M * ty0 * padded.Wq, lastRow * padded.Wq, transposed, y,
                  out, e);
  }
}

/// convolveWinograd by F(M x M, 3x3).
template <int M>
void convolveByTiles(const Conv &s, const View &w, const float *filters, bool constant,
                     const float *planes, const View &y, float *out, const Epilogue &e) {
  constexpr int kPoints = Tiles<M>::kPoints;
  // Tile rows per block: its transforms and results (about 2 MiB) stay in
  // L2 and L3 between the steps; per point, a GEMM's share stays in L2.
  int64_t tilesHigh = (s.OH + M - 1) / M, tilesWide = (s.OW + M - 1) / M;
  int64_t rowBytes = 4 * tilesWide * (kPoints * s.Cg + (kPoints + M * M) * roundUp(s.Og, kWidth));
  int64_t blockRows = (2 << 20) / rowBytes;
  blockRows = blockRows < 1 ? 1 : blockRows < tilesHigh ? blockRows : tilesHigh;
  TileShape shape = bestTileShape(blockRows * tilesWide, s.Og);
  int64_t columns = shape.vectors * kWidth, floats = kPoints * s.Cg * roundUp(s.Og, columns);
  ChannelPanels context{&s, &w, filters, columns};
  const float *panels =
      packedFilters(w, filters, s.Og, columns, floats, constant, packWinogradWeights<M>, &context);
  withTileShape(shape, [&]<int MR, int NV>() {
    convolveTiles<M, MR, NV>(s, panels, planes, y, out, e, blockRows);
  });
}

/// Whether F(4x4, 3x3) runs the layer faster than F(2x2, 3x3). Per pair
/// of channels, its products are 36 per 4x4 tile against 16 per 2x2, and
/// its transformed filter, which every call streams in from L3 or memory,
/// has 36 points against 16, each costing about kPointCost products. On
/// ResNet-18's and SqueezeNet's 3x3 layers (Intel Xeon, AVX-512,
/// 2026-12-06) 4x4 tiles took 0.64-0.70 of the time of 2x2 ones on 56x56
/// images and 0.75-0.81 on 27x27 and 28x28 ones with one thread, 0.92-0.96
/// on the slices of 13 and 14 rows of those two threads split them into
/// (so kPointCost < 28), but 1.17-1.26 on 13x13 and 14x14 images of 256
/// output channels (so kPointCost > 10).
bool largeTilesPay(const Conv &s) {
  constexpr double kPointCost = 18;
  auto tiles = [&](int64_t m) { return double((s.OH + m - 1) / m * ((s.OW + m - 1) / m)); };
  return 36 * (tiles(4) + kPointCost) < 16 * (tiles(2) + kPointCost);
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
  // channels in, F(2x2)'s 16 points per tile carry a GEMM of few terms
  // against transforms of a whole image, which on SqueezeNet's 16 -> 64
  // layers of 55x55 stream through L3 (0.35 -> 0.32 ms direct in the model,
  // 2026-12-04), where GoogLeNet's 16 -> 32 layer of 28x28 and 24 -> 64
  // layers of 14x14 still gain 6-12%; F(4x4), of 2.25 transformed floats
  // per result against 4, ran SqueezeNet 0.969-0.976 of its time at two
  // threads and 0.985 at one (paired, Intel Xeon, 2026-12-06).
  bool window = s.KH == 3 && s.KW == 3 && s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1;
  bool enoughChannels = s.Cg >= 32 || (s.Cg >= 16 && (s.OH * s.OW <= 32 * 32 || largeTilesPay(s)));
  return window && enoughChannels && s.Og >= 32 && s.OH * s.OW >= 100;
}

void KERNEL_NAMESPACE::convolveWinograd(const Conv &s, const View &w, const float *filters,
                                        bool constant, const float *planes, const View &y,
                                        float *out, const Epilogue &e) {
  if (largeTilesPay(s))
    convolveByTiles<4>(s, w, filters, constant, planes, y, out, e);
  else
    convolveByTiles<2>(s, w, filters, constant, planes, y, out, e);
}
