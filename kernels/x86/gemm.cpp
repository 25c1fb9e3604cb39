//===- gemm.cpp - f32 GEMM for x86-64 -------------------------------------===//
//
// The library microkernel (IREE calls these ukernels) that fuelc's generated
// f32 matmul and linear kernels call. GotoBLAS/BLIS blocking: B is packed in
// KC x NR column panels, and an MR x NR register tile of C accumulates with
// FMAs (gemm.h), broadcasting A's elements from its rows where they lie (as
// ONNX Runtime's MLAS does; a transposed A is packed in MR x KC row panels
// first). Built twice from this file:
// VECTOR_FLOATS=16 (AVX-512, 12x32 tile) and VECTOR_FLOATS=8 (AVX2, 6x16).
//
// Entry points (MLIR C interfaces of functions taking unranked memrefs and
// an i64):
//   void _mlir_ciface_<SYMBOL>(UnrankedMemRef *a, *b, *c, *bias, int64_t flags)
//   void RELEASE(void)   frees the per-thread buffers and the packed weights
//     (the runtime calls `<symbol>_release` before it unloads the kernels)
// computing C = op(A) * op(B) (+ C with kAccumulate) over the last two axes,
// leading (batch) axes broadcast numpy-style; strides are arbitrary except
// that C is contiguous in its last axis. With kBias a contiguous bias over
// C's columns is added, then with kRelu ReLU applied, as each tile is
// written for the last time: a model's bias and activation cost no pass
// over C of their own.
//
//===----------------------------------------------------------------------===//

#include "gemm.h"
#include "lanes.h"

#include <pthread.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#if !defined(SYMBOL) || !defined(RELEASE)
#error "define SYMBOL and RELEASE, the entry points' names"
#endif

