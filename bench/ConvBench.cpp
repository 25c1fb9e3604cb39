//===- ConvBench.cpp - The library conv2d on the layers of real CNNs ------===//
//
// Times kernels/x86/conv.cpp (the AVX-512 build where the CPU has it, else
// AVX2) on every distinct conv2d layer of ResNet-18, MobileNetV2 and
// SqueezeNet 1.1 at 224x224, batch 1, one thread, warm (weights packed,
// buffers touched): median of repeated calls, with bias and ReLU applied as
// the models do.
// References measured in the same run:
//  - the FMA peak of one core (independent FMAs, no memory);
//  - OpenBLAS sgemm on the GEMM an im2col convolution of the layer runs
//    ([O, C*kh*kw] x [C*kh*kw, OH*OW]), one thread;
//  - for depthwise layers (2*9 FLOPs per output), memcpy of the bytes the
//    layer must move (its input and output): their bound is memory.
// GFLOP/s count the direct convolution's multiply-adds, so the 3x3
// stride-1 layers the library runs by Winograd's F(2x2, 3x3) (2.25x fewer
// multiplies) can pass the FMA peak.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {
struct UnrankedMemRef {
  int64_t rank;
  int64_t *descriptor;
};
using ConvEntry = void (*)(UnrankedMemRef *, UnrankedMemRef *, UnrankedMemRef *,
                           UnrankedMemRef *, UnrankedMemRef *, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t, int64_t, float, float);
} // namespace

extern "C" {
void _mlir_ciface_fuel_x86_sconv_avx512(UnrankedMemRef *, UnrankedMemRef *,
                                        UnrankedMemRef *, UnrankedMemRef *,
                                        UnrankedMemRef *, int64_t, int64_t, int64_t,
                                        int64_t, int64_t, int64_t, int64_t, float, float);
void _mlir_ciface_fuel_x86_sconv_avx2(UnrankedMemRef *, UnrankedMemRef *,
                                      UnrankedMemRef *, UnrankedMemRef *,
                                      UnrankedMemRef *, int64_t, int64_t, int64_t,
                                      int64_t, int64_t, int64_t, int64_t, float, float);
void openblas_set_num_threads(int);
char *openblas_get_corename();
}

