//===- OnnxOptimizers.cpp - ONNX optimizer steps from IR ops --------------===//
//
// The optimizer ops of the ai.onnx.preview.training domain (version 1), one
// update step of n tensors by their definitions:
// - Adagrad(R, T, X..., G..., H...): h += g^2, x -= r / (1 + T * decay)
//   * g / (sqrt(h) + epsilon);
// - Momentum(R, T, X..., G..., V...): v = alpha * v + beta * g (beta 1 at
//   T = 0), x -= r * v (standard) or r * (g + alpha * v) (nesterov);
// - Adam(R, T, X..., G..., V..., H...): the first and second moments, bias
//   corrected for T > 0, then (1 - norm_coefficient_post) * x.
// Every g is g + norm_coefficient * x first. The step count T must be a
// constant: its branches are taken at import.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <cmath>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// The tensors one step updates and the step count; reports when the
/// inputs do not split into `groups` lists.
std::optional<std::pair<size_t, double>> readStep(Importer &im, size_t groups) {
  size_t count = im.numInputs() >= 2 ? (im.numInputs() - 2) / groups : 0;
  if (count == 0 || count * groups + 2 != im.numInputs()) {
    im.unsupported("expected R, T and " + std::to_string(groups) + " lists of tensors");
    return std::nullopt;
  }
  std::optional<double> t = constScalar(im, 1, "the step count T");
  if (!t)
    return std::nullopt;
  return std::pair{count, *t};
}

struct Step {
  Composer &k;
  ValueRef rate;
  double norm;

  ValueRef regularized(ValueRef x, ValueRef g) {
    return norm == 0 ? g : k.op(OpKind::Add, {g, k.op(OpKind::Mul, {x, k.c(norm)})});
  }
  ValueRef scaled(ValueRef v, double factor) { return k.op(OpKind::Mul, {v, k.c(factor)}); }
};

bool adagrad(Importer &im) {
  std::optional<std::pair<size_t, double>> step = readStep(im, 3);
  if (!step)
    return false;
  auto [n, t] = *step;
  Composer k(im);
  Step s{k, im.input(0), im.attrFloat("norm_coefficient", 0)};
  double epsilon = im.attrFloat("epsilon", 0), decay = im.attrFloat("decay_factor", 0);
  ValueRef rate = k.op(OpKind::Div, {s.rate, k.c(1 + t * decay)});
  for (size_t i = 0; i < n; ++i) {
    ValueRef x = im.input(2 + i), g = s.regularized(x, im.input(2 + n + i));
    ValueRef h = k.op(OpKind::Add, {im.input(2 + 2 * n + i), k.op(OpKind::Mul, {g, g})});
    ValueRef root = k.op(OpKind::Add, {k.op(OpKind::Sqrt, {h}), k.c(epsilon)});
    ValueRef update = k.op(OpKind::Div, {k.op(OpKind::Mul, {rate, g}), root});
    if (!k.finish(k.op(OpKind::Sub, {x, update}), i) || !k.finish(h, n + i))
      return false;
  }
  return true;
}

bool momentum(Importer &im) {
  std::optional<std::pair<size_t, double>> step = readStep(im, 3);
  if (!step)
    return false;
  auto [n, t] = *step;
  std::string mode = im.attrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return im.unsupported("mode '" + mode + "' is not supported");
  Composer k(im);
  Step s{k, im.input(0), im.attrFloat("norm_coefficient", 0)};
  double alpha = im.attrFloat("alpha", 0), beta = t > 0 ? im.attrFloat("beta", 0) : 1;
  for (size_t i = 0; i < n; ++i) {
    ValueRef x = im.input(2 + i), g = s.regularized(x, im.input(2 + n + i));
    ValueRef v = k.op(OpKind::Add, {s.scaled(im.input(2 + 2 * n + i), alpha), s.scaled(g, beta)});
    ValueRef direction = mode == "standard" ? v : k.op(OpKind::Add, {g, s.scaled(v, alpha)});
    ValueRef xNew = k.op(OpKind::Sub, {x, k.op(OpKind::Mul, {s.rate, direction})});
    if (!k.finish(xNew, i) || !k.finish(v, n + i))
      return false;
  }
  return true;
}

bool adam(Importer &im) {
  std::optional<std::pair<size_t, double>> step = readStep(im, 4);
  if (!step)
    return false;
  auto [n, t] = *step;
  Composer k(im);
  Step s{k, im.input(0), im.attrFloat("norm_coefficient", 0)};
  double alpha = im.attrFloat("alpha", 0.9f), beta = im.attrFloat("beta", 0.999f),
         epsilon = im.attrFloat("epsilon", 1e-6f), post = im.attrFloat("norm_coefficient_post", 0);
  double correction = t > 0 ? std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t)) : 1;
  ValueRef rate = s.scaled(s.rate, correction);
  for (size_t i = 0; i < n; ++i) {
    ValueRef x = im.input(2 + i), g = s.regularized(x, im.input(2 + n + i));
    ValueRef v =
        k.op(OpKind::Add, {s.scaled(im.input(2 + 2 * n + i), alpha), s.scaled(g, 1 - alpha)});
    ValueRef h = k.op(OpKind::Add, {s.scaled(im.input(2 + 3 * n + i), beta),
                                    s.scaled(k.op(OpKind::Mul, {g, g}), 1 - beta)});
    ValueRef root = k.op(OpKind::Add, {k.op(OpKind::Sqrt, {h}), k.c(epsilon)});
    ValueRef xNew = k.op(OpKind::Sub, {x, k.op(OpKind::Mul, {rate, k.op(OpKind::Div, {v, root})})});
    if (!k.finish(s.scaled(xNew, 1 - post), i) || !k.finish(v, n + i) || !k.finish(h, 2 * n + i))
      return false;
  }
  return true;
}
} // namespace

void onnximport::addOptimizerHandlers(HandlerTable &table) {
  std::string prefix = std::string(kTrainingDomain) + ".";
  table.insert(
      {{prefix + "Adagrad", adagrad}, {prefix + "Momentum", momentum}, {prefix + "Adam", adam}});
}
