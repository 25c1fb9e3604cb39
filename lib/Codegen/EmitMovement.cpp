//===- EmitMovement.cpp - copies, concat, split, gather, pad, write_slice -===//
//
// Data movement is a linalg.generic copy whose maps carry the offsets
// (concat writes each input at its offset along the axis, split reads each
// part from its offset), or, where the source position is data dependent
// (gather, pad, write_slice), a generic over the result whose region loads
// from the captured source memref at a computed, clamped index.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include <numeric>

using namespace fuel;
using namespace fuel::codegen;

static std::string d(unsigned i) { return "d" + std::to_string(i); }

static std::vector<std::string> identityDims(unsigned rank) {
  std::vector<std::string> dims;
  for (unsigned i = 0; i < rank; ++i)
    dims.push_back(d(i));
  return dims;
}

/// The extents in memref type `type` ("3", "?"), and its element type.
static std::vector<std::string> typeExtents(const std::string &type, std::string &element) {
  std::string body = type.substr(7, type.find_first_of(",>") - 7); // After "memref<".
  std::vector<std::string> extents;
  size_t at = 0;
  for (size_t x; (x = body.find('x', at)) != std::string::npos; at = x + 1)
    extents.push_back(body.substr(at, x - at));
  element = body.substr(at);
  return extents;
}

/// The window of `source` that `dest`'s extents cover from `offset` along
/// `axis`: a subview, so that the copy's loops run over `dest`'s extents.
static void windowOf(KernelEmitter &e, GenericOperand &source, const GenericOperand &dest,
                     unsigned axis, int64_t offset) {
  std::string element;
  std::vector<std::string> extents = typeExtents(dest.type, element);
  size_t rank = extents.size();
  // Strides: unknown, but the innermost stays 1 for a contiguous source.
  std::string layout = ", strided<[";
  for (size_t d = 0; d < rank; ++d)
    layout += std::string(d ? ", " : "") +
              (d + 1 == rank && source.type.find("strided") == std::string::npos ? "1" : "?");
  layout += "], offset: ?>>";
  std::string dynamic = "memref<";
  for (size_t d = 0; d < rank; ++d)
    dynamic += "?x";
  dynamic += element + layout;
  std::string cast =
      e.op("memref.cast " + source.value + " : " + source.type + " to " + dynamic, "");
  std::string offsets, sizes, strides, windowType = "memref<";
  for (size_t d = 0; d < rank; ++d) {
    std::string sep = d ? ", " : "";
    offsets += sep + std::to_string(d == axis ? offset : 0);
    sizes +=
        sep +
        (extents[d] == "?"
             ? e.op("memref.dim " + dest.value + ", " + e.index(int64_t(d)) + " : " + dest.type, "")
             : extents[d]);
    strides += sep + "1";
    windowType += extents[d] + "x";
  }
  windowType += element + layout;
  source.value = e.op("memref.subview " + cast + "[" + offsets + "] [" + sizes + "] [" + strides +
                          "] : " + dynamic + " to " + windowType,
                      "");
  source.type = windowType;
}

/// Copies `from` into `to` over `from`'s extents; axis `axis` of `to` is
/// offset by `offset` (a concat's operand), or with `shiftSource`, of
/// `from`, whose window the copy reads over `to`'s extents (a split).
static void shiftedCopy(KernelEmitter &e, ValueRef from, ValueRef to,
                        unsigned axis, int64_t offset, bool shiftSource) {
  unsigned rank = static_cast<unsigned>(e.graph.shape(to).size());
  std::vector<std::string> plain = identityDims(rank), shifted = plain;
  GenericOperand dest = e.operand(to, affineMap(rank, plain));
  GenericOperand source = e.operand(from, affineMap(rank, plain));
  if (shiftSource) {
    windowOf(e, source, dest, axis, offset);
  } else {
    // The destination may be larger along `axis`: its extents are erased so
    // the verifier does not hold it to the loop range, which the source sets.
    if (offset)
      shifted[axis] += " + " + std::to_string(offset);
    dest.map = affineMap(rank, shifted);
    std::string dynamicType = "memref<";
    for (unsigned d = 0; d < rank; ++d)
      dynamicType += "?x";
    dynamicType += dest.type.substr(dest.type.rfind('x') + 1);
    dest.value = e.op("memref.cast " + dest.value + " : " + dest.type + " to " + dynamicType, "");
    dest.type = dynamicType;
  }
  e.generic(rank, std::vector<bool>(rank, false), {source}, {dest},
            [](const std::vector<std::string> &a) {
              return std::vector<std::string>{a[0]};
            });
}

