//===- ThreadPool.cpp - Workers for splitting CPU kernels -----------------===//

#include "ThreadPool.h"

#include <chrono>
#include <system_error>

using namespace fuel;
using namespace fuel::runtime;

/// Spins up to this long for `ready` before the caller sleeps: longer than
/// the kernels that run whole between split ones usually last, so that a
/// worker is awake for the next split kernel (a sleeping one, woken through
/// the kernel, started tens of microseconds late). Bounded, so a core
/// shared with other work is given back soon after a run.
template <class Ready> static bool spinUntil(Ready ready) {
  constexpr auto kSpin = std::chrono::microseconds(2000);
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0;; ++i) {
    if (ready())
      return true;
    __builtin_ia32_pause();
    if (i % 64 == 63 && std::chrono::steady_clock::now() - start > kSpin)
      return false;
  }
}

/// A worker's index in its pool; 0 on threads that are no pool's worker.
static thread_local unsigned workerIndex = 0;

unsigned ThreadPool::currentThread() { return workerIndex; }

Expected<std::unique_ptr<ThreadPool>> ThreadPool::create(unsigned threads) {
  std::unique_ptr<ThreadPool> pool(new ThreadPool());
  for (unsigned i = 1; i < threads; ++i) {
    try {
      pool->workers.emplace_back([p = pool.get(), i] { p->work(i); });
    } catch (const std::system_error &e) {
      // The destructor stops the ones started.
      return Error{"cannot start worker thread " + std::to_string(i) + " of " +
                   std::to_string(threads - 1) + " (" + e.what() + ")"};
    }
  }
  return pool;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::runChunks(const std::function<void(int64_t)> &fn, int64_t count, unsigned self) {
  if (self < count && claim(self))
    fn(self);
  // From the last chunk down: chunk 0 stays the caller's, which claims it
  // first.
  for (int64_t i = count - 1; i >= 0; --i)
    if (claim(i))
      fn(i);
}

void ThreadPool::work(unsigned self) {
  workerIndex = self;
  uint64_t seen = 0;
  const std::function<void(int64_t)> *fn = nullptr;
  int64_t count = 0;
  for (;;) {
    spinUntil([&] { return stopping || generation.load(std::memory_order_acquire) != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
      ++active;
      // The job is read under the lock: a late worker joins the current one.
      fn = job;
      count = jobCount;
    }
    if (fn)
      runChunks(*fn, count, self);
    std::lock_guard<std::mutex> lock(mutex);
    if (--active == 0)
      done.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t count,
                             const std::function<void(int64_t)> &fn) {
  if (workers.empty() || count <= 1) {
    for (int64_t i = 0; i < count; ++i)
      fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (count > claimable) {
      claimed.reset(new std::atomic<bool>[count]);
      claimable = count;
    }
    for (int64_t i = 0; i < count; ++i)
      claimed[i].store(false, std::memory_order_relaxed);
    job = &fn;
    jobCount = count;
    ++generation;
  }
  wake.notify_all();
  runChunks(fn, count, 0);
  // Workers that woke late find no chunk left; wait for those that run one.
  // The job is cleared under the lock, which a late worker takes to read it.
  spinUntil([&] { return active.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return active == 0; });
  job = nullptr;
}
