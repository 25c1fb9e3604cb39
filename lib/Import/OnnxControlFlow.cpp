//===- OnnxControlFlow.cpp - If, Loop and Scan, resolved at import --------===//
//
// fuelc plans static dataflow graphs, so control flow is resolved at
// import. An If whose condition is known (a constant, or an input frozen
// with --freeze) is replaced by the branch it takes. A Loop whose trip
// count and condition are known, and a Scan over a sequence of static
// length, are unrolled: the body is imported once per iteration with that
// iteration's values bound (the iteration number as a constant, so shape
// arithmetic on it folds, and the condition the body computes must fold
// too); the per-iteration scan outputs are stacked. Unrolling is bounded
// (4096 iterations; 2^16 subgraph nodes per model, nested loops included).
// Anything else is a diagnostic saying what would make the node compile.
//
//===----------------------------------------------------------------------===//

#include "OnnxOpSupport.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::onnximport;

namespace {
using Bound = Importer::Bound;

constexpr int64_t kMaxIterations = 4096;

const onnx::GraphProto *graphAttr(Importer &im, const char *name) {
  const onnx::AttributeProto *a = im.attr(name);
  if (!a || !a->has_g()) {
    im.unsupported(std::string("the '") + name + "' subgraph is missing");
    return nullptr;
  }
  return &a->g();
}

/// Whether `g` (or a subgraph of it) reads the value `name`.
bool reads(const onnx::GraphProto &g, const std::string &name) {
  for (const onnx::NodeProto &n : g.node()) {
    if (std::find(n.input().begin(), n.input().end(), name) != n.input().end())
      return true;
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.has_g() && reads(a.g(), name))
        return true;
  }
  return false;
}

/// The one value of a constant input the unrolling depends on; reports
/// what would make the node compile when it is not constant.
std::optional<double> knownScalar(Importer &im, size_t i, const char *what) {
  if (!im.constantInput(i)) {
    im.unsupported(std::string(what) + " (input " + std::to_string(i) + ", '" +
                   im.current().input(static_cast<int>(i)) +
                   "') must be a constant: fuelc resolves control flow at compile time (an "
                   "initializer, or an input frozen with --freeze)");
    return std::nullopt;
  }
  return constScalar(im, i, what);
}

/// Whether unrolling `iterations` in all, `done` of them already, stays
/// within the iteration bound and the import's subgraph node budget (which
/// nested loops share; see Importer).
bool withinBudget(Importer &im, const onnx::GraphProto &body, int64_t iterations,
                  int64_t done = 0) {
  if (iterations <= kMaxIterations &&
      (iterations - done) * std::max(body.node_size(), 1) <= im.subgraphNodesLeft())
    return true;
  return im.unsupported("unrolling runs more than " + std::to_string(kMaxIterations) +
                        " iterations or imports more than 2^16 subgraph nodes in all");
}

/// A constant bound to a body input, created only when the body reads it.
Bound constantInput(Importer &im, const onnx::GraphProto &body, int input, KnownTensor value,
                    const std::string &suffix) {
  if (!reads(body, body.input(input).name()))
    return {ValueRef{}, std::nullopt};
  return {im.addConstant(value, suffix), std::move(value)};
}

/// `parts` stacked along a new axis `axis` (counted in the parts' rank + 1).
ValueRef stack(Composer &k, const std::vector<Bound> &parts, int64_t axis) {
  std::vector<ValueRef> grown;
  for (const Bound &p : parts)
    grown.push_back(k.unsqueeze(p.value, {axis}));
  if (grown.size() == 1)
    return grown[0];
  return k.op(OpKind::Concat, grown, [&](Graph &g) { g.addIntAttr(AttrName::Axis, axis); });
}

ValueRef squeezed(Composer &k, ValueRef v, int64_t axis) {
  return k.op(OpKind::Squeeze, {v},
              [&](Graph &g) { g.addIntsAttr(AttrName::Axes, std::vector<int64_t>{axis}); });
}

bool ifOp(Importer &im) {
  std::optional<double> condition = knownScalar(im, 0, "the condition");
  if (!condition)
    return false;
  bool taken = *condition != 0;
  const onnx::GraphProto *branch = graphAttr(im, taken ? "then_branch" : "else_branch");
  if (!branch)
    return false;
  std::optional<std::vector<Bound>> outputs =
      im.inlineGraph(*branch, {}, im.current().output(0) + (taken ? ".then" : ".else"));
  if (!outputs)
    return false;
  if (outputs->size() != static_cast<size_t>(im.current().output_size()))
    return im.unsupported("the branch has " + std::to_string(outputs->size()) +
                          " outputs, the node " + std::to_string(im.current().output_size()));
  for (size_t i = 0; i < outputs->size(); ++i)
    im.bindBound(i, (*outputs)[i]);
  return true;
}

