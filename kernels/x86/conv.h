//===- conv.h - Shared pieces of the x86 library conv2d ------------------===//
//
// The layer shape, the epilogue and the entry points of conv2d's algorithms
// (conv.cpp: phase planes and a register-tiled GEMM, columns in vectors;
// channels.cpp: the same GEMM, output channels in vectors; winograd.cpp:
// 3x3 windows by Winograd's F(2x2, 3x3) or F(4x4, 3x3); depthwise.cpp:
// image rows read in place, or phase planes).
//
//===----------------------------------------------------------------------===//

#ifndef FUEL_KERNELS_X86_CONV_H
#define FUEL_KERNELS_X86_CONV_H

#include "exp.h"
#include "gemm.h"
#include "lanes.h"

#include <immintrin.h>

namespace KERNEL_NAMESPACE {

/// The register tile: kMRc output channels (they come in multiples of 8)
/// x up to kMaxVectors vectors of columns. 8 x 3 AVX-512 vectors hold as many
/// accumulators as GEMM's 12 x 2 with fewer loads; AVX2 has 16 registers.
constexpr int kMRc = kWidth == 16 ? 8 : kMR, kMaxVectors = kWidth == 16 ? 3 : 2;
constexpr int64_t kMaxNRc = kMaxVectors * kWidth;
/// Taps per block for a tile of `vectors` vectors: its B rows (kc x NR)
/// take half of L1, the rest is for A (measured on Sapphire Rapids).
constexpr int64_t tapsPerBlock(int vectors) { return (24 << 10) / (vectors * kWidth * 4); }

/// Taps of the largest depthwise window (KH x KW) the library runs.
constexpr int64_t kMaxDepthwiseTaps = 64;

/// Columns q of a depthwise channel summed per step: four vectors.
constexpr int64_t kDepthwiseStep = 4 * kWidth;

struct Conv {
  int64_t H, W, Cg, KH, KW, OH, OW, Og;
  int64_t sh, sw, padTop, padLeft, dh, dw;
  int64_t Hq, Wq; // One phase plane.

  int64_t taps() const { return Cg * KH * KW; }
  int64_t planeFloats() const { return Hq * Wq; }
  /// Columns per output channel, each output row padded to Wq.
  int64_t columns() const { return OH * Wq; }
  /// The planes of a group, and room for the runs of the last columns,
  /// which read past its last plane.
  int64_t planesFloats() const {
    return Cg * sh * sw * planeFloats() + Wq + kDepthwiseStep + kMaxNRc;
  }
};

/// What is applied as results are copied out: y = act(conv + bias[o] +
/// residual[o, oh, ow]), act being ReLU (NaN kept, as numpy.maximum(v, 0)),
/// SiLU (v * sigmoid(v)), and a clamp to [lo, hi] (NaN kept), in that
/// order, as fuelc's graph has them.
struct Epilogue {
  const float *bias; // Of the first channel, or null.
  int64_t biasStride;
  const float *residual; // Of the first channel, image n, or null.
  const View *residualView;
  bool relu, silu;
  float lo, hi;