static std::vector<std::string> indexVector(KernelEmitter &e, unsigned rank) {
  std::vector<std::string> at;
  for (unsigned i = 0; i < rank; ++i)
    at.push_back(e.op("linalg.index " + std::to_string(i), "index"));
  return at;
}

static std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + v[i];
  return s;
}

/// An `index` extent as an SSA value usable in regions.
static std::string extentValue(KernelEmitter &e, const Extent &x) {
  return x.isStatic() ? e.index(x.size) : x.ssa;
}

static std::string clampIndex(KernelEmitter &e, const std::string &i,
                              const std::string &extent) {
  std::string last = e.op("arith.subi " + extent + ", " + e.index(1), "index");
  std::string lo = e.op("arith.maxsi " + i + ", " + e.index(0), "index");
  return e.op("arith.minsi " + lo + ", " + last, "index");
}

static LogicalResult emitGather(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef data = graph.operands(node)[0], indices = graph.operands(node)[1];
  ValueRef y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(y).size());
  unsigned dataRank = static_cast<unsigned>(graph.shape(data).size());
  unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, 0), dataRank);
  unsigned indexRank = static_cast<unsigned>(graph.shape(indices).size());
  std::string extent = extentValue(e, e.extents(data)[axis]);
  std::vector<std::string> indexDims;
  for (unsigned i = 0; i < indexRank; ++i)
    indexDims.push_back(d(axis + i));
  std::string idType = storageType(graph.dtype(indices));
  e.generic(rank, std::vector<bool>(rank, false),
            {e.operand(indices, affineMap(rank, indexDims))},
            {e.operand(y, affineMap(rank, identityDims(rank)))},
            [&](const std::vector<std::string> &a) {
              std::vector<std::string> at = indexVector(e, rank);
              std::string i = e.op("arith.index_cast " + a[0] + " : " + idType +
                                       " to index",
                                   "");
              // Negative indices count from the end; others are clamped
              // (out-of-range indices are rejected by the reference).
              std::string neg = e.op("arith.cmpi slt, " + i + ", " + e.index(0), "index");
              std::string wrapped = e.op("arith.addi " + i + ", " + extent, "index");
              i = e.op("arith.select " + neg + ", " + wrapped + ", " + i, "index");
              std::vector<std::string> src(at.begin(), at.begin() + axis);
              src.push_back(clampIndex(e, i, extent));
              src.insert(src.end(), at.begin() + axis + indexRank, at.end());
              return std::vector<std::string>{e.op(
                  "memref.load " + e.argName(data) + "[" + join(src) + "]",
                  e.argType(data))};
            });
  return success();
}

static LogicalResult emitPad(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef x = graph.operands(node)[0], y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(y).size());
  std::span<const int64_t> pads = graph.intsAttr(*graph.findAttr(node, AttrName::Pads));
  std::string mode = "constant";
  if (const Attribute *a = graph.findAttr(node, AttrName::Mode))
    mode = graph.stringAttr(*a);
  DType dt = graph.dtype(x);
  double value = graph.getFloat(node, AttrName::Value, 0);
  std::vector<Extent> inShape = e.extents(x);
  e.generic(rank, std::vector<bool>(rank, false), {},
            {e.operand(y, affineMap(rank, identityDims(rank)))},
            [&](const std::vector<std::string> &) {
              std::vector<std::string> at = indexVector(e, rank), src;
              std::string inside = e.constant(1, "i1");
              for (unsigned i = 0; i < rank; ++i) {
                std::string extent = extentValue(e, inShape[i]);
                std::string p = e.op("arith.subi " + at[i] + ", " + e.index(pads[i]), "index");
                std::string lo = e.op("arith.cmpi sge, " + p + ", " + e.index(0), "index");
                std::string hi = e.op("arith.cmpi slt, " + p + ", " + extent, "index");
                inside = e.op("arith.andi " + inside + ", " + e.op("arith.andi " + lo + ", " + hi, "i1"), "i1");
                if (mode == "reflect") { // -p before the start, 2(n-1)-p past the end.
                  std::string neg = e.op("arith.subi " + e.index(0) + ", " + p, "index");
                  std::string twice = e.op("arith.muli " + e.op("arith.subi " + extent + ", " + e.index(1), "index") + ", " + e.index(2), "index");
                  std::string back = e.op("arith.subi " + twice + ", " + p, "index");
                  p = e.op("arith.select " + lo + ", " + p + ", " + neg, "index");
                  p = e.op("arith.select " + hi + ", " + p + ", " + back, "index");
                }
                src.push_back(clampIndex(e, p, extent));
              }
              std::string v = e.op("memref.load " + e.argName(x) + "[" + join(src) + "]",
                                   e.argType(x));
              if (mode != "constant")
                return std::vector<std::string>{v};
              std::string fill = e.constant(value, storageType(dt));
              return std::vector<std::string>{
                  e.op("arith.select " + inside + ", " + v + ", " + fill, storageType(dt))};
            });
  return success();
}

