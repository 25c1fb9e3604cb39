//===- iconv.cpp - Exact 8-bit integer conv2d for x86-64 ------------------===//
//
// The library conv2d of fuelc's 8-bit convolutions (a QDQ Conv, ConvInteger,
// QLinearConv): y[i32] = conv(x, w) for u8 or s8 images and weights in any
// mix, exact, NCHW images, OIHW weights, any strides, pads, dilations and
// groups. Each image group is first copied channels-last, so that a pixel's
// channels are adjacent bytes. Then each block of its output pixels is a
// product of igemm.cpp, pixels by output channels:
//
// - A's row q holds the taps of pixel q's window in (i, j, c) order: KH x KW
//   copies of Cg adjacent bytes (zeros where the window reads padding),
//   which igemm packs four adjacent taps to a word. A 1x1 window of unit
//   strides without padding reads the channels-last image itself.
// - B is the weights in the same tap order, [taps, output channels]:
//   reordered and packed once when constant.
// - The [pixels, channels] block is transposed into y as it is copied out.
//
// Entry points (MLIR C interfaces, as conv.cpp's):
//   void _mlir_ciface_<ICONV_SYMBOL>(UnrankedMemRef *x, *w, *y, int64_t flags,
//       strideH, strideW, padTop, padLeft, dilationH, dilationW)
//   void ICONV_RELEASE(void)
// flags: kConstantB (the weights never change), kUnsignedA (x is u8),
// kUnsignedB (w is u8). The groups are x's channels over w's input
// channels, so a thread may run on any output-channel slice.
//
//===----------------------------------------------------------------------===//

#include "igemm.h"

#include <immintrin.h>

#include <cstring>

#if !defined(ICONV_SYMBOL) || !defined(ICONV_RELEASE)
#error "define ICONV_SYMBOL and ICONV_RELEASE, the entry points' names"
#endif

using namespace KERNEL_NAMESPACE;
using namespace KERNEL_NAMESPACE::IGEMM_NAMESPACE;

namespace {
/// One group of the layer: its image, window and output extents.
struct Layer {
  int64_t H, W, Cg, KH, KW, OH, OW, Og;
  int64_t sh, sw, padTop, padLeft, dh, dw;

