//===- OnnxLosses.cpp - ONNX loss functions from IR ops -------------------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the latter is the
// former over log_softmax of the scores). The class picked by each target
// is selected with a one-hot mask (target == class index, broadcast over
// the class axis) and a sum over that axis, so no gather-by-element op is
// needed; weights are gathered per target; ignored targets weigh 0.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// The loss of `logProb` ([N, C, d...], log-probabilities) at `target`
/// ([N, d...]) with optional class `weights`, reduced as the node says,
/// bound to output 0.
bool negativeLogLikelihood(Composer &k, ValueRef logProb, ValueRef target,
                           std::optional<ValueRef> weights) {
  Importer &im = k.im;
  ShapeRef shape = im.graph.shape(logProb);
  DType index = im.graph.dtype(target);
  if (shape.size() < 2 || !shape[1].isStatic())
    return im.unsupported("the input must have a static class axis (axis 1)");
  if (index != DType::I64 && index != DType::I32)
    return im.unsupported("the target must be an int32 or int64 tensor");
  std::string reduction = im.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return im.unsupported("reduction='" + reduction + "' is not supported");

  // Class positions [C, 1, ..., 1], against targets unsqueezed at axis 1.
  ValueRef classes = k.constant(positions(shape[1].size(), shape.size() - 2, index));
  ValueRef oneHot = k.op(OpKind::Eq, {k.op(OpKind::Unsqueeze, {target}, [](Graph &g) {
                                        g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{1});
                                      }),
                                      classes});
  ValueRef picked = k.op(OpKind::ReduceSum, {k.op(OpKind::Where, {oneHot, logProb, k.c(0)})},
                         [](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{1}); });
  // The weight of each target: its class's weight, 0 where ignored.
  std::optional<ValueRef> weight;
  std::optional<ValueRef> kept;
  if (const onnx::AttributeProto *ignore = im.attr("ignore_index")) {
    kept = k.op(OpKind::Ne, {target, k.c(static_cast<double>(ignore->i()), index)});
    target = k.op(OpKind::Where, {*kept, target, k.c(0, index)});
  }
  if (weights)
    weight = k.op(OpKind::Gather, {*weights, target}, [](Graph &g) {
      g.addIntAttr(AttrName::Axis, 0);
    });
  if (kept)
    weight = weight ? k.op(OpKind::Where, {*kept, *weight, k.c(0)}) : k.cast(*kept, k.type);
  ValueRef loss = k.op(OpKind::Neg, {picked});
  if (weight)
    loss = k.op(OpKind::Mul, {loss, *weight});
  if (reduction == "none")
    return k.finish(loss);
  ValueRef total = k.op(OpKind::ReduceSum, {loss});
  if (reduction == "sum")
    return k.finish(total);
  // The mean divides by the sum of the applied weights (the count of kept
  // targets without class weights).
  if (!weight)
    return k.finish(k.op(OpKind::ReduceMean, {loss}));
  return k.finish(k.op(OpKind::Div, {total, k.op(OpKind::ReduceSum, {*weight})}));
}

bool nllLoss(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  std::optional<ValueRef> weights;
  if (im.hasInput(2))
    weights = im.input(2);
  return negativeLogLikelihood(k, k.x, im.input(1), weights);
}

/// NLL over log_softmax(scores, axis 1); output 1, when read, is that
/// log_softmax.
bool softmaxCrossEntropy(Importer &im) {
  Composer k(im);
  if (!k.floatInput())
    return false;
  ValueRef logProb = k.op(OpKind::LogSoftmax, {k.x}, [](Graph &g) {
    g.addIntAttr(AttrName::Axis, 1);
  });
  std::optional<ValueRef> weights;
  if (im.hasInput(2))
    weights = im.input(2);
  if (!negativeLogLikelihood(k, logProb, im.input(1), weights))
    return false;
  return !im.outputUsed(1) || k.finish(logProb, 1);
}
} // namespace

void onnximport::addLossHandlers(HandlerTable &table) {
  table.insert({{"NegativeLogLikelihoodLoss", nllLoss},
                {"SoftmaxCrossEntropyLoss", softmaxCrossEntropy}});
}
