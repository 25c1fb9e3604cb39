//===- window.h - Windows over image rows read in place ------------------===//
//
// The loops that depthwise conv2d (depthwise.cpp) and max pooling (pool.cpp)
// share: one channel at a time, a block of output rows by one vector
// of output columns, every tap's inputs one masked load from the image row
// (stride 2: two loads and their even lanes; the tap columns of a 3x3 or
// 5x5 window share a row's two or three loads), nothing copied. What a tap
// does with its inputs, and how the block's results are written, is the
// Reduction's:
//
//   struct Reduction {
//     static constexpr bool kZeroPadding;           // zeros outside a row,
//     Vec padding;                                  // else these
//     template <int Rows> void begin(Vec (&acc)[Rows]);
//     void inputs(Vec inputs);                      // each load, once
//     void add(Vec &acc, int64_t tap, Vec inputs);  // tap = i * KW + j
//     template <int Rows>
//     void end(const Vec (&acc)[Rows], int64_t oh0, int64_t ow0);
//   };
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_WINDOW_H
#define FUEL_KERNELS_X86_WINDOW_H

#include "conv.h"

#include <type_traits>

namespace KERNEL_NAMESPACE {

/// Output rows reduced at once: independent chains of operations, so that
/// their latency is hidden. The unrolled stride-1 windows of AVX-512 take
/// 8 (two FMA pipes of latency 4; 10 input rows loaded per 8 output rows,
/// not 12): a 960-channel 7x7 layer 0.053 -> 0.044 ms, 384 channels of
/// 14x14 0.042 -> 0.032 ms. Stride 2 measured slower with 8, and AVX2's 16
/// registers hold only 4 beside a 3x3 window's taps.
constexpr int kRows = 4;
template <int Stride> constexpr int kWindowRows = Stride == 1 && kWidth == 16 ? 8 : kRows;

/// Image widths from which the unrolled windows prefetch the input rows of
/// their next block of output rows while they reduce this one: the rows of
/// wide images come from L3 or memory, where the hardware prefetchers,
/// which see one row's stream at a time, leave each row's first lines late.
/// MobileNetV2's 112x112 and 56x56 depthwise layers ran 8-25% faster so;
/// its 14x14 ones, whose rows are already in L1 or L2, up to 14% slower.
constexpr int64_t kPrefetchWidth = 56;

/// Which lanes of each tap column's loads lie inside an image row, for
/// every vector of output columns: lanes(b)[j] for the load of tap column j
/// from column b * kWidth, lanes(b)[KW + j] for the second load of stride 2,
/// lanes(b)[2 * KW] for the third vector of tap column 0's run (read by
/// windows of stride 2 and width 3 or 5). The same for every channel, so
/// computed once per layer.
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

/// The layer's lane table, in this thread's scratch.
inline ColumnLanes columnLanes(const Conv &s) {
  int64_t blocks = (s.OW + kWidth - 1) / kWidth, perBlock = 2 * s.KW + 1;
  int64_t bytes = blocks * perBlock * static_cast<int64_t>(sizeof(LaneMask));
  auto *table = reinterpret_cast<LaneMask *>(scratch(kConvOffsets, (bytes + 3) / 4));
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < s.KW; ++j) {
      int64_t from = columnOf(s, b * kWidth, j);
      table[b * perBlock + j] = lanesWithin(from, s.W);
      table[b * perBlock + s.KW + j] = lanesWithin(from + kWidth, s.W);
    }
    table[b * perBlock + 2 * s.KW] = lanesWithin(columnOf(s, b * kWidth, 0) + 2 * kWidth, s.W);
  }
  return {table, perBlock};
}

/// A row of the padding value, W long, in this thread's scratch: the row
/// that windows read above and below the image.
inline const float *paddingRow(const Conv &s, float value) {
  float *row = scratch(kConvPlanes, s.W);
  for (int64_t i = 0; i < s.W; ++i)
    row[i] = value;
  return row;
}

/// The pointer to image row ih, or to the padding row.
inline const float *rowOf(const Conv &s, const float *image, int64_t rowStride,
                          const float *padding, int64_t ih) {
  return ih >= 0 && ih < s.H ? image + ih * rowStride : padding;
}