namespace {
struct Layer {
  const char *model;
  int64_t C, H, O, k, stride, groups;
};

// Every distinct conv2d of the three models, padded k/2 (SqueezeNet's stem,
// unpadded in the model, computes 112x112 outputs here instead of 111x111).
const Layer kLayers[] = {
    {"resnet18", 3, 224, 64, 7, 2, 1},         {"resnet18", 64, 56, 64, 3, 1, 1},
    {"resnet18", 64, 56, 128, 3, 2, 1},        {"resnet18", 64, 56, 128, 1, 2, 1},
    {"resnet18", 128, 28, 128, 3, 1, 1},       {"resnet18", 128, 28, 256, 3, 2, 1},
    {"resnet18", 128, 28, 256, 1, 2, 1},       {"resnet18", 256, 14, 256, 3, 1, 1},
    {"resnet18", 256, 14, 512, 3, 2, 1},       {"resnet18", 256, 14, 512, 1, 2, 1},
    {"resnet18", 512, 7, 512, 3, 1, 1},        {"mobilenet_v2", 3, 224, 32, 3, 2, 1},
    {"mobilenet_v2", 32, 112, 32, 3, 1, 32},   {"mobilenet_v2", 32, 112, 16, 1, 1, 1},
    {"mobilenet_v2", 16, 112, 96, 1, 1, 1},    {"mobilenet_v2", 96, 112, 96, 3, 2, 96},
    {"mobilenet_v2", 96, 56, 24, 1, 1, 1},     {"mobilenet_v2", 24, 56, 144, 1, 1, 1},
    {"mobilenet_v2", 144, 56, 144, 3, 1, 144}, {"mobilenet_v2", 144, 56, 24, 1, 1, 1},
    {"mobilenet_v2", 144, 56, 144, 3, 2, 144}, {"mobilenet_v2", 144, 28, 32, 1, 1, 1},
    {"mobilenet_v2", 32, 28, 192, 1, 1, 1},    {"mobilenet_v2", 192, 28, 192, 3, 1, 192},
    {"mobilenet_v2", 192, 28, 32, 1, 1, 1},    {"mobilenet_v2", 192, 28, 192, 3, 2, 192},
    {"mobilenet_v2", 192, 14, 64, 1, 1, 1},    {"mobilenet_v2", 64, 14, 384, 1, 1, 1},
    {"mobilenet_v2", 384, 14, 384, 3, 1, 384}, {"mobilenet_v2", 384, 14, 64, 1, 1, 1},
    {"mobilenet_v2", 384, 14, 96, 1, 1, 1},    {"mobilenet_v2", 96, 14, 576, 1, 1, 1},
    {"mobilenet_v2", 576, 14, 576, 3, 1, 576}, {"mobilenet_v2", 576, 14, 96, 1, 1, 1},
    {"mobilenet_v2", 576, 14, 576, 3, 2, 576}, {"mobilenet_v2", 576, 7, 160, 1, 1, 1},
    {"mobilenet_v2", 160, 7, 960, 1, 1, 1},    {"mobilenet_v2", 960, 7, 960, 3, 1, 960},
    {"mobilenet_v2", 960, 7, 160, 1, 1, 1},    {"mobilenet_v2", 960, 7, 320, 1, 1, 1},
    {"mobilenet_v2", 320, 7, 1280, 1, 1, 1},   {"squeezenet1_1", 3, 224, 64, 3, 2, 1},
    {"squeezenet1_1", 64, 55, 16, 1, 1, 1},    {"squeezenet1_1", 128, 55, 16, 1, 1, 1},
    {"squeezenet1_1", 16, 55, 64, 1, 1, 1},    {"squeezenet1_1", 16, 55, 64, 3, 1, 1},
    {"squeezenet1_1", 128, 27, 32, 1, 1, 1},   {"squeezenet1_1", 256, 27, 32, 1, 1, 1},
    {"squeezenet1_1", 32, 27, 128, 1, 1, 1},   {"squeezenet1_1", 32, 27, 128, 3, 1, 1},
    {"squeezenet1_1", 256, 13, 48, 1, 1, 1},   {"squeezenet1_1", 384, 13, 48, 1, 1, 1},
    {"squeezenet1_1", 48, 13, 192, 1, 1, 1},   {"squeezenet1_1", 48, 13, 192, 3, 1, 1},
    {"squeezenet1_1", 384, 13, 64, 1, 1, 1},   {"squeezenet1_1", 512, 13, 64, 1, 1, 1},
    {"squeezenet1_1", 64, 13, 256, 1, 1, 1},   {"squeezenet1_1", 64, 13, 256, 3, 1, 1},
    {"squeezenet1_1", 512, 13, 1000, 1, 1, 1},
};

/// A row-major descriptor {allocated, aligned, offset, sizes, strides}.
std::vector<int64_t> descriptor(float *data, const std::vector<int64_t> &sizes) {
  std::vector<int64_t> d{reinterpret_cast<int64_t>(data), reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), sizes.begin(), sizes.end());
  std::vector<int64_t> strides(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1, s = 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i];
  }
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}

/// Median seconds per call of `fn`, over enough calls for ~20 ms per sample.
template <class F> double secondsPerCall(F fn) {
  fn();
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto start = clock();
  fn();
  double once = std::chrono::duration<double>(clock() - start).count();
  int calls = std::max(1, static_cast<int>(0.02 / std::max(once, 1e-7)));
  std::vector<double> samples;
  for (int s = 0; s < 7; ++s) {
    start = clock();
    for (int i = 0; i < calls; ++i)
      fn();
    samples.push_back(std::chrono::duration<double>(clock() - start).count() / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));

/// FLOP/s of one core's FMA units: kChains independent accumulators, so
/// latency hides behind throughput.
template <class Vec, int Width>
__attribute__((always_inline)) inline double fmaPeak() {
  constexpr int kChains = 16;
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = Vec{} + 0.001f * static_cast<float>(i);
  Vec scale = Vec{} + 0.9999f, shift = Vec{} + 1e-4f;
  const long rounds = 20'000'000;
  auto start = std::chrono::steady_clock::now();
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i)
      acc[i] = acc[i] * scale + shift;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  float sum = 0;
  for (int i = 0; i < kChains; ++i)
    sum += acc[i][0];
  asm volatile("" : : "r"(sum));
  return 2.0 * Width * kChains * rounds / seconds;
}

__attribute__((target("avx512f,fma"))) double fmaPeak16() { return fmaPeak<Floats16, 16>(); }
__attribute__((target("avx2,fma"))) double fmaPeak8() { return fmaPeak<Floats8, 8>(); }
} // namespace

