//===- ThreadPoolTest.cpp - Every chunk once, chunk 0 on the caller -------===//

#include "../../../lib/Runtime/ThreadPool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
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

TEST_CASE("parallelFor runs chunk 0 on the calling thread", "[runtime]") {
  // The split kernels' slices then stay where the previous kernel's first
  // slice wrote its data. The other chunks wait until chunk 0 has run, so
  // no worker is free to take it however late the caller is scheduled (a
  // loaded machine delays it past any fixed time). A pool that gave chunk 0
  // to a worker fails the check below; a chunk left waiting, the timeout.
  for (unsigned threads : {2u, 4u}) {
    fuel::Expected<std::unique_ptr<ThreadPool>> created = ThreadPool::create(threads);
    REQUIRE(created);
    for (int repeat = 0; repeat < 20; ++repeat) {
      std::atomic<bool> firstRan{false}, timedOut{false};
      std::thread::id ranFirst;
      (*created)->parallelFor(threads, [&](int64_t i) {
        if (i == 0) {
          ranFirst = std::this_thread::get_id();
          firstRan.store(true, std::memory_order_release);
          return;
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!firstRan.load(std::memory_order_acquire))
          if (std::chrono::steady_clock::now() > deadline) {
            timedOut = true;
            return;
          }
      });
      REQUIRE_FALSE(timedOut);
      REQUIRE(ranFirst == std::this_thread::get_id());
    }
  }
}

TEST_CASE("currentThread is the caller's 0 and each worker's own index", "[runtime]") {
  // Traces put each slice of a split kernel on the track of the thread that
  // ran it. Whichever thread runs a chunk, one thread always gives one index,
  // and no two threads of a pool give the same one.
  constexpr unsigned kThreads = 3;
  fuel::Expected<std::unique_ptr<ThreadPool>> created = ThreadPool::create(kThreads);
  REQUIRE(created);
  std::mutex mutex;
  std::map<std::thread::id, std::set<unsigned>> indexOf;
  for (int repeat = 0; repeat < 200; ++repeat)
    (*created)->parallelFor(8, [&](int64_t) {
      unsigned index = ThreadPool::currentThread();
      std::lock_guard<std::mutex> lock(mutex);
      indexOf[std::this_thread::get_id()].insert(index);
    });
  std::set<unsigned> seen;
  for (const auto &[thread, indices] : indexOf) {
    REQUIRE(indices.size() == 1);
    unsigned index = *indices.begin();
    CHECK(index < kThreads);
    CHECK((index == 0) == (thread == std::this_thread::get_id()));
    CHECK(seen.insert(index).second);
  }
  CHECK(ThreadPool::currentThread() == 0);
  unsigned elsewhere = kThreads;
  std::thread([&] { elsewhere = ThreadPool::currentThread(); }).join();
  CHECK(elsewhere == 0);
}
