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
      v = values[f] < 0 || v < 0 ? -1 : v * values[f];
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

std::optional<Layout> Tensor::layout(std::span<const int64_t> symbolValues) const {
  if (!symbolic)
    return Layout{evaluate(sizes, symbolValues), strides, offset};
  Layout l = Layout::contiguous(evaluate(root, symbolValues));
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
          v.ends.size() != v.axes.size() || v.steps.size() != v.axes.size() ||
          std::count(v.steps.begin(), v.steps.end(), 0))
        return std::nullopt;
      l = sliceView(l, v.axes, v.starts, v.ends, v.steps);
      break;
    case ViewKind::Broadcast: {
      std::vector<int64_t> to = evaluate(v.sizes, symbolValues);
      if (to.size() < rank)
        return std::nullopt;
      l = broadcastView(l, to);
      break;
    }
    case ViewKind::Reshape: {
      std::optional<Layout> r = reshapeView(l, evaluate(v.sizes, symbolValues));
      if (!r)
        return std::nullopt;
      l = std::move(*r);
      break;
    }
    }
  }
  if (l.sizes != evaluate(sizes, symbolValues))
    return std::nullopt;
  return l;
}

std::string artifact::kernelSignature(std::span<const std::pair<DType, size_t>> args,
                                     bool readsSymbols) {
  std::string out;
  for (const auto &[dtype, rank] : args)
    out += (out.empty() ? "" : ",") + std::string(dtypeName(dtype)) + ":" +
           std::to_string(rank);
  if (readsSymbols)
    out += out.empty() ? "i64:1" : ",i64:1";
  return out;
}

std::string artifact::kernelSignature(const Kernel &kernel) {
  std::vector<std::pair<DType, size_t>> args;
  for (const KernelArg &a : kernel.args)
    args.emplace_back(a.tensor.dtype, a.tensor.sizes.size());
  return kernelSignature(args, !kernel.symbols.empty());
}

std::string_view artifact::deviceKindOf(std::string_view id) {
  return id.substr(0, id.find(':'));
}
