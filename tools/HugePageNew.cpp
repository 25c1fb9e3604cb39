//===- HugePageNew.cpp - Large allocations on transparent huge pages ------===//
//
// The programs' global operator new. Planning a million-node graph builds
// arrays of tens of megabytes (candidates, kernels, the min-cut graph) and
// frees them again; glibc maps each from the kernel and unmaps it on free,
// so every plan faults its pages in anew, 4 KiB at a time. Under a
// hypervisor a fault costs microseconds: that was half of a 1M-node plan.
// Blocks of 4 MiB and more are therefore aligned to 2 MiB and advised as
// huge pages (MADV_HUGEPAGE; Debian's default THP mode "madvise" honours
// only advised ranges), which takes one fault per 2 MiB. Smaller blocks
// take plain malloc. Linked into fuelc and the benchmarks, never into the
// libraries (a program owns its allocation policy).
//
// Sanitizer builds keep their own operator new: they check that memory
// from new goes back through delete.
//
//===----------------------------------------------------------------------===//

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) // GCC
#define FUEL_SANITIZED_BUILD
#elif defined(__has_feature) // Clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FUEL_SANITIZED_BUILD
#endif
#endif

#ifndef FUEL_SANITIZED_BUILD

#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace {
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kHugeThreshold = 2 * kHugePage;

void *allocate(std::size_t size) {
  if (size < kHugeThreshold)
    return std::malloc(size ? size : 1);
  std::size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void *p = std::aligned_alloc(kHugePage, rounded);
  if (p)
    madvise(p, rounded, MADV_HUGEPAGE); // Advice only: a refusal changes nothing.
  return p;
}
} // namespace

void *operator new(std::size_t size) {
  if (void *p = allocate(size))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept { return allocate(size); }
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate(size); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }

#endif
