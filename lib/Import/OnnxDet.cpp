//===- OnnxDet.cpp - Det as a sum over permutations -----------------------===//
//
// The determinant of [..., M, M] matrices by the Leibniz formula: the sum
// over the M! permutations p of sign(p) * prod_i a[i][p(i)], elementwise
// over the batch. Exact up to rounding and with no pivoting to go wrong,
// it stays small for the M <= 4 the importer takes (24 products of four
// elements, which the fusion pass makes one kernel).
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <numeric>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
constexpr int64_t kMaxOrder = 4;

/// +1 or -1: the parity of the permutation's inversions.
int sign(const std::vector<int64_t> &perm) {
  int s = 1;
  for (size_t i = 0; i < perm.size(); ++i)
    for (size_t j = i + 1; j < perm.size(); ++j)
      if (perm[i] > perm[j])
        s = -s;
  return s;
}

bool det(Importer &im) {
  ShapeRef x = im.graph.shape(im.input(0));
  size_t rank = x.size();
  if (rank < 2 || !x[rank - 1].isStatic() || x[rank - 1] != x[rank - 2])
    return im.unsupported("the input must be square matrices [..., M, M] with a static M");
  int64_t m = x[rank - 1].size();
  if (m < 1 || m > kMaxOrder)
    return im.unsupported("matrices of order " + std::to_string(m) + " are not supported (1 to " +
                          std::to_string(kMaxOrder) + ")");
  Composer k(im);
  if (!k.floatInput())
    return false;
  std::vector<Dim> rows(x.begin(), x.end() - 2);
  rows.push_back(Dim::fixed(m * m));
  ValueRef flat = k.reshape(k.x, rows);
  int64_t axis = static_cast<int64_t>(rank - 2);
  std::vector<ValueRef> element(m * m);
  for (int64_t i = 0; i < m * m; ++i)
    element[i] = k.gather(flat, intTensor({i}, {}), axis);
  std::vector<int64_t> perm(m);
  std::iota(perm.begin(), perm.end(), 0);
  ValueRef sum;
  bool first = true;
  do {
    ValueRef term = element[perm[0]];
    for (int64_t i = 1; i < m; ++i)
      term = k.op(OpKind::Mul, {term, element[i * m + perm[i]]});
    if (first)
      sum = sign(perm) > 0 ? term : k.op(OpKind::Neg, {term});
    else
      sum = k.op(sign(perm) > 0 ? OpKind::Add : OpKind::Sub, {sum, term});
    first = false;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return k.finish(sum);
}
} // namespace

void onnximport::addDetHandlers(HandlerTable &table) { table.insert({{"Det", det}}); }
