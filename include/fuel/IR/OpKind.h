//===- OpKind.h - Op kinds and their static properties ----------*- C++ -*-===//
#ifndef FUEL_IR_OPKIND_H
#define FUEL_IR_OPKIND_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace fuel {

enum class OpKind : uint8_t {
#define FUEL_OP(Enum, Name, Min, Max, Family) Enum,
#include "fuel/IR/Ops.def"
};

inline constexpr unsigned kNumOpKinds = 0
#define FUEL_OP(Enum, Name, Min, Max, Family) +1
#include "fuel/IR/Ops.def"
    ;

/// Ops grouped by how their types are inferred.
enum class OpFamily : uint8_t {
  Source,
  Unary,
  Binary,
  Linalg,
  Reduction,
  View,
  Movement,
  Structural
};

std::string_view opName(OpKind kind);
std::optional<OpKind> parseOpKind(std::string_view name);
OpFamily opFamily(OpKind kind);
unsigned minOperands(OpKind kind);
unsigned maxOperands(OpKind kind);
/// True for ops whose result aliases its operand's buffer (layout changes
/// only).
inline bool isViewOp(OpKind kind) { return opFamily(kind) == OpFamily::View; }
/// Unary and binary ops (including where, cast, clamp): one output element
/// from the same element of each (broadcast) operand.
inline bool isElementwiseOp(OpKind kind) {
  return opFamily(kind) == OpFamily::Unary || opFamily(kind) == OpFamily::Binary;
}

} // namespace fuel

#endif // FUEL_IR_OPKIND_H
