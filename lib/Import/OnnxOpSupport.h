//===- OnnxOpSupport.h - What the ONNX op handlers share --------*- C++ -*-===//
//
// The op handlers are split by kind (OnnxOps.cpp: ops with an IR
// equivalent and the shape ops; OnnxActivations.cpp: elementwise functions
// built from IR ops; OnnxLosses.cpp: the loss functions; OnnxTensorOps.cpp:
// indexing and tensor-building ops; OnnxResize.cpp: Resize;
// OnnxConvTranspose.cpp: ConvTranspose; OnnxEinsum.cpp: Einsum;
// OnnxWindowed.cpp: convolution and pooling; OnnxQuantize.cpp: the linear
// quantization ops; OnnxNormalizations.cpp: the normalizations;
// OnnxRecurrent.cpp: RNN, GRU, LSTM; OnnxOptimizers.cpp: the training
// domain's optimizer steps; OnnxScatter.cpp: scatters and GatherND;
// OnnxGridSample.cpp: GridSample; OnnxStaticSelect.cpp: Compress,
// ReverseSequence and MaxUnpool of constant selections; OnnxDet.cpp: Det;
// OnnxSpectral.cpp: DFT, STFT, MelWeightMatrix; OnnxControlFlow.cpp: If,
// Loop and Scan resolved at import).
// They share the helpers here and the Composer, which builds one ONNX op
// from several IR ops.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_IMPORT_ONNXOPSUPPORT_H
#define FUEL_LIB_IMPORT_ONNXOPSUPPORT_H

#include "OnnxImporter.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuel::onnximport {

using Handler = bool (*)(Importer &);
using HandlerTable = std::map<std::string, Handler>;

/// Registers the handlers of OnnxActivations.cpp and OnnxLosses.cpp.
void addActivationHandlers(HandlerTable &table);
void addLossHandlers(HandlerTable &table);
void addTensorHandlers(HandlerTable &table);
void addResizeHandlers(HandlerTable &table);
void addConvTransposeHandlers(HandlerTable &table);
void addEinsumHandlers(HandlerTable &table);
void addWindowedHandlers(HandlerTable &table);
void addQuantizeHandlers(HandlerTable &table);
void addNormalizationHandlers(HandlerTable &table);
void addRecurrentHandlers(HandlerTable &table);
void addScatterHandlers(HandlerTable &table);
void addGridSampleHandlers(HandlerTable &table);
void addRoiAlignHandlers(HandlerTable &table);
void addStaticSelectHandlers(HandlerTable &table);
void addDetHandlers(HandlerTable &table);
void addSpectralHandlers(HandlerTable &table);
void addControlFlowHandlers(HandlerTable &table);
/// Registers the optimizers under "ai.onnx.preview.training.<op>".
void addOptimizerHandlers(HandlerTable &table);

/// `kind` over `operands`, bound to the node's output 0.
bool emit(Importer &im, OpKind kind, const std::vector<ValueRef> &operands,
          const std::function<void(Graph &)> &attrs = {});
/// One IR op over all of the node's inputs, bound to its output 0.
bool direct(Importer &im, OpKind kind, const std::function<void(Graph &)> &attrs = {});
/// A rank-0 tensor holding `value` in `dtype` (rounded as a cast would).
KnownTensor scalar(double value, DType dtype);
/// The most elements of a constant the importer builds itself (a window,
/// an identity matrix): bounds the memory and time a small model can ask
/// for (16 MiB of f32).
inline constexpr int64_t kMaxBuiltElements = int64_t(1) << 22;
/// Appends `value` to `t` as one more element of its dtype (rounded as a
/// cast would); builds large constants without an allocation per element.
void appendScalar(KnownTensor &t, double value);
/// `values` as an integer (or bool) tensor of `shape`.
KnownTensor intTensor(const std::vector<int64_t> &values, std::vector<int64_t> shape,
                      DType dtype = DType::I64);
