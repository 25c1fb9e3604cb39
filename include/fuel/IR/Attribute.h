//===- Attribute.h - Typed node attributes ----------------------*- C++ -*-===//
//
// Attribute names are an enum (parsed once at import), each with one value
// type. Values live in the Graph's pools; an Attribute is a 16-byte handle.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_IR_ATTRIBUTE_H
#define FUEL_IR_ATTRIBUTE_H

#include "fuel/IR/OpKind.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace fuel {

enum class AttrName : uint8_t {
#define FUEL_ATTR(Enum, Name, Type) Enum,
#include "fuel/IR/Attrs.def"
};

enum class AttrType : uint8_t {
  Int,    // int64
  Float,  // double
  Bool,   //
  String, // one of a per-attribute set of words
  Ints,   // list of int64
  Dims,   // list of static or symbolic extents (Dim::raw() each)
  Dim,    // one static or symbolic extent
  DType,  //
  Device  // DeviceRef::encode()
};

std::string_view attrName(AttrName name);
std::optional<AttrName> parseAttrName(std::string_view name);
AttrType attrType(AttrName name);
std::string_view attrTypeDescription(AttrType type);

/// Handle to an attribute value. Scalars are stored inline; lists and strings
/// index the owning Graph's pools.
struct Attribute {
  AttrName name;
  AttrType type;
  uint32_t count = 0;  // Lists: element count; strings: byte length.
  int64_t payload = 0; // Scalar value bits, or the pool offset.
};

/// How an op uses an attribute.
struct AttrSpec {
  AttrName name;
  bool required;
};

/// The attributes `kind` accepts (any other is an error at import).
std::span<const AttrSpec> opAttrSpecs(OpKind kind);

} // namespace fuel

#endif // FUEL_IR_ATTRIBUTE_H
