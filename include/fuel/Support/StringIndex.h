//===- StringIndex.h - Flat hash map from string views to ids ---*- C++ -*-===//
//
// Open addressing with linear probing over one array: the name tables of
// million-node graphs are built and probed without a heap node per entry
// (std::unordered_map spent most of a 1M-node parse in pointer chasing).
// Keys are views and must outlive the index.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_STRINGINDEX_H
#define FUEL_SUPPORT_STRINGINDEX_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace fuel {

class StringIndex {
public:
  /// Inserts `key` -> `value` unless present. Returns the stored value and
  /// whether it was inserted.
  std::pair<uint32_t, bool> insert(std::string_view key, uint32_t value);
  /// The value of `key`, or nullptr.
  const uint32_t *find(std::string_view key) const;
  size_t size() const { return count; }
  void reserve(size_t n);

private:
  struct Slot {
    uint64_t hash = 0; // 0 marks an empty slot.
    const char *data = nullptr;
    uint32_t length = 0;
    uint32_t value = 0;
  };
  static uint64_t hashOf(std::string_view key);
  void grow();

  std::vector<Slot> slots;
  size_t count = 0;
};

} // namespace fuel

#endif // FUEL_SUPPORT_STRINGINDEX_H
