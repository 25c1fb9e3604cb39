//===- pool.cpp - f32 max pooling for x86-64 ------------------------------===//
//
// The library max_pool2d that fuelc's generated f32 max_pool2d kernels call:
// NCHW images, any window, strides, pads and dilations (positions outside
// the image, ceil mode's included, never win). A channel at a time through
// the window loops of window.h, which read rows in place (unit or stride-2
// row steps; 2x2 and 3x3 windows unrolled): one max per tap and vector of
// outputs, nothing copied. 3x3 windows of stride 2 take the maxima of their
// rows first (poolWindows3x3Stride2). Other layers, and channels holding a
// NaN where a window reads (a NaN in a window is its result, as numpy.max
// has it, which the vector max does not keep), take a scalar loop.
//
// Entry points (MLIR C interfaces, as in gemm.cpp):
//   void _mlir_ciface_<POOL_SYMBOL>(UnrankedMemRef *x, *y, int64_t
//       kernelH, kernelW, strideH, strideW, padTop, padLeft, dilationH,
//       dilationW)
//   void POOL_RELEASE(void)
//
//===----------------------------------------------------------------------===//

#include "window.h"

#include <cmath>

#if !defined(POOL_SYMBOL) || !defined(POOL_RELEASE)
#error "define POOL_SYMBOL and POOL_RELEASE, the max_pool2d entry points"
#endif

using namespace KERNEL_NAMESPACE;

namespace {

/// The larger lanes of a and b (b where either is NaN): one max
/// instruction, whose semantics these are.
inline Vec larger(Vec a, Vec b) { return a > b ? a : b; }

/// A channel's maximum over each window; `unordered` collects the lanes
/// that read a NaN (checked once per load: a stride-1 window's loads feed
/// up to three output rows).
struct Maximum {
  static constexpr bool kZeroPadding = false;
  Vec padding;
  LaneMask unordered;
  const Conv &s;
  int64_t rowStride;
  float *out;

  template <int Rows> void begin(Vec (&acc)[Rows]) const {
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k)
      acc[k] = padding;
  }
  void inputs(Vec v) { unordered = eitherLanes(unordered, unorderedLanes(v, v)); }
  void add(Vec &acc, int64_t, Vec v) const { acc = larger(acc, v); }
  template <int Rows> void end(const Vec (&acc)[Rows], int64_t oh0, int64_t ow0) const {
    LaneMask written = lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth);
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k) {
      if (oh0 + k >= s.OH)
        break;
      storeLanes(out + (oh0 + k) * rowStride + ow0, written, acc[k]);
    }
  }
};

/// The lanes of each vector of a row's columns from -padLeft on that lie
/// inside the image (two per vector of outputs, and one), in this thread's
/// scratch.
const LaneMask *columnVectorLanes(const Conv &s) {
  int64_t vectors = 2 * ((s.OW + kWidth - 1) / kWidth) + 1;
  int64_t bytes = vectors * static_cast<int64_t>(sizeof(LaneMask));
  auto *table = reinterpret_cast<LaneMask *>(scratch(kConvOffsets, (bytes + 3) / 4));
  for (int64_t m = 0; m < vectors; ++m)
    table[m] = lanesWithin(m * kWidth - s.padLeft, s.W);
  return table;
}

/// One channel through 3x3 windows of stride 2 without dilation (the
/// pooling after ResNet's, SqueezeNet's, GoogLeNet's and ShuffleNet's stems
/// and between their stages): each vector of outputs takes the maximum of
/// its windows' three rows first, over the columns they span, and then of
/// each window's three columns: the even, odd and next even lanes of those
/// maxima. Two shuffles and an align per vector of outputs, where the
/// window loops shuffle every input row's three tap columns (6.75 a vector
/// on AVX-512): SqueezeNet's poolings of 128 and 256 channels took 59 and
/// 34 us in the model, against 80 and 44. The row maxima of a vector's last
/// columns are the next vector's first. False when the channel holds a NaN,
/// which the maxima may have dropped.
bool poolWindows3x3Stride2(const Conv &s, const float *image, int64_t rowStride,
                           const float *padding, const LaneMask *lanes, float *out,
                           int64_t outRowStride) {
  const Vec fill = Vec{} - INFINITY;
  // Sums of the inputs, NaN where one was (or, rarely, where infinities of
  // both signs were: the channel then takes the exact scalar loop too).
  Vec sums[2] = {Vec{}, Vec{}};
  for (int64_t oh = 0; oh < s.OH; ++oh) {
    const float *rows[3];
    for (int i = 0; i < 3; ++i)
      rows[i] = rowOf(s, image, rowStride, padding, 2 * oh + i - s.padTop) - s.padLeft;
    // The two input rows that output row oh + 2 adds, as window.h's loops
    // prefetch them: SqueezeNet's first pooling, whose 3 MiB input comes
    // from L3 or memory, took 0.11 ms in the model, against 0.15.
    for (int64_t ih = 2 * oh + 5 - s.padTop; s.W >= kPrefetchWidth && ih < 2 * oh + 7 - s.padTop;
         ++ih)
      if (ih >= 0 && ih < s.H)
        for (int64_t w = 0; w < s.W; w += 64 / 4)
          __builtin_prefetch(image + ih * rowStride + w);
    // The maximum over the three rows of columns m * kWidth - padLeft on.
    auto rowMaximum = [&](int64_t m, Vec &sum) {
      Vec r0 = loadLanesOr(rows[0] + m * kWidth, lanes[m], fill),
          r1 = loadLanesOr(rows[1] + m * kWidth, lanes[m], fill),
          r2 = loadLanesOr(rows[2] + m * kWidth, lanes[m], fill);
      sum += r0 + r1 + r2;
      return larger(larger(r0, r1), r2);
    };
    Vec first = rowMaximum(0, sums[0]);
    for (int64_t ow0 = 0, m = 0; ow0 < s.OW; ow0 += kWidth, m += 2) {
      Vec second = rowMaximum(m + 1, sums[1]), next = rowMaximum(m + 2, sums[0]);
      Vec even = evenLanes(first, second);
      Vec result = larger(larger(even, oddLanes(first, second)), nextLanes(even, next));
      storeLanes(out + oh * outRowStride + ow0,
                 lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth), result);
      first = next;
    }
  }
  return !anyLane(unorderedLanes(sums[0], sums[1]));
}

