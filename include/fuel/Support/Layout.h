//===- Layout.h - Strided layouts and metadata-only views -------*- C++ -*-===//
//
// A Layout maps an index of a tensor to an element offset in its buffer:
// offset + sum(index[i] * strides[i]). View ops (transpose, slice with steps,
// broadcast_to/expand, squeeze, unsqueeze, reshape of a compatible layout)
// only compute a new Layout over the same buffer; no data moves. Layouts are
// computed on concrete extents, once symbols are bound.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_LAYOUT_H
#define FUEL_SUPPORT_LAYOUT_H

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace fuel {

/// Normalizes a possibly negative axis into [0, rank); nullopt when out of
/// range.
std::optional<unsigned> normalizeAxis(int64_t axis, size_t rank);

struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides; // In elements; 0 for broadcast axes.
  int64_t offset = 0;

  static Layout contiguous(std::span<const int64_t> sizes);
  bool isContiguous() const;
  int64_t numElements() const;
  /// Whether every element's offset lies in [0, elements) (a tensor of no
  /// elements fits anywhere).
  bool fitsIn(int64_t elements) const;
  /// Element offset of a multi-index.
  int64_t elementOffset(std::span<const int64_t> index) const;
  bool operator==(const Layout &o) const {
    return sizes == o.sizes && strides == o.strides && offset == o.offset;
  }
};

// Each view returns the layout of the result over the operand's buffer.
// Arguments are assumed verified (see Verifier.h).
Layout transposeView(const Layout &in, std::span<const int64_t> perm);
Layout sliceView(const Layout &in, std::span<const int64_t> axes,
                 std::span<const int64_t> starts,
                 std::span<const int64_t> ends,
                 std::span<const int64_t> steps);
Layout broadcastView(const Layout &in, std::span<const int64_t> sizes);
Layout squeezeView(const Layout &in, std::span<const int64_t> axes);
Layout unsqueezeView(const Layout &in, std::span<const int64_t> axes);
/// nullopt when the layout cannot be reshaped without a copy (e.g. a
/// transposed operand flattened across the permuted axes).
std::optional<Layout> reshapeView(const Layout &in,
                                  std::span<const int64_t> sizes);

} // namespace fuel

#endif // FUEL_SUPPORT_LAYOUT_H