/// The integers 0..n-1 in `dtype`, shaped [n] followed by `trailing` unit
/// axes: positions along an axis, to compare indices with (one-hot masks).
KnownTensor positions(int64_t n, size_t trailing, DType dtype);
/// A constant input (a shape, axes, pads, scales); reports when it is not,
/// naming the input.
const KnownTensor *constInts(Importer &im, size_t i, const char *what);
/// The one value of constant input `i` (a scalar or a 1-element tensor);
/// reports, naming it as `what`, when it is not constant or not one value.
std::optional<double> constScalar(Importer &im, size_t i, const char *what);
/// Axes from the `axes` attribute (older opsets) or input `inputIndex`.
std::optional<std::vector<int64_t>> axesOf(Importer &im, size_t inputIndex);

class Composer;
/// MatMul (`transB` false) or Gemm's product of inputs 0 and 1 computed in
/// integers when both are deferred DequantizeLinears whose product
/// rescales to floats (per-tensor scales, b's also per column): the 8-bit
/// product, its zero-point terms, then one scale (OnnxQuantize.cpp).
/// nullopt when the inputs are not such a pair.
std::optional<ValueRef> quantizedProduct(Importer &im, bool transB);

/// Conv's convolution of inputs 0 and 1 computed in integers when both are
/// deferred DequantizeLinears of a 2-D convolution whose result rescales to
/// floats (a per-tensor image scale, weight scales per tensor or per output
/// channel, weight zero points 0): the 8-bit convolution, its zero-point
/// term, one scale, the bias (OnnxQuantize.cpp). nullopt when the inputs
/// are not such a pair.
std::optional<ValueRef> quantizedConv(Importer &im);

/// A Transpose (`perm`, empty: reversed) of a deferred DequantizeLinear read
/// by products alone, deferred in turn (OnnxQuantize.cpp); false when the
/// input is not such a value.
bool deferTranspose(Importer &im, const std::vector<int64_t> &perm);

/// Conv2D, MaxPool2D or AvgPool2D over `operands` (the input first, rank 3
/// to 5) with the current node's window attributes (kernel_shape, strides,
/// pads or auto_pad, dilations, group, ceil_mode, count_include_pad):
/// 1-D windows run as 2-D ones of height 1, 3-D ones as several 2-D ones,
/// and pooling pads wider than half the window as an explicit pad
/// (OnnxWindowed.cpp). A convolution's pads become an explicit pad of
/// `convPadValue` when it is given (an 8-bit image's zero point). Fails the
/// composer after reporting.
ValueRef addWindowed(Composer &k, OpKind kind, std::vector<ValueRef> operands,
                     std::optional<double> convPadValue = std::nullopt);
/// A 3-D convolution of `operands` (input, weights, optional bias; static
/// extents) with unit strides, no padding, `dilations` and the node's
/// `group` attribute (a transposed convolution, once its input is spread).
ValueRef convolve3D(Composer &k, std::vector<ValueRef> operands, std::vector<int64_t> dilations);

/// Builds an ONNX op out of several IR ops on the node's input 0: each step
/// names its node after the output plus a suffix; a failed step (reported
/// by the Importer) fails the rest.
class Composer {
public:
  /// On the node's input 0 (if it has one: a Loop's trip count is optional).
  explicit Composer(Importer &im)
      : im(im), x(im.hasInput(0) ? im.input(0) : ValueRef{}),
        type(im.hasInput(0) ? im.graph.dtype(x) : DType::F32) {}
  /// On `x`, its ops' names tagged with `tag` (for ops built on behalf of
  /// an earlier node while the current one reads its value).
  Composer(Importer &im, ValueRef x, std::string tag)
      : im(im), x(x), type(im.graph.dtype(x)), tag(std::move(tag)) {}

  Importer &im;
  ValueRef x;
  DType type;

