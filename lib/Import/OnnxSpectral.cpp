//===- OnnxSpectral.cpp - DFT, STFT and MelWeightMatrix -------------------===//
//
// A DFT of length L along an axis is a product with constant L x K cosine
// and sine matrices (K = L, or L/2 + 1 one-sided): with the axis moved
// last and the real and imaginary parts as [..., 1, L] slices,
//   forward: Yr = Xr C + Xi S,  Yi = Xi C - Xr S;
//   inverse: Yr = Xr C - Xi S,  Yi = Xi C + Xr S  (C and S scaled by 1/L).
// That is O(L) per output element where an FFT is O(log L); the importer
// bounds L, which covers the audio front ends (frames of 256 to 2048)
// that use these ops. STFT gathers its frames with constant indices and
// takes the DFT of each; MelWeightMatrix is a constant.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cmath>
#include <numbers>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
constexpr int64_t kMaxLength = 4096;

/// The cosines (`sine` false) or sines of 2 pi k n / L as an [L, K] matrix.
KnownTensor twiddles(int64_t length, int64_t frequencies, bool sine, double scale, DType type) {
  KnownTensor t{type, {length, frequencies}, {}};
  for (int64_t n = 0; n < length; ++n)
    for (int64_t f = 0; f < frequencies; ++f) {
      // k * n mod L keeps the angle exact for long transforms.
      double angle = 2 * std::numbers::pi * static_cast<double>((f * n) % length) /
                     static_cast<double>(length);
      appendScalar(t, scale * (sine ? std::sin(angle) : std::cos(angle)));
    }
  return t;
}

/// The DFT of `x` ([..., 1 or 2], the last axis the real and imaginary
/// parts) along `axis`, whose extent is `length`: [..., K, ..., 2].
ValueRef dft(Composer &k, ValueRef x, size_t axis, int64_t length, bool inverse, bool onesided) {
  size_t rank = k.im.graph.shape(x).size();
  bool complex = k.im.graph.shape(x)[rank - 1] == Dim::fixed(2);
  // [..., parts, L]: the axis last, the parts before it.
  std::vector<int64_t> perm;
  for (size_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(static_cast<int64_t>(d));
  perm.push_back(static_cast<int64_t>(axis));
  std::vector<int64_t> back(rank);
  for (size_t i = 0; i < rank; ++i)
    back[perm[i]] = static_cast<int64_t>(i);
  ValueRef moved = k.transpose(x, perm);
  int64_t frequencies = onesided ? length / 2 + 1 : length;
  double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  ValueRef cosines = k.constant(twiddles(length, frequencies, false, scale, k.type));
  ValueRef sines = k.constant(twiddles(length, frequencies, true, scale, k.type));
  int64_t partsAxis = static_cast<int64_t>(rank) - 2;
  ValueRef re = k.slice(moved, partsAxis, 0, 1);
  ValueRef yr = k.op(OpKind::MatMul, {re, cosines});
  ValueRef reSines = k.op(OpKind::MatMul, {re, sines});
  ValueRef yi = inverse ? reSines : k.op(OpKind::Neg, {reSines});
  if (complex) {
    ValueRef im = k.slice(moved, partsAxis, 1, 2);
    ValueRef imSines = k.op(OpKind::MatMul, {im, sines});
    yr = k.op(inverse ? OpKind::Sub : OpKind::Add, {yr, imSines});
    yi = k.op(OpKind::Add, {yi, k.op(OpKind::MatMul, {im, cosines})});
  }
  ValueRef y =
      k.op(OpKind::Concat, {yr, yi}, [&](Graph &g) { g.addIntAttr(AttrName::Axis, partsAxis); });
  return k.transpose(y, back);
}

/// `x` cut or zero-padded to `length` along `axis`.
ValueRef resized(Composer &k, ValueRef x, size_t axis, int64_t extent, int64_t length) {
  if (length < extent)
    return k.slice(x, static_cast<int64_t>(axis), 0, length);
  if (length == extent)
    return x;
  std::vector<int64_t> pads(2 * k.im.graph.shape(x).size(), 0);
  pads[k.im.graph.shape(x).size() + axis] = length - extent;
  return k.op(OpKind::Pad, {x}, [&](Graph &g) { g.addIntsAttr(AttrName::Pads, pads); });
}

bool checkSignal(Importer &im, ShapeRef x) {
  if (x.size() < 2 || !(x.back() == Dim::fixed(1) || x.back() == Dim::fixed(2)))
    return im.unsupported("the signal's last axis must hold 1 (real) or 2 (complex) parts");
  if (!isFloat(im.graph.dtype(im.input(0))))
    return im.unsupported("the signal must be a float tensor");
  return true;
}

bool dftOp(Importer &im) {
  ShapeRef x = im.graph.shape(im.input(0));
  if (!checkSignal(im, x))
    return false;
  size_t rank = x.size();
  // Opset 20 made the axis an input (default -2); before, an attribute.
  int64_t axisValue = im.attrInt("axis", 1);
  if (im.opset >= 20) {
    axisValue = -2;
    if (im.hasInput(2)) {
      std::optional<double> given = constScalar(im, 2, "the axis");
      if (!given)
        return false;
      axisValue = static_cast<int64_t>(std::clamp(*given, -1e9, 1e9));
    }
  }
  std::optional<unsigned> axis = normalizeAxis(axisValue, rank);
  if (!axis || *axis == 0 || *axis == rank - 1 || !x[*axis].isStatic())
    return im.unsupported("the axis must be a signal axis (not the batch or the parts) with a "
                          "static extent");
  int64_t extent = x[*axis].size(), length = extent;
  if (im.hasInput(1)) {
    std::optional<double> given = constScalar(im, 1, "dft_length");
    if (!given)
      return false;
    length = static_cast<int64_t>(std::clamp(*given, -1.0, 1e9));
  }
  bool inverse = im.attrInt("inverse", 0) != 0, onesided = im.attrInt("onesided", 0) != 0;
  if (length < 1 || length > kMaxLength)
    return im.unsupported("the DFT length must be in [1, 4096]");
  if (inverse && onesided)
    return im.unsupported("a one-sided inverse DFT is not supported");
  if (onesided && x.back() == Dim::fixed(2))
    return im.unsupported("a one-sided DFT needs a real signal");
  Composer k(im);
  return k.finish(dft(k, resized(k, k.x, *axis, extent, length), *axis, length, inverse, onesided));
}

bool stft(Importer &im) {
  ShapeRef x = im.graph.shape(im.input(0));
  if (!checkSignal(im, x))
    return false;
  if (x.size() != 3 || !x[1].isStatic())
    return im.unsupported("the signal must be [batch, length, parts] with a static length");
  int64_t samples = x[1].size();
  std::optional<double> step = constScalar(im, 1, "frame_step");
  if (!step)
    return false;
  int64_t length = 0;
  if (im.hasInput(3)) {
    std::optional<double> given = constScalar(im, 3, "frame_length");
    if (!given)
      return false;
    length = static_cast<int64_t>(std::clamp(*given, -1.0, 1e9));
  }
  if (im.hasInput(2)) {
    ShapeRef window = im.graph.shape(im.input(2));
    if (window.size() != 1 || !window[0].isStatic() || (length && window[0].size() != length))
      return im.unsupported("the window must be a vector of frame_length values");
    length = window[0].size();
  }
  int64_t hop = static_cast<int64_t>(std::clamp(*step, -1.0, 1e9));
  if (length < 1 || length > std::min(samples, kMaxLength) || hop < 1)
    return im.unsupported("frame_length (or the window's length) must be in [1, min(signal "
                          "length, 4096)] and frame_step positive");
  bool onesided = im.attrInt("onesided", 1) != 0;
  if (onesided && x[2] == Dim::fixed(2))
    return im.unsupported("a one-sided STFT needs a real signal");
  int64_t frames = (samples - length) / hop + 1;
  if (frames * length > (int64_t(1) << 22))
    return im.unsupported("the frames hold more than 2^22 samples");
  std::vector<int64_t> at;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < length; ++i)
      at.push_back(f * hop + i);
  Composer k(im);
  ValueRef framed = k.gather(k.x, intTensor(at, {frames, length}), 1); // [B, F, L, parts]
  if (im.hasInput(2))
    framed =
        k.op(OpKind::Mul, {framed, k.reshape(im.input(2), {Dim::fixed(length), Dim::fixed(1)})});
  return k.finish(dft(k, framed, 2, length, false, onesided));
}