/// One channel, an element at a time, a NaN in a window kept.
void poolChannel(const Conv &s, const float *image, int64_t xRow, int64_t xColumn, float *out,
                 int64_t yRow, int64_t yColumn) {
  for (int64_t oh = 0; oh < s.OH; ++oh)
    for (int64_t ow = 0; ow < s.OW; ++ow) {
      float best = -INFINITY;
      for (int64_t i = 0; i < s.KH; ++i) {
        int64_t ih = oh * s.sh + i * s.dh - s.padTop;
        if (ih < 0 || ih >= s.H)
          continue;
        for (int64_t j = 0; j < s.KW; ++j) {
          int64_t iw = ow * s.sw + j * s.dw - s.padLeft;
          if (iw < 0 || iw >= s.W)
            continue;
          float v = image[ih * xRow + iw * xColumn];
          if (!std::isnan(best) && !(v <= best)) // A NaN, once read, stays.
            best = v;
        }
      }
      out[oh * yRow + ow * yColumn] = best;
    }
}

} // namespace

extern "C" void POOL_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *y, int64_t kernelH, int64_t kernelW,
                            int64_t strideH, int64_t strideW, int64_t padTop, int64_t padLeft,
                            int64_t dilationH, int64_t dilationW) {
  View vx{x->descriptor, x->rank}, vy{y->descriptor, y->rank};
  Conv s{vx.size(2), vx.size(3), 1,      kernelH, kernelW,   vy.size(2), vy.size(3), 1,
         strideH,    strideW,    padTop, padLeft, dilationH, dilationW,  0,          0};
  if (s.OH <= 0 || s.OW <= 0)
    return;
  bool inPlace = rowsInPlace(s, vx, vy);
  const float *padding = inPlace ? paddingRow(s, -INFINITY) : nullptr;
  bool window3x3Stride2 =
      inPlace && s.KH == 3 && s.KW == 3 && s.sh == 2 && s.sw == 2 && s.dh == 1 && s.dw == 1;
  // Both tables lie in the same scratch.
  ColumnLanes columns = inPlace && !window3x3Stride2 ? columnLanes(s) : ColumnLanes{};
  const LaneMask *vectorLanes = window3x3Stride2 ? columnVectorLanes(s) : nullptr;
  for (int64_t n = 0; n < vx.size(0); ++n)
    for (int64_t c = 0; c < vx.size(1); ++c) {
      const float *image = vx.data() + n * vx.stride(0) + c * vx.stride(1);
      float *out = vy.data() + n * vy.stride(0) + c * vy.stride(1);
      if (window3x3Stride2) {
        if (poolWindows3x3Stride2(s, image, vx.stride(2), padding, vectorLanes, out, vy.stride(2)))
          continue;
      } else if (inPlace) {
        Vec fill = Vec{} - INFINITY;
        Maximum maximum{fill, unorderedLanes(fill, fill), s, vy.stride(2), out};
        reduceChannel<Maximum, 2, 3>(s, image, vx.stride(2), padding, columns, maximum);
        if (!anyLane(maximum.unordered))
          continue;
      }
      poolChannel(s, image, vx.stride(2), vx.stride(3), out, vy.stride(2), vy.stride(3));
    }
}

extern "C" void POOL_RELEASE() { releaseAll(); }
