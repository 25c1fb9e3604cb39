//===- Buckets.h - Items grouped by a dense key -----------------*- C++ -*-===//
//
// A counting sort into compressed rows (CSR): the items of each key in
// [0, numKeys), each key's in the order given. The planner groups nodes by
// fusion group, readers by value and steps by kernel this way: linear time
// and three allocations, for graphs of a million nodes.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_BUCKETS_H
#define FUEL_SUPPORT_BUCKETS_H

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fuel {

template <class T> class Buckets {
public:
  Buckets() = default;
  /// Item i in [0, count) is itemOf(i) under key keyOf(i) < numKeys.
  template <class KeyOf, class ItemOf>
  Buckets(size_t numKeys, size_t count, KeyOf keyOf, ItemOf itemOf)
      : first(numKeys + 1, 0), items(count) {
    for (size_t i = 0; i < count; ++i)
      ++first[keyOf(i) + 1];
    for (size_t k = 0; k < numKeys; ++k)
      first[k + 1] += first[k];
    std::vector<uint32_t> filled(first.begin(), first.end() - 1);
    for (size_t i = 0; i < count; ++i)
      items[filled[keyOf(i)]++] = itemOf(i);
  }

  std::span<T> operator[](size_t key) {
    return {items.data() + first[key], items.data() + first[key + 1]};
  }
  std::span<const T> operator[](size_t key) const {
    return {items.data() + first[key], items.data() + first[key + 1]};
  }

private:
  std::vector<uint32_t> first;
  std::vector<T> items;
};

} // namespace fuel

#endif // FUEL_SUPPORT_BUCKETS_H
