//===- conv.cpp - f32 conv2d for x86-64 -----------------------------------===//
//
// The library conv2d that fuelc's generated f32 conv2d kernels call: NCHW
// images, OIHW weights, any strides, pads, dilations and groups. There is no
// im2col matrix. A group's zero-padded image is copied once into stride
// phase planes (plane (a, b) of a channel holds the padded pixels (y*sh + a,
// x*sw + b)), in which each tap (c, i, j) of the window reads one contiguous
// run over the flattened output q = oh * Wq + ow. So a convolution is a GEMM
// W[Og, Cg*KH*KW] x B[k, q] whose row k is the run of tap k: gemm.h's
// microkernel reads it in place, and constant weights are packed into its A
// panels once (kConstantB). It computes the Wq - OW columns past each output
// row too and drops them when the result is copied out (2 of 58 for a 3x3
// pad-1 layer of width 56). Layers where that and the tile's last columns
// waste more (short rows: 14x14, 7x7) take channels.cpp's tiling of the
// same GEMM, output channels in vectors; 3x3 stride-1 layers of enough
// channels winograd.cpp's F(2x2, 3x3). Depthwise layers are
// depthwise.cpp's.
//
// Entry points (MLIR C interfaces, as in gemm.cpp):
//   void _mlir_ciface_<CONV_SYMBOL>(UnrankedMemRef *x, *w, *y, *bias,
//       *residual, int64_t flags, strideH, strideW, padTop, padLeft,
//       dilationH, dilationW, float lo, float hi)
//   void CONV_RELEASE(void)
// computing y = act(conv(x, w) + bias + residual) in one pass over y (the
// epilogue of Epilogue; bias and residual are read with kBias, kResidual;
// ReLU and SiLU with kRelu, kSilu).
// The groups are x's channels over w's input channels, so a thread may run
// on any channel slice of a depthwise layer.
//
//===----------------------------------------------------------------------===//

#include "conv.h"

#if !defined(CONV_SYMBOL) || !defined(CONV_RELEASE)
#error "define CONV_SYMBOL and CONV_RELEASE, the conv2d entry points"
#endif

using namespace KERNEL_NAMESPACE;

// Plain loops: a depthwise layer of 7x7 images copies rows of 9 floats,
// where a memcpy and two memsets per row would cost more than the copy.
void KERNEL_NAMESPACE::buildPlanes(const Conv &s, const View &x, const float *image,
                                   float *planes) {
  // Phases no tap reads (3 of 4 for a 1x1 window of stride 2) are skipped.
  auto read = [](int64_t phase, int64_t taps, int64_t dilation, int64_t stride) {
    for (int64_t t = 0; t < taps; ++t)
      if (t * dilation % stride == phase)
        return true;
    return false;
  };
  for (int64_t c = 0; c < s.Cg; ++c)
    for (int64_t a = 0; a < s.sh; ++a)
      for (int64_t b = 0; b < s.sw; ++b) {
        if (!read(a, s.KH, s.dh, s.sh) || !read(b, s.KW, s.dw, s.sw))
          continue;
        float *plane = planes + ((c * s.sh + a) * s.sw + b) * s.planeFloats();
        // Plane columns whose pixel lies inside the image:
        // p * sw + b - padLeft in [0, W).
        int64_t shift = b - s.padLeft;
        int64_t lo = shift >= 0 ? 0 : (-shift + s.sw - 1) / s.sw;
        int64_t hi = s.W - shift <= 0 ? 0 : (s.W - shift + s.sw - 1) / s.sw;
        lo = lo < s.Wq ? lo : s.Wq;
        hi = hi < lo ? lo : hi < s.Wq ? hi : s.Wq;
        for (int64_t y = 0; y < s.Hq; ++y) {
          float *row = plane + y * s.Wq;
          int64_t ih = y * s.sh + a - s.padTop;
          if (ih < 0 || ih >= s.H) {
            for (int64_t p = 0; p < s.Wq; ++p)
              row[p] = 0.0f;
            continue;
          }
          const float *in = image + c * x.stride(1) + ih * x.stride(2);
          for (int64_t p = 0; p < lo; ++p)
            row[p] = 0.0f;
          int64_t step = x.stride(3);
          if (s.sw == 1 && step == 1) {
            for (int64_t p = lo; p < hi; ++p)
              row[p] = in[p + shift];
          } else if (s.sw == 2 && step == 1) {
            for (int64_t p = lo; p < hi; ++p)
              row[p] = in[2 * p + shift];
          } else {
            for (int64_t p = lo; p < hi; ++p)
              row[p] = in[(p * s.sw + shift) * step];
          }
          for (int64_t p = hi; p < s.Wq; ++p)
            row[p] = 0.0f;
        }
      }
  for (int64_t p = s.Cg * s.sh * s.sw * s.planeFloats(); p < s.planesFloats(); ++p)
    planes[p] = 0.0f;
}