/// Whether the window loops run the layer: unit or stride-2 steps along
/// rows whose elements are contiguous, and a window they can list.
inline bool rowsInPlace(const Conv &s, const View &x, const View &y) {
  return (s.sw == 1 || s.sw == 2) && x.stride(3) == 1 && y.stride(3) == 1 &&
         s.KH * s.KW <= kMaxDepthwiseTaps;
}

/// The inputs at `at` in the lanes `within`, the padding in the others.
template <class Reduction>
inline Vec rowInputs(const float *at, LaneMask within, const Reduction &r) {
  if constexpr (Reduction::kZeroPadding)
    return loadLanes(at, within);
  else
    return loadLanesOr(at, within, r.padding);
}

/// A tap column's inputs for a vector of outputs from `at`.
template <int Step, class Reduction>
inline Vec tapInputs(const float *at, const LaneMask *lanes, int64_t j, int64_t KW,
                     const Reduction &r) {
  if (Step == 1)
    return rowInputs(at, lanes[j], r);
  return evenLanes(rowInputs(at, lanes[j], r), rowInputs(at + kWidth, lanes[KW + j], r));
}

/// Every tap column's inputs from one input row for a vector of outputs
/// from `at` (tap column 0's first input). Widths 3 and 5 read the row's
/// run once. Stride 2 takes its even and odd lanes, and those lanes one and
/// two on: 3 loads where the columns apart took 2 each, for 3 shuffles
/// instead of 3 at width 3 and 7 instead of 5 at width 5 (MobileNetV2's
/// stride-2 layers 1.26-1.37x faster in the model). Stride 1 takes the run
/// 0 to 4 lanes on: 2 loads and K - 1 aligns where each column was a load
/// (stride-1 depthwise layers 5-12% faster at 3x3, 10-40% at 5x5).
template <int Stride, int K, class Reduction>
inline void rowTapInputs(const float *at, const LaneMask *lanes, const Reduction &r,
                         Vec (&columns)[K]) {
  if constexpr (Stride == 2 && (K == 3 || K == 5)) {
    Vec first = rowInputs(at, lanes[0], r), second = rowInputs(at + kWidth, lanes[K], r),
        third = rowInputs(at + 2 * kWidth, lanes[2 * K], r);
    columns[0] = evenLanes(first, second);
    columns[1] = oddLanes(first, second);
    columns[2] = nextLanes(columns[0], third); // Lane 0 of third is even.
    if constexpr (K == 5) {
      Vec thirdEven = evenLanes(third, third);
      columns[3] = nextLanes(columns[1], oddLanes(third, third));
      columns[4] = lanesOn<2>(columns[0], thirdEven);
    }
  } else if constexpr (Stride == 1 && (K == 3 || K == 5)) {
    Vec first = rowInputs(at, lanes[0], r), second = rowInputs(at + kWidth, lanes[K], r);
    columns[0] = first;
    columns[1] = lanesOn<1>(first, second);
    columns[2] = lanesOn<2>(first, second);
    if constexpr (K == 5) {
      columns[3] = lanesOn<3>(first, second);
      columns[4] = lanesOn<4>(first, second);
    }
  } else {
#pragma GCC unroll 8
    for (int j = 0; j < K; ++j)
      columns[j] = tapInputs<Stride>(at + j, lanes, j, K, r);
  }
}