namespace KERNEL_NAMESPACE {
namespace {

/// `bytes` (whole huge pages: the callers round up) on huge pages, 2 MiB
/// aligned, or null. In a VM each page fault traps to the host, and a
/// model's first runs touch all of its packed weights and scratch for the
/// first time: on 4 KiB pages, MobileNetV2's first run took 5,000 faults.
/// Huge pages also let the hardware prefetchers run on through a layer's
/// weights (they stop at page ends) and spare the TLB.
constexpr int64_t kHugePage = 2 << 20;
char *allocateHugePages(int64_t bytes) {
  auto *block = static_cast<char *>(std::aligned_alloc(kHugePage, bytes));
  if (block)
    madvise(block, bytes, MADV_HUGEPAGE);
  return block;
}

/// This thread's scratch buffers. They are all listed so that release
/// (called by the runtime before it unloads the kernels) frees them: nothing
/// here may outlive the library, so no thread-exit hooks.
struct Scratch {
  float *buffers[kScratchSlots];
  int64_t floats[kScratchSlots];
  Scratch *next;
};
/// Each thread's Scratch, under a pthread key rather than in thread-local
/// storage: a library loaded with dlopen gets dynamic TLS, whose blocks
/// glibc and the sanitizers still track after dlclose (LeakSanitizer
/// crashed at exit scanning one). Release deletes the key.
pthread_key_t scratchKey;
pthread_once_t scratchKeyOnce = PTHREAD_ONCE_INIT;
bool scratchKeyCreated = false;

void createScratchKey() {
  scratchKeyCreated = pthread_key_create(&scratchKey, nullptr) == 0;
}
Scratch *allScratch;
pthread_mutex_t scratchLock = PTHREAD_MUTEX_INITIALIZER;
/// Whether a second thread has taken scratch (set once, under scratchLock).
std::atomic<bool> secondThread{false};

/// Panels packed once for a constant operand: in the list of their key's
/// bucket, and in the list of all for release.
struct CachedPanels {
  int64_t key[kKeyWords];
  float *panels;
  CachedPanels *next, *nextOfAll;
};
/// Entries are only prepended to their bucket, each complete before it is
/// published, and freed only by release: lookups read the buckets without
/// the lock. (Both threads of a split kernel look up its weights at once;
/// with a lock, the one that lost slept in the kernel, tens of microseconds
/// in a VM.) Buckets keep each lookup to an entry or two: a model has an
/// entry per weight and thread slice (EfficientNet-B0 at two threads about
/// 160), where one list walked from its newest entry, the entries apart in
/// memory, took MobileNetV2 and EfficientNet-B0 1% longer at one and two
/// threads (paired A/B, 80 pairs: 0.988-0.993 with buckets).
constexpr int kPanelBuckets = 1024;
std::atomic<CachedPanels *> panelBuckets[kPanelBuckets];
CachedPanels *allPanels; // Under scratchLock.

std::atomic<CachedPanels *> &bucketOf(const int64_t (&key)[kKeyWords]) {
  uint64_t hash = 0;
  for (int64_t word : key)
    hash = (hash ^ uint64_t(word)) * 0x9e3779b97f4a7c15ull;
  return panelBuckets[(hash >> 32) % kPanelBuckets];
}

/// Packs rows [i0, i0 + mc) x cols [k0, k0 + kc) of A into `mr`-row panels,
/// k-major inside a panel, zero-padding the last panel.
void packA(const Matrix &a, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           int64_t mr, float *out) {
  for (int64_t ip = 0; ip < mc; ip += mr) {
    int64_t rows = mc - ip < mr ? mc - ip : mr;
    for (int64_t k = 0; k < kc; ++k) {
      const float *src = a.data + (k0 + k) * a.colStride + (i0 + ip) * a.rowStride;
      for (int64_t r = 0; r < mr; ++r)
        out[r] = r < rows ? src[r * a.rowStride] : 0.0f;
      out += mr;
    }
  }
}

/// Packs rows [k0, k0 + kc) x cols [j0, j0 + nc) of B into NR-column panels.
void packB(const Matrix &b, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
           float *out) {
  for (int64_t jp = 0; jp < nc; jp += kNR) {
    int64_t cols = nc - jp < kNR ? nc - jp : kNR;
    const float *panel = b.data + k0 * b.rowStride + (j0 + jp) * b.colStride;
    int64_t k = 0;
    // B's columns contiguous (a transposed operand: attention's keys) go
    // through register transposes of square blocks, not a float at a time.
    if (b.rowStride == 1 && cols == kNR)
      for (; k + kWidth <= kc; k += kWidth)
        for (int64_t c = 0; c < kNR; c += kWidth)
          transposeBlock(panel + k + c * b.colStride, b.colStride, out + k * kNR + c, kNR);
    for (; k < kc; ++k) {
      const float *src = panel + k * b.rowStride;
      if (cols == kNR && b.colStride == 1) {
        std::memcpy(out + k * kNR, src, kNR * sizeof(float));
      } else {
        for (int64_t c = 0; c < kNR; ++c)
          out[k * kNR + c] = c < cols ? src[c * b.colStride] : 0.0f;
      }
    }
    out += kc * kNR;
  }
}

/// packAllOfB as cachedPanels calls it.
void packWhole(const void *context, float *out) {
  packAllOfB(*static_cast<const Matrix *>(context), out);
}

/// A weight's panels, packed on its first call: read by many calls with few
/// rows of A, it would otherwise be repacked (its whole K x N) on each.
const float *packedWeights(const Matrix &b) {
  const int64_t key[kKeyWords] = {reinterpret_cast<int64_t>(&packWhole),
                                  reinterpret_cast<int64_t>(b.data),
                                  b.rows, b.cols, b.rowStride, b.colStride};
  return cachedPanels(key, packedFloats(b), packWhole, &b);
}
} // namespace

int64_t packedFloats(const Matrix &b) {
  int64_t floats = 0;
  for (int64_t jc = 0; jc < b.cols; jc += kNC)
    floats += roundUp(b.cols - jc < kNC ? b.cols - jc : kNC, kNR) * b.rows;
  return floats;
}

void packAllOfB(const Matrix &b, float *out) {
  for (int64_t jc = 0; jc < b.cols; jc += kNC) {
    int64_t nc = b.cols - jc < kNC ? b.cols - jc : kNC;
    for (int64_t pc = 0; pc < b.rows; pc += kKC) {
      int64_t kc = b.rows - pc < kKC ? b.rows - pc : kKC;
      packB(b, pc, kc, jc, nc, out);
      out += kc * roundUp(nc, kNR);
    }
  }
}

float *scratch(ScratchSlot slot, int64_t floats) {
  pthread_once(&scratchKeyOnce, createScratchKey);
  auto *s = scratchKeyCreated ? static_cast<Scratch *>(pthread_getspecific(scratchKey))
                              : nullptr;
  if (!s) {
    s = static_cast<Scratch *>(std::calloc(1, sizeof(Scratch)));
    pthread_mutex_lock(&scratchLock);
    if (allScratch)
      secondThread.store(true, std::memory_order_relaxed);
    s->next = allScratch;
    allScratch = s;
    pthread_mutex_unlock(&scratchLock);
    if (scratchKeyCreated)
      pthread_setspecific(scratchKey, s);
  }
  if (s->floats[slot] < floats) {
    // Buffers of half a huge page or more lie on whole huge pages, which the
    // slot's next larger requests usually fit.
    std::free(s->buffers[slot]);
    int64_t bytes = roundUp(floats * 4, 64);
    if (2 * bytes >= kHugePage) {
      bytes = roundUp(bytes, kHugePage);
      s->buffers[slot] = reinterpret_cast<float *>(allocateHugePages(bytes));
    } else {
      s->buffers[slot] = static_cast<float *>(std::aligned_alloc(64, bytes));
    }
    s->floats[slot] = bytes / 4;
  }
  return s->buffers[slot];
}

bool runsOnSeveralThreads() { return secondThread.load(std::memory_order_relaxed); }

namespace {
const CachedPanels *findPanels(const int64_t (&key)[kKeyWords]) {
  for (const CachedPanels *p = bucketOf(key).load(std::memory_order_acquire); p; p = p->next)
    if (std::memcmp(p->key, key, sizeof key) == 0)
      return p;
  return nullptr;
}
/// Packed panels lie in blocks of huge pages, each listed through its first
/// word for release; the newest block's unused end takes the next panels.
constexpr int64_t kBlockHeader = 64;
char *panelBlocks;
char *blockCursor, *blockEnd;

/// Room for `floats` floats of packed panels (64-byte aligned), under
/// scratchLock.
float *allocatePanels(int64_t floats) {
  int64_t bytes = roundUp(floats * 4, 64);
  if (bytes > blockEnd - blockCursor) {
    int64_t size = roundUp(kBlockHeader + bytes, kHugePage);
    char *block = allocateHugePages(size);
    if (!block)
      return nullptr;
    *reinterpret_cast<char **>(block) = panelBlocks;
    panelBlocks = block;
    blockCursor = block + kBlockHeader;
    blockEnd = block + size;
  }
  auto *panels = reinterpret_cast<float *>(blockCursor);
  blockCursor += bytes;
  return panels;
}
} // namespace

const float *cachedPanels(const int64_t (&key)[kKeyWords], int64_t floats,
                          void (*pack)(const void *context, float *out),
                          const void *context) {
  if (const CachedPanels *p = findPanels(key))
    return p->panels;
  pthread_mutex_lock(&scratchLock);
  // Another thread may have packed them since the lookup.
  if (const CachedPanels *p = findPanels(key)) {
    pthread_mutex_unlock(&scratchLock);
    return p->panels;
  }
  auto *p = static_cast<CachedPanels *>(std::malloc(sizeof(CachedPanels)));
  std::memcpy(p->key, key, sizeof key);
  p->panels = allocatePanels(floats);
  pack(context, p->panels);
  p->nextOfAll = allPanels;
  allPanels = p;
  std::atomic<CachedPanels *> &bucket = bucketOf(key);
  p->next = bucket.load(std::memory_order_relaxed);
  bucket.store(p, std::memory_order_release);
  pthread_mutex_unlock(&scratchLock);
  return p->panels;
}

const float *packedFilters(const View &w, const void *filters, int64_t outputs, int64_t blocking,
                           int64_t floats, bool constant, void (*pack)(const void *, float *),
                           const void *context) {
  if (!constant) {
    float *panels = scratch(kConvWeights, floats);
    pack(context, panels);
    return panels;
  }
  const int64_t key[kKeyWords] = {reinterpret_cast<int64_t>(pack),
                                  reinterpret_cast<int64_t>(filters),
                                  outputs,
                                  w.size(1),
                                  w.size(2),
                                  w.size(3),
                                  w.stride(0),
                                  w.stride(1),
                                  w.stride(2),
                                  w.stride(3),
                                  blocking};
  return cachedPanels(key, floats, pack, context);
}

void releaseAll() {
  // The library is unloaded next (no kernel runs now): its key goes with
  // it, and no thread's value points at freed Scratch.
  // Each library kernel an artifact calls releases: only the first finds
  // anything.
  if (scratchKeyCreated)
    pthread_key_delete(scratchKey);
  scratchKeyCreated = false;
  pthread_mutex_lock(&scratchLock);
  secondThread.store(false, std::memory_order_relaxed);
  while (allScratch) {
    Scratch *s = allScratch;
    allScratch = s->next;
    for (float *buffer : s->buffers)
      std::free(buffer);
    std::free(s);
  }
  for (std::atomic<CachedPanels *> &bucket : panelBuckets)
    bucket.store(nullptr, std::memory_order_relaxed);
  while (allPanels) {
    CachedPanels *p = allPanels;
    allPanels = p->nextOfAll;
    std::free(p);
  }
  while (panelBlocks) {
    char *block = panelBlocks;
    panelBlocks = *reinterpret_cast<char **>(block);
    std::free(block);
  }
  blockCursor = blockEnd = nullptr;
  pthread_mutex_unlock(&scratchLock);
}

/// The microkernel of `R` rows on a panel packed for kMR, or on A's rows
/// where they lie, `lda` apart (`lda` 0: packed).
template <int R>
void rowsTile(int64_t kc, const float *a, int64_t lda, PackedRows b, float *c, int64_t ldc,
              bool accumulate) {
  if (lda)
    microkernel<R, 2>(kc, StridedColumns{a, lda}, b, c, ldc, accumulate);
  else
    microkernel<R, 2>(kc, PackedColumns<kMR>{a}, b, c, ldc, accumulate);
}

using TileFn = void (*)(int64_t, const float *, int64_t, PackedRows, float *, int64_t, bool);
template <int... R>
constexpr std::array<TileFn, kMR + 1> rowsTiles(std::integer_sequence<int, R...>) {
  return {nullptr, &rowsTile<R + 1>...};
}
/// The tile of each row count: a last panel of fewer than kMR rows (64 rows
/// are 5 x 12 + 4) runs as its own rows, not as a full tile of zeros (an
/// MLP's [64, 2048] x [2048, 1000]: 2.0 -> 1.8 ms).
constexpr std::array<TileFn, kMR + 1> kRowsTile = rowsTiles(std::make_integer_sequence<int, kMR>());

/// Applies `epilogue` to the rows x cols corner of the tile at `c`, the
/// tile's columns starting at column `j0` of C; the tile was just written,
/// so it is read from L1.
void applyEpilogue(const GemmEpilogue &epilogue, float *c, int64_t ldc, int64_t rows, int64_t cols,
                   int64_t j0) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = c + r * ldc;
    for (int64_t j = 0; j < cols; ++j) {
      float v = row[j] + (epilogue.bias ? epilogue.bias[j0 + j] : 0.0f);
      row[j] = epilogue.relu && !(v > 0.0f) && v == v ? 0.0f : v;
    }
  }
}

