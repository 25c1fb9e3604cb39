//===- ThreadPoolTest.cpp - Every chunk exactly once, every time ----------===//

#include "../../../lib/Runtime/ThreadPool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

using namespace fuel::runtime;

TEST_CASE("parallelFor runs every index once, on repeated calls", "[runtime]") {
  for (unsigned threads : {1u, 2u, 4u}) {
    fuel::Expected<std::unique_ptr<ThreadPool>> created = ThreadPool::create(threads);
    REQUIRE(created);
    ThreadPool &pool = **created;
    CHECK(pool.size() == threads);
    for (int64_t count : {0, 1, 3, 64, 1000}) {
      for (int repeat = 0; repeat < 50; ++repeat) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
        pool.parallelFor(count, [&](int64_t i) { hits[i].fetch_add(1); });
        for (int64_t i = 0; i < count; ++i)
          REQUIRE(hits[i].load() == 1);
      }
    }
  }
}
