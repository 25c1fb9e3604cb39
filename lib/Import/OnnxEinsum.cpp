//===- OnnxEinsum.cpp - Einsum as sums, transposes and matrix products ----===//
//
// Einsum (opset 12) folds its operands left to right, two at a time: labels
// of one operand that nothing later needs are summed away first; then the
// labels both share are batch axes (kept) or contracted (summed by the
// product), the others free; each operand is transposed to
// [batch, free, contracted] (the right one to [batch, contracted, free]),
// its groups merged by a reshape (symbolic extents into their product), and
// a batched matmul contracts them. The
// last term is summed and transposed to the output's labels. An ellipsis
// stands for the same trailing-aligned axes in every operand (broadcast by
// the products). A label repeated within one operand (a diagonal) is
// taken first: a product with an identity mask and a sum over one of the
// two axes.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
/// An operand or intermediate result: its value and the label of each axis.
struct Term {
  ValueRef value;
  std::string labels;
};

class EinsumImport {
public:
  explicit EinsumImport(Importer &im) : im(im), k(im) {}

  bool run() {
    std::vector<std::string> operands;
    std::string output;
    if (!parse(operands, output))
      return false;
    std::vector<Term> terms;
    for (size_t i = 0; i < operands.size() && !k.failed(); ++i)
      terms.push_back(diagonal({im.input(i), operands[i]}));
    Term result = terms[0];
    for (size_t i = 1; i < terms.size() && !k.failed(); ++i) {
      std::string later = output;
      for (size_t j = i + 1; j < terms.size(); ++j)
        later += terms[j].labels;
      result = contract(result, terms[i], later);
    }
    result = sumAway(result, output);
    return k.finish(transpose(result, output).value);
  }

private:
  /// The equation's operand and output labels, with each ellipsis spelled
  /// as digits ('0' the last axis it covers); an implicit output is the
  /// ellipsis then the labels used once, in alphabetical order.
  bool parse(std::vector<std::string> &operands, std::string &output) {
    std::string equation;
    for (char c : im.attrString("equation", ""))
      if (c != ' ')
        equation += c;
    size_t arrow = equation.find("->");
    std::string left = equation.substr(0, arrow);
    for (size_t start = 0;;) {
      size_t comma = left.find(',', start);
      operands.push_back(left.substr(start, comma - start));
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    if (operands.size() != im.numInputs())
      return im.unsupported("the equation '" + equation + "' has " +
                            std::to_string(operands.size()) + " operands, the node " +
                            std::to_string(im.numInputs()) + " inputs");
    size_t ellipsisRank = 0;
    for (size_t i = 0; i < operands.size(); ++i) {
      size_t rank = im.graph.shape(im.input(i)).size();
      if (!spellEllipsis(operands[i], rank, ellipsisRank, "operand " + std::to_string(i)))
        return false;
    }
    if (arrow != std::string::npos) {
      output = equation.substr(arrow + 2);
      return spellEllipsis(output, std::string::npos, ellipsisRank, "the output");
    }
    std::map<char, int> uses;
    for (const std::string &o : operands)
      for (char c : o)
        ++uses[c];
    for (size_t d = ellipsisRank; d-- > 0;)
      output += static_cast<char>('0' + d);
    for (const auto &[c, n] : uses)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c)))
        output += c;
    return true;
  }

  /// Replaces "..." in `labels` by the digits of the axes it covers (all
  /// of `rank` the letters leave; for the output, the operands' widest).
  bool spellEllipsis(std::string &labels, size_t rank, size_t &widest,
                     const std::string &what) {
    size_t at = labels.find("...");
    std::string letters = labels;
    if (at != std::string::npos)
      letters.erase(at, 3);
    for (char c : letters)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return im.unsupported(what + " of the equation has the label '" + std::string(1, c) +
                              "' (labels are letters, with at most one '...')");
    size_t covered = rank == std::string::npos ? widest : rank - std::min(rank, letters.size());
    if (at == std::string::npos) {
      if (rank != std::string::npos && letters.size() != rank)
        return im.unsupported(what + " of the equation has " +
                              std::to_string(letters.size()) + " labels for rank " +
                              std::to_string(rank));
      return true;
    }
    if (rank != std::string::npos && letters.size() > rank)
      return im.unsupported(what + " of the equation has more labels than its rank " +
                            std::to_string(rank));
    widest = std::max(widest, covered);
    std::string digits;
    for (size_t d = covered; d-- > 0;)
      digits += static_cast<char>('0' + d);
    labels = letters.substr(0, at) + digits + letters.substr(at);
    return true;
  }

  /// `t` with each label it repeats kept once: the diagonal, taken as a
  /// product with an identity mask over the two axes and a sum over the
  /// second (their extents must be one static n).
  Term diagonal(Term t) {
    for (size_t j = 1; j < t.labels.size(); ++j) {
      size_t i = t.labels.find(t.labels[j]);
      if (i == j)
        continue;
      std::vector<Dim> shape = shapeOf(t.value);
      if (!shape[i].isStatic() || shape[i] != shape[j] || shape[i].size() > 4096) {
        (void)im.unsupported("a repeated label's axes (a diagonal) must have one static extent "
                             "of at most 4096");
        k.markFailed();
        return t;
      }
      int64_t n = shape[i].size();
      KnownTensor eye{k.type, std::vector<int64_t>(shape.size(), 1), {}};
      eye.shape[i] = eye.shape[j] = n;
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < n; ++b)
          appendScalar(eye, a == b ? 1 : 0);
      ValueRef masked = k.op(OpKind::Mul, {t.value, k.constant(eye)});
      t = {k.reduce(OpKind::ReduceSum, masked, {static_cast<int64_t>(j)}, false),
           t.labels.substr(0, j) + t.labels.substr(j + 1)};
      --j;
    }
    return t;
  }

  std::vector<Dim> shapeOf(ValueRef v) {
    ShapeRef s = im.graph.shape(v); // Copied: adding nodes moves the shapes.
    return {s.begin(), s.end()};
  }

  /// `t` with the axes whose labels `keep` lacks summed away.
  Term sumAway(const Term &t, const std::string &keep) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t d = 0; d < t.labels.size(); ++d) {
      if (keep.find(t.labels[d]) == std::string::npos)
        axes.push_back(static_cast<int64_t>(d));
      else
        kept += t.labels[d];
    }
    if (axes.empty())
      return t;
    ValueRef v = k.op(OpKind::ReduceSum, {t.value}, [&](Graph &g) {
      g.addIntsAttr(AttrName::Axes, axes);
      g.addBoolAttr(AttrName::KeepDims, false);
    });
    return {v, kept};
  }

  /// `t` with its axes in the order of `labels` (a permutation of its own).
  Term transpose(const Term &t, const std::string &labels) {
    if (t.labels == labels)
      return t;
    std::vector<int64_t> perm;
    for (char c : labels)
      perm.push_back(static_cast<int64_t>(t.labels.find(c)));
    return {k.op(OpKind::Transpose, {t.value},
                 [&](Graph &g) { g.addIntsAttr(AttrName::Perm, perm); }),
            labels};
  }

  /// One extent for the axes `from` to `to` of `shape`: their product (a
  /// derived symbol where symbolic), nullopt if it overflows.
  std::optional<Dim> merged(const std::vector<Dim> &shape, size_t from, size_t to) {
    SymbolProduct product;
    for (size_t d = from; d < to; ++d) {
      SymbolProduct p = im.graph.symbols().expand(shape[d]);
      if (p.factor != 0 && product.factor > kMaxElements / p.factor)
        return std::nullopt;
      product.factor *= p.factor;
      product.symbols.insert(product.symbols.end(), p.symbols.begin(), p.symbols.end());
    }
    if (product.factor == 0)
      return Dim::fixed(0);
    std::sort(product.symbols.begin(), product.symbols.end());
    return im.graph.symbols().product(product);
  }

  /// `t` (transposed to [batch, g1, g2]) reshaped to [batch, |g1|, |g2|].
  std::optional<ValueRef> group(const Term &t, size_t batch, size_t first) {
    std::vector<Dim> shape = shapeOf(t.value);
    std::vector<Dim> target(shape.begin(), shape.begin() + batch);
    std::optional<Dim> a = merged(shape, batch, batch + first);
    std::optional<Dim> b = merged(shape, batch + first, shape.size());
    if (!a || !b) {
      (void)im.unsupported("the product of the extents of an operand's axes overflows");
      return std::nullopt;
    }
    target.push_back(*a);
    target.push_back(*b);
    return k.op(OpKind::Reshape, {t.value},
                [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, target); });
  }

  /// The product of `a` and `b` over the labels they share that `later`
  /// (the output and the operands still to come) does not need.
  Term contract(Term a, Term b, const std::string &later) {
    a = sumAway(a, later + b.labels);
    b = sumAway(b, later + a.labels);
    std::string batch, aFree, bFree, summed;
    for (char c : a.labels) {
      bool shared = b.labels.find(c) != std::string::npos;
      bool needed = later.find(c) != std::string::npos;
      (shared ? (needed ? batch : summed) : aFree) += c;
    }
    for (char c : b.labels)
      if (a.labels.find(c) == std::string::npos)
        bFree += c;
    // Extents by label, before the transposes.
    std::map<char, Dim> aExtent, bExtent;
    std::vector<Dim> aShape = shapeOf(a.value), bShape = shapeOf(b.value);
    for (size_t d = 0; d < a.labels.size(); ++d)
      aExtent.emplace(a.labels[d], aShape[d]);
    for (size_t d = 0; d < b.labels.size(); ++d)
      bExtent.emplace(b.labels[d], bShape[d]);
    a = transpose(a, batch + aFree + summed);
    b = transpose(b, batch + summed + bFree);
    std::optional<ValueRef> left = group(a, batch.size(), aFree.size());
    std::optional<ValueRef> right = left ? group(b, batch.size(), summed.size()) : left;
    if (!left || !right) {
      k.markFailed();
      return a;
    }
    ValueRef product = k.op(OpKind::MatMul, {*left, *right});
    // Back to one axis per label: batch (broadcast), a's free, b's free.
    std::vector<Dim> shape;
    for (char c : batch) {
      Dim da = aExtent.at(c), db = bExtent.at(c);
      shape.push_back(da.isStatic() && da.size() == 1 ? db : da);
    }
    for (char c : aFree)
      shape.push_back(aExtent.at(c));
    for (char c : bFree)
      shape.push_back(bExtent.at(c));
    ValueRef v = k.op(OpKind::Reshape, {product},
                      [&](Graph &g) { g.addDimsAttr(AttrName::ShapeAttr, shape); });
    return {v, batch + aFree + bFree};
  }

  Importer &im;
  Composer k;
};

bool einsum(Importer &im) { return EinsumImport(im).run(); }
} // namespace

void onnximport::addEinsumHandlers(HandlerTable &table) {
  table.insert({{"Einsum", einsum}});
}
