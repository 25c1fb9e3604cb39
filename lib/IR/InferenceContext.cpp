//===- InferenceContext.cpp - Per-node view for type inference ------------===//

#include "InferenceContext.h"

#include <algorithm>

using namespace fuel;

bool fuel::isNumeric(DType t) { return t != DType::Bool; }

std::vector<int64_t> InferenceContext::intsAttr(AttrName name,
                                                std::vector<int64_t> dflt) const {
  const Attribute *a = attr(name);
  if (!a)
    return dflt;
  std::span<const int64_t> v = graph.intsAttr(*a);
  return {v.begin(), v.end()};
}

LogicalResult InferenceContext::report(NodeSite site,
                                       std::string message) const {
  Diagnostic d;
  d.location = locator.locate(graph, node, site);
  d.message = std::string(opName(kind())) + ": " + std::move(message);
  diag.report(std::move(d));
  return failure();
}

std::string InferenceContext::operandDesc(unsigned i) const {
  return "operand " + std::to_string(i) + " (" +
         std::string(dtypeName(dtype(i))) + fmt(shape(i)) + ")";
}

LogicalResult InferenceContext::requireSameDType(unsigned first) const {
  for (unsigned i = first + 1; i < numOperands(); ++i)
    if (dtype(i) != dtype(first))
      return operandError(i, "dtype mismatch: operand " + std::to_string(i) +
                                 " is " + std::string(dtypeName(dtype(i))) +
                                 ", operand " + std::to_string(first) + " is " +
                                 std::string(dtypeName(dtype(first))));
  return success();
}

LogicalResult InferenceContext::requireDType(unsigned i, bool (*pred)(DType),
                                             const char *what) const {
  if (pred(dtype(i)))
    return success();
  return operandError(i, "operand " + std::to_string(i) + " must be " + what +
                             ", got " + std::string(dtypeName(dtype(i))));
}

LogicalResult InferenceContext::requireRank(unsigned i, size_t r) const {
  if (rank(i) == r)
    return success();
  return operandError(i, "operand " + std::to_string(i) + " must have rank " +
                             std::to_string(r) + ", got " + fmt(shape(i)));
}

std::optional<unsigned> InferenceContext::axis(AttrName name, int64_t value,
                                               size_t r) const {
  std::optional<unsigned> a = normalizeAxis(value, r);
  if (!a)
    (void)attrError(name, "axis " + std::to_string(value) +
                              " is out of range for rank " + std::to_string(r));
  return a;
}

std::optional<std::vector<unsigned>>
InferenceContext::axes(AttrName name, std::span<const int64_t> values,
                       size_t r) const {
  std::vector<unsigned> out;
  std::vector<bool> seen(r, false);
  for (int64_t v : values) {
    std::optional<unsigned> a = axis(name, v, r);
    if (!a)
      return std::nullopt;
    if (seen[*a]) {
      (void)attrError(name, "axis " + std::to_string(v) + " is repeated");
      return std::nullopt;
    }
    seen[*a] = true;
    out.push_back(*a);
  }
  return out;
}
