//===- OnnxImporter.cpp - ONNX model -> fuel Graph ------------------------===//

#include "OnnxImporter.h"

#include "fuel/Import/Onnx.h"
#include "fuel/IR/Verifier.h"
#include "fuel/Support/Float16.h"

#include <cstring>

using namespace fuel;
using namespace fuel::onnximport;

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

std::optional<DType> onnximport::dtypeOfOnnx(int64_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

static std::string onnxTypeName(int onnxType) {
  return onnx::TensorProto::DataType_IsValid(onnxType)
             ? onnx::TensorProto::DataType_Name(
                   static_cast<onnx::TensorProto::DataType>(onnxType))
             : "type " + std::to_string(onnxType);
}

template <typename T> static void append(std::string &out, T v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof v);
}

Expected<KnownTensor> onnximport::decodeTensor(const onnx::TensorProto &t) {
  std::optional<DType> dt = dtypeOfOnnx(t.data_type());
  if (!dt)
    return Error{"tensor '" + t.name() + "' has element type " + onnxTypeName(t.data_type()) +
                 ", which fuelc does not support"};
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return Error{"tensor '" + t.name() +
                 "' keeps its data in an external file, "
                 "which the importer does not read yet"};
  KnownTensor out;
  out.dtype = *dt;
  out.shape.assign(t.dims().begin(), t.dims().end());
  int64_t count = 1;
  for (int64_t d : out.shape) {
    if (d < 0 || (d && count > (int64_t(1) << 40) / d))
      return Error{"tensor '" + t.name() + "' has a bad or huge shape"};
    count *= d;
  }
  size_t width = dtypeByteSize(*dt);
  if (t.has_raw_data()) {
    out.bytes = t.raw_data();
  } else {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      for (float v : t.float_data())
        append(out.bytes, v);
      break;
    case onnx::TensorProto::DOUBLE:
      for (double v : t.double_data())
        append(out.bytes, v);
      break;
    case onnx::TensorProto::INT64:
      for (int64_t v : t.int64_data())
        append(out.bytes, v);
      break;
    case onnx::TensorProto::INT32:
      for (int32_t v : t.int32_data())
        append(out.bytes, v);
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: // Bit patterns in int32_data.
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
      for (int32_t v : t.int32_data())
        append(out.bytes, static_cast<uint16_t>(v));
      break;
    case onnx::TensorProto::UINT32: // uint32 and uint64 in uint64_data.
      for (uint64_t v : t.uint64_data())
        append(out.bytes, static_cast<uint32_t>(v));
      break;
    case onnx::TensorProto::UINT64:
      for (uint64_t v : t.uint64_data())
        append(out.bytes, v);
      break;
    default: // int8, uint8, bool: one value per int32.
      for (int32_t v : t.int32_data())
        append(out.bytes, static_cast<uint8_t>(v));
    }
  }
  if (out.bytes.size() != static_cast<size_t>(count) * width)
    return Error{"tensor '" + t.name() + "' holds " + std::to_string(out.bytes.size()) +
                 " bytes of data, its shape needs " + std::to_string(count * width)};
  return out;
}

std::vector<double> KnownTensor::reals() const {
  size_t width = dtypeByteSize(dtype), n = bytes.size() / width;
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = loadElement(dtype, bytes.data() + i * width);
  return out;
}