// The window's offsets in the first channel's planes, then those of each
// channel one channel's planes on: four divisions a tap (all Cg x KH x KW
// of them) took 3 us of a 16 -> 16 3x3 layer of 2x2 images, 1-2% of
// ResNet-18's stride-2 3x3 layers.
void KERNEL_NAMESPACE::tapOffsets(const Conv &s, int64_t *offsets) {
  int64_t window = s.KH * s.KW;
  for (int64_t i = 0; i < s.KH; ++i)
    for (int64_t j = 0; j < s.KW; ++j) {
      int64_t row = i * s.dh, col = j * s.dw;
      int64_t plane = row % s.sh * s.sw + col % s.sw;
      offsets[i * s.KW + j] = plane * s.planeFloats() + row / s.sh * s.Wq + col / s.sw;
    }
  int64_t channelFloats = s.sh * s.sw * s.planeFloats();
  for (int64_t t = window; t < s.taps(); ++t)
    offsets[t] = offsets[t - window] + channelFloats;
}

namespace {
/// Packs one group's weights [Og, taps] into MR-row panels per block of
/// tapsPerBlock taps, in the order convolveGroup reads them; rows past Og
/// are zero.
struct WeightsOfGroup {
  const Conv *s;
  const View *w;
  const float *data;
  int64_t tapsPerBlock;
};

void packWeights(const void *context, float *out) {
  const WeightsOfGroup &g = *static_cast<const WeightsOfGroup *>(context);
  const Conv &s = *g.s;
  int64_t K = s.taps(), rows = roundUp(s.Og, kMRc);
  for (int64_t pc = 0; pc < K; pc += g.tapsPerBlock) {
    int64_t kc = K - pc < g.tapsPerBlock ? K - pc : g.tapsPerBlock;
    for (int64_t ir = 0; ir < rows; ir += kMRc) {
      TapWalk walk(s, *g.w, pc);
      for (int64_t k = pc; k < pc + kc; ++k, walk.next()) {
        const float *tap = g.data + walk.offset();
        for (int64_t r = 0; r < kMRc; ++r)
          *out++ = ir + r < s.Og ? tap[(ir + r) * g.w->stride(0)] : 0.0f;
      }
    }
  }
}

const float *weightPanels(const Conv &s, const View &w, const float *data, bool constant) {
  WeightsOfGroup group{&s, &w, data, tapsPerBlock(kMaxVectors)};
  return packedFilters(w, data, s.Og, group.tapsPerBlock, roundUp(s.Og, kMRc) * s.taps(), constant,
                       packWeights, &group);
}

/// to[i] = act(from[i] + bias + residual[i]) for i < n, all contiguous (a
/// null residual is zero): a vector at a time, act being activationOf(e).
template <Activation A>
inline void applyEpilogue(const Epilogue &e, const float *from, const float *residual, float *to,
                          int64_t n, float bias) {
  Vec lo = Vec{} + e.lo, hi = Vec{} + e.hi;
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    Vec v = *reinterpret_cast<const Vec *>(from + i) + bias;
    if (residual)
      v += *reinterpret_cast<const Vec *>(residual + i);
    *reinterpret_cast<Vec *>(to + i) = activateAs<A>(e, v, lo, hi);
  }
  if (i == n)
    return;
  // The tail as one masked vector: rows of 7, 13 or 14 results are all
  // tail.
  LaneMask lanes = lanesWithin(i, n);
  Vec v = loadLanes(from + i, lanes) + bias;
  if (residual)
    v += loadLanes(residual + i, lanes);
  storeLanes(to + i, lanes, activateAs<A>(e, v, lo, hi));
}

