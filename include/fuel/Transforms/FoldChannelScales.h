//===- FoldChannelScales.h - Input scales folded into conv weights *- C++ -*-===//
//
// A squeeze-and-excitation block scales each channel of an image by a value
// computed from the image, then convolves it (EfficientNet's projections):
// conv2d(x * s, w) with s of shape [N, C, 1, 1]. The product is a pass over
// the image; for one image the same convolution is conv2d(x, w * s), whose
// product is a pass over the weights. Before planning, fuelc rewrites the
// first into the second where s is the same for every image (N is 1, or a
// symbol planned at 1, an upper bound the runtime checks) and the weights
// are much the smaller (output channels times window taps under an eighth
// of the pixels per image: weights that are not constant are packed at
// every call), reusing the product's node for the weights' product.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_FOLDCHANNELSCALES_H
#define FUEL_TRANSFORMS_FOLDCHANNELSCALES_H

#include "fuel/IR/Graph.h"

#include <span>

namespace fuel {

/// Rewrites conv2d(mul(x, s), w, ...) into conv2d(x, mul(w, s), ...) in the
/// verified `graph` where the product has no other reader, the convolution
/// has one group, s is [N, C, 1, 1] (or [C, 1, 1]) over x's C channels with
/// N at most 1, all f32, and w much smaller than an image of x.
/// `symbolBounds[id]` is the largest extent symbol `id` takes (its planned
/// `--dim`). Returns the number rewritten.
unsigned foldChannelScales(Graph &graph, std::span<const int64_t> symbolBounds);

} // namespace fuel

#endif // FUEL_TRANSFORMS_FOLDCHANNELSCALES_H
