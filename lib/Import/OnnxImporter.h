//===- OnnxImporter.h - ONNX model -> fuel Graph ----------------*- C++ -*-===//
//
// The importer walks the ONNX graph in node order (ONNX requires
// topological order), building IR nodes and inferring their types as it
// goes, so op handlers (OnnxOps.cpp) can use operand shapes and constant
// inputs. A node that cannot be imported is reported and its outputs marked
// missing; nodes reading them are skipped silently (one root cause, one
// diagnostic), and the import fails after listing every problem. Subgraphs
// (If branches, Loop and Scan bodies) are imported in place, once per
// unrolled iteration (inlineGraph; OnnxControlFlow.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_IMPORT_ONNXIMPORTER_H
#define FUEL_LIB_IMPORT_ONNXIMPORTER_H

#include "fuel/IR/Graph.h"
#include "fuel/Import/Onnx.h"
#include "fuel/Support/Diagnostics.h"
#include "fuel/Support/Expected.h"

#include "onnx.pb.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace fuel::onnximport {

/// A tensor whose value is known at import time (initializers, Constant).
struct KnownTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes; // Dense, little-endian, in `dtype`.
  /// The values as int64 / double (for shape inputs and folded constants).
  std::vector<int64_t> ints() const;
  std::vector<double> reals() const;
};

/// An integer tensor of rank <= 1 computed from symbolic extents (Shape of
/// a tensor with a symbolic batch, and arithmetic on it): each element a
/// Dim, possibly a product of symbols (`4*B`), or -1 as Dim::inferred().
/// It has no IR value: it can only become the shape of a Reshape, Expand,
/// ConstantOfShape or Resize.
struct SymbolicInts {
  DType dtype = DType::I64;
  bool scalar = false;
  std::vector<Dim> elements;
};

/// The newest default-domain opset the handlers know the signatures of
/// (OnnxOps.cpp reads the ones that changed since 11).
inline constexpr int64_t kMaxOnnxOpset = 21;
/// The domain of ONNX's optimizer ops (Adagrad, Adam, Momentum), version 1.
inline constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";

/// The most nodes the import of one model may run inside subgraphs (If
/// branches, unrolled Loop and Scan bodies, nested ones included): bounds
/// the time and memory a small file can ask for.
inline constexpr int64_t kMaxSubgraphNodes = int64_t(1) << 16;

/// A DequantizeLinear whose readers all multiply (MatMul, Gemm): kept as
/// its 8-bit input, scale and zero point, so that a product of two such
/// values runs in integers (OnnxQuantize.cpp). It becomes floats only when
/// a reader asks for its value.
struct Dequantized {
  ValueRef quantized, scale;
  std::optional<ValueRef> zeroPoint;
  unsigned axis = 0;             // Of the scale and zero point when they are vectors.
  std::optional<ValueRef> value; // The floats, once a reader needed them.
};

class Importer {
public:
  Importer(const onnx::ModelProto &model, std::string fileName,
           DiagnosticEngine &diag,
           const std::map<std::string, FrozenInput> &frozen);
  std::optional<Graph> run();

  //===--- For the op handlers -------------------------------------------===//
  Graph graph;
  int64_t opset = 0;         // Of the default domain; 0 when not imported.
  int64_t trainingOpset = 0; // Of kTrainingDomain; 0 when not imported.

  const onnx::NodeProto &current() const { return *node; }
  size_t numInputs() const;              // Present (non-empty) inputs count.
  bool hasInput(size_t i) const;         // Given and not "".
  ValueRef input(size_t i);              // Operand i as an IR value.
  const KnownTensor *constantInput(size_t i) const;
  /// Input `i` when it is a deferred DequantizeLinear (nullptr otherwise).
  const Dequantized *dequantizedInput(size_t i) const;
  /// Whether every reader of output `i` is one of `ops` (a graph output or
  /// a subgraph's read counts as another op).
  bool onlyReadBy(size_t i, std::span<const std::string_view> ops) const;
  const SymbolicInts *symbolicInput(size_t i) const;
  /// Input `i` as extents (a known or symbolic integer vector: -1 becomes
  /// Dim::inferred(), other values static); reports when it is neither.
  std::optional<std::vector<Dim>> shapeInput(size_t i, const char *what);
  bool outputUsed(size_t i) const;       // Read by a node or a graph output.

  const onnx::AttributeProto *attr(const std::string &name) const;
  int64_t attrInt(const std::string &name, int64_t dflt) const;
  float attrFloat(const std::string &name, float dflt) const;
  std::string attrString(const std::string &name, const std::string &dflt) const;
  std::vector<int64_t> attrInts(const std::string &name) const;

