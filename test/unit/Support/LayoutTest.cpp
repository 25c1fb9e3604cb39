//===- LayoutTest.cpp - Strided views against an explicit copy ------------===//
//
// Each view's layout is checked by reading a buffer through it and comparing
// with the tensor a naive (copying) implementation of the op produces.
//
//===----------------------------------------------------------------------===//

#include "fuel/Support/Layout.h"

#include <catch2/catch.hpp>

#include <numeric>
#include <random>

using namespace fuel;

namespace {
/// A dense row-major tensor of int64 values.
struct Dense {
  std::vector<int64_t> sizes;
  std::vector<int64_t> data;
};

/// Reads every element of `layout` over `buffer` in row-major index order.
std::vector<int64_t> readThrough(const Layout &layout,
                                 const std::vector<int64_t> &buffer) {
  std::vector<int64_t> out;
  std::vector<int64_t> index(layout.sizes.size(), 0);
  int64_t count = layout.numElements();
  for (int64_t i = 0; i < count; ++i) {
    out.push_back(buffer[layout.elementOffset(index)]);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < layout.sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 100);
  return v;
}
} // namespace

TEST_CASE("contiguous layouts", "[layout]") {
  std::vector<int64_t> sizes{2, 3, 4};
  Layout l = Layout::contiguous(sizes);
  CHECK(l.strides == std::vector<int64_t>{12, 4, 1});
  CHECK(l.isContiguous());
  CHECK(l.numElements() == 24);
  std::vector<int64_t> index{1, 2, 3};
  CHECK(l.elementOffset(index) == 23);
}

TEST_CASE("transpose view permutes strides", "[layout]") {
  std::vector<int64_t> sizes{2, 3, 4}, perm{2, 0, 1};
  std::vector<int64_t> buf = iota(24);
  Layout t = transposeView(Layout::contiguous(sizes), perm);
  std::vector<int64_t> expected;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        expected.push_back(buf[i * 12 + j * 4 + k]);
  CHECK(readThrough(t, buf) == expected);
  CHECK_FALSE(t.isContiguous());
}

TEST_CASE("slice views with positive and negative steps", "[layout]") {
  std::vector<int64_t> sizes{10};
  std::vector<int64_t> buf = iota(10);
  Layout base = Layout::contiguous(sizes);
  auto slice = [&](int64_t start, int64_t end, int64_t step) {
    std::vector<int64_t> axes{0}, starts{start}, ends{end}, steps{step};
    return readThrough(sliceView(base, axes, starts, ends, steps), buf);
  };
  CHECK(slice(1, 8, 3) == std::vector<int64_t>{101, 104, 107});
  CHECK(slice(-1, -11, -2) == std::vector<int64_t>{109, 107, 105, 103, 101});
  CHECK(slice(8, 100, 1) == std::vector<int64_t>{108, 109});
  CHECK(slice(5, 2, 1).empty());
  CHECK(slice(-100, 2, 1) == std::vector<int64_t>{100, 101});
}

TEST_CASE("broadcast, squeeze and unsqueeze views", "[layout]") {
  std::vector<int64_t> sizes{3, 1}, target{2, 3, 4};
  std::vector<int64_t> buf = iota(3);
  Layout b = broadcastView(Layout::contiguous(sizes), target);
  CHECK(b.strides == std::vector<int64_t>{0, 1, 0});
  std::vector<int64_t> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        expected.push_back(buf[j]);
  CHECK(readThrough(b, buf) == expected);

  std::vector<int64_t> axes1{1}, axes0{0};
  Layout sq = squeezeView(Layout::contiguous(sizes), axes1);
  CHECK(sq.sizes == std::vector<int64_t>{3});
  Layout un = unsqueezeView(sq, axes0);
  CHECK(un.sizes == std::vector<int64_t>{1, 3});
  CHECK(readThrough(un, buf) == buf);
  CHECK(un.isContiguous());
}

TEST_CASE("reshape views keep contiguous runs and refuse the rest",
          "[layout]") {
  std::vector<int64_t> sizes{2, 3, 4}, flat{24}, split{6, 2, 2};
  std::vector<int64_t> buf = iota(24);
  Layout base = Layout::contiguous(sizes);
  CHECK(readThrough(*reshapeView(base, flat), buf) == buf);
  CHECK(readThrough(*reshapeView(base, split), buf) == buf);

  // A transposed [4, 3] view of a [3, 4] buffer cannot be flattened in place.
  std::vector<int64_t> m{3, 4}, perm{1, 0}, twelve{12};
  Layout t = transposeView(Layout::contiguous(m), perm);
  CHECK_FALSE(reshapeView(t, twelve));
  // ... but splitting one of its axes keeps it a view.
  std::vector<int64_t> splitRows{2, 2, 3};
  std::optional<Layout> r = reshapeView(t, splitRows);
  REQUIRE(r);
  CHECK(readThrough(*r, iota(12)) == readThrough(t, iota(12)));

  // A sliced row (stride 2) reshaped with unit axes around it.
  std::vector<int64_t> axes{0}, starts{0}, ends{10}, steps{2}, ten{10};
  std::vector<int64_t> withUnits{1, 5, 1};
  Layout strided = sliceView(Layout::contiguous(ten), axes, starts, ends, steps);
  std::optional<Layout> u = reshapeView(strided, withUnits);
  REQUIRE(u);
  CHECK(readThrough(*u, iota(10)) == readThrough(strided, iota(10)));
}

TEST_CASE("random reshapes of contiguous layouts are views", "[layout]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    // Factor 2*2*3*5 = 60 into random groupings twice.
    std::vector<int64_t> factors{2, 2, 3, 5};
    std::shuffle(factors.begin(), factors.end(), rng);
    std::vector<int64_t> a, b;
    int64_t acc = 1;
    for (int64_t f : factors) {
      acc *= f;
      if (rng() % 2) {
        a.push_back(acc);
        acc = 1;
      }
    }
    if (acc != 1)
      a.push_back(acc);
    std::shuffle(factors.begin(), factors.end(), rng);
    for (int64_t f : factors)
      b.push_back(f);
    std::vector<int64_t> buf = iota(60);
    std::optional<Layout> r = reshapeView(Layout::contiguous(a), b);
    REQUIRE(r);
    CHECK(readThrough(*r, buf) == buf);
  }
}
