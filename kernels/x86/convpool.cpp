//===- convpool.cpp - conv2d then max pooling, by bands of rows -----------===//
//
// The library kernel of a convolution whose result (its epilogue applied)
// only a max pooling reads: the stems of ResNet, SqueezeNet and GoogLeNet,
// whose 3 MiB results were written to memory by one kernel and read back by
// the next. Here, per image and band of pooled rows, the library conv2d
// computes the convolution rows the band's windows read into this thread's
// scratch, where they stay in L2, and the library max_pool2d pools them
// from there: the convolution's result never reaches memory. The rows that
// consecutive bands share (one, for 3x3 windows of stride 2) are moved to
// the top of the band, not computed again.
//
// Entry points (MLIR C interfaces, as in gemm.cpp):
//   void _mlir_ciface_<CONVPOOL_SYMBOL>(UnrankedMemRef *x, *w, *y, *bias,
//       int64_t flags, strideH, strideW, padTop, padLeft, dilationH,
//       dilationW, convH, convW, poolH, poolW, poolStrideH, poolStrideW,
//       poolPadTop, poolPadLeft, poolDilationH, poolDilationW, origin,
//       float lo, float hi)
//   void CONVPOOL_RELEASE(void)
// computing y = max_pool2d(act(conv(x, w) + bias)) for y's pooled rows
// from `origin` on (a slice of the rows, on a thread of its own, reads the
// whole of x); flags as conv.cpp's, without a residual. convH x convW is
// the convolution's result.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"

#include <cstring>

#if !defined(CONVPOOL_SYMBOL) || !defined(CONVPOOL_RELEASE) || !defined(CONV_SYMBOL) ||            \
    !defined(POOL_SYMBOL)
#error                                                                                             \
    "define CONVPOOL_SYMBOL and CONVPOOL_RELEASE, and CONV_SYMBOL and POOL_SYMBOL, which it calls"
#endif

using namespace KERNEL_NAMESPACE;

extern "C" void CONV_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w, UnrankedMemRef *y,
                            UnrankedMemRef *bias, UnrankedMemRef *residual, int64_t flags,
                            int64_t strideH, int64_t strideW, int64_t padTop, int64_t padLeft,
                            int64_t dilationH, int64_t dilationW, float lo, float hi);
extern "C" void POOL_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *y, int64_t kernelH, int64_t kernelW,
                            int64_t strideH, int64_t strideW, int64_t padTop, int64_t padLeft,
                            int64_t dilationH, int64_t dilationW);

namespace {

/// The bytes of a band of convolution rows (all channels): with the
/// convolution's own planes and tile beside it, within a core's L2.
constexpr int64_t kBandBytes = 128 << 10;

/// A rank-4 strided memref descriptor, as the entry points take them.
struct Image4 {
  int64_t d[11];
  UnrankedMemRef ref{4, d};

  Image4(const Image4 &) = delete;
  Image4(const float *data, const int64_t (&sizes)[4], const int64_t (&strides)[4]) {
    d[0] = d[1] = reinterpret_cast<int64_t>(data);
    d[2] = 0;
    for (int i = 0; i < 4; ++i) {
      d[3 + i] = sizes[i];
      d[7 + i] = strides[i];
    }
  }
  /// Image `n` of `v`.
  static Image4 of(const View &v, int64_t n) {
    return Image4(v.data() + n * v.stride(0), {1, v.size(1), v.size(2), v.size(3)},
                  {v.stride(0), v.stride(1), v.stride(2), v.stride(3)});
  }
};

} // namespace

extern "C" void CONVPOOL_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w, UnrankedMemRef *y,
                                UnrankedMemRef *bias, int64_t flags, int64_t strideH,
                                int64_t strideW, int64_t padTop, int64_t padLeft, int64_t dilationH,
                                int64_t dilationW, int64_t convH, int64_t convW, int64_t poolH,
                                int64_t poolW, int64_t poolStrideH, int64_t poolStrideW,
                                int64_t poolPadTop, int64_t poolPadLeft, int64_t poolDilationH,
                                int64_t poolDilationW, int64_t origin, float lo, float hi) {
  View vx{x->descriptor, x->rank}, vw{w->descriptor, w->rank}, vy{y->descriptor, y->rank};
  int64_t channels = vw.size(0), pooledRows = vy.size(2);
  if (channels <= 0 || convH <= 0 || convW <= 0 || pooledRows <= 0 || vy.size(3) <= 0)
    return;
  // Band rows: a window's rows and a stride more at least.
  int64_t window = (poolH - 1) * poolDilationH + 1;
  int64_t rowBytes = 4 * channels * convW;
  int64_t capacity =
      kBandBytes / rowBytes > window + poolStrideH ? kBandBytes / rowBytes : window + poolStrideH;
  int64_t perBand = (capacity - window) / poolStrideH + 1;
  int64_t channelStride = capacity * convW;
  float *band = scratch(kConvBand, channels * channelStride);
  auto clampRow = [&](int64_t r) { return r < 0 ? 0 : r > convH ? convH : r; };
  for (int64_t n = 0; n < vx.size(0); ++n) {
    Image4 image = Image4::of(vx, n);
    // The convolution rows [kept, keptEnd) in the band from its row 0.
    int64_t kept = 0, keptEnd = 0;
    for (int64_t p0 = origin; p0 < origin + pooledRows; p0 += perBand) {
      int64_t p1 = p0 + perBand < origin + pooledRows ? p0 + perBand : origin + pooledRows;
      int64_t first = clampRow(p0 * poolStrideH - poolPadTop);
      int64_t end = clampRow((p1 - 1) * poolStrideH - poolPadTop + window);
      int64_t have = 0;
      if (kept <= first && first < keptEnd) {
        have = keptEnd - first;
        for (int64_t c = 0; c < channels; ++c)
          std::memmove(band + c * channelStride, band + c * channelStride + (first - kept) * convW,
                       4 * have * convW);
      }
      if (first + have < end) {
        Image4 rows(band + have * convW, {1, channels, end - first - have, convW},
                    {channels * channelStride, channelStride, convW, 1});
        // The whole image, read as if its top pad were that many rows
        // smaller (as a slice of a split convolution reads it).
        CONV_SYMBOL(&image.ref, w, &rows.ref, bias, &rows.ref, flags, strideH, strideW,
                    padTop - (first + have) * strideH, padLeft, dilationH, dilationW, lo, hi);
      }
      kept = first;
      keptEnd = end;
      Image4 rows(band, {1, channels, end - first, convW},
                  {channels * channelStride, channelStride, convW, 1});
      Image4 out(vy.data() + n * vy.stride(0) + (p0 - origin) * vy.stride(2),
                 {1, channels, p1 - p0, vy.size(3)},
                 {vy.stride(0), vy.stride(1), vy.stride(2), vy.stride(3)});
      POOL_SYMBOL(&rows.ref, &out.ref, poolH, poolW, poolStrideH, poolStrideW,
                  poolPadTop - p0 * poolStrideH + first, poolPadLeft, poolDilationH, poolDilationW);
    }
  }
}

extern "C" void CONVPOOL_RELEASE() { releaseAll(); }
