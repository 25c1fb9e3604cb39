//===- Layout.cpp - Strided layouts and metadata-only views ---------------===//

#include "fuel/Support/Layout.h"

#include <algorithm>
#include <cassert>

using namespace fuel;

std::optional<unsigned> fuel::normalizeAxis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return std::nullopt;
  return static_cast<unsigned>(axis < 0 ? axis + r : axis);
}

Layout Layout::contiguous(std::span<const int64_t> sizes) {
  Layout l;
  l.sizes.assign(sizes.begin(), sizes.end());
  l.strides.resize(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    l.strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return l;
}

bool Layout::isContiguous() const {
  // Strides of unit axes never matter, so they are not compared.
  Layout dense = contiguous(sizes);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != 1 && strides[i] != dense.strides[i])
      return false;
  return offset == 0;
}

int64_t Layout::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

bool Layout::fitsIn(int64_t elements) const {
  if (sizes.size() != strides.size())
    return false;
  // 128-bit sums: extents and strides come from files and may be extreme.
  __int128 lo = offset, hi = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0)
      return false;
    if (sizes[i] == 0)
      return true;
    __int128 reach = static_cast<__int128>(sizes[i] - 1) * strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  return lo >= 0 && hi < elements;
}

int64_t Layout::elementOffset(std::span<const int64_t> index) const {
  int64_t at = offset;
  for (size_t i = 0; i < index.size(); ++i)
    at += index[i] * strides[i];
  return at;
}

Layout fuel::transposeView(const Layout &in, std::span<const int64_t> perm) {
  Layout out;
  out.offset = in.offset;
  for (int64_t p : perm) {
    unsigned axis = *normalizeAxis(p, in.sizes.size()); // perm may count from the end.
    out.sizes.push_back(in.sizes[axis]);
    out.strides.push_back(in.strides[axis]);
  }
  return out;
}

Layout fuel::sliceView(const Layout &in, std::span<const int64_t> axes,
                       std::span<const int64_t> starts,
                       std::span<const int64_t> ends,
                       std::span<const int64_t> steps) {
  Layout out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    unsigned axis = *normalizeAxis(axes[i], in.sizes.size());
    int64_t dim = in.sizes[axis], step = steps[i];
    // numpy clamping, as in shape inference.
    auto clampIndex = [&](int64_t idx, int64_t lo, int64_t hi) {
      if (idx < 0)
        idx = idx < -dim ? lo : idx + dim;
      return std::clamp(idx, lo, hi);
    };
    int64_t start, length;
    if (step > 0) {
      start = clampIndex(starts[i], 0, dim);
      int64_t end = clampIndex(ends[i], 0, dim);
      length = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = clampIndex(starts[i], -1, dim - 1);
      int64_t end = clampIndex(ends[i], -1, dim - 1);
      length = start > end ? (start - end - step - 1) / -step : 0;
    }
    if (length > 0)
      out.offset += start * in.strides[axis];
    out.sizes[axis] = length;
    out.strides[axis] = in.strides[axis] * step;
  }
  return out;
}

Layout fuel::broadcastView(const Layout &in, std::span<const int64_t> sizes) {
  Layout out;
  out.offset = in.offset;
  out.sizes.assign(sizes.begin(), sizes.end());
  out.strides.assign(sizes.size(), 0);
  size_t lead = sizes.size() - in.sizes.size();
  for (size_t i = 0; i < in.sizes.size(); ++i)
    if (in.sizes[i] == sizes[lead + i])
      out.strides[lead + i] = in.strides[i];
  return out;
}

Layout fuel::squeezeView(const Layout &in, std::span<const int64_t> axes) {
  std::vector<bool> drop(in.sizes.size(), false);
  for (int64_t a : axes)
    drop[*normalizeAxis(a, in.sizes.size())] = true;
  Layout out;
  out.offset = in.offset;
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    if (drop[i])
      continue;
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  return out;
}

Layout fuel::unsqueezeView(const Layout &in, std::span<const int64_t> axes) {
  size_t rank = in.sizes.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes)
    inserted[*normalizeAxis(a, rank)] = true;
  Layout out;
  out.offset = in.offset;
  size_t next = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (inserted[i]) {
      out.sizes.push_back(1);
      out.strides.push_back(0);
    } else {
      out.sizes.push_back(in.sizes[next]);
      out.strides.push_back(in.strides[next++]);
    }
  }
  return out;
}

std::optional<Layout> fuel::reshapeView(const Layout &in,
                                        std::span<const int64_t> sizes) {
  // Split the input into maximal runs of axes that are mutually contiguous
  // (stride[i] == stride[i+1] * size[i+1]); each run behaves like one flat
  // axis, and the target must split every run exactly, row-major.
  Layout out;
  out.offset = in.offset;
  out.sizes.assign(sizes.begin(), sizes.end());
  out.strides.assign(sizes.size(), 0);
  int64_t total = in.numElements();
  if (total == 0)
    return Layout{out.sizes, Layout::contiguous(sizes).strides, in.offset};
  std::vector<int64_t> inSizes, inStrides; // Non-unit axes only.
  for (size_t i = 0; i < in.sizes.size(); ++i)
    if (in.sizes[i] != 1) {
      inSizes.push_back(in.sizes[i]);
      inStrides.push_back(in.strides[i]);
    }
  size_t src = 0, dst = 0;
  while (dst < sizes.size() || src < inSizes.size()) {
    if (dst < sizes.size() && sizes[dst] == 1) {
      out.strides[dst++] = 0;
      continue;
    }
    if (src >= inSizes.size() || dst >= sizes.size())
      return std::nullopt;
    // Grow a run of contiguous input axes and a group of target axes until
    // their element counts agree.
    size_t runEnd = src + 1;
    int64_t runCount = inSizes[src];
    size_t groupEnd = dst + 1;
    int64_t groupCount = sizes[dst];
    while (runCount != groupCount) {
      if (runCount < groupCount) {
        if (runEnd >= inSizes.size() ||
            inStrides[runEnd - 1] != inStrides[runEnd] * inSizes[runEnd])
          return std::nullopt;
        runCount *= inSizes[runEnd++];
      } else {
        if (groupEnd >= sizes.size())
          return std::nullopt;
        groupCount *= sizes[groupEnd++];
      }
    }
    // Every axis in the run must chain contiguously for the group to split it.
    for (size_t i = src; i + 1 < runEnd; ++i)
      if (inStrides[i] != inStrides[i + 1] * inSizes[i + 1])
        return std::nullopt;
    int64_t stride = inStrides[runEnd - 1];
    for (size_t j = groupEnd; j-- > dst;) {
      out.strides[j] = sizes[j] == 1 ? 0 : stride;
      stride *= sizes[j];
    }
    src = runEnd;
    dst = groupEnd;
  }
  return out;
}
