//===- Program.cpp - Symbols and layouts of a lowered program -------------===//

#include "fuel/Artifact/Program.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::artifact;

void Program::evaluateSymbols(std::vector<int64_t> &values) const {
  for (size_t s = 0; s < symbols.size(); ++s) {
    const Symbol &sym = symbols[s];
    if (sym.isFree())
      continue;
    int64_t v = sym.factor;
    for (uint32_t f : sym.of)
      if (values[f] < 0 || v < 0 || __builtin_mul_overflow(v, values[f], &v))
        v = -1; // Unknown, or beyond any extent.
    values[s] = v;
  }
}

std::vector<int64_t> Program::boundValues() const {
  std::vector<int64_t> values;
  for (const Symbol &s : symbols)
    values.push_back(s.bound);
  evaluateSymbols(values);
  return values;
}

static std::vector<int64_t> evaluate(const std::vector<Extent> &extents,
                                     std::span<const int64_t> symbolValues) {
  std::vector<int64_t> out;
  out.reserve(extents.size());
  for (const Extent &e : extents)
    out.push_back(e.value(symbolValues));
  return out;
}

/// Layouts from a file are bounded before and after every view, so that no
/// view's arithmetic can overflow whatever the file says: at most 2^40
/// elements, and no axis reaching further than 2^40 elements.
constexpr int64_t kMaxReach = int64_t(1) << 40;

static bool isBounded(std::span<const int64_t> sizes) {
  __int128 count = 1;
  for (int64_t s : sizes) {
    if (s < 0 || s > kMaxReach)
      return false;
    count *= s;
    if (count > kMaxReach)
      return false;
  }
  return true;
}

static __int128 magnitude(int64_t v) { return v < 0 ? -static_cast<__int128>(v) : v; }

static bool isBounded(const Layout &l) {
  if (l.sizes.size() != l.strides.size() || !isBounded(l.sizes) ||
      magnitude(l.offset) > kMaxReach * 64)
    return false;
  for (size_t i = 0; i < l.sizes.size(); ++i)
    if (magnitude(l.strides[i]) * l.sizes[i] > kMaxReach ||
        magnitude(l.strides[i]) > kMaxReach)
      return false;
  return true;
}

std::optional<Layout> Tensor::layout(std::span<const int64_t> symbolValues) const {
  if (!symbolic) {
    Layout l{evaluate(sizes, symbolValues), strides, offset};
    return isBounded(l) ? std::optional<Layout>(std::move(l)) : std::nullopt;
  }
  std::vector<int64_t> rootSizes = evaluate(root, symbolValues);
  if (!isBounded(rootSizes))
    return std::nullopt;
  Layout l = Layout::contiguous(rootSizes);
  for (const View &v : views) {
    size_t rank = l.sizes.size();
    auto validAxes = [&](const std::vector<int64_t> &axes, size_t r) {
      return std::all_of(axes.begin(), axes.end(),
                         [&](int64_t a) { return normalizeAxis(a, r).has_value(); });
    };
    switch (v.kind) {
    case ViewKind::Transpose:
      if (v.perm.size() != rank || !validAxes(v.perm, rank))
        return std::nullopt;
      l = transposeView(l, v.perm);
      break;
    case ViewKind::Slice:
      if (!validAxes(v.axes, rank) || v.starts.size() != v.axes.size() ||
          v.ends.size() != v.axes.size() || v.steps.size() != v.axes.size())
        return std::nullopt;
      for (size_t i = 0; i < v.axes.size(); ++i)
        if (v.steps[i] == 0 ||
            magnitude(l.strides[*normalizeAxis(v.axes[i], rank)]) * magnitude(v.steps[i]) >
                kMaxReach)
          return std::nullopt;
      l = sliceView(l, v.axes, v.starts, v.ends, v.steps);
      break;
    case ViewKind::Broadcast: {
      std::vector<int64_t> to = evaluate(v.sizes, symbolValues);
      if (to.size() < rank || !isBounded(to))
        return std::nullopt;
      l = broadcastView(l, to);
      break;
    }
    case ViewKind::Reshape: {
      std::vector<int64_t> to = evaluate(v.sizes, symbolValues);
      if (!isBounded(to))
        return std::nullopt;
      std::optional<Layout> r = reshapeView(l, to);
      if (!r)
        return std::nullopt;
      l = std::move(*r);
      break;
    }
    }
    if (!isBounded(l))
      return std::nullopt;
  }
  if (l.sizes != evaluate(sizes, symbolValues))
    return std::nullopt;
  return l;
}

std::string artifact::kernelSignature(std::span<const std::pair<DType, size_t>> args,
                                      bool readsSymbols, bool takesSliceOrigin) {
  std::string out;
  for (const auto &[dtype, rank] : args)
    out += (out.empty() ? "" : ",") + std::string(dtypeName(dtype)) + ":" +
           std::to_string(rank);
  if (readsSymbols)
    out += out.empty() ? "i64:1" : ",i64:1";
  if (takesSliceOrigin)
    out += out.empty() ? "origin" : ",origin";
  return out;
}

std::string artifact::kernelSignature(const Kernel &kernel) {
  std::vector<std::pair<DType, size_t>> args;
  for (const KernelArg &a : kernel.args)
    args.emplace_back(a.tensor.dtype, a.tensor.sizes.size());
  return kernelSignature(args, !kernel.symbols.empty(), kernel.sliceOrigin);
}

std::string_view artifact::deviceKindOf(std::string_view id) {
  return id.substr(0, id.find(':'));
}