std::vector<int64_t> KnownTensor::ints() const {
  if (dtype == DType::I64) {
    std::vector<int64_t> out(bytes.size() / 8);
    if (!out.empty())
      std::memcpy(out.data(), bytes.data(), out.size() * 8);
    return out;
  }
  std::vector<int64_t> out;
  for (double v : reals()) // NaN and out-of-range values become 0.
    out.push_back(v >= -9.2e18 && v <= 9.2e18 ? static_cast<int64_t>(v) : 0);
  return out;
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

Importer::Importer(const onnx::ModelProto &model, std::string fileName,
                   DiagnosticEngine &diag,
                   const std::map<std::string, FrozenInput> &frozen)
    : model(model), fileName(std::move(fileName)), diag(diag), frozen(frozen) {}

void Importer::addKnown(const std::string &name, KnownTensor tensor) {
  NodeId id = graph.createNode(OpKind::Constant, name + scope);
  graph.addResults(1);
  Shape shape;
  for (int64_t d : tensor.shape)
    shape.push_back(Dim::fixed(d));
  graph.setResultType({id, 0}, tensor.dtype, shape);
  graph.setConstantData(id, ConstantData{FileBuffer::fromBytes(tensor.bytes), 0,
                                         tensor.bytes.size(), {}});
  values[name] = {id, 0};
  known[name] = std::move(tensor);
}

size_t Importer::numInputs() const { return node->input_size(); }

bool Importer::hasInput(size_t i) const {
  return i < static_cast<size_t>(node->input_size()) && !node->input(i).empty();
}

ValueRef Importer::input(size_t i) {
  auto deferred = dequantized.find(node->input(i));
  if (deferred == dequantized.end())
    return values.at(node->input(i));
  Dequantized &d = deferred->second;
  if (!d.value)
    d.value = dequantize(*this, d, "." + std::to_string(i) + "dq");
  return *d.value;
}

const Dequantized *Importer::dequantizedInput(size_t i) const {
  auto it = hasInput(i) ? dequantized.find(node->input(i)) : dequantized.end();
  return it == dequantized.end() ? nullptr : &it->second;
}

bool Importer::onlyReadBy(size_t i, std::span<const std::string_view> ops) const {
  auto it = readerOps.find(node->output(static_cast<int>(i)));
  if (it == readerOps.end())
    return false;
  for (const std::string &op : it->second)
    if (std::find(ops.begin(), ops.end(), op) == ops.end())
      return false;
  return true;
}

const KnownTensor *Importer::constantInput(size_t i) const {
  if (!hasInput(i))
    return nullptr;
  auto it = known.find(node->input(i));
  return it == known.end() ? nullptr : &it->second;
}

const SymbolicInts *Importer::symbolicInput(size_t i) const {
  if (!hasInput(i))
    return nullptr;
  auto it = symbolic.find(node->input(i));
  return it == symbolic.end() ? nullptr : &it->second;
}

std::optional<std::vector<Dim>> Importer::shapeInput(size_t i, const char *what) {
  if (const SymbolicInts *s = symbolicInput(i))
    return s->elements;
  const KnownTensor *t = constantInput(i);
  if (!t) {
    unsupported(std::string(what) + " (input " + std::to_string(i) + ", '" + node->input(i) +
                "') must be a constant");
    return std::nullopt;
  }
  std::vector<Dim> dims;
  for (int64_t v : t->ints()) {
    if (v < -1) {
      unsupported(std::string(what) + " has the extent " + std::to_string(v));
      return std::nullopt;
    }
    dims.push_back(v == -1 ? Dim::inferred() : Dim::fixed(v));
  }
  return dims;
}

void Importer::bindSymbolic(SymbolicInts v) {
  bool allStatic = std::all_of(v.elements.begin(), v.elements.end(),
                               [](Dim d) { return d.isStatic(); });
  if (!allStatic) {
    symbolic[node->output(0)] = std::move(v);
    return;
  }
  KnownTensor t{v.dtype, {}, {}};
  if (!v.scalar)
    t.shape.push_back(static_cast<int64_t>(v.elements.size()));
  for (Dim d : v.elements) {
    int64_t x = d.size();
    if (v.dtype == DType::I32) {
      int32_t narrow = static_cast<int32_t>(x);
      t.bytes.append(reinterpret_cast<const char *>(&narrow), 4);
    } else {
      t.bytes.append(reinterpret_cast<const char *>(&x), 8);
    }
  }
  bindConstant(std::move(t));
}

bool Importer::outputUsed(size_t i) const {
  if (i >= static_cast<size_t>(node->output_size()) || node->output(i).empty())
    return false;
  auto it = uses.find(node->output(i));
  return it != uses.end() && it->second > 0;
}

const onnx::AttributeProto *Importer::attr(const std::string &name) const {
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Importer::attrInt(const std::string &name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float Importer::attrFloat(const std::string &name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string Importer::attrString(const std::string &name,
                                 const std::string &dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt;
}

std::vector<int64_t> Importer::attrInts(const std::string &name) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end())
           : std::vector<int64_t>();
}

bool Importer::unsupported(const std::string &why) {
  SourceLocation loc;
  loc.file = fileName;
  loc.node = node->output_size() ? node->output(0) : node->name();
  std::string label = node->name().empty() ? loc.node : node->name();
  std::string version = node->domain() == kTrainingDomain
                            ? std::string(kTrainingDomain) + " " + std::to_string(trainingOpset)
                            : "opset " + std::to_string(opset);
  diag.error(std::move(loc),
             "ONNX node '" + label + "' (" + node->op_type() + ", " + version + "): " + why);
  ++errors;
  return false;
}

std::optional<NodeId> Importer::add(OpKind kind, const std::vector<ValueRef> &operands,
                                    const std::function<void(Graph &)> &setAttrs,
                                    const std::string &suffix, unsigned results) {
  NodeId id = graph.createNode(kind, node->output(0) + scope + suffix);
  for (ValueRef v : operands)
    graph.addOperand(v);
  if (setAttrs)
    setAttrs(graph);
  graph.addResults(results);
  std::string message;
  DiagnosticEngine local;
  local.setHandler([&](const Diagnostic &d) { message = d.message; });
  if (failed(inferNodeTypes(graph, id, local))) {
    unsupported("the imported " + std::string(opName(kind)) + " is invalid: " +
                message);
    return std::nullopt;
  }
  return id;
}

ValueRef Importer::addConstant(const KnownTensor &t, const std::string &suffix) {
  NodeId id = graph.createNode(OpKind::Constant, node->output(0) + scope + suffix);
  graph.addResults(1);
  Shape shape;
  for (int64_t d : t.shape)
    shape.push_back(Dim::fixed(d));
  graph.setResultType({id, 0}, t.dtype, shape);
  graph.setConstantData(id, ConstantData{FileBuffer::fromBytes(t.bytes), 0,
                                         t.bytes.size(), {}});
  return {id, 0};
}

void Importer::bindConstant(KnownTensor t) {
  bind(0, addConstant(t, ""));
  known[node->output(0)] = std::move(t);
}

void Importer::bind(size_t i, ValueRef value) {
  if (i < static_cast<size_t>(node->output_size()) && !node->output(i).empty())
    values[node->output(i)] = value;
}

void Importer::bindDequantized(Dequantized d) {
  // The 8-bit value stands for the floats until a reader asks (input()).
  values[node->output(0)] = d.quantized;
  dequantized[node->output(0)] = std::move(d);
}

Importer::Bound Importer::boundInput(size_t i) const {
  Bound b{values.at(node->input(i)), std::nullopt};
  if (const KnownTensor *t = constantInput(i))
    b.known = *t;
  return b;
}

void Importer::bindBound(size_t i, const Bound &b) {
  bind(i, b.value);
  if (b.known && i < static_cast<size_t>(node->output_size()) && !node->output(i).empty())
    known[node->output(i)] = *b.known;
}

std::optional<std::vector<Importer::Bound>>
Importer::inlineGraph(const onnx::GraphProto &body, const std::vector<Bound> &inputs,
                      const std::string &tag) {
  constexpr unsigned kMaxDepth = 16;
  if (inlineDepth >= kMaxDepth) {
    unsupported("subgraphs nest deeper than " + std::to_string(kMaxDepth) + " levels");
    return std::nullopt;
  }
  if (static_cast<size_t>(body.input_size()) != inputs.size()) {
    unsupported("the subgraph takes " + std::to_string(body.input_size()) + " inputs, not " +
                std::to_string(inputs.size()));
    return std::nullopt;
  }
  const onnx::NodeProto *outer = node;
  std::string outerScope = scope;
  unsigned errorsBefore = errors;
  scope += "@" + tag;
  ++inlineDepth;
  for (int i = 0; i < body.input_size(); ++i) {
    const std::string &name = body.input(i).name();
    values[name] = inputs[i].value;
    symbolic.erase(name);
    missing.erase(name);
    if (inputs[i].known)
      known[name] = *inputs[i].known;
    else
      known.erase(name);
  }
  for (const onnx::TensorProto &t : body.initializer()) {
    if (Expected<KnownTensor> tensor = decodeTensor(t)) {
      addKnown(t.name(), std::move(*tensor));
    } else {
      SourceLocation loc;
      loc.file = fileName;
      loc.node = t.name();
      diag.error(std::move(loc), "initializer: " + tensor.error());
      ++errors;
    }
  }
  importNodes(body.node());
  std::vector<Bound> outputs;
  for (const onnx::ValueInfoProto &out : body.output()) {
    auto it = values.find(out.name());
    if (it == values.end() || missing.count(out.name())) {
      if (!missing.count(out.name())) {
        node = outer;
        unsupported("the subgraph's output '" + out.name() + "' is never computed");
      }
      continue;
    }
    auto k = known.find(out.name());
    outputs.push_back({it->second, k == known.end() ? std::nullopt
                                                    : std::optional<KnownTensor>(k->second)});
  }
  --inlineDepth;
  scope = outerScope;
  node = outer;
  if (errors != errorsBefore)
    return std::nullopt;
  return outputs;
}

void Importer::countUses(const onnx::GraphProto &g, bool subgraph) {
  for (const onnx::NodeProto &n : g.node()) {
    for (const std::string &in : n.input()) {
      ++uses[in];
      readerOps[in].insert(subgraph ? "" : n.op_type());
    }
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.has_g())
        countUses(a.g(), true);
  }
  for (const onnx::ValueInfoProto &out : g.output()) {
    ++uses[out.name()];
    readerOps[out.name()].insert("");
  }
}

void Importer::importNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes) {
  for (const onnx::NodeProto &n : nodes) {
    node = &n;
    if (inlineDepth > 0 && ++subgraphNodes > kMaxSubgraphNodes) {
      if (subgraphNodes == kMaxSubgraphNodes + 1)
        unsupported("the model's subgraphs (unrolled loops included) import more than 2^16 nodes");
      return;
    }
    // An unrolled body defines its values again: forget the last
    // iteration's constants.
    for (const std::string &out : n.output()) {
      known.erase(out);
      symbolic.erase(out);
      values.erase(out);
      dequantized.erase(out);
      missing.erase(out);
    }
    bool known = n.domain() == kTrainingDomain ? trainingOpset > 0
                                               : (n.domain() == "" || n.domain() == "ai.onnx") &&
                                                     defaultDomain;
    if (!known) {
      unsupported("operators of domain '" + n.domain() +
                  "' are not supported (or the model imports no opset of it)");
    } else {
      bool inputsReady = true;
      for (const std::string &in : n.input())
        if (!in.empty() && !values.count(in) && !symbolic.count(in)) {
          inputsReady = false;
          if (!missing.count(in))
            unsupported("input '" + in + "' is not defined before this node");
          missing[in] = true;
        }
      if (inputsReady && n.output_size() > 0 && (foldConstant(*this) || importOp(*this)))
        continue;
    }
    for (const std::string &out : n.output())
      missing[out] = true; // Readers are skipped: one diagnostic per cause.
  }
}