int main(int argc, char **argv) {
  // An optional argument keeps the layers whose row contains it ("g960").
  const char *only = argc > 1 ? argv[1] : nullptr;
  bool avx512 = __builtin_cpu_supports("avx512f");
  ConvEntry conv = avx512 ? _mlir_ciface_fuel_x86_sconv_avx512 : _mlir_ciface_fuel_x86_sconv_avx2;
  double peak = avx512 ? fmaPeak16() : fmaPeak8();
  openblas_set_num_threads(1);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto random = [&](std::vector<float> &v) {
    for (float &x : v)
      x = uniform(rng);
  };
  std::printf("The library conv2d's %s build, warm, one thread, bias and ReLU applied; "
              "one core's FMA peak %.0f GFLOP/s; OpenBLAS's %s kernels, one thread. GFLOP/s "
              "count the direct convolution's multiply-adds: 3x3 stride-1 layers that run by "
              "Winograd's F(2x2, 3x3) (2.25x fewer multiplies) can pass the peak.\n\n",
              avx512 ? "AVX-512" : "AVX2", peak / 1e9, openblas_get_corename());
  std::printf("| model | conv2d (C -> O, kernel, stride, groups, input) | fuelc ms | GFLOP/s | "
              "of FMA peak | reference (same run) | fuelc / reference |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const char *models[] = {"resnet18", "mobilenet_v2", "squeezenet1_1"};
  double totalOurs[3] = {0, 0, 0};
  for (const Layer &l : kLayers) {
    char shape[96];
    std::snprintf(shape, sizeof shape, "%lld -> %lld, %lldx%lld, /%lld, g%lld, %lldx%lld",
                  (long long)l.C, (long long)l.O, (long long)l.k, (long long)l.k,
                  (long long)l.stride, (long long)l.groups, (long long)l.H, (long long)l.H);
    if (only && !std::strstr(shape, only) && !std::strstr(l.model, only))
      continue;
    int64_t pad = l.k / 2, OH = (l.H + 2 * pad - l.k) / l.stride + 1;
    int64_t Cg = l.C / l.groups, K = Cg * l.k * l.k, P = OH * OH;
    std::vector<float> x(l.C * l.H * l.H), w(l.O * K), bias(l.O), y(l.O * P);
    random(x);
    random(w);
    random(bias);
    std::vector<int64_t> dx = descriptor(x.data(), {1, l.C, l.H, l.H}),
                         dw = descriptor(w.data(), {l.O, Cg, l.k, l.k}),
                         db = descriptor(bias.data(), {l.O}),
                         dy = descriptor(y.data(), {1, l.O, OH, OH});
    UnrankedMemRef ux{4, dx.data()}, uw{4, dw.data()}, ub{1, db.data()}, uy{4, dy.data()};
    // Constant weights, bias, ReLU: the flags fuelc's generated call passes.
    const int64_t flags = 8 | 16 | 64;
    double ours = secondsPerCall([&] {
      conv(&ux, &uw, &uy, &ub, &uy, flags, l.stride, l.stride, pad, pad, 1, 1,
           -INFINITY, INFINITY);
    });
    for (int m = 0; m < 3; ++m)
      totalOurs[m] += std::strcmp(l.model, models[m]) == 0 ? ours : 0.0;
    double flop = 2.0 * l.O * P * K;
    char reference[96];
    double ratio;
    if (l.groups == 1) {
      std::vector<float> a(l.O * K), b(K * P), c(l.O * P);
      random(a);
      random(b);
      double blas = secondsPerCall([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l.O, P, K, 1.0f, a.data(), K,
                    b.data(), P, 0.0f, c.data(), P);
      });
      std::snprintf(reference, sizeof reference, "OpenBLAS %lldx%lldx%lld %.0f GFLOP/s",
                    (long long)l.O, (long long)K, (long long)P, flop / blas / 1e9);
      ratio = blas / ours;
    } else {
      std::vector<float> from(x.size() + y.size()), to(from.size());
      double copy = secondsPerCall([&] {
        std::memcpy(to.data(), from.data(), from.size() * sizeof(float));
        asm volatile("" : : "r"(to.data()) : "memory");
      });
      std::snprintf(reference, sizeof reference, "memcpy of input + output %.3f ms",
                    copy * 1e3);
      ratio = copy / ours;
    }
    std::printf("| %s | %s | %.3f | %.0f | %.2f | %s | %.2f |\n", l.model, shape, ours * 1e3,
                flop / ours / 1e9, flop / ours / peak, reference, ratio);
  }
  std::printf("\nSum over the distinct layers: ResNet-18 %.2f ms, MobileNetV2 %.2f ms, "
              "SqueezeNet 1.1 %.2f ms.\n",
              totalOurs[0] * 1e3, totalOurs[1] * 1e3, totalOurs[2] * 1e3);
  return 0;
}
