//===- attention.cpp - Fused scaled dot-product attention for x86-64 ------===//
//
// O = softmax(scale(Q K) + mask) V for each matrix of a batch (an
// attention's heads), as one kernel: a block of query rows at a time, the
// block's scores are computed by gemm into this thread's scratch, turned
// into probabilities there, and multiplied by V from there, so they never
// reach memory. Unfused, a [12, 512, 512] score tensor (12 MiB) was written
// by one product, read and written by the softmax and read by the next
// product, each pass through L3. K and V are packed once per matrix (as
// gemm packs a constant operand) and shared by the blocks.
//
// The softmax is the two-pass one over a whole row, as the unfused kernel
// computes it: the row's maximum, then exp(s - max) and their sum; the
// weighted sum of the exponentials is then multiplied by the sum's
// reciprocal (Dv products a row rather than a pass over its keys). A NaN
// score makes its row's results NaN.
//
//===----------------------------------------------------------------------===//

#include "exp.h"
#include "gemm.h"
#include "lanes.h"

namespace KERNEL_NAMESPACE {
namespace {

// Flags (bits of the i64 argument): Q, K or V transposed (the products'
// transpose attributes); the scale divides or multiplies the scores; a
// mask is added after it.
constexpr int64_t kTransposeQ = 1, kTransposeK = 2, kTransposeV = 4, kScaleDivides = 8,
                  kScaleMultiplies = 16, kMaskAdded = 32;

/// Query rows per block: the block's scores (rows x keys floats) about
/// 128 KiB, so that they stay in L2 between the three passes, and whole
/// register tiles of rows.
int64_t blockRows(int64_t keys) {
  int64_t rows = (32 * 1024 / (keys > 0 ? keys : 1)) / kMR * kMR;
  return rows < kMR ? kMR : rows > kMC ? kMC : rows;
}

/// The offset of batch matrix `index` (over `out`'s batch axes) in `v`,
/// whose batch axes align with out's at the end; unit axes broadcast.
int64_t batchOffset(const View &v, int64_t vMatrixAxes, const View &out, int64_t index) {
  int64_t offset = 0, batchRank = out.rank - 2, vBatch = v.rank - vMatrixAxes;
  for (int64_t i = batchRank - 1; i >= 0; --i) {
    int64_t at = index % out.size(i);
    index /= out.size(i);
    int64_t axis = i - (batchRank - vBatch);
    if (axis >= 0 && v.size(axis) != 1)
      offset += at * v.stride(axis);
  }
  return offset;
}

/// The mask's element stride along axis `fromEnd` of the scores (1: keys,
/// 2: queries): 0 where it broadcasts.
int64_t maskStride(const View &mask, int64_t fromEnd) {
  int64_t axis = mask.rank - fromEnd;
  return axis < 0 || mask.size(axis) == 1 ? 0 : mask.stride(axis);
}

/// ln of the least normal float.
constexpr float kLeastNormalExponent = -87.33f;

struct Softmax {
  int64_t flags;
  float scale;
  const float *mask; // The block's first row, or null.
  int64_t maskRowStride, maskColStride;
};

/// Row `row` of `scores` (`keys` floats) replaced by exp(s - max s) of its
/// scaled and masked scores; returns the reciprocal of their sum, by which
/// the row's weighted sum is multiplied (Dv products, not a pass over keys).
float softmaxRow(const Softmax &f, float *row, int64_t keys, int64_t r) {
  Vec scale = Vec{} + f.scale, high = Vec{} - __builtin_inff();
  const float *mask = f.mask ? f.mask + r * f.maskRowStride : nullptr;
  for (int64_t j = 0; j < keys; j += kWidth) {
    LaneMask lanes = lanesWithin(0, keys - j);
    Vec s = loadLanes(row + j, lanes);
    if (f.flags & kScaleDivides)
      s = s / scale;
    else if (f.flags & kScaleMultiplies)
      s = s * scale;
    if (mask) {
      Vec m{};
      if (f.maskColStride == 1)
        m = loadLanes(mask + j, lanes);
      else
        for (int l = 0; l < kWidth && j + l < keys; ++l)
          m[l] = mask[(j + l) * f.maskColStride];
      s += m;
    }
    storeLanes(row + j, lanes, s);
    Vec live = selectLanes(lanes, s, high);
    high = high < live ? live : high;
  }
  float max = high[0];
  for (int l = 1; l < kWidth; ++l)
    max = max < high[l] ? high[l] : max;
  Vec top = Vec{} + max, sum{};
  for (int64_t j = 0; j < keys; j += kWidth) {
    LaneMask lanes = lanesWithin(0, keys - j);
    Vec x = loadLanes(row + j, lanes) - top;
    // Below ln(FLT_MIN) exp is a denormal, which takes a microcode assist
    // per vector (a causal mask's -inf made the softmax 5x slower): 0.
    Vec low = Vec{} + kLeastNormalExponent;
    Vec e = expOf(x < low ? low : x);
    e = x < low ? Vec{} : e;
    storeLanes(row + j, lanes, e);
    sum += selectLanes(lanes, e, Vec{});
  }
  float total = 0;
  for (int l = 0; l < kWidth; ++l)
    total += sum[l];
  return 1.0f / total;
}

/// Row r of the `rows` x `cols` block at `out` (row stride `ld`) times
/// factor[r].
void scaleRows(float *out, int64_t ld, int64_t rows, int64_t cols, const float *factor) {
  for (int64_t r = 0; r < rows; ++r) {
    Vec f = Vec{} + factor[r];
    for (int64_t j = 0; j < cols; j += kWidth) {
      LaneMask lanes = lanesWithin(0, cols - j);
      storeLanes(out + r * ld + j, lanes, loadLanes(out + r * ld + j, lanes) * f);
    }
  }
}

} // namespace
} // namespace KERNEL_NAMESPACE