  int64_t taps() const { return KH * KW * Cg; }
  /// Whether the window reads the channels-last image's rows as they are.
  bool pointwise() const {
    return KH == 1 && KW == 1 && sh == 1 && sw == 1 && padTop == 0 && padLeft == 0 && OH == H &&
           OW == W;
  }
};

/// Output pixels per product: A's block of taps stays within 128 KiB, in
/// whole register tiles.
int64_t pixelsPerBlock(const Layer &s) {
  constexpr int64_t kRows = 96; // igemm's A block.
  int64_t rows = (int64_t(1) << 17) / s.taps() / kRows * kRows;
  return rows < kRows ? kRows : rows;
}

/// The Cg channels of `image` (x's strides) channels-last: pixel p's
/// channels at out[p * Cg].
void toChannelsLast(const Layer &s, const View &x, const uint8_t *image, uint8_t *out) {
  // Locals: the compiler reloads fields after every byte stored, which may
  // alias them.
  const int64_t channels = s.Cg, width = s.W, sc = x.stride(1), sy = x.stride(2), sx = x.stride(3);
  for (int64_t h = 0; h < s.H; ++h) {
    uint8_t *pixels = out + h * width * channels;
    int64_t c = 0;
    // Four channels at a time, one 32-bit store per pixel.
    for (; c + 4 <= channels; c += 4) {
      const uint8_t *r0 = image + c * sc + h * sy, *r1 = r0 + sc, *r2 = r1 + sc, *r3 = r2 + sc;
      for (int64_t w = 0; w < width; ++w) {
        uint32_t word = r0[w * sx] | uint32_t(r1[w * sx]) << 8 | uint32_t(r2[w * sx]) << 16 |
                        uint32_t(r3[w * sx]) << 24;
        std::memcpy(pixels + w * channels + c, &word, sizeof word);
      }
    }
    for (; c < channels; ++c) {
      const uint8_t *row = image + c * sc + h * sy;
      for (int64_t w = 0; w < width; ++w)
        pixels[w * channels + c] = row[w * sx];
    }
  }
}

/// Copies `n` bytes: a pixel's channels, too few for a call to memcpy to
/// pay.
inline void copyBytes(uint8_t *to, const uint8_t *from, int64_t n) {
  typedef uint8_t Chunk __attribute__((vector_size(16), aligned(1)));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    *reinterpret_cast<Chunk *>(to + i) = *reinterpret_cast<const Chunk *>(from + i);
  for (; i < n; ++i)
    to[i] = from[i];
}

/// Rows [q0, q0 + n) of A from the channels-last image `pixels`.
void buildTaps(const Layer &s, const uint8_t *pixels, int64_t q0, int64_t n, uint8_t *out) {
  const Layer l = s; // Not reloaded after each byte stored.
  // A window row inside the image is KW adjacent pixels with unit dilation:
  // one copy.
  const int64_t rowBytes = l.KW * l.Cg;
  for (int64_t q = q0, oh = q0 / l.OW, ow = q0 % l.OW; q < q0 + n; ++q) {
    int64_t iw0 = ow * l.sw - l.padLeft, iwLast = iw0 + (l.KW - 1) * l.dw;
    bool rowInside = iw0 >= 0 && iwLast < l.W && l.dw == 1;
    for (int64_t i = 0; i < l.KH; ++i) {
      int64_t ih = oh * l.sh - l.padTop + i * l.dh;
      if (ih < 0 || ih >= l.H) {
        std::memset(out, 0, rowBytes);
        out += rowBytes;
        continue;
      }
      const uint8_t *row = pixels + ih * l.W * l.Cg;
      if (rowInside) {
        copyBytes(out, row + iw0 * l.Cg, rowBytes);
        out += rowBytes;
        continue;
      }
      for (int64_t j = 0; j < l.KW; ++j, out += l.Cg) {
        int64_t iw = iw0 + j * l.dw;
        if (iw < 0 || iw >= l.W)
          std::memset(out, 0, l.Cg);
        else
          copyBytes(out, row + iw * l.Cg, l.Cg);
      }
    }
    if (++ow == l.OW)
      ow = 0, ++oh;
  }
}

struct ReorderContext {
  const Layer *layer;
  const View *w;
  int64_t outputs;
};

/// The weights in A's tap order: output channel o's taps at out[o * taps].
void reorderWeights(const void *context, float *out) {
  const auto &ctx = *static_cast<const ReorderContext *>(context);
  const Layer &s = *ctx.layer;
  const View &w = *ctx.w;
  auto *to = reinterpret_cast<uint8_t *>(out);
  const auto *from = w.data<uint8_t>();
  for (int64_t o = 0; o < ctx.outputs; ++o)
    for (int64_t i = 0; i < s.KH; ++i)
      for (int64_t j = 0; j < s.KW; ++j)
        for (int64_t c = 0; c < s.Cg; ++c)
          *to++ = from[o * w.stride(0) + c * w.stride(1) + i * w.stride(2) + j * w.stride(3)];
}

/// The reordered weights of all output channels, kept until release when
/// `constant`, else in this thread's scratch.
const uint8_t *weightsInTapOrder(const Layer &s, const View &w, bool constant) {
  int64_t outputs = w.size(0);
  int64_t floats = (outputs * s.taps() + 3) / 4;
  ReorderContext context{&s, &w, outputs};
  return reinterpret_cast<const uint8_t *>(
      packedFilters(w, w.data<uint8_t>(), outputs, 0, floats, constant, reorderWeights, &context));
}

/// Stores the transpose of the 8 x 8 tile at `from` (row stride `ldf`) at
/// `to` (row stride `ldt`).
inline void transpose8x8(const int32_t *from, int64_t ldf, int32_t *to, int64_t ldt) {
  __m256i r[8], t[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(from + i * ldf));
  for (int i = 0; i < 8; i += 2) { // Pairs of rows, interleaved by 32 bits.
    t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) { // Then by 64 bits.
    r[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) { // Then the 128-bit halves.
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to + i * ldt),
                        _mm256_permute2x128_si256(r[i], r[i + 4], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to + (i + 4) * ldt),
                        _mm256_permute2x128_si256(r[i], r[i + 4], 0x31));
  }
}