/// Triangular filters over the one-sided DFT bins, as ONNX defines them
/// (Mel scale 2595 log10(1 + f / 700); num_mel_bins + 2 edges).
bool melWeightMatrix(Importer &im) {
  std::optional<double> values[5];
  const char *names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                          "upper_edge_hertz"};
  for (size_t i = 0; i < 5; ++i)
    if (!(values[i] = constScalar(im, i, names[i])))
      return false;
  double bins = *values[0], length = *values[1], rate = *values[2];
  if (!(bins >= 1 && bins <= 4096 && length >= 1 && length <= 65536 && rate >= 1 &&
        *values[3] >= 0 && *values[4] > *values[3]))
    return im.unsupported("num_mel_bins must be in [1, 4096], dft_length in [1, 65536], the "
                          "sample rate positive and the edges 0 <= lower < upper");
  std::optional<DType> type = dtypeOfOnnx(im.attrInt("output_datatype", 1));
  if (!type || !isFloat(*type))
    return im.unsupported("output_datatype must be a float type");
  int64_t melBins = static_cast<int64_t>(bins), spectrum = static_cast<int64_t>(length) / 2 + 1;
  if (melBins * spectrum > (int64_t(1) << 22))
    return im.unsupported("the matrix would hold more than 2^22 values");
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low = mel(*values[3]), step = (mel(*values[4]) - low) / static_cast<double>(melBins + 2);
  std::vector<int64_t> edge;
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hz = 700 * (std::pow(10, (static_cast<double>(i) * step + low) / 2595) - 1);
    double bin = std::floor((length + 1) * hz / rate);
    if (!(std::fabs(bin) < 0x1p53))
      return im.unsupported("filter edge " + std::to_string(i) +
                            " lies beyond 2^53 DFT bins (upper_edge_hertz against sample_rate)");
    edge.push_back(static_cast<int64_t>(bin));
  }
  std::vector<double> out(spectrum * melBins, 0);
  auto set = [&](int64_t bin, int64_t filter, double v) {
    if (bin >= 0 && bin < spectrum)
      out[bin * melBins + filter] = v;
  };
  for (int64_t i = 0; i < melBins; ++i) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left)
      set(center, i, 1);
    // Only bins of the spectrum are set, however far the edges reach.
    for (int64_t j = std::max<int64_t>(left, 0);
         center > left && j <= std::min(center, spectrum - 1); ++j)
      set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, spectrum); ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  KnownTensor t{*type, {spectrum, melBins}, {}};
  for (double v : out)
    appendScalar(t, v);
  im.bindConstant(std::move(t));
  return true;
}
} // namespace

void onnximport::addSpectralHandlers(HandlerTable &table) {
  table.insert({{"DFT", dftOp}, {"STFT", stft}, {"MelWeightMatrix", melWeightMatrix}});
}
