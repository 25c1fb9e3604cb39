//===- OpInfo.cpp - Static op and attribute tables ------------------------===//
//
// Name tables generated from Ops.def/Attrs.def, and the attribute schema of
// each op (which attributes it accepts and which are required).
//
//===----------------------------------------------------------------------===//

#include "fuel/IR/Attribute.h"
#include "fuel/IR/OpKind.h"

#include <array>

using namespace fuel;

namespace {
struct OpInfo {
  std::string_view name;
  unsigned minOperands;
  unsigned maxOperands;
  OpFamily family;
};
struct AttrInfo {
  std::string_view name;
  AttrType type;
};
} // namespace

static constexpr OpInfo kOps[] = {
#define FUEL_OP(Enum, Name, Min, Max, Family) {Name, Min, Max, OpFamily::Family},
#include "fuel/IR/Ops.def"
};
static_assert(std::size(kOps) == kNumOpKinds);

static constexpr AttrInfo kAttrs[] = {
#define FUEL_ATTR(Enum, Name, Type) {Name, AttrType::Type},
#include "fuel/IR/Attrs.def"
};

std::string_view fuel::opName(OpKind kind) {
  return kOps[static_cast<unsigned>(kind)].name;
}

std::optional<OpKind> fuel::parseOpKind(std::string_view name) {
  for (unsigned i = 0; i < kNumOpKinds; ++i)
    if (kOps[i].name == name)
      return static_cast<OpKind>(i);
  return std::nullopt;
}

OpFamily fuel::opFamily(OpKind kind) {
  return kOps[static_cast<unsigned>(kind)].family;
}
unsigned fuel::minOperands(OpKind kind) {
  return kOps[static_cast<unsigned>(kind)].minOperands;
}
unsigned fuel::maxOperands(OpKind kind) {
  return kOps[static_cast<unsigned>(kind)].maxOperands;
}

std::string_view fuel::attrName(AttrName name) {
  return kAttrs[static_cast<unsigned>(name)].name;
}

std::optional<AttrName> fuel::parseAttrName(std::string_view name) {
  for (unsigned i = 0; i < std::size(kAttrs); ++i)
    if (kAttrs[i].name == name)
      return static_cast<AttrName>(i);
  return std::nullopt;
}

AttrType fuel::attrType(AttrName name) {
  return kAttrs[static_cast<unsigned>(name)].type;
}

std::string_view fuel::attrTypeDescription(AttrType type) {
  switch (type) {
  case AttrType::Int:
    return "an integer";
  case AttrType::Float:
    return "a number";
  case AttrType::Bool:
    return "a boolean";
  case AttrType::String:
    return "a string";
  case AttrType::Ints:
    return "an array of integers";
  case AttrType::Dims:
    return "an array of extents (integers or symbol names)";
  case AttrType::Dim:
    return "an extent (an integer or a symbol name)";
  case AttrType::DType:
    return "a dtype name";
  case AttrType::Device:
    return "a device name such as \"cpu:0\"";
  }
  return "a value";
}

std::span<const AttrSpec> fuel::opAttrSpecs(OpKind kind) {
  using A = AttrName;
  static constexpr AttrSpec gelu[] = {{A::Approximate, false}};
  static constexpr AttrSpec cast[] = {{A::To, true}};
  static constexpr AttrSpec clamp[] = {{A::MinValue, false},
                                       {A::MaxValue, false}};
  static constexpr AttrSpec matmul[] = {{A::TransposeA, false},
                                        {A::TransposeB, false}};
  static constexpr AttrSpec conv[] = {{A::Strides, false},
                                      {A::Pads, false},
                                      {A::Dilations, false},
                                      {A::Groups, false}};
  static constexpr AttrSpec maxPool[] = {{A::Kernel, true},
                                         {A::Strides, false},
                                         {A::Pads, false},
                                         {A::Dilations, false},
                                         {A::CeilMode, false}};
  static constexpr AttrSpec avgPool[] = {{A::Kernel, true},
                                         {A::Strides, false},
                                         {A::Pads, false},
                                         {A::CeilMode, false},
                                         {A::CountIncludePad, false}};
  static constexpr AttrSpec reduce[] = {{A::Axes, false}, {A::KeepDims, false}};
  static constexpr AttrSpec argReduce[] = {{A::Axis, false},
                                           {A::KeepDims, false}};
  static constexpr AttrSpec axisOnly[] = {{A::Axis, false}};
  static constexpr AttrSpec axisRequired[] = {{A::Axis, true}};
  static constexpr AttrSpec norm[] = {{A::Axis, false}, {A::Eps, false}};
  static constexpr AttrSpec shapeRequired[] = {{A::ShapeAttr, true}};
  static constexpr AttrSpec transpose[] = {{A::Perm, false}};
  static constexpr AttrSpec slice[] = {{A::Starts, true},
                                       {A::Ends, true},
                                       {A::Axes, false},
                                       {A::Steps, false}};
  static constexpr AttrSpec squeeze[] = {{A::Axes, false}};
  static constexpr AttrSpec unsqueeze[] = {{A::Axes, true}};
  static constexpr AttrSpec split[] = {
      {A::Axis, false}, {A::Sizes, false}, {A::Num, false}};
  static constexpr AttrSpec pad[] = {
      {A::Pads, true}, {A::Mode, false}, {A::Value, false}};
  static constexpr AttrSpec transfer[] = {{A::Device, true}};
  static constexpr AttrSpec alloc[] = {
      {A::DTypeAttr, true}, {A::ShapeAttr, true}, {A::Device, true}};
  static constexpr AttrSpec writeSlice[] = {{A::Axis, true},
                                            {A::Offset, true}};

  switch (kind) {
  case OpKind::Gelu:
    return gelu;
  case OpKind::Cast:
    return cast;
  case OpKind::Clamp:
    return clamp;
  case OpKind::MatMul:
    return matmul;
  case OpKind::Conv2D:
    return conv;
  case OpKind::MaxPool2D:
    return maxPool;
  case OpKind::AvgPool2D:
    return avgPool;
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
    return reduce;
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    return argReduce;
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::Gather:
    return axisOnly;
  case OpKind::Concat:
    return axisRequired;
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return norm;
  case OpKind::Reshape:
  case OpKind::BroadcastTo:
  case OpKind::Expand:
    return shapeRequired;
  case OpKind::Transpose:
    return transpose;
  case OpKind::Slice:
    return slice;
  case OpKind::Squeeze:
    return squeeze;
  case OpKind::Unsqueeze:
    return unsqueeze;
  case OpKind::Split:
    return split;
  case OpKind::Pad:
    return pad;
  case OpKind::Copy:
  case OpKind::Move:
    return transfer;
  case OpKind::Alloc:
    return alloc;
  case OpKind::WriteSlice:
    return writeSlice;
  default:
    return {};
  }
}
