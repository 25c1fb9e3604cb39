//===- pool.cpp - f32 max pooling for x86-64 ------------------------------===//
//
// The library max_pool2d that fuelc's generated f32 max_pool2d kernels call:
// NCHW images, any window, strides, pads and dilations (positions outside
// the image, ceil mode's included, never win). A channel at a time through
// the window loops of window.h, which read rows in place (unit or stride-2
// row steps; 2x2 and 3x3 windows unrolled): one max per tap and vector of
// outputs, nothing copied. Other layers, and channels holding a NaN where
// a window reads (a NaN in a window is its result, as numpy.max has it,
// which the vector max does not keep), take a scalar loop.
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
/// that read a NaN.
struct Maximum {
  static constexpr bool kZeroPadding = false;
  Vec padding;
  VecInt unordered;
  const Conv &s;
  int64_t rowStride;
  float *out;

  template <int Rows> void begin(Vec (&acc)[Rows]) const {
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k)
      acc[k] = padding;
  }
  void add(Vec &acc, int64_t, Vec v) {
    unordered |= v != v;
    acc = larger(acc, v);
  }
  template <int Rows> void end(const Vec (&acc)[Rows], int64_t oh0, int64_t ow0) const {
    LaneMask written = lanesWithin(0, s.OW - ow0 < kWidth ? s.OW - ow0 : kWidth);
#pragma GCC unroll 8
    for (int k = 0; k < Rows; ++k) {
      if (oh0 + k >= s.OH)
        break;
      storeLanes(out + (oh0 + k) * rowStride + ow0, written, acc[k]);
    }
  }
  bool sawNaN() const {
    for (int l = 0; l < kWidth; ++l)
      if (unordered[l])
        return true;
    return false;
  }
};

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
  ColumnLanes columns = inPlace ? columnLanes(s) : ColumnLanes{};
  for (int64_t n = 0; n < vx.size(0); ++n)
    for (int64_t c = 0; c < vx.size(1); ++c) {
      const float *image = vx.data() + n * vx.stride(0) + c * vx.stride(1);
      float *out = vy.data() + n * vy.stride(0) + c * vy.stride(1);
      if (inPlace) {
        Maximum maximum{Vec{} - INFINITY, VecInt{}, s, vy.stride(2), out};
        reduceChannel<Maximum, 2, 3>(s, image, vx.stride(2), padding, columns, maximum);
        if (!maximum.sawNaN())
          continue;
      }
      poolChannel(s, image, vx.stride(2), vx.stride(3), out, vy.stride(2), vy.stride(3));
    }
}

extern "C" void POOL_RELEASE() { releaseAll(); }