bool Importer::declareInput(const onnx::ValueInfoProto &info) {
  const onnx::TypeProto &type = info.type();
  std::optional<DType> dt = type.has_tensor_type()
                                ? dtypeOfOnnx(type.tensor_type().elem_type())
                                : std::nullopt;
  SourceLocation loc;
  loc.file = fileName;
  loc.node = info.name();
  if (!dt) {
    diag.error(loc, "graph input '" + info.name() + "' is not a tensor of a "
                    "supported element type");
    return false;
  }
  if (!type.tensor_type().has_shape()) {
    diag.error(loc, "graph input '" + info.name() + "' has no shape (rank unknown)");
    return false;
  }
  Shape shape;
  const auto &dims = type.tensor_type().shape().dim();
  for (int d = 0; d < dims.size(); ++d) {
    if (dims[d].has_dim_value() && dims[d].dim_value() >= 0)
      shape.push_back(Dim::fixed(dims[d].dim_value()));
    else // A named dynamic dim, or an anonymous one named after its place.
      shape.push_back(Dim::symbol(graph.symbols().intern(
          dims[d].has_dim_param() && !dims[d].dim_param().empty()
              ? dims[d].dim_param()
              : info.name() + "_d" + std::to_string(d))));
  }
  NodeId id = graph.createNode(OpKind::Input, info.name());
  graph.addResults(1);
  graph.setResultType({id, 0}, *dt, shape);
  values[info.name()] = {id, 0};
  return true;
}