/// copyOut for an epilogue whose activationOf is A. Rows of y or of the
/// residual that are not contiguous go through `row`.
template <Activation A>
void copyOutAs(const Conv &s, const float *tile, int64_t ldt, int64_t q0, int64_t q1,
               int64_t channels, const View &y, float *out, const Epilogue &e) {
  const View *r = e.residualView;
  bool direct = contiguousRows(y, e), merged = mergedRows(s, y, e);
  float row[256];
  for (int64_t o = 0; o < channels; ++o) {
    float bias = e.bias ? e.bias[o * e.biasStride] : 0.0f;
    for (int64_t q = q0; q < q1;) {
      int64_t oh = q / s.Wq, ow = q % s.Wq;
      int64_t run = merged || s.Wq - ow > q1 - q ? q1 - q : s.Wq - ow;
      int64_t valid = merged ? run : ow >= s.OW ? 0 : s.OW - ow < run ? s.OW - ow : run;
      const float *from = tile + o * ldt + (q - q0);
      float *to = out + o * y.stride(1) + oh * y.stride(2) + ow * y.stride(3);
      const float *residual =
          e.residual ? e.residual + o * r->stride(1) + oh * r->stride(2) + ow * r->stride(3)
                     : nullptr;
      for (int64_t done = 0; done < valid;) {
        int64_t n = direct ? valid : valid - done < 256 ? valid - done : 256;
        if (direct) {
          applyEpilogue<A>(e, from, residual, to, n, bias);
        } else {
          for (int64_t i = 0; i < n; ++i)
            row[i] = residual ? residual[(done + i) * r->stride(3)] : 0.0f;
          applyEpilogue<A>(e, from + done, row, row, n, bias);
          for (int64_t i = 0; i < n; ++i)
            to[(done + i) * y.stride(3)] = row[i];
        }
        done += n;
      }
      q += run;
    }
  }
}

} // namespace

bool KERNEL_NAMESPACE::contiguousRows(const View &y, const Epilogue &e) {
  return y.stride(3) == 1 && (!e.residual || e.residualView->stride(3) == 1);
}

bool KERNEL_NAMESPACE::mergedRows(const Conv &s, const View &y, const Epilogue &e) {
  return contiguousRows(y, e) && s.Wq == s.OW && y.stride(2) == s.OW &&
         (!e.residual || e.residualView->stride(2) == s.OW);
}

void KERNEL_NAMESPACE::copyOut(const Conv &s, const float *tile, int64_t ldt, int64_t q0,
                               int64_t q1, int64_t channels, const View &y, float *out,
                               const Epilogue &e) {
  withActivation(activationOf(e),
                 [&]<Activation A>() { copyOutAs<A>(s, tile, ldt, q0, q1, channels, y, out, e); });
}

namespace {
/// Multiplies per needed one of the columns tiling: its tiles are
/// kMaxVectors vectors wide but for the last, as wide as the columns left
/// need, which runs at 3/4 the speed when narrower.
double columnTilesWaste(const Conv &s) {
  int64_t whole = s.columns() / kMaxNRc * kMaxNRc;
  int64_t lastVectors = (s.columns() - whole + kWidth - 1) / kWidth;
  double columns =
      double(whole) + double(lastVectors * kWidth) * (lastVectors < kMaxVectors ? 4.0 / 3.0 : 1.0);
  return columns / double(s.OH * s.OW) * double(roundUp(s.Og, kMRc)) / s.Og;
}

/// The microkernel on the last tile of a layer's columns, `vectors` (at
/// most NV) vectors wide: no multiplies for the vectors past them.
template <int NV, class Rows>
void lastTile(int vectors, int64_t kc, const float *a, Rows rows, float *c, int64_t ldc,
              bool accumulate) {
  if constexpr (NV > 1)
    if (vectors < NV)
      return lastTile<NV - 1>(vectors, kc, a, rows, c, ldc, accumulate);
  microkernel<kMRc, NV>(kc, a, rows, c, ldc, accumulate);
}

/// Where the vectors of a tile's columns q = oh * Wq + ow, from `q` on, lie
/// in y's rows (and the residual's): the lanes with ow < OW and q < q1, one
/// run in a row and, where the vector reaches past Wq, one in the next (Wq
/// is at least a vector; merged rows are one run), lane l of a run at `at +
/// l` from the channel's first.
struct ColumnRuns {
  int64_t yAt[kMaxVectors][2], residualAt[kMaxVectors][2];
  LaneMask lanes[kMaxVectors][2];
  bool second[kMaxVectors];

