//===- Shape.cpp - Static and symbolic tensor extents ---------------------===//

#include "fuel/IR/Shape.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

using namespace fuel;

uint32_t SymbolTable::intern(std::string_view name) {
  if (auto id = lookup(name))
    return *id;
  names.emplace_back(name);
  definitions.emplace_back();
  return static_cast<uint32_t>(names.size() - 1);
}

std::optional<Dim> SymbolTable::product(SymbolProduct given) {
  SymbolProduct p{given.factor, {}};
  for (uint32_t s : given.symbols) {
    const SymbolProduct &def = definitions[s];
    if (def.symbols.empty()) {
      p.symbols.push_back(s);
      continue;
    }
    if (p.factor > kMaxElements / def.factor)
      return std::nullopt;
    p.factor *= def.factor;
    p.symbols.insert(p.symbols.end(), def.symbols.begin(), def.symbols.end());
  }
  if (p.factor <= 0 || p.factor > kMaxElements)
    return std::nullopt;
  if (p.symbols.empty())
    return Dim::fixed(p.factor);
  std::sort(p.symbols.begin(), p.symbols.end(), [&](uint32_t a, uint32_t b) {
    return names[a] < names[b];
  });
  if (p.factor == 1 && p.symbols.size() == 1)
    return Dim::symbol(p.symbols[0]);
  std::string name = p.factor == 1 ? "" : std::to_string(p.factor);
  for (uint32_t s : p.symbols)
    name += (name.empty() ? "" : "*") + names[s];
  if (auto id = lookup(name))
    return Dim::symbol(*id);
  names.push_back(std::move(name));
  definitions.push_back(std::move(p));
  return Dim::symbol(static_cast<uint32_t>(names.size() - 1));
}

SymbolProduct SymbolTable::expand(Dim d) const {
  if (d.isStatic())
    return {d.size(), {}};
  uint32_t id = d.symbolId();
  return isDerived(id) ? definitions[id] : SymbolProduct{1, {id}};
}

void SymbolTable::evaluate(std::vector<int64_t> &values) const {
  for (uint32_t id = 0; id < names.size(); ++id) {
    if (!isDerived(id))
      continue;
    // Unknown stays -1; an overflow saturates (no buffer is that large).
    int64_t v = definitions[id].factor;
    for (uint32_t s : definitions[id].symbols) {
      if (values[s] < 0 || v < 0)
        v = -1;
      else if (values[s] != 0 && v > std::numeric_limits<int64_t>::max() / values[s])
        v = std::numeric_limits<int64_t>::max();
      else
        v *= values[s];
    }
    values[id] = v;
  }
}

bool fuel::parseSymbolProduct(std::string_view text, SymbolTable &symbols,
                              SymbolProduct &p) {
  p = {};
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find('*', start), text.size());
    std::string_view part = text.substr(start, end - start);
    if (part.empty())
      return false;
    if (std::isdigit(static_cast<unsigned char>(part[0]))) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (ec != std::errc() || ptr != part.data() + part.size() || v <= 0 ||
          p.factor > kMaxElements / v)
        return false;
      p.factor *= v;
    } else {
      for (char c : part)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
          return false;
      p.symbols.push_back(symbols.intern(part));
    }
    start = end + 1;
  }
  return true;
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