void gemm(const Matrix &a, const Matrix &b, float *c, int64_t ldc, bool accumulate,
          const float *prepacked, const GemmEpilogue &epilogue) {
  int64_t m = a.rows, n = b.cols, k = a.cols;
  if (m == 0 || n == 0)
    return;
  bool hasEpilogue = epilogue.bias || epilogue.relu;
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::memset(c + i * ldc, 0, n * sizeof(float));
    if (hasEpilogue)
      applyEpilogue(epilogue, c, ldc, m, n, 0);
    return;
  }
  float *packedA = scratch(kPackedA, kMC * kKC);
  float *packedB = scratch(kPackedB, kKC * kNC);
  alignas(64) float edge[kMR * kNR];
  // One row of A (a classifier, a decoder's token) is packed as 1-row
  // panels; other A blocks as kMR-row panels.
  int64_t mr = m == 1 ? 1 : kMR;
  // A's rows are read where they lie unless A is transposed: packing them
  // cost more than it saved, most where few B panels read each packed
  // element (attention's weighted sum, 4 x [512, 512] x [512, 64]: 1.10 ->
  // 0.84 ms; products of 1024 rows by 512-2048 columns 1.01-1.08x faster).
  bool direct = mr == kMR && a.colStride == 1;
  for (int64_t jc = 0; jc < n; jc += kNC) {
    int64_t nc = n - jc < kNC ? n - jc : kNC;
    for (int64_t pc = 0; pc < k; pc += kKC) {
      int64_t kc = k - pc < kKC ? k - pc : kKC;
      bool add = accumulate || pc > 0, last = pc + kc == k;
      const float *blockB = packedB;
      if (prepacked) {
        blockB = prepacked;
        prepacked += kc * roundUp(nc, kNR);
      } else {
        packB(b, pc, kc, jc, nc, packedB);
      }
      for (int64_t ic = 0; ic < m; ic += kMC) {
        int64_t mc = m - ic < kMC ? m - ic : kMC;
        if (!direct)
          packA(a, ic, mc, pc, kc, mr, packedA);
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          int64_t cols = nc - jr < kNR ? nc - jr : kNR;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            int64_t rows = mc - ir < mr ? mc - ir : mr;
            const float *ap = direct ? a.data + (ic + ir) * a.rowStride + pc : packedA + ir * kc;
            PackedRows bp{blockB + jr * kc};
            float *tile = c + (ic + ir) * ldc + jc + jr;
            computeTile(tile, ldc, rows, cols, rows, kNR, add, edge,
                        [&](float *out, int64_t ld, bool accumulate) {
                          if (mr == 1)
                            microkernel<1, 2>(kc, ap, bp, out, ld, accumulate);
                          else
                            kRowsTile[rows](kc, ap, direct ? a.rowStride : 0, bp, out, ld,
                                            accumulate);
                        });
            if (last && hasEpilogue)
              applyEpilogue(epilogue, tile, ldc, rows, cols, jc + jr);
          }
        }
      }
    }
  }
}
} // namespace KERNEL_NAMESPACE

