//===- Shape.h - Static and symbolic tensor extents -------------*- C++ -*-===//
//
// A Dim is either a static extent (>= 0) or a symbol (a named extent such as a
// batch size `B`, bound at run time). Symbols are graph-wide: the same name is
// the same extent everywhere, which is what lets shape inference prove that
// `[B, 64] + [B, 64]` is well-formed without knowing B. A symbol is free
// (bound by the shape of a graph input) or a product of free symbols and a
// static factor, named canonically (`4*B`, `B*T`): what a reshape to
// `[T, B * heads, head_dim]` needs; its value follows from the free ones.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_SHAPE_H
#define FUEL_IR_SHAPE_H

#include "fuel/Support/Layout.h" // normalizeAxis

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fuel {

class Dim {
public:
  Dim() = default;
  static Dim fixed(int64_t size) { return Dim(size); }
  static Dim symbol(uint32_t id) { return Dim(-1 - static_cast<int64_t>(id)); }
  /// Reconstructs a Dim from raw(); used by compact attribute storage.
  static Dim fromRaw(int64_t raw) { return Dim(raw); }
  /// The `-1` placeholder of a reshape target shape ("whatever is left").
  static Dim inferred() { return Dim(kInferredRaw); }

  bool isStatic() const { return value >= 0; }
  bool isSymbolic() const { return value < 0 && value != kInferredRaw; }
  bool isInferred() const { return value == kInferredRaw; }
  int64_t size() const { return value; }
  uint32_t symbolId() const { return static_cast<uint32_t>(-1 - value); }
  int64_t raw() const { return value; }

  bool operator==(const Dim &o) const { return value == o.value; }
  bool operator!=(const Dim &o) const { return value != o.value; }

private:
  static constexpr int64_t kInferredRaw = INT64_MIN;
  explicit Dim(int64_t v) : value(v) {}
  int64_t value = 0;
};

using Shape = std::vector<Dim>;
using ShapeRef = std::span<const Dim>;

/// A static factor times free symbols (sorted, with repeats): the value of
/// a derived symbol, and of any Dim once expanded.
struct SymbolProduct {
  int64_t factor = 1;
  std::vector<uint32_t> symbols;
};

/// Interned names of symbolic dims, and what derived ones stand for.
class SymbolTable {
public:
  /// A free symbol named `name` (an identifier).
  uint32_t intern(std::string_view name);
  /// The Dim equal to `p`: static without symbols, the free symbol itself
  /// for 1 * S, else a derived symbol; nullopt if the factor is not
  /// positive or overflows.
  std::optional<Dim> product(SymbolProduct p);
  std::optional<uint32_t> lookup(std::string_view name) const;
  std::string_view name(uint32_t id) const { return names[id]; }
  size_t size() const { return names.size(); }
  bool isDerived(uint32_t id) const { return !definitions[id].symbols.empty(); }
  /// `d` as a factor times free symbols (a static Dim has no symbols).
  SymbolProduct expand(Dim d) const;
  /// Fills in the values of derived symbols from those of the free ones
  /// (-1 where a free one is unknown).
  void evaluate(std::vector<int64_t> &values) const;

private:
  std::vector<std::string> names;
  std::vector<SymbolProduct> definitions; // Empty symbols: free.
};

/// Parses a derived symbol's name (`4*B`, `B*T`) into `p`, interning its
/// free symbols; false when `text` is not such a product.
bool parseSymbolProduct(std::string_view text, SymbolTable &symbols, SymbolProduct &p);

/// Largest extent or element count fuelc accepts: byte sizes of every tensor
/// must fit in int64 even at 8 bytes per element.
inline constexpr int64_t kMaxElements = int64_t(1) << 59;

/// Product of the static dims, or nullopt if it exceeds kMaxElements.
/// Symbolic dims count as 1 (a lower bound on the element count).
std::optional<int64_t> staticElementCount(ShapeRef shape);
bool isFullyStatic(ShapeRef shape);

/// Renders `[B, 64]` using the table's symbol names.
std::string formatShape(ShapeRef shape, const SymbolTable &symbols);

/// numpy broadcasting of two shapes; nullopt (and the offending result axis in
/// `badAxis`) when they are incompatible.
std::optional<Shape> broadcastShapes(ShapeRef a, ShapeRef b,
                                     size_t *badAxis = nullptr);

} // namespace fuel

#endif // FUEL_IR_SHAPE_H