  /// A scalar constant in x's dtype, or in `dtype`.
  ValueRef c(double value) { return c(value, type); }
  ValueRef c(double value, DType dtype) { return constant(scalar(value, dtype)); }
  ValueRef constant(const KnownTensor &t) {
    return im.addConstant(t, tag + "." + std::to_string(next++));
  }
  ValueRef op(OpKind kind, const std::vector<ValueRef> &operands,
              const std::function<void(Graph &)> &attrs = {}) {
    return add(kind, operands, attrs, tag + "." + std::to_string(next++));
  }
  /// The op the ONNX node mainly is, named as the node's output itself:
  /// plans and profiles show the model's names. Only the first such op
  /// takes the name (a 3-D pooling is two 2-D ones); later ones are numbered.
  ValueRef mainOp(OpKind kind, const std::vector<ValueRef> &operands,
                  const std::function<void(Graph &)> &attrs = {}) {
    if (named)
      return op(kind, operands, attrs);
    named = true;
    return add(kind, operands, attrs, "");
  }
  ValueRef cast(ValueRef v, DType to) {
    return op(OpKind::Cast, {v}, [&](Graph &g) { g.addDTypeAttr(AttrName::To, to); });
  }
  ValueRef reshape(ValueRef v, const std::vector<Dim> &to) {
    return op(OpKind::Reshape, {v}, [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, to); });
  }
  ValueRef transpose(ValueRef v, const std::vector<int64_t> &perm) {
    return op(OpKind::Transpose, {v}, [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); });
  }
  ValueRef unsqueeze(ValueRef v, const std::vector<int64_t> &axes) {
    return op(OpKind::Unsqueeze, {v}, [&](Graph &g) { g.addIntsAttr(AttrName::Axes, axes); });
  }
  /// The slice [start, end) of `v` along `axis`.
  ValueRef slice(ValueRef v, int64_t axis, int64_t start, int64_t end) {
    return op(OpKind::Slice, {v}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Starts, std::vector<int64_t>{start});
      g.addIntsAttr(AttrName::Ends, std::vector<int64_t>{end});
      g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{axis});
    });
  }
  /// `v` at the positions `indices` along `axis` (known at import).
  ValueRef gather(ValueRef v, const KnownTensor &indices, int64_t axis) {
    return op(OpKind::Gather, {v, constant(indices)},
              [&](Graph &g) { g.addIntAttr(AttrName::Axis, axis); });
  }
  ValueRef reduce(OpKind kind, ValueRef v, const std::vector<int64_t> &axes, bool keepDims) {
    return op(kind, {v}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Axes, axes);
      g.addBoolAttr(AttrName::KeepDims, keepDims);
    });
  }
  /// Integer indices into `n` positions, negative ones counted from the end.
  ValueRef wrapNegative(ValueRef index, int64_t n, DType dtype) {
    ValueRef negative = op(OpKind::Lt, {index, c(0, dtype)});
    ValueRef wrapped = op(OpKind::Add, {index, c(static_cast<double>(n), dtype)});
    return op(OpKind::Where, {negative, wrapped, index});
  }
  /// Binds `value` as the node's output `i`, once every step succeeded.
  bool finish(ValueRef value, size_t i = 0) {
    if (ok)
      im.bind(i, value);
    return ok;
  }
  /// Whether a step failed (and was reported).
  bool failed() const { return !ok; }
  /// Fails the rest, after a problem the caller reported.
  void markFailed() { ok = false; }
  /// Activations are defined on floats only.
  bool floatInput() { return isFloat(type) || im.unsupported("the input must be a float tensor"); }

private:
  ValueRef add(OpKind kind, const std::vector<ValueRef> &operands,
               const std::function<void(Graph &)> &attrs, const std::string &suffix) {
    if (!ok)
      return x;
    std::optional<NodeId> n = im.add(kind, operands, attrs, suffix);
    ok = n.has_value();
    return ok ? ValueRef{*n, 0} : x;
  }

  std::string tag;
  unsigned next = 0;
  bool ok = true;
  bool named = false; // Whether mainOp named an op after the node.
};

} // namespace fuel::onnximport

#endif // FUEL_LIB_IMPORT_ONNXOPSUPPORT_H