/// One channel's image through a K x K window, strides Stride, no
/// dilation, every loop unrolled. Each input row a block reads is loaded
/// once per tap column and given to every output row whose window holds it
/// (a 3x3 window of 4 rows loads 6 rows, not 12).
template <int Stride, int K, bool Prefetch, class Reduction>
void reduceWindow(const Conv &s, const float *image, int64_t rowStride, const float *padding,
                  ColumnLanes columns, Reduction &r) {
  constexpr int kBlockRows = kWindowRows<Stride>;
  constexpr int kInputRows = (kBlockRows - 1) * Stride + K;
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += kBlockRows) {
    const float *rows[kInputRows];
    for (int t = 0; t < kInputRows; ++t)
      rows[t] = rowOf(s, image, rowStride, padding, oh0 * Stride + t - s.padTop);
    // The last block prefetches its own rows, which are already loaded.
    int64_t ahead = oh0 + kBlockRows < s.OH ? kBlockRows * Stride * rowStride : 0;
    for (int64_t ow0 = 0, b = 0; ow0 < s.OW; ow0 += kWidth, ++b) {
      const LaneMask *lanes = columns(b);
      int64_t from = columnOf(s, ow0, 0);
      alignas(64) Vec acc[kBlockRows]; // Read by reference: clang assumes vector alignment.
      r.begin(acc);
#pragma GCC unroll 16
      for (int t = 0; t < kInputRows; ++t) {
        if (Prefetch && t < kBlockRows * Stride) {
          const float *next = rows[t] + ahead + from;
          __builtin_prefetch(next);
          if (Stride == 2)
            __builtin_prefetch(next + kWidth);
        }
        Vec columns[K];
        rowTapInputs<Stride>(rows[t] + from, lanes, r, columns);
#pragma GCC unroll 8
        for (int j = 0; j < K; ++j) {
          Vec v = columns[j];
          r.inputs(v);
#pragma GCC unroll 8
          for (int k = 0; k < kBlockRows; ++k) {
            int i = t - k * Stride; // The tap row of output row k that row t is.
            if (i >= 0 && i < K)
              r.add(acc[k], i * K + j, v);
          }
        }
      }
      r.end(acc, oh0, ow0);
    }
  }
}

/// The same for any window, strides and dilations (a row step of 1 or 2):
/// the taps in loops.
template <int Step, class Reduction>
void reduceAnyWindow(const Conv &s, const float *image, int64_t rowStride, const float *padding,
                     ColumnLanes columns, Reduction &r) {
  for (int64_t oh0 = 0; oh0 < s.OH; oh0 += kRows) {
    const float *rows[kMaxDepthwiseTaps][kRows];
    for (int64_t i = 0; i < s.KH; ++i)
      for (int k = 0; k < kRows; ++k)
        rows[i][k] = rowOf(s, image, rowStride, padding, (oh0 + k) * s.sh + i * s.dh - s.padTop);
    for (int64_t ow0 = 0, b = 0; ow0 < s.OW; ow0 += kWidth, ++b) {
      const LaneMask *lanes = columns(b);
      alignas(64) Vec acc[kRows]; // Read by reference: clang assumes vector alignment.
      r.begin(acc);
      for (int64_t i = 0; i < s.KH; ++i)
        for (int64_t j = 0; j < s.KW; ++j) {
          int64_t from = columnOf(s, ow0, j);
#pragma GCC unroll 8
          for (int k = 0; k < kRows; ++k) {
            Vec v = tapInputs<Step>(rows[i][k] + from, lanes, j, s.KW, r);
            r.inputs(v);
            r.add(acc[k], i * s.KW + j, v);
          }
        }
      r.end(acc, oh0, ow0);
    }
  }
}

/// One channel through the loops for the layer's window: unrolled for the
/// square windows `Unrolled` lists (strides 1 and 2).
template <class Reduction, int... Unrolled>
void reduceChannel(const Conv &s, const float *image, int64_t rowStride, const float *padding,
                   ColumnLanes columns, Reduction &r) {
  bool square = s.KH == s.KW && s.sh == s.sw && s.dh == 1 && s.dw == 1;
  bool done = false;
  [[maybe_unused]] auto unrolled = [&](auto k) {
    constexpr int K = decltype(k)::value;
    if (done || !square || s.KH != K)
      return;
    // Two instances apiece: the prefetches' addresses alone, not issued,
    // slowed the narrow images' loops by up to 18%.
    bool prefetch = s.W >= kPrefetchWidth;
    if (s.sw == 1 && prefetch)
      reduceWindow<1, K, true>(s, image, rowStride, padding, columns, r);
    else if (s.sw == 1)
      reduceWindow<1, K, false>(s, image, rowStride, padding, columns, r);
    else if (prefetch)
      reduceWindow<2, K, true>(s, image, rowStride, padding, columns, r);
    else
      reduceWindow<2, K, false>(s, image, rowStride, padding, columns, r);
    done = true;
  };
  (unrolled(std::integral_constant<int, Unrolled>{}), ...);
  if (done)
    return;
  if (s.sw == 1)
    reduceAnyWindow<1>(s, image, rowStride, padding, columns, r);
  else
    reduceAnyWindow<2>(s, image, rowStride, padding, columns, r);
}

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_WINDOW_H
