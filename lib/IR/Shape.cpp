//===- Shape.cpp - Static and symbolic tensor extents ---------------------===//

#include "fuel/IR/Shape.h"

#include <algorithm>

using namespace fuel;

uint32_t SymbolTable::intern(std::string_view name) {
  if (auto id = lookup(name))
    return *id;
  names.emplace_back(name);
  return static_cast<uint32_t>(names.size() - 1);
}

std::optional<uint32_t> SymbolTable::lookup(std::string_view name) const {
  // Graphs have a handful of symbols; a linear scan beats a map here.
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<uint32_t>(i);
  return std::nullopt;
}

std::optional<int64_t> fuel::staticElementCount(ShapeRef shape) {
  int64_t count = 1;
  for (Dim d : shape) {
    if (!d.isStatic())
      continue;
    if (d.size() == 0)
      return 0; // An empty tensor, whatever the other extents.
  }
  for (Dim d : shape) {
    if (!d.isStatic())
      continue;
    if (d.size() > kMaxElements / std::max<int64_t>(count, 1))
      return std::nullopt;
    count *= d.size();
    if (count > kMaxElements)
      return std::nullopt;
  }
  return count;
}

bool fuel::isFullyStatic(ShapeRef shape) {
  return std::all_of(shape.begin(), shape.end(),
                     [](Dim d) { return d.isStatic(); });
}

std::string fuel::formatShape(ShapeRef shape, const SymbolTable &symbols) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    if (shape[i].isStatic())
      out += std::to_string(shape[i].size());
    else if (shape[i].isInferred())
      out += "-1";
    else
      out += symbols.name(shape[i].symbolId());
  }
  out += ']';
  return out;
}

std::optional<unsigned> fuel::normalizeAxis(int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return std::nullopt;
  return static_cast<unsigned>(axis < 0 ? axis + r : axis);
}

std::optional<Shape> fuel::broadcastShapes(ShapeRef a, ShapeRef b,
                                           size_t *badAxis) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right, padding the shorter shape with 1s.
    Dim da = i < rank - a.size() ? Dim::fixed(1) : a[i - (rank - a.size())];
    Dim db = i < rank - b.size() ? Dim::fixed(1) : b[i - (rank - b.size())];
    if (da == db || db == Dim::fixed(1)) {
      out[i] = da;
    } else if (da == Dim::fixed(1)) {
      out[i] = db;
    } else {
      if (badAxis)
        *badAxis = i;
      return std::nullopt;
    }
  }
  return out;
}
