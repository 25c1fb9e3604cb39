//===- ShapeTest.cpp - Dims, broadcasting, element counts -----------------===//

#include "fuel/IR/Device.h"
#include "fuel/Support/DType.h"
#include "fuel/IR/Shape.h"

#include <catch2/catch.hpp>

using namespace fuel;

static Dim s(int64_t v) { return Dim::fixed(v); }

TEST_CASE("dims are static, symbolic or the reshape placeholder", "[shape]") {
  CHECK(s(0).isStatic());
  CHECK(Dim::symbol(0).isSymbolic());
  CHECK(Dim::symbol(7).symbolId() == 7);
  CHECK_FALSE(Dim::inferred().isSymbolic());
  CHECK(Dim::inferred().isInferred());
  CHECK(Dim::fromRaw(Dim::symbol(3).raw()) == Dim::symbol(3));
}

TEST_CASE("numpy broadcasting", "[shape]") {
  Dim b = Dim::symbol(0);
  CHECK(*broadcastShapes(Shape{s(3), s(1)}, Shape{s(4)}) ==
        Shape{s(3), s(4)});
  CHECK(*broadcastShapes(Shape{}, Shape{s(2), s(5)}) == Shape{s(2), s(5)});
  CHECK(*broadcastShapes(Shape{b, s(1)}, Shape{s(1), s(8)}) ==
        Shape{b, s(8)});
  CHECK(*broadcastShapes(Shape{s(0)}, Shape{s(1)}) == Shape{s(0)});
  size_t badAxis = 99;
  CHECK_FALSE(broadcastShapes(Shape{s(3), s(2)}, Shape{s(4), s(2)}, &badAxis));
  CHECK(badAxis == 0);
  // A symbol is not known to equal any static extent but 1.
  CHECK_FALSE(broadcastShapes(Shape{b}, Shape{s(4)}));
  CHECK_FALSE(broadcastShapes(Shape{b}, Shape{Dim::symbol(1)}));
}

TEST_CASE("element counts saturate at the limit", "[shape]") {
  CHECK(*staticElementCount(Shape{}) == 1);
  CHECK(*staticElementCount(Shape{s(2), s(3), Dim::symbol(0)}) == 6);
  CHECK(*staticElementCount(Shape{s(int64_t(1) << 40), s(0)}) == 0);
  CHECK_FALSE(staticElementCount(Shape{s(int64_t(1) << 30), s(int64_t(1) << 30)}));
  CHECK(*staticElementCount(Shape{s(int64_t(1) << 29), s(int64_t(1) << 30)}) ==
        kMaxElements);
}

TEST_CASE("axes normalize like numpy", "[shape]") {
  CHECK(*normalizeAxis(-1, 3) == 2);
  CHECK(*normalizeAxis(0, 1) == 0);
  CHECK_FALSE(normalizeAxis(3, 3));
  CHECK_FALSE(normalizeAxis(-4, 3));
  CHECK_FALSE(normalizeAxis(0, 0));
}

TEST_CASE("symbol tables intern names", "[shape]") {
  SymbolTable table;
  CHECK(table.intern("B") == 0);
  CHECK(table.intern("T") == 1);
  CHECK(table.intern("B") == 0);
  CHECK(*table.lookup("T") == 1);
  CHECK_FALSE(table.lookup("X"));
  CHECK(formatShape(Shape{Dim::symbol(1), s(4), Dim::inferred()}, table) ==
        "[T, 4, -1]");
}

TEST_CASE("products of symbols are canonical derived symbols", "[shape]") {
  SymbolTable table;
  uint32_t t = table.intern("T"), b = table.intern("B");
  Dim fourB = *table.product({4, {b}});
  CHECK(table.name(fourB.symbolId()) == "4*B");
  CHECK(table.isDerived(fourB.symbolId()));
  CHECK_FALSE(table.isDerived(b));
  // The same product, however it is spelled or nested, is the same symbol.
  CHECK(*table.product({2, {b}}) != fourB);
  CHECK(*table.product({2, {fourB.symbolId()}}) == *table.product({8, {b}}));
  Dim bt = *table.product({1, {t, b}});
  CHECK(*table.product({1, {b, t}}) == bt);
  CHECK(table.name(bt.symbolId()) == "B*T");
  // Degenerate products are static dims and free symbols.
  CHECK(*table.product({6, {}}) == s(6));
  CHECK(*table.product({1, {b}}) == Dim::symbol(b));
  CHECK_FALSE(table.product({0, {b}}));
  CHECK_FALSE(table.product({kMaxElements + 1, {b}}));
  SymbolProduct e = table.expand(*table.product({3, {bt.symbolId()}}));
  CHECK(e.factor == 3);
  CHECK(e.symbols.size() == 2);
  // Values follow from the free symbols; unknown stays unknown.
  std::vector<int64_t> values(table.size(), -1);
  values[b] = 5;
  table.evaluate(values);
  CHECK(values[fourB.symbolId()] == 20);
  CHECK(values[bt.symbolId()] == -1);
  values[t] = 7;
  table.evaluate(values);
  CHECK(values[bt.symbolId()] == 35);
  // Names parse back.
  SymbolProduct p;
  REQUIRE(parseSymbolProduct("2*B*3", table, p));
  CHECK(*table.product(p) == *table.product({6, {b}}));
  CHECK_FALSE(parseSymbolProduct("B**T", table, p));
  CHECK_FALSE(parseSymbolProduct("*B", table, p));
  CHECK_FALSE(parseSymbolProduct("0x4*B", table, p));
  CHECK_FALSE(parseSymbolProduct("B-1", table, p));
}

TEST_CASE("dtypes and devices parse and print", "[shape]") {
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    CHECK(parseDType(dtypeName(t)) == t);
  }
  CHECK(dtypeByteSize(DType::BF16) == 2);
  CHECK_FALSE(parseDType("float32"));
  CHECK(formatDevice(*parseDevice("cuda:1")) == "cuda:1");
  CHECK(parseDevice("vulkan:0")->kind == DeviceKind::Vulkan);
  for (const char *bad : {"cuda", "gpu:0", "cpu:", "cpu:01", "cpu:-1",
                          "cpu:99999", "cpu:0x"})
    CHECK_FALSE(parseDevice(bad));
  DeviceRef d{DeviceKind::CUDA, 3};
  CHECK(*DeviceRef::decode(d.encode()) == d);
  CHECK_FALSE(DeviceRef::decode(0));
}