bool loop(Importer &im) {
  const onnx::GraphProto *body = graphAttr(im, "body");
  if (!body)
    return false;
  const onnx::NodeProto &node = im.current();
  size_t carried = static_cast<size_t>(std::max(node.input_size() - 2, 0));
  size_t outputs = static_cast<size_t>(node.output_size());
  if (outputs < carried || static_cast<size_t>(body->input_size()) != 2 + carried ||
      static_cast<size_t>(body->output_size()) != 1 + outputs)
    return im.unsupported("the body must take the iteration number, the condition and the " +
                          std::to_string(carried) +
                          " loop-carried values, and return the "
                          "condition, those values and one value per scan output");
  bool counted = im.hasInput(0), conditioned = im.hasInput(1);
  if (!counted && !conditioned)
    return im.unsupported("a Loop with neither a trip count nor a condition never ends");
  int64_t trips = kMaxIterations + 1;
  if (counted) {
    std::optional<double> m = knownScalar(im, 0, "the trip count");
    if (!m)
      return false;
    trips = static_cast<int64_t>(std::clamp(*m, 0.0, static_cast<double>(kMaxIterations + 1)));
  }
  bool running = true;
  if (conditioned) {
    std::optional<double> c = knownScalar(im, 1, "the condition");
    if (!c)
      return false;
    running = *c != 0;
  }
  if (!conditioned && !withinBudget(im, *body, trips))
    return false; // Known before unrolling anything.
  std::vector<Bound> state;
  for (size_t j = 0; j < carried; ++j)
    state.push_back(im.boundInput(2 + j));
  std::vector<std::vector<Bound>> scans(outputs - carried);
  std::string name = node.output_size() ? node.output(0) : node.name();
  for (int64_t i = 0; running && i < trips; ++i) {
    if (!withinBudget(im, *body, i + 1, i))
      return false;
    std::vector<Bound> inputs{
        constantInput(im, *body, 0, intTensor({i}, {}), ".iteration" + std::to_string(i)),
        constantInput(im, *body, 1, scalar(1, DType::Bool), ".condition" + std::to_string(i))};
    inputs.insert(inputs.end(), state.begin(), state.end());
    std::optional<std::vector<Bound>> out =
        im.inlineGraph(*body, inputs, name + "." + std::to_string(i));
    if (!out)
      return false;
    if (conditioned) { // The body's condition decides the next iteration.
      const std::optional<KnownTensor> &next = (*out)[0].known;
      if (!next || next->reals().size() != 1)
        return im.unsupported("the condition the body computes must be known at compile time "
                              "(it is unrolled)");
      running = next->reals()[0] != 0;
    }
    std::copy(out->begin() + 1, out->begin() + 1 + static_cast<long>(carried), state.begin());
    for (size_t j = 0; j < scans.size(); ++j)
      scans[j].push_back((*out)[1 + carried + j]);
  }
  Composer k(im);
  std::vector<ValueRef> stacked;
  for (const std::vector<Bound> &parts : scans) {
    if (parts.empty())
      return im.unsupported("the loop runs no iteration, so its scan outputs would be empty "
                            "(fuelc has no empty tensors)");
    stacked.push_back(stack(k, parts, 0));
  }
  if (k.failed())
    return false;
  for (size_t j = 0; j < carried; ++j)
    im.bindBound(j, state[j]);
  for (size_t j = 0; j < stacked.size(); ++j)
    im.bind(carried + j, stacked[j]);
  return true;
}

/// A Scan's iterations over sequences of one length: `state` and each
/// sequence's slice bound to the body's inputs; returns the final state and
/// the stacked scan outputs.
struct ScanAxes {
  std::vector<int64_t> inputAxes, inputReversed, outputAxes, outputReversed;
};