static LogicalResult emitWriteSlice(KernelEmitter &e, NodeId node) {
  const Graph &graph = e.graph;
  ValueRef dest = graph.operands(node)[0], src = graph.operands(node)[1];
  ValueRef y{node, 0};
  unsigned rank = static_cast<unsigned>(graph.shape(y).size());
  unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, 0), rank);
  Dim offset = graph.dimsAttr(*graph.findAttr(node, AttrName::Offset))[0];
  std::string start = offset.isStatic() ? e.index(offset.size())
                                        : e.symbolValue(offset.symbolId());
  std::string extent = extentValue(e, e.extents(src)[axis]);
  std::string id = affineMap(rank, identityDims(rank));
  std::string type = storageType(graph.dtype(y));
  e.generic(rank, std::vector<bool>(rank, false), {e.operand(dest, id)},
            {e.operand(y, id)}, [&](const std::vector<std::string> &a) {
              std::vector<std::string> at = indexVector(e, rank);
              std::string p = e.op("arith.subi " + at[axis] + ", " + start, "index");
              std::string lo = e.op("arith.cmpi sge, " + p + ", " + e.index(0), "index");
              std::string hi = e.op("arith.cmpi slt, " + p + ", " + extent, "index");
              std::string inside = e.op("arith.andi " + lo + ", " + hi, "i1");
              at[axis] = clampIndex(e, p, extent);
              std::string v = e.op("memref.load " + e.argName(src) + "[" + join(at) + "]",
                                   e.argType(src));
              return std::vector<std::string>{
                  e.op("arith.select " + inside + ", " + v + ", " + a[0], type)};
            });
  return success();
}

LogicalResult codegen::emitMovement(KernelEmitter &e, NodeId node, DiagnosticEngine &diag) {
  const Graph &graph = e.graph;
  auto operands = graph.operands(node);
  switch (graph.kind(node)) {
  case OpKind::Concat: {
    ValueRef y{node, 0};
    unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, 0),
                                   graph.shape(y).size());
    int64_t at = 0;
    for (ValueRef v : operands) {
      shiftedCopy(e, v, y, axis, at, /*shiftSource=*/false);
      at += graph.shape(v)[axis].size();
    }
    return success();
  }
  case OpKind::Split: {
    ValueRef x = operands[0];
    unsigned axis = *normalizeAxis(graph.getInt(node, AttrName::Axis, 0),
                                   graph.shape(x).size());
    int64_t at = 0;
    for (uint32_t r = 0; r < graph.numResults(node); ++r) {
      Dim part = graph.shape({node, r})[axis];
      if (!part.isStatic()) {
        diag.error(nodeLocation(graph.name(node)),
                   "split of a symbolic axis is not supported by the x86 code generator yet");
        return failure();
      }
      if (e.hasArg({node, r}))
        shiftedCopy(e, x, {node, r}, axis, at, /*shiftSource=*/true);
      at += part.size();
    }
    return success();
  }
  case OpKind::Gather:
    return emitGather(e, node);
  case OpKind::Pad:
    return emitPad(e, node);
  case OpKind::WriteSlice:
    return emitWriteSlice(e, node);
  case OpKind::Alloc: {
    ValueRef y{node, 0};
    std::string t = storageType(graph.dtype(y));
    e.fill(e.argName(y), e.argType(y), t, scalarLiteral(0, t));
    return success();
  }
  default: // copy, move
    shiftedCopy(e, operands[0], {node, 0}, 0, 0, false);
    return success();
  }
}
