//===- DistributePooling.h - Pooling of a concat, per part ------*- C++ -*-===//
//
// A max pooling works on each channel alone, so pooling a concat of images
// along their channels is the concat of each part's pooling. SqueezeNet's
// fire modules end in such a concat, and a max pooling follows every
// second one: pooled part by part, each part's pooling reads the result of
// one convolution, which planning then fuses with it (pooled convolutions,
// PoolFusion.h), so the unpooled images are never written.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_TRANSFORMS_DISTRIBUTEPOOLING_H
#define FUEL_TRANSFORMS_DISTRIBUTEPOOLING_H

#include "fuel/IR/Graph.h"

namespace fuel {

/// Rewrites max_pool2d(concat(x0, ..., xn, axis 1)) into
/// concat(max_pool2d(x0), ..., max_pool2d(xn), axis 1) in the verified
/// `graph` where the concat joins NCHW images, only the pooling reads it,
/// the pooling is not a graph output, and some part is the result of a
/// convolution (and its activation) nothing else reads. The pooling's node
/// pools the first part and the concat's node joins the poolings; the other
/// parts' poolings are new nodes named `<pooling>.part<i>`. Returns the
/// number rewritten.
unsigned distributePooling(Graph &graph);

} // namespace fuel

#endif // FUEL_TRANSFORMS_DISTRIBUTEPOOLING_H