std::optional<Graph> Importer::run() {
  for (const onnx::OperatorSetIdProto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset = o.version();
      defaultDomain = true;
    } else if (o.domain() == kTrainingDomain) {
      trainingOpset = o.version();
    }
  }
  SourceLocation fileLoc;
  fileLoc.file = fileName;
  // Opsets before 11 are checked per op (importOp): many ops kept their
  // meaning since. A model of optimizer ops alone may import no default
  // domain.
  if ((defaultDomain || !trainingOpset) && (opset < 1 || opset > kMaxOnnxOpset)) {
    diag.error(fileLoc, "the model uses ONNX opset " + std::to_string(opset) +
                            "; fuelc imports opsets up to " + std::to_string(kMaxOnnxOpset));
    return std::nullopt;
  }
  if (trainingOpset > 1) {
    diag.error(fileLoc, "the model uses " + std::string(kTrainingDomain) + " version " +
                            std::to_string(trainingOpset) + "; fuelc imports version 1");
    return std::nullopt;
  }
  const onnx::GraphProto &g = model.graph();
  graph.setName(g.name());
  countUses(g);
  // Initializers are constants (and may shadow graph inputs of the same name).
  for (const onnx::TensorProto &t : g.initializer()) {
    Expected<KnownTensor> decoded = decodeTensor(t);
    if (!decoded) {
      diag.error(fileLoc, "initializer: " + decoded.error());
      ++errors;
      continue;
    }
    addKnown(t.name(), std::move(*decoded));
  }
  for (const auto &[name, value] : frozen) {
    bool isInput = false;
    for (const onnx::ValueInfoProto &in : g.input())
      isInput |= in.name() == name && !values.count(name);
    if (!isInput) {
      diag.error(fileLoc, "--freeze names '" + name +
                              "', which is not a graph input of the model");
      ++errors;
      continue;
    }
    addKnown(name, KnownTensor{value.dtype, value.shape, value.bytes});
  }
  for (const onnx::ValueInfoProto &in : g.input())
    if (!values.count(in.name()) && !declareInput(in))
      ++errors;
  importNodes(g.node());
  for (const onnx::ValueInfoProto &out : g.output()) {
    auto it = values.find(out.name());
    if (it != values.end()) {
      graph.addOutput(it->second);
    } else if (!missing.count(out.name())) {
      diag.error(fileLoc, "graph output '" + out.name() + "' is never computed");
      ++errors;
    }
  }
  if (errors)
    return std::nullopt;
  if (failed(verifyGraph(graph, diag)))
    return std::nullopt;
  return std::move(graph);
}

std::optional<Graph> fuel::importOnnx(std::string_view bytes,
                                      std::string_view fileName,
                                      DiagnosticEngine &diag,
                                      const std::map<std::string, FrozenInput> &frozen) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    SourceLocation loc;
    loc.file = std::string(fileName);
    diag.error(std::move(loc), "not a valid ONNX model: the protobuf does not "
                               "parse (truncated or not an .onnx file)");
    return std::nullopt;
  }
  if (!model.has_graph()) {
    SourceLocation loc;
    loc.file = std::string(fileName);
    diag.error(std::move(loc), "not a valid ONNX model: it has no graph");
    return std::nullopt;
  }
  return Importer(model, std::string(fileName), diag, frozen).run();
}

std::string fuel::externalizeConstants(Graph &graph, const std::string &weightsFile) {
  std::string weights;
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const ConstantData *data = graph.constantData(n);
    if (!data)
      continue;
    weights.resize((weights.size() + 63) / 64 * 64, '\0');
    ConstantData moved = *data;
    moved.source.kind = ConstantSourceKind::Raw;
    moved.source.file = weightsFile;
    moved.source.offset = weights.size();
    weights.append(data->bytes());
    graph.setConstantData(n, std::move(moved));
  }
  return weights;
}