using namespace KERNEL_NAMESPACE;

extern "C" void ATTENTION_SYMBOL(UnrankedMemRef *q, UnrankedMemRef *k, UnrankedMemRef *v,
                                 UnrankedMemRef *scale, UnrankedMemRef *mask, UnrankedMemRef *o,
                                 int64_t flags) {
  View vq{q->descriptor, q->rank}, vk{k->descriptor, k->rank}, vv{v->descriptor, v->rank},
      vs{scale->descriptor, scale->rank}, vm{mask->descriptor, mask->rank},
      vo{o->descriptor, o->rank};
  Softmax f{flags, flags & (kScaleDivides | kScaleMultiplies) ? *vs.data() : 1.0f, nullptr,
            (flags & kMaskAdded) ? maskStride(vm, 2) : 0,
            (flags & kMaskAdded) ? maskStride(vm, 1) : 0};
  int64_t batches = 1;
  for (int64_t i = 0; i < vo.rank - 2; ++i)
    batches *= vo.size(i);
  int64_t ldo = vo.stride(vo.rank - 2);
  for (int64_t batch = 0; batch < batches; ++batch) {
    Matrix mq = matrixOf(vq, vq.data() + batchOffset(vq, 2, vo, batch), flags & kTransposeQ, false);
    Matrix mk = matrixOf(vk, vk.data() + batchOffset(vk, 2, vo, batch), flags & kTransposeK, true);
    Matrix mv = matrixOf(vv, vv.data() + batchOffset(vv, 2, vo, batch), flags & kTransposeV, true);
    float *out = vo.data() + batchOffset(vo, 2, vo, batch);
    int64_t queries = mq.rows, keys = mk.cols;
    if (queries == 0 || mv.cols == 0)
      continue;
    float *keyPanels = scratch(kAttentionKeys, packedFloats(mk));
    float *valuePanels = scratch(kAttentionValues, packedFloats(mv));
    packAllOfB(mk, keyPanels);
    packAllOfB(mv, valuePanels);
    int64_t rows = blockRows(keys);
    float *scores = scratch(kAttentionScores, rows * keys);
    const float *maskBase = (flags & kMaskAdded)
                                ? vm.data() + batchOffset(vm, vm.rank < 2 ? vm.rank : 2, vo, batch)
                                : nullptr;
    for (int64_t i0 = 0; i0 < queries; i0 += rows) {
      int64_t n = queries - i0 < rows ? queries - i0 : rows;
      Matrix block{mq.data + i0 * mq.rowStride, n, mq.cols, mq.rowStride, mq.colStride};
      gemm(block, mk, scores, keys, false, keyPanels, GemmEpilogue{});
      f.mask = maskBase ? maskBase + i0 * f.maskRowStride : nullptr;
      float reciprocals[kMC];
      for (int64_t r = 0; r < n; ++r)
        reciprocals[r] = softmaxRow(f, scores + r * keys, keys, r);
      gemm(Matrix{scores, n, keys, keys, 1}, mv, out + i0 * ldo, ldo, false, valuePanels,
           GemmEpilogue{});
      if (keys > 0) // Else the sums are empty: 0, not 0 times 1 / 0.
        scaleRows(out + i0 * ldo, ldo, n, mv.cols, reciprocals);
    }
  }
}

extern "C" void ATTENTION_RELEASE() { releaseAll(); }