std::optional<std::vector<ValueRef>> scanOnce(Composer &k, const onnx::GraphProto &body,
                                              std::vector<Bound> state,
                                              const std::vector<ValueRef> &sequences,
                                              const ScanAxes &axes, const std::string &name) {
  Importer &im = k.im;
  int64_t length = -1;
  std::vector<int64_t> inputAxes;
  for (size_t s = 0; s < sequences.size(); ++s) {
    ShapeRef shape = im.graph.shape(sequences[s]);
    int64_t given = s < axes.inputAxes.size() ? axes.inputAxes[s] : 0;
    std::optional<unsigned> axis = normalizeAxis(given, shape.size());
    if (!axis || !shape[*axis].isStatic() || (length >= 0 && shape[*axis].size() != length)) {
      im.unsupported("the scanned inputs must have one static length along their scan axes");
      return std::nullopt;
    }
    length = shape[*axis].size();
    inputAxes.push_back(*axis);
  }
  if (length < 1) {
    im.unsupported("the scan runs no iteration (fuelc has no empty tensors)");
    return std::nullopt;
  }
  if (!withinBudget(im, body, length))
    return std::nullopt;
  size_t outputs = static_cast<size_t>(body.output_size()) - state.size();
  std::vector<std::vector<Bound>> scans(outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Bound> inputs = state;
    for (size_t s = 0; s < sequences.size(); ++s) {
      bool reversed = s < axes.inputReversed.size() && axes.inputReversed[s];
      int64_t at = reversed ? length - 1 - t : t;
      ValueRef slice = k.slice(sequences[s], inputAxes[s], at, at + 1);
      inputs.push_back({squeezed(k, slice, inputAxes[s]), std::nullopt});
    }
    if (k.failed())
      return std::nullopt;
    std::optional<std::vector<Bound>> out =
        im.inlineGraph(body, inputs, name + "." + std::to_string(t));
    if (!out)
      return std::nullopt;
    std::copy(out->begin(), out->begin() + static_cast<long>(state.size()), state.begin());
    for (size_t j = 0; j < outputs; ++j)
      scans[j].push_back((*out)[state.size() + j]);
  }
  std::vector<ValueRef> results;
  for (const Bound &b : state)
    results.push_back(b.value);
  for (size_t j = 0; j < outputs; ++j) {
    if (j < axes.outputReversed.size() && axes.outputReversed[j])
      std::reverse(scans[j].begin(), scans[j].end());
    size_t rank = im.graph.shape(scans[j][0].value).size() + 1;
    std::optional<unsigned> axis =
        normalizeAxis(j < axes.outputAxes.size() ? axes.outputAxes[j] : 0, rank);
    if (!axis) {
      im.unsupported("scan_output_axes names an axis out of range");
      return std::nullopt;
    }
    results.push_back(stack(k, scans[j], *axis));
  }
  if (k.failed())
    return std::nullopt;
  return results;
}

bool scan(Importer &im) {
  const onnx::GraphProto *body = graphAttr(im, "body");
  if (!body)
    return false;
  const onnx::NodeProto &node = im.current();
  int64_t scanned = im.attrInt("num_scan_inputs", 0);
  // Opset 8 took optional sequence lengths first and scanned each batch
  // entry (axis 0) along axis 1.
  bool batched = im.opset < 9;
  int first = batched ? 1 : 0;
  int64_t states = node.input_size() - first - scanned;
  if (scanned < 1 || states < 0 || body->input_size() != states + scanned ||
      body->output_size() != node.output_size() || node.output_size() < states)
    return im.unsupported("num_scan_inputs, the node's inputs and outputs and the body's do not "
                          "match");
  if (batched && im.hasInput(0))
    return im.unsupported("sequence_lens (opset 8) is not supported: scan whole sequences");
  ScanAxes axes{im.attrInts("scan_input_axes"),
                im.attrInts(batched ? "directions" : "scan_input_directions"),
                im.attrInts("scan_output_axes"), im.attrInts("scan_output_directions")};
  std::vector<Bound> state;
  std::vector<ValueRef> sequences;
  for (int i = first; i < node.input_size(); ++i) {
    if (!im.hasInput(i))
      return im.unsupported("input " + std::to_string(i) + " is required");
    if (i < first + states)
      state.push_back(im.boundInput(i));
    else
      sequences.push_back(im.input(i));
  }
  std::string name = node.output_size() ? node.output(0) : node.name();
  Composer k(im);
  std::optional<std::vector<ValueRef>> results;
  if (!batched) {
    results = scanOnce(k, *body, state, sequences, axes, name);
  } else {
    // Each batch entry scanned alone, the results stacked back.
    Dim batch = im.graph.shape(sequences[0])[0];
    if (!batch.isStatic() || batch.size() > kMaxIterations)
      return im.unsupported("the batch (axis 0) must be static and at most 4096 (opset 8)");
    std::vector<std::vector<Bound>> perEntry(node.output_size());
    for (int64_t b = 0; b < batch.size(); ++b) {
      auto entry = [&](ValueRef v) { return squeezed(k, k.slice(v, 0, b, b + 1), 0); };
      std::vector<Bound> entryState;
      for (const Bound &s : state)
        entryState.push_back({entry(s.value), std::nullopt});
      std::vector<ValueRef> entrySequences;
      for (ValueRef s : sequences)
        entrySequences.push_back(entry(s));
      std::optional<std::vector<ValueRef>> one =
          scanOnce(k, *body, entryState, entrySequences, ScanAxes{{}, axes.inputReversed, {}, {}},
                   name + ".batch" + std::to_string(b));
      if (!one)
        return false;
      for (size_t j = 0; j < one->size(); ++j)
        perEntry[j].push_back({(*one)[j], std::nullopt});
    }
    results.emplace();
    for (const std::vector<Bound> &parts : perEntry)
      results->push_back(stack(k, parts, 0));
  }
  if (!results || k.failed())
    return false;
  for (size_t j = 0; j < results->size(); ++j)
    im.bind(j, (*results)[j]);
  return true;
}
} // namespace

void onnximport::addControlFlowHandlers(HandlerTable &table) {
  table.insert({{"If", ifOp}, {"Loop", loop}, {"Scan", scan}});
}