/// y[o, q] = block[(q - q0) * Og + o] for the block's pixels [q0, q0 + n);
/// `offsets` has room for n of y's offsets.
void copyOut(const Layer &s, const int32_t *block, int64_t q0, int64_t n, const View &y,
             int32_t *out, int64_t *offsets) {
  const int64_t channels = s.Og, ldy = y.stride(1);
  int64_t i0 = 0, o0 = channels;
  if (y.stride(3) == 1 && y.stride(2) == s.OW) { // Pixels contiguous: 8 x 8 tiles.
    i0 = n / 8 * 8;
    o0 = channels / 8 * 8;
    for (int64_t i = 0; i < i0; i += 8)
      for (int64_t o = 0; o < o0; o += 8)
        transpose8x8(block + i * channels + o, channels, out + o * ldy + q0 + i, ldy);
  }
  // The rest, element by element: pixels [0, i0) of channels [o0, Og), and
  // every channel of pixels [i0, n).
  for (int64_t q = q0, oh = q0 / s.OW, ow = q0 % s.OW; q < q0 + n; ++q) {
    offsets[q - q0] = oh * y.stride(2) + ow * y.stride(3);
    if (++ow == s.OW)
      ow = 0, ++oh;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = i < i0 ? o0 : 0; o < channels; ++o)
      out[o * ldy + offsets[i]] = block[i * channels + o];
}
} // namespace

extern "C" void ICONV_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w, UnrankedMemRef *y, int64_t flags,
                             int64_t strideH, int64_t strideW, int64_t padTop, int64_t padLeft,
                             int64_t dilationH, int64_t dilationW) {
  View vx{x->descriptor, x->rank}, vw{w->descriptor, w->rank}, vy{y->descriptor, y->rank};
  int64_t groups = vx.size(1) / vw.size(1);
  Layer s{vx.size(2), vx.size(3), vw.size(1),          vw.size(2), vw.size(3),
          vy.size(2), vy.size(3), vw.size(0) / groups, strideH,    strideW,
          padTop,     padLeft,    dilationH,           dilationW};
  if (s.OH <= 0 || s.OW <= 0 || s.Og <= 0)
    return;
  int64_t taps = s.taps(), pixels = s.OH * s.OW, block = pixelsPerBlock(s);
  const uint8_t *weights = weightsInTapOrder(s, vw, flags & kConstantB);
  auto *image = reinterpret_cast<uint8_t *>(scratch(kConvPlanes, (s.H * s.W * s.Cg + 3) / 4));
  auto *rows = s.pointwise() ? nullptr
                             : reinterpret_cast<uint8_t *>(scratch(kTapRows, block * taps / 4 + 1));
  auto *product = reinterpret_cast<int32_t *>(scratch(kConvTile, block * s.Og));
  auto *offsets = reinterpret_cast<int64_t *>(scratch(kConvOffsets, 2 * block));
  int64_t productFlags = flags & (kUnsignedA | kUnsignedB);
  for (int64_t g = 0; g < groups; ++g) {
    // B: the group's weights as [taps, output channels].
    Bytes b{weights + g * s.Og * taps, taps, s.Og, 1, taps};
    PackedWeights packed;
    if (flags & kConstantB)
      packed = packedWeights(b, flags & kUnsignedB);
    for (int64_t n = 0; n < vx.size(0); ++n) {
      toChannelsLast(s, vx, vx.data<uint8_t>() + n * vx.stride(0) + g * s.Cg * vx.stride(1), image);
      int32_t *out = vy.data<int32_t>() + n * vy.stride(0) + g * s.Og * vy.stride(1);
      for (int64_t q0 = 0; q0 < pixels; q0 += block) {
        int64_t count = pixels - q0 < block ? pixels - q0 : block;
        const uint8_t *a = image + q0 * taps;
        if (rows) {
          buildTaps(s, image, q0, count, rows);
          a = rows;
        }
        igemm(Bytes{a, count, taps, taps, 1}, b, product, s.Og, productFlags,
              flags & kConstantB ? &packed : nullptr);
        copyOut(s, product, q0, count, vy, out, offsets);
      }
    }
  }
}

extern "C" void ICONV_RELEASE() { releaseAll(); }