  /// The epilogue of the channels from `o` on.
  Epilogue ofChannel(int64_t o) const {
    Epilogue e = *this;
    if (e.bias)
      e.bias += o * biasStride;
    if (e.residual)
      e.residual += o * residualView->stride(1);
    return e;
  }
};

/// B's rows one after the other, `stride` floats apart.
struct Panel {
  const float *rows;
  int64_t stride;
  const float *operator()(int64_t k) const { return rows + k * stride; }
};

/// Prefetches the packed weights' next panel while a panel is read, a share
/// per microkernel call. Packed weights are one stream in the order they
/// are read, and in a model a layer's weights come from memory (ResNet-18's
/// 46 MiB do not stay in L3 from one run to the next): each panel's lines
/// were otherwise fetched as the microkernel first reached them (ResNet-18's
/// 512-channel 7x7 layers 2.04 -> 1.57 ms, the model 1.09x faster).
class PanelPrefetch {
public:
  /// The panel of `floats` from `next`, none of it at or past `end`, over
  /// `calls` calls of step().
  PanelPrefetch(const float *next, int64_t floats, const float *end, int64_t calls)
      : at(reinterpret_cast<const char *>(next)),
        stop(reinterpret_cast<const char *>(next + floats < end ? next + floats : end)),
        perCall((4 * floats / 64 + calls - 1) / calls) {}
  void step() {
    for (int64_t l = 0; l < perCall && at < stop; ++l, at += 64)
      __builtin_prefetch(at, 0, 2);
  }

private:
  const char *at, *stop;
  int64_t perCall;
};

/// The run of tap k in the planes from a column: B's row k in conv.cpp,
/// A's column k in channels.cpp. The microkernel prefetches the run `ahead`
/// floats on (the next tile's) where that is not 0: the tiles that first
/// read a layer's input do so where the library runs on several threads
/// (runsOnSeveralThreads), whose kernels read what another core wrote.
/// There MobileNetV2's projections, split by rows after depthwise layers
/// split by channels, half of whose input lies in the other core's L2, ran
/// 0.78-0.93 of their time and the model 0.945 at two threads
/// (EfficientNet-B0 0.942, paired A/B); on one thread, with the input in
/// this core's L2, the same layers took 3-13% longer, SqueezeNet's 13x13
/// squeezes 9%.
struct TapRows {
  const float *planes;
  const int64_t *offsets;
  int64_t ahead = 0;
  const float *operator()(int64_t k) const { return planes + offsets[k]; }
};

/// Where taps k, k + 1, ... = (c, i, j) of an output channel's filter are
/// in w, a step at a time: weights that change at every call are packed at
/// every call, where three divisions per tap and block of output channels
/// cost more than the copy (EfficientNet-B0's 144 -> 40 projection of
/// 28x28 took 10 us longer with its weights scaled at each call, 6.6 us
/// with the walk).
class TapWalk {
public:
  TapWalk(const Conv &s, const View &w, int64_t k)
      : s(s), w(w), c(k / (s.KH * s.KW)), i(k / s.KW % s.KH), j(k % s.KW) {}
  int64_t offset() const { return c * w.stride(1) + i * w.stride(2) + j * w.stride(3); }
  void next() {
    if (++j < s.KW)
      return;
    j = 0;
    if (++i < s.KH)
      return;
    i = 0;
    ++c;
  }

private:
  const Conv &s;
  const View &w;
  int64_t c, i, j;
};

/// v * sigmoid(v) as v / (1 + exp(-v)), within 4e-7 relative error for
/// |v| < 16 and 1.2e-6 down to results of 1e-30 (expTimes). (With sigmoid's
/// reciprocal and a product it took 1.5x as long: an epilogue's SiLU is
/// most of a wide pointwise layer's time, EfficientNet-B0's 16 -> 96 of
/// 112x112.) Past the float range exp(-v) is 0 or inf, and v / inf is -0
/// as v * sigmoid(v) is; a NaN v gives NaN by the division.
inline Vec silu(Vec v) {
#if VECTOR_FLOATS == 16
  // Only v = inf needs a bound, exp(-v) then 0; v = -inf gives NaN either
  // way, as -inf * sigmoid(-inf) does.
  Vec below = (Vec)_mm512_maskz_min_ps(0xffff, (__m512)v, _mm512_set1_ps(1e4f));
  return v / (1.0f + expTimes(below, -kLog2e));
#else
  return v / (1.0f + expTimes(v, -kLog2e));
#endif
}

/// v clamped to [lo, hi], NaN kept.
inline Vec clamp(Vec v, Vec lo, Vec hi) {
  v = v < lo ? lo : v;
  return hi < v ? hi : v;
}

/// The epilogue's activation of a vector of results.
inline Vec activate(const Epilogue &e, Vec v) {
  if (e.relu) // NaN kept, as numpy.maximum(v, 0).
    v = v < 0.0f ? 0.0f : v;
  if (e.silu)
    v = silu(v);
  return clamp(v, Vec{} + e.lo, Vec{} + e.hi);
}

/// The activations that epilogues specialize on, a vector taking one or two
/// instructions rather than activate's tests of the epilogue (in
/// convolveGroup's results stored from registers, those tests took most of
/// the epilogue's time): none, ReLU, a clamp (ReLU6), SiLU alone (without
/// activate's clamp to infinite bounds, four operations a vector:
/// EfficientNet-B0 1.02x faster with one thread); kAny is activate.
enum class Activation { kNone, kRelu, kClamp, kSilu, kAny };

inline Activation activationOf(const Epilogue &e) {
  bool bounded = e.lo != -__builtin_inff() || e.hi != __builtin_inff();
  if (e.silu)
    return e.relu || bounded ? Activation::kAny : Activation::kSilu;
  if (e.relu)
    return bounded ? Activation::kAny : Activation::kRelu;
  return bounded ? Activation::kClamp : Activation::kNone;
}

/// activate(e, v) for an epilogue whose activationOf is A, `lo` and `hi`
/// being its bounds.
template <Activation A> inline Vec activateAs(const Epilogue &e, Vec v, Vec lo, Vec hi) {
  if constexpr (A == Activation::kNone)
    return v;
  else if constexpr (A == Activation::kRelu)
    return v < 0.0f ? 0.0f : v; // NaN kept.
  else if constexpr (A == Activation::kClamp)
    return clamp(v, lo, hi);
  else if constexpr (A == Activation::kSilu)
    return silu(v);
  else
    return activate(e, v);
}

/// Calls `f.template operator()<A>()` for the activation `a`.
template <class F> void withActivation(Activation a, F f) {
  switch (a) {
  case Activation::kNone:
    return f.template operator()<Activation::kNone>();
  case Activation::kRelu:
    return f.template operator()<Activation::kRelu>();
  case Activation::kClamp:
    return f.template operator()<Activation::kClamp>();
  case Activation::kSilu:
    return f.template operator()<Activation::kSilu>();
  case Activation::kAny:
    return f.template operator()<Activation::kAny>();
  }
}

/// A depthwise filter's KH x KW taps in (i, j) order. (Nested loops: a
/// division per tap cost more than a 7x7 channel's convolution.)
inline void depthwiseTaps(const Conv &s, const View &w, const float *filter, float *taps) {
  for (int64_t i = 0; i < s.KH; ++i)
    for (int64_t j = 0; j < s.KW; ++j)
      *taps++ = filter[i * w.stride(2) + j * w.stride(3)];
}

/// Copies the Cg channels of `image` into phase planes, zero-padded.
void buildPlanes(const Conv &s, const View &x, const float *image, float *planes);

/// Where the run of tap k = (c, i, j) starts in the planes.
void tapOffsets(const Conv &s, int64_t *offsets);

/// Whether y's rows and the residual's are contiguous.
bool contiguousRows(const View &y, const Epilogue &e);

/// Whether, further, y's rows follow each other and the residual's do, with
/// no columns dropped (Wq = OW): columns q are one run (a 7x7 layer is not 7
/// runs of 7).
bool mergedRows(const Conv &s, const View &y, const Epilogue &e);

/// y[o, oh, ow] = epilogue(tile[o * ldt + q - q0]) for q = oh * Wq + ow in
/// [q0, q1) (ow < OW), for `channels` channels of y from `out`.
void copyOut(const Conv &s, const float *tile, int64_t ldt, int64_t q0, int64_t q1,
             int64_t channels, const View &y, float *out, const Epilogue &e);

/// A register tile of the GEMMs that hold output channels in vectors
/// (channels.cpp, winograd.cpp): rows (pixels) x vectors (channels). Each
/// fills most of the vector registers with accumulators, the broadcast
/// pixels being FMA operands (gemm.h). Largest first.
struct TileShape {
  int rows, vectors;
};
#if VECTOR_FLOATS == 16
constexpr TileShape kTileShapes[] = {{7, 4}, {12, 2}, {8, 3}, {6, 4}, {7, 3}, {7, 2}};
#else
constexpr TileShape kTileShapes[] = {{6, 2}, {4, 3}};
#endif

/// Multiplies a tile computes per needed one: runs of `pixels` pixels
/// rounded up to its rows, `channels` to its vectors.
inline double tileWaste(TileShape shape, int64_t pixels, int64_t channels) {
  int64_t columns = shape.vectors * kWidth;
  return double(roundUp(pixels, shape.rows)) / pixels * double(roundUp(channels, columns)) /
         channels;
}

/// The shape of the least waste; the first (the largest) among equals.
inline TileShape bestTileShape(int64_t pixels, int64_t channels) {
  TileShape best = kTileShapes[0];
  for (TileShape shape : kTileShapes)
    if (tileWaste(shape, pixels, channels) < tileWaste(best, pixels, channels))
      best = shape;
  return best;
}

/// Calls `f.template operator()<MR, NV>()` for the rows and vectors of
/// `shape`, one of kTileShapes.
template <class F> void withTileShape(TileShape shape, F f) {
  switch (shape.rows * 10 + shape.vectors) {
#if VECTOR_FLOATS == 16
  case 122:
    return f.template operator()<12, 2>();
  case 83:
    return f.template operator()<8, 3>();
  case 72:
    return f.template operator()<7, 2>();
  case 73:
    return f.template operator()<7, 3>();
  case 64:
    return f.template operator()<6, 4>();
  default:
    return f.template operator()<7, 4>();
#else
  case 43:
    return f.template operator()<4, 3>();
  default:
    return f.template operator()<6, 2>();
#endif
  }
}

/// Copies out the results of pixels q in [q0, q1) of `padded` (its rows Wq
/// pixels wide, those past OW dropped) from `tile` ([q - q0][o], rows of
/// `channels`): a vector of channels at a time, transposed through
/// `transposed` (kWidth x (q1 - q0) floats) into rows of y, then copyOut.
void copyOutPixels(const Conv &padded, const float *tile, int64_t channels, int64_t q0,
                   int64_t q1, float *transposed, const View &y, float *out, const Epilogue &e);

/// What packs a group's filters into panels of `columns` output channels
/// (channels.cpp, winograd.cpp): the layer, the weights, the group's first
/// filter.
struct ChannelPanels {
  const Conv *s;
  const View *w;
  const float *data;
  int64_t columns;
};

/// Multiplies per needed one of convolveByChannels' tiles on the layer.
inline double channelTilesWaste(const Conv &s) {
  return tileWaste(bestTileShape(s.OW, s.Og), s.OW, s.Og);
}

/// y = epilogue(the convolution of one group), output channels in vectors
/// (channels.cpp): `rows` and `offsets` are the planes and tap offsets of
/// the columns tiling, `filters` the group's weights in w.
void convolveByChannels(const Conv &s, const View &w, const float *filters, bool constant,
                        const float *rows, const int64_t *offsets, const View &y, float *out,
                        const Epilogue &e);

/// Whether convolveWinograd runs the layer, and faster than the direct
/// tilings: a 3x3 window, unit strides and dilations, enough channels.
bool winogradPays(const Conv &s);

/// y = epilogue(the convolution of one group) by Winograd's F(m x m, 3x3)
/// (winograd.cpp) from the group's phase planes.
void convolveWinograd(const Conv &s, const View &w, const float *filters, bool constant,
                      const float *planes, const View &y, float *out, const Epilogue &e);

/// row[q] = sum over the taps of weight[t] * planes[offsets[t] + q] for one
/// channel of a depthwise layer, the columns rounded up to kDepthwiseStep.
void convolveChannel(const Conv &s, const float *weights, const float *planes,
                     const int64_t *offsets, float *row);

/// Whether convolveDepthwiseBlocked runs the layer: at least a block of
/// channels, each one's pixels contiguous in x, y and the residual, and
/// output rows that would leave row vectors mostly empty.
bool depthwiseBlocked(const Conv &s, const View &x, const View &y, const Epilogue &e);

/// y = epilogue(the depthwise convolution of x with w), kWidth channels at
/// a time, transposed so that a vector holds a pixel of each (and back, in
/// registers, as the results are stored); the taps packed once when
/// `constant`.
void convolveDepthwiseBlocked(const Conv &s, const View &x, const View &w, bool constant,
                              const View &y, const Epilogue &e);

/// Whether convolveDepthwiseInPlace runs the layer: unit or stride-2
/// steps along rows whose elements are contiguous in x, y and a residual.
bool depthwiseInPlace(const Conv &s, const View &x, const View &y, const Epilogue &e);

/// y = epilogue(the depthwise convolution of x with w), x's rows read in
/// place.
void convolveDepthwiseInPlace(const Conv &s, const View &x, const View &w, const View &y,
                              const Epilogue &e);

} // namespace KERNEL_NAMESPACE

#endif // FUEL_KERNELS_X86_CONV_H