using namespace KERNEL_NAMESPACE;

bool KERNEL_NAMESPACE::collapsible(const View &v, int64_t from, int64_t to, int64_t &stride) {
  stride = 0;
  int64_t inner = 0; // Elements spanned by the non-unit axes seen so far.
  for (int64_t i = to; i >= from; --i) {
    if (v.size(i) == 1)
      continue;
    if (inner == 0)
      stride = v.stride(i);
    else if (v.stride(i) != stride * inner)
      return false;
    inner = (inner == 0 ? 1 : inner) * v.size(i);
  }
  return true;
}

extern "C" void SYMBOL(UnrankedMemRef *a, UnrankedMemRef *b, UnrankedMemRef *c,
                       UnrankedMemRef *bias, int64_t flags) {
  bool accumulate = flags & kAccumulate, constantB = flags & kConstantB;
  GemmEpilogue epilogue;
  if (flags & kBias)
    epilogue.bias = View{bias->descriptor, bias->rank}.data();
  epilogue.relu = flags & kRelu;
  forEachMatrixProduct<float, float, float>(
      View{a->descriptor, a->rank}, View{b->descriptor, b->rank}, View{c->descriptor, c->rank},
      flags & kTransposeA, flags & kTransposeB,
      [&](const Matrix &ma, const Matrix &mb, float *pc, int64_t ldc) {
        gemm(ma, mb, pc, ldc, accumulate, constantB ? packedWeights(mb) : nullptr, epilogue);
      });
}

extern "C" void RELEASE() { releaseAll(); }