  ColumnRuns() = default;
  ColumnRuns(const Conv &s, const View &y, const Epilogue &e, bool merged, int64_t q, int64_t q1) {
    int64_t residualRow = e.residual ? e.residualView->stride(2) : 0;
    for (int v = 0; v < kMaxVectors; ++v, q += kWidth) {
      if (merged) {
        yAt[v][0] = residualAt[v][0] = q;
        lanes[v][0] = lanesWithin(q, q1);
        yAt[v][1] = residualAt[v][1] = 0;
        lanes[v][1] = lanesWithin(0, 0);
        second[v] = false;
        continue;
      }
      int64_t oh = q / s.Wq, ow = q % s.Wq, left = q1 - q;
      yAt[v][0] = oh * y.stride(2) + ow;
      residualAt[v][0] = oh * residualRow + ow;
      lanes[v][0] = lanesWithin(ow, s.OW < ow + left ? s.OW : ow + left);
      yAt[v][1] = (oh + 1) * y.stride(2) + ow - s.Wq;
      residualAt[v][1] = (oh + 1) * residualRow + ow - s.Wq;
      lanes[v][1] = lanesWithin(ow - s.Wq, s.OW < ow - s.Wq + left ? s.OW : ow - s.Wq + left);
      second[v] = anyLane(lanes[v][1]);
    }
  }
};

/// Stores the microkernel's sums of output channels [o, o + rows) of a
/// tile, plus those of the earlier tap blocks (`partial`, rows `ldt` apart,
/// or none), with the epilogue of channel o on (`e`) straight into y where
/// `runs` say, rather than through a block tile in L2 and copyOut
/// (SqueezeNet's stem 0.47 -> 0.35 ms alone, the model 0.953 of its time;
/// results of kColdResultBytes and more are copied out again).
template <Activation A> struct ResultsInPlace {
  const ColumnRuns *runs;
  const Epilogue *e;
  float *y;
  int64_t channelStride, residualStride;
  const float *partial;
  int64_t ldt;
  int rows;
  Vec lo = Vec{} + e->lo, hi = Vec{} + e->hi;

  // (Inlined: a call would spill the microkernel's accumulators.)
  __attribute__((always_inline)) void operator()(int r, int v, Vec sum) const {
    if (r >= rows)
      return;
    const ColumnRuns &c = *runs;
    if (partial)
      sum += *reinterpret_cast<const Vec *>(partial + r * ldt + v * kWidth);
    if (e->bias)
      sum += e->bias[r * e->biasStride];
    if (e->residual) {
      const float *residual = e->residual + r * residualStride;
      sum += loadLanes(residual + c.residualAt[v][0], c.lanes[v][0]);
      if (c.second[v])
        sum += loadLanes(residual + c.residualAt[v][1], c.lanes[v][1]);
    }
    Vec value = activateAs<A>(*e, sum, lo, hi);
    float *out = y + r * channelStride;
    storeLanes(out + c.yAt[v][0], c.lanes[v][0], value);
    if (c.second[v])
      storeLanes(out + c.yAt[v][1], c.lanes[v][1], value);
  }
};

/// Columns of the tile computed and copied out at a time: the block stays in
/// L2 between the two (a whole 16 -> 96 layer of 112x112 would go to
/// memory and back).
int64_t blockColumns(const Conv &s) {
  constexpr int64_t kTileBytes = 256 << 10;
  int64_t columns = kTileBytes / (4 * roundUp(s.Og, kMRc));
  columns = columns < kNC ? columns : kNC;
  return columns < kMaxNRc ? kMaxNRc : columns / kMaxNRc * kMaxNRc;
}

/// Results from this size on are written where no cache holds them: a
/// layer's result that large stays in L3 at best, and rarely from the run
/// before (SqueezeNet's 3 MiB stem result). Smaller ones are mostly still
/// cached, where prefetching them slowed MobileNetV2's 1.8 MiB layers by 8%.
/// Such results go through the block tile and copyOut, their lines
/// prefetched while the block is computed, rather than ResultsInPlace: its
/// stores reach all Og channel rows a few lines at a time, each line a
/// miss in turn. Stored in place, SqueezeNet's stem took 0.39-0.41 ms alone
/// with warm caches and 1.04-1.10 after 64 MiB of other data; copied out,
/// 0.45-0.47 and 0.68-0.75, and in the models, in a slow spell of the VM,
/// 0.46 -> 0.39 ms (ResNet-18's 1.63 -> 1.50 ms, and the poolings after
/// them 15% faster): SqueezeNet 0.949 and ResNet-18 0.943 of their
/// one-thread time, MobileNetV2 0.978 and EfficientNet-B0 0.985 (their
/// 4.8 MB expansions of 112x112), paired A/B of 100 pairs, Zen 5,
/// 2026-12-06; in a quick spell 0.97-1.00.
constexpr int64_t kColdResultBytes = 5 << 19;

/// Prefetches for writing (PREFETCHW: the line comes owned, where a read
/// prefetch leaves the store to ask for it again), a few lines at a time,
/// the lines of y that copyOut will write for a block of columns of every
/// output channel, while the block is computed: copyOut would otherwise
/// wait on each line from memory (SqueezeNet's stem 0.53 -> 0.46 ms in the
/// model; PREFETCHW over a read prefetch: EfficientNet-B0's stem 0.46 ->
/// 0.42 ms while the VM's memory was slow, the same while it was fast).
class ResultPrefetch {
public:
  ResultPrefetch() = default;
  ResultPrefetch(const Conv &s, const View &y, const float *out, int64_t q0, int64_t q1) {
    int64_t oh0 = q0 / s.Wq, oh1 = (q1 - 1) / s.Wq;
    auto *first = reinterpret_cast<const char *>(out + oh0 * y.stride(2));
    start = reinterpret_cast<const char *>(reinterpret_cast<uintptr_t>(first) & ~uintptr_t(63));
    spanBytes = 4 * ((oh1 - oh0) * y.stride(2) + (s.OW - 1) * y.stride(3) + 1) + (first - start);
    channelBytes = 4 * y.stride(1);
    channelsLeft = s.Og;
    at = start;
  }
  /// The lines left to prefetch.
  int64_t lines() const { return channelsLeft * ((spanBytes + 63) / 64); }
  void step(int64_t count) {
    for (; count > 0 && channelsLeft > 0; --count) {
      __builtin_prefetch(at, 1);
      at += 64;
      if (at >= start + spanBytes) {
        start += channelBytes;
        at = start;
        --channelsLeft;
      }
    }
  }

private:
  const char *start = nullptr, *at = nullptr;
  int64_t spanBytes = 0, channelBytes = 0, channelsLeft = 0;
};

/// y = epilogue(sum over taps k of A[o, k] * planes[offsets[k] + q]) for one
/// group, a block of columns at a time through `tile` (rows of A rounded up
/// to kMRc, columns to kMaxNRc).
void convolveGroup(const Conv &s, const float *panels, const float *planes,
                   const int64_t *offsets, float *tile, const View &y, float *out,
                   const Epilogue &epilogue) {
  constexpr int64_t kNRc = kMaxNRc, kKCc = tapsPerBlock(kMaxVectors);
  int64_t K = s.taps(), rows = roundUp(s.Og, kMRc), ldt = blockColumns(s);
  // The last tile's columns past the layer's, zero in a copy: the runs
  // are not read past their end (the image may be read in place). Masked
  // vector loads: copied a float at a time, the copy took a quarter of
  // SqueezeNet's 13x13 squeeze layers (their kernels 0.72-0.80 of their
  // time with vectors, the model 0.97).
  alignas(64) float ragged[kKCc * kNRc];
  // The first tile of rows of A to read a tile of B prefetches the next.
  int64_t ahead = runsOnSeveralThreads() ? kNRc : 0;
  bool merged = mergedRows(s, y, epilogue);
  // The threshold is the layer's: on several threads a large layer runs as
  // halves, one per thread (SqueezeNet's 3 MiB stem: at two threads its
  // halves stored in place made the model 1.03x slower).
  int64_t layerShare = runsOnSeveralThreads() ? 2 : 1;
  bool cold = 4 * s.Og * s.OH * s.OW * layerShare >= kColdResultBytes;
  bool resultsInPlace = !cold && (merged || (contiguousRows(y, epilogue) && s.Wq >= kWidth));
  int64_t residualStride = epilogue.residual ? epilogue.residualView->stride(1) : 0;
  Activation activation = activationOf(epilogue);
  for (int64_t jc = 0; jc < s.columns(); jc += ldt) {
    int64_t valid = s.columns() - jc < ldt ? s.columns() - jc : ldt;
    int64_t nc = roundUp(valid, kNRc), last = nc - kNRc;
    // Spread over the block's microkernel calls.
    ResultPrefetch result = cold ? ResultPrefetch(s, y, out, jc, jc + valid) : ResultPrefetch();
    int64_t calls = rows / kMRc * (nc / kNRc) * ((K + kKCc - 1) / kKCc);
    int64_t perCall = (result.lines() + calls - 1) / calls;
    for (int64_t pc = 0; pc < K; pc += kKCc) {
      int64_t kc = K - pc < kKCc ? K - pc : kKCc;
      const float *blockA = panels + pc * rows;
      for (int64_t k = 0; valid < nc && k < kc; ++k) {
        const float *run = planes + offsets[pc + k] + jc + last;
        for (int v = 0; v < kMaxVectors; ++v)
          *reinterpret_cast<Vec *>(ragged + k * kNRc + v * kWidth) =
              loadLanes(run + v * kWidth, lanesWithin(v * kWidth, valid - last));
      }
      for (int64_t ic = 0; ic < rows; ic += kMC) {
        int64_t mc = rows - ic < kMC ? rows - ic : kMC;
        for (int64_t jr = 0; jr < nc; jr += kNRc) {
          TapRows shifted{planes + jc + jr, offsets + pc};
          Panel copied{ragged, kNRc};
          bool raggedTile = jr == last && valid < nc;
          bool inPlace = resultsInPlace && pc + kc == K && !raggedTile;
          ColumnRuns runs =
              inPlace ? ColumnRuns(s, y, epilogue, merged, jc + jr, jc + valid) : ColumnRuns();
          for (int64_t ir = ic; ir < ic + mc; ir += kMRc) {
            shifted.ahead = ir == ic ? ahead : 0;
            result.step(perCall);
            float *at = tile + ir * ldt + jr;
            if (raggedTile) {
              lastTile<kMaxVectors>(int((valid - last + kWidth - 1) / kWidth), kc, blockA + ir * kc,
                                    copied, at, ldt, pc > 0);
            } else if (!inPlace) {
              microkernel<kMRc, kMaxVectors>(kc, blockA + ir * kc, shifted, at, ldt, pc > 0);
            } else {
              Epilogue ofTile = epilogue.ofChannel(ir);
              withActivation(activation, [&]<Activation A>() {
                ResultsInPlace<A> results{&runs,
                                          &ofTile,
                                          out + ir * y.stride(1),
                                          y.stride(1),
                                          residualStride,
                                          pc > 0 ? at : nullptr,
                                          ldt,
                                          int(s.Og - ir < kMRc ? s.Og - ir : kMRc)};
                microkernelInto<kMRc, kMaxVectors>(kc, PackedColumns<kMRc>{blockA + ir * kc},
                                                   shifted, results);
              });
            }
          }
        }
      }
    }
    if (!resultsInPlace)
      copyOut(s, tile, ldt, jc, jc + valid, s.Og, y, out, epilogue);
    else if (valid < nc) // The ragged last tile's results are in the tile.
      copyOut(s, tile + last, ldt, jc + last, jc + valid, s.Og, y, out, epilogue);
  }
}

} // namespace

