//===- ThreadPool.h - Workers for splitting CPU kernels ---------*- C++ -*-===//
//
// A fixed set of workers that run the chunks of one parallel loop at a time;
// the calling thread takes chunks too. Thread t (the caller being 0) runs
// chunk t first, so that the slices of consecutive split kernels stay on
// one core with the data it wrote; then any chunk nobody has claimed, so a
// worker that wakes late loses its chunk rather than holding the loop up.
// Waits spin (up to 2 ms) before they sleep: a kernel takes tens of
// microseconds, about what waking a sleeping thread costs, so a worker
// woken by the kernel would find its chunks taken.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_THREADPOOL_H
#define FUEL_LIB_RUNTIME_THREADPOOL_H

#include "fuel/Support/Expected.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

namespace fuel::runtime {

class ThreadPool {
public:
  /// `threads` counts the caller: 1 means no workers. When the system
  /// cannot start them all (EAGAIN under a thread or memory limit), an
  /// error: never fewer threads than asked for.
  static Expected<std::unique_ptr<ThreadPool>> create(unsigned threads);
  ~ThreadPool();
  unsigned size() const { return static_cast<unsigned>(workers.size()) + 1; }
  /// Runs fn(i) for i in [0, count), returning when all are done.
  void parallelFor(int64_t count, const std::function<void(int64_t)> &fn);
  /// The index in its pool of the thread calling this: a worker's, or 0 for
  /// any other thread (the one that calls parallelFor).
  static unsigned currentThread();

private:
  ThreadPool() = default;
  void work(unsigned self);
  /// Runs chunk `self` of the current job, then any chunk left.
  void runChunks(const std::function<void(int64_t)> &fn, int64_t count, unsigned self);
  bool claim(int64_t chunk) { return !claimed[chunk].exchange(true, std::memory_order_relaxed); }

  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *job = nullptr;
  int64_t jobCount = 0;
  // Whether each chunk of the job has been taken (sized to the largest job).
  std::unique_ptr<std::atomic<bool>[]> claimed;
  int64_t claimable = 0;
  // Written under `mutex`; also read without it while spinning.
  std::atomic<unsigned> active{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> stopping{false};
};

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_THREADPOOL_H