  /// Adds `kind` over `operands` (with `setAttrs` adding its attributes),
  /// infers its types; the node is named after the ONNX node's first output
  /// plus `suffix`. Reports and returns nullopt if inference fails.
  std::optional<NodeId> add(OpKind kind, const std::vector<ValueRef> &operands,
                            const std::function<void(Graph &)> &setAttrs = {},
                            const std::string &suffix = "", unsigned results = 1);
  /// A constant node holding `t`.
  ValueRef addConstant(const KnownTensor &t, const std::string &suffix);
  /// Binds ONNX output `i` of the current node to `value`.
  void bind(size_t i, ValueRef value);
  /// Binds output 0 to the deferred dequantization `d`.
  void bindDequantized(Dequantized d);
  /// Binds output 0 to a new constant holding `t`, known to later nodes
  /// (a Reshape reading a Constant or a folded Shape).
  void bindConstant(KnownTensor t);
  /// Binds output 0 to integers computed from symbolic extents; stays a
  /// constant when every element is static.
  void bindSymbolic(SymbolicInts v);
  /// Reports that the current node cannot be imported, saying why.
  bool unsupported(const std::string &why);

  /// A value bound to a subgraph's input or produced as its output; `known`
  /// when its value is known at import.
  struct Bound {
    ValueRef value;
    std::optional<KnownTensor> known;
  };
  /// Input `i` of the current node as a Bound.
  Bound boundInput(size_t i) const;
  /// Binds output `i` of the current node to `b` (known to later nodes
  /// when `b` is).
  void bindBound(size_t i, const Bound &b);
  /// Imports the nodes of `body` (an If branch, a Loop or Scan body) in
  /// place of the current node, its inputs bound to `inputs` and the outer
  /// graph's values visible; the IR nodes' names get `tag` appended (one
  /// per unrolled iteration). Returns the body's outputs, or nullopt after
  /// reporting (the body's nodes report their own problems).
  std::optional<std::vector<Bound>> inlineGraph(const onnx::GraphProto &body,
                                                const std::vector<Bound> &inputs,
                                                const std::string &tag);
  /// How many more subgraph nodes the import may run (kMaxSubgraphNodes).
  int64_t subgraphNodesLeft() const { return kMaxSubgraphNodes - subgraphNodes; }

private:
  void importNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes);
  /// Counts the readers of every value, in subgraphs too.
  void countUses(const onnx::GraphProto &g, bool subgraph = false);
  bool declareInput(const onnx::ValueInfoProto &info);
  /// A named constant known at import (initializers, frozen inputs).
  void addKnown(const std::string &name, KnownTensor tensor);

  const onnx::ModelProto &model;
  std::string fileName;
  DiagnosticEngine &diag;
  const std::map<std::string, FrozenInput> &frozen;
  const onnx::NodeProto *node = nullptr;
  std::map<std::string, ValueRef> values;
  std::map<std::string, KnownTensor> known;
  std::map<std::string, SymbolicInts> symbolic;
  std::map<std::string, int> uses; // ONNX value name -> readers.
  // ONNX value name -> the op types reading it ("" for graph outputs and
  // reads inside subgraphs).
  std::map<std::string, std::set<std::string>> readerOps;
  std::map<std::string, Dequantized> dequantized;
  std::map<std::string, bool> missing;
  unsigned errors = 0;
  bool defaultDomain = false;
  std::string scope;       // Appended to IR node names inside subgraphs.
  unsigned inlineDepth = 0; // Of nested subgraphs, bounded.
  int64_t subgraphNodes = 0; // Imported inside subgraphs, bounded.
};

/// `d`'s floats, (quantized - zeroPoint) * scale, computed by ops named
/// after the current node plus `tag` (OnnxQuantize.cpp).
ValueRef dequantize(Importer &im, const Dequantized &d, const std::string &tag);

/// The dtype of an ONNX element type, or nullopt for those fuelc lacks.
std::optional<DType> dtypeOfOnnx(int64_t onnxType);

/// Decodes a TensorProto; false with `why` for what fuelc cannot hold.
Expected<KnownTensor> decodeTensor(const onnx::TensorProto &t);

/// Imports the current node of `im` (OnnxOps.cpp); false after reporting.
bool importOp(Importer &im);

/// Computes the current node's output when it is integer shape arithmetic
/// over known tensors (OnnxFold.cpp); false to import it as ops instead.
bool foldConstant(Importer &im);

} // namespace fuel::onnximport

#endif // FUEL_LIB_IMPORT_ONNXIMPORTER_H