extern "C" void CONV_SYMBOL(UnrankedMemRef *x, UnrankedMemRef *w,
                            UnrankedMemRef *y, UnrankedMemRef *bias,
                            UnrankedMemRef *residual, int64_t flags,
                            int64_t strideH, int64_t strideW, int64_t padTop,
                            int64_t padLeft, int64_t dilationH,
                            int64_t dilationW, float lo, float hi) {
  View vx{x->descriptor, x->rank}, vw{w->descriptor, w->rank},
      vy{y->descriptor, y->rank}, vb{bias->descriptor, bias->rank},
      vr{residual->descriptor, residual->rank};
  int64_t groups = vx.size(1) / vw.size(1);
  Conv s{vx.size(2), vx.size(3), vw.size(1), vw.size(2), vw.size(3),
         vy.size(2), vy.size(3), vw.size(0) / groups,
         strideH, strideW, padTop, padLeft, dilationH, dilationW, 0, 0};
  if (s.OH <= 0 || s.OW <= 0 || s.Og <= 0)
    return;
  // The padded extent the windows reach, split into stride phases.
  s.Hq = ((s.OH - 1) * s.sh + (s.KH - 1) * s.dh + s.sh) / s.sh;
  s.Wq = ((s.OW - 1) * s.sw + (s.KW - 1) * s.dw + s.sw) / s.sw;
  bool constant = flags & kConstantB;
  Epilogue epilogue{flags & kBias ? vb.data() : nullptr, vb.stride(0),
                    flags & kResidual ? vr.data() : nullptr, &vr,
                    (flags & kRelu) != 0, (flags & kSilu) != 0, lo, hi};
  bool depthwise = s.Cg == 1 && s.Og == 1 && s.taps() <= kMaxDepthwiseTaps;
  if (depthwise && depthwiseBlocked(s, vx, vy, epilogue)) {
    convolveDepthwiseBlocked(s, vx, vw, constant, vy, epilogue);
    return;
  }
  if (depthwise && depthwiseInPlace(s, vx, vy, epilogue)) {
    convolveDepthwiseInPlace(s, vx, vw, vy, epilogue);
    return;
  }
  // A 1x1 window with unit strides and no padding reads the image's own
  // rows: nothing to copy.
  bool inPlace = !depthwise && s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 &&
                 padTop == 0 && padLeft == 0 && s.OH == s.H && s.OW == s.W &&
                 vx.stride(3) == 1 && vx.stride(2) == s.W;
  float *planes = inPlace ? nullptr : scratch(kConvPlanes, s.planesFloats());
  bool byWinograd = !depthwise && winogradPays(s);
  // Winograd reads the planes through its own transforms.
  auto *offsets = reinterpret_cast<int64_t *>(scratch(kConvOffsets, 2 * s.taps()));
  if (inPlace)
    for (int64_t c = 0; c < s.Cg; ++c)
      offsets[c] = c * vx.stride(1);
  else if (!byWinograd)
    tapOffsets(s, offsets);
  // The tiling of fewer FMAs of vectors per output: the multiplies each
  // computes, plus about one for the channels tiling's transpose and extra
  // pass over its results (fitted to the layers of bench/ConvBench.cpp on
  // Zen 5).
  double perTap = double(s.taps()) / kWidth;
  bool byChannels =
      !depthwise && channelTilesWaste(s) * perTap + 1.0 < columnTilesWaste(s) * perTap;
  float *tile = depthwise ? scratch(kConvTile, roundUp(s.columns(), kDepthwiseStep))
                : byChannels || byWinograd
                    ? nullptr
                    : scratch(kConvTile, roundUp(s.Og, kMRc) * blockColumns(s));
  float weights[kMaxDepthwiseTaps]; // A depthwise channel's taps.
  for (int64_t n = 0; n < vx.size(0); ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const float *image = vx.data() + n * vx.stride(0) + g * s.Cg * vx.stride(1);
      Epilogue group = epilogue.ofChannel(g * s.Og);
      if (group.residual)
        group.residual += n * vr.stride(0);
      const float *filters = vw.data() + g * s.Og * vw.stride(0);
      float *out = vy.data() + n * vy.stride(0) + g * s.Og * vy.stride(1);
      const float *rows = inPlace ? image : planes;
      if (!inPlace)
        buildPlanes(s, vx, image, planes);
      if (depthwise) {
        depthwiseTaps(s, vw, filters, weights);
        convolveChannel(s, weights, planes, offsets, tile);
        copyOut(s, tile, 0, 0, s.columns(), 1, vy, out, group);
        continue;
      }
      if (byWinograd) {
        convolveWinograd(s, vw, filters, constant, planes, vy, out, group);
        continue;
      }
      if (byChannels) {
        convolveByChannels(s, vw, filters, constant, rows, offsets, vy, out, group);
        continue;
      }
      const float *panels = weightPanels(s, vw, filters, constant);
      convolveGroup(s, panels, rows, offsets, tile, vy, out, group);
    }
}

extern "C" void CONV_RELEASE() { releaseAll(); }
