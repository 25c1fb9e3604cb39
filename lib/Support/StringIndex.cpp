//===- StringIndex.cpp - Flat hash map from string views to ids -----------===//

#include "fuel/Support/StringIndex.h"

#include <cstring>

using namespace fuel;

uint64_t StringIndex::hashOf(std::string_view key) {
  // FNV-1a, then a 64-bit finalizer so that short, similar names ("n1",
  // "n2", ...) spread over the whole table.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h | 1; // Never 0, the empty marker.
}

void StringIndex::reserve(size_t n) {
  size_t want = 16;
  while (want < n * 2)
    want *= 2;
  if (want <= slots.size())
    return;
  std::vector<Slot> old = std::move(slots);
  slots.assign(want, Slot());
  count = 0;
  for (const Slot &s : old)
    if (s.hash)
      insert({s.data, s.length}, s.value);
}

void StringIndex::grow() { reserve(slots.empty() ? 8 : slots.size()); }

std::pair<uint32_t, bool> StringIndex::insert(std::string_view key,
                                              uint32_t value) {
  if ((count + 1) * 2 > slots.size())
    grow();
  uint64_t h = hashOf(key);
  size_t mask = slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot &s = slots[i];
    if (s.hash == 0) {
      s = {h, key.data(), static_cast<uint32_t>(key.size()), value};
      ++count;
      return {value, true};
    }
    if (s.hash == h && s.length == key.size() &&
        std::memcmp(s.data, key.data(), key.size()) == 0)
      return {s.value, false};
  }
}

const uint32_t *StringIndex::find(std::string_view key) const {
  if (slots.empty())
    return nullptr;
  uint64_t h = hashOf(key);
  size_t mask = slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot &s = slots[i];
    if (s.hash == 0)
      return nullptr;
    if (s.hash == h && s.length == key.size() &&
        std::memcmp(s.data, key.data(), key.size()) == 0)
      return &s.value;
  }
}
