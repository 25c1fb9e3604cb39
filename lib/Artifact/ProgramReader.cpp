//===- ProgramReader.cpp - Reading and validating fuel.program ------------===//
//
// Section hashes only prove that nobody damaged the file; they do not prove
// that fuelc wrote it. So everything is checked as if hostile: types and
// ranges of every member, every index against its table, every tensor's
// reach against its storage at the symbols' bounds, buffers against their
// arenas, steps against each other (each kernel and copy runs once and
// reads only what a step it depends on wrote). The first problem is
// reported with its JSON pointer.
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Program.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>

using namespace fuel;
using namespace fuel::artifact;
using nlohmann::json;

namespace {
/// Largest extent, stride magnitude and rank a program may use: byte sizes
/// stay far from overflowing 64 bits.
constexpr int64_t kMaxExtent = int64_t(1) << 48;
constexpr size_t kMaxRank = 16;

/// Checked access to a parsed document: the first failure is reported with
/// its pointer and every later access returns a default, so callers check
/// `ok()` once per object rather than after every member.
class Reader {
public:
  Reader(std::string_view file, DiagnosticEngine &diag) : file(file), diag(diag) {}

  bool ok() const { return !failed; }
  LogicalResult fail(const std::string &pointer, const std::string &message) {
    if (!failed) {
      SourceLocation loc;
      loc.file = file;
      loc.pointer = pointer.empty() ? "/" : pointer;
      diag.error(std::move(loc), message);
    }
    failed = true;
    return failure();
  }

  const json *member(const json &object, std::string_view key,
                     const std::string &pointer, bool required = true) {
    if (failed)
      return nullptr;
    if (!object.is_object()) {
      (void)fail(pointer, "expected an object");
      return nullptr;
    }
    auto it = object.find(key);
    if (it == object.end()) {
      if (required)
        (void)fail(pointer, "missing member '" + std::string(key) + "'");
      return nullptr;
    }
    return &*it;
  }

  const json *array(const json &object, std::string_view key,
                    const std::string &pointer) {
    const json *a = member(object, key, pointer);
    if (a && !a->is_array()) {
      (void)fail(pointer + "/" + std::string(key), "expected an array");
      return nullptr;
    }
    return a;
  }

  /// Calls `each(element, pointer, index)` for the elements of array `key`
  /// of `object`, while nothing has failed.
  template <typename Fn>
  void forEach(const json &object, std::string_view key, const std::string &pointer,
               Fn each) {
    const json *a = array(object, key, pointer);
    std::string at = pointer + "/" + std::string(key) + "/";
    for (size_t i = 0; a && i < a->size() && ok(); ++i)
      each((*a)[i], at + std::to_string(i), i);
  }

  std::vector<std::string> strings(const json &object, std::string_view key,
                                   const std::string &pointer) {
    std::vector<std::string> out;
    forEach(object, key, pointer, [&](const json &e, const std::string &at, size_t) {
      if (!e.is_string())
        (void)fail(at, "expected a string");
      else
        out.push_back(e.get<std::string>());
    });
    return out;
  }

  int64_t integer(const json &j, const std::string &pointer, int64_t lo, int64_t hi) {
    if (failed)
      return lo;
    bool isInt = j.is_number_integer() &&
                 !(j.is_number_unsigned() &&
                   j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
    int64_t v = isInt ? j.get<int64_t>() : 0;
    if (!isInt || v < lo || v > hi) {
      (void)fail(pointer, "expected an integer in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
      return lo;
    }
    return v;
  }
  int64_t integer(const json &object, std::string_view key,
                  const std::string &pointer, int64_t lo, int64_t hi) {
    const json *j = member(object, key, pointer);
    return j ? integer(*j, pointer + "/" + std::string(key), lo, hi) : lo;
  }

  std::string string(const json &object, std::string_view key,
                     const std::string &pointer) {
    const json *j = member(object, key, pointer);
    if (j && !j->is_string()) {
      (void)fail(pointer + "/" + std::string(key), "expected a string");
      return {};
    }
    return j ? j->get<std::string>() : std::string();
  }

  bool boolean(const json &object, std::string_view key, const std::string &pointer) {
    const json *j = member(object, key, pointer);
    if (j && !j->is_boolean()) {
      (void)fail(pointer + "/" + std::string(key), "expected true or false");
      return false;
    }
    return j && j->get<bool>();
  }

  std::vector<int64_t> integers(const json &object, std::string_view key,
                                const std::string &pointer, int64_t lo, int64_t hi,
                                size_t maxSize = kMaxRank) {
    std::vector<int64_t> out;
    const json *a = array(object, key, pointer);
    if (!a)
      return out;
    std::string at = pointer + "/" + std::string(key);
    if (a->size() > maxSize) {
      (void)fail(at, "more than " + std::to_string(maxSize) + " elements");
      return out;
    }
    for (size_t i = 0; i < a->size() && ok(); ++i)
      out.push_back(integer((*a)[i], at + "/" + std::to_string(i), lo, hi));
    return out;
  }

private:
  std::string file;
  DiagnosticEngine &diag;
  bool failed = false;
};

class ProgramParser {
public:
  ProgramParser(Reader &r, const Meta &meta, uint64_t weightBytes)
      : r(r), meta(meta), weightBytes(weightBytes) {}

  std::optional<Program> parse(const json &j);

private:
  void parseSymbols(const json &j);
  void parseDevices(const json &j);
  void parseStorage(const json &j);
  void parseKernels(const json &j);
  void parseCopies(const json &j);
  void parseSteps(const json &j);
  std::vector<Io> parseIo(const json &j, std::string_view key, bool inputs);

  std::vector<Extent> extents(const json &object, std::string_view key,
                              const std::string &pointer);
  Tensor tensor(const json &j, const std::string &pointer);
  LogicalResult checkReach(const Tensor &t, const std::string &pointer);
  uint64_t storageBytes(const Tensor &t) const {
    return t.storage == StorageKind::Buffer ? p.buffers[t.index].size
                                            : p.constants[t.index].size;
  }

  Reader &r;
  const Meta &meta;
  uint64_t weightBytes;
  Program p;
  std::vector<int64_t> bounds;
};
} // namespace

std::vector<Extent> ProgramParser::extents(const json &object, std::string_view key,
                                           const std::string &pointer) {
  std::vector<Extent> out;
  const json *a = r.array(object, key, pointer);
  if (!a)
    return out;
  std::string at = pointer + "/" + std::string(key);
  if (a->size() > kMaxRank) {
    (void)r.fail(at, "rank above " + std::to_string(kMaxRank));
    return out;
  }
  for (size_t i = 0; i < a->size() && r.ok(); ++i) {
    const json &e = (*a)[i];
    std::string ptr = at + "/" + std::to_string(i);
    if (e.is_object())
      out.push_back({0, static_cast<int32_t>(r.integer(
                            e, "symbol", ptr, 0, int64_t(p.symbols.size()) - 1))});
    else
      out.push_back({r.integer(e, ptr, 0, kMaxExtent), -1});
  }
  return out;
}

void ProgramParser::parseSymbols(const json &j) {
  r.forEach(j, "symbols", "", [&](const json &e, const std::string &ptr, size_t s) {
    Symbol sym;
    sym.name = r.string(e, "name", ptr);
    sym.bound = r.integer(e, "bound", ptr, 0, kMaxExtent);
    if (r.member(e, "of", ptr, /*required=*/false)) {
      sym.factor = r.integer(e, "factor", ptr, 1, kMaxExtent);
      for (int64_t f : r.integers(e, "of", ptr, 0, int64_t(s) - 1)) {
        if (r.ok() && !p.symbols[f].isFree())
          (void)r.fail(ptr + "/of", "a derived symbol is a product of free symbols");
        sym.of.push_back(static_cast<uint32_t>(f));
      }
      if (sym.of.empty())
        (void)r.fail(ptr + "/of", "a derived symbol needs at least one factor");
    }
    p.symbols.push_back(std::move(sym));
  });
  if (!r.ok())
    return;
  bounds = p.boundValues();
  for (size_t s = 0; s < p.symbols.size(); ++s)
    if (bounds[s] < 0 || bounds[s] > kMaxExtent ||
        (!p.symbols[s].isFree() && bounds[s] > p.symbols[s].bound)) {
      (void)r.fail("/symbols/" + std::to_string(s),
                   "symbol '" + p.symbols[s].name + "' at its factors' bounds is " +
                       std::to_string(bounds[s]) + ", beyond its bound " +
                       std::to_string(p.symbols[s].bound));
      return;
    }
}

void ProgramParser::parseDevices(const json &j) {
  r.forEach(j, "devices", "", [&](const json &e, const std::string &ptr, size_t d) {
    std::string id = r.string(e, "id", ptr);
    auto it = std::find_if(meta.devices.begin(), meta.devices.end(),
                           [&](const Device &m) { return m.id == id; });
    if (r.ok() && it == meta.devices.end()) {
      (void)r.fail(ptr + "/id", "device '" + id + "' is not in the artifact's machine");
      return;
    }
    if (!r.ok())
      return;
    Device device = *it;
    device.arenaBytes = static_cast<uint64_t>(
        r.integer(e, "arena_bytes", ptr, 0, std::numeric_limits<int64_t>::max()));
    device.kernelSection = r.string(e, "kernels", ptr);
    for (const Device &other : p.devices)
      if (other.id == device.id)
        (void)r.fail(ptr + "/id", "device '" + id + "' is listed twice");
    p.devices.push_back(std::move(device));
  });
}

void ProgramParser::parseStorage(const json &j) {
  r.forEach(j, "buffers", "", [&](const json &e, const std::string &ptr, size_t b) {
    Buffer buffer;
    buffer.device = static_cast<uint32_t>(
        r.integer(e, "device", ptr, 0, int64_t(p.devices.size()) - 1));
    int64_t maxBytes = std::numeric_limits<int64_t>::max();
    buffer.offset = r.integer(e, "offset", ptr, 0, maxBytes);
    buffer.size = r.integer(e, "size", ptr, 0, maxBytes);
    if (r.member(e, "slice_of", ptr, /*required=*/false))
      buffer.sliceOf = r.integer(e, "slice_of", ptr, 0, maxBytes);
    if (r.ok()) {
      uint64_t arena = p.devices[buffer.device].arenaBytes;
      if (buffer.offset > arena || buffer.size > arena - buffer.offset)
        (void)r.fail(ptr, "buffer [" + std::to_string(buffer.offset) + ", +" +
                              std::to_string(buffer.size) + ") lies outside the " +
                              std::to_string(arena) + "-byte arena of " +
                              p.devices[buffer.device].id);
    }
    p.buffers.push_back(buffer);
  });
  // A slice lies inside another buffer of its device, which is no slice.
  for (size_t b = 0; b < p.buffers.size() && r.ok(); ++b) {
    const Buffer &slice = p.buffers[b];
    if (slice.sliceOf < 0)
      continue;
    std::string ptr = "/buffers/" + std::to_string(b) + "/slice_of";
    if (slice.sliceOf >= int64_t(p.buffers.size()) || uint64_t(slice.sliceOf) == b) {
      (void)r.fail(ptr, "buffer " + std::to_string(b) + " is a slice of buffer " +
                            std::to_string(slice.sliceOf) + ", which is not another buffer");
      break;
    }
    const Buffer &whole = p.buffers[slice.sliceOf];
    if (whole.sliceOf >= 0 || whole.device != slice.device || slice.offset < whole.offset ||
        slice.offset - whole.offset > whole.size ||
        slice.size > whole.size - (slice.offset - whole.offset))
      (void)r.fail(ptr, "buffer " + std::to_string(b) + " does not lie inside buffer " +
                            std::to_string(slice.sliceOf) +
                            " of its device, or that buffer is a slice itself");
  }
  r.forEach(j, "constants", "", [&](const json &e, const std::string &ptr, size_t c) {
    Constant constant;
    constant.offset = r.integer(e, "offset", ptr, 0, std::numeric_limits<int64_t>::max());
    constant.size = r.integer(e, "size", ptr, 0, std::numeric_limits<int64_t>::max());
    if (r.ok() && (constant.offset > weightBytes ||
                   constant.size > weightBytes - constant.offset))
      (void)r.fail(ptr, "constant lies outside the " + std::to_string(weightBytes) +
                            "-byte weights section");
    p.constants.push_back(constant);
  });
}

static std::optional<ViewKind> parseViewKind(std::string_view name) {
  if (name == "transpose")
    return ViewKind::Transpose;
  if (name == "slice")
    return ViewKind::Slice;
  if (name == "broadcast")
    return ViewKind::Broadcast;
  if (name == "reshape")
    return ViewKind::Reshape;
  return std::nullopt;
}

LogicalResult ProgramParser::checkReach(const Tensor &t, const std::string &pointer) {
  std::optional<Layout> layout = t.layout(bounds);
  if (!layout)
    return r.fail(pointer, "the layout is out of range (the runtime takes at most "
                           "2^40 elements per tensor), or its views do not apply to "
                           "the storage's extents or give other extents");
  int64_t width = dtypeByteSize(t.dtype);
  int64_t elements = static_cast<int64_t>(storageBytes(t) / width);
  if (!layout->fitsIn(elements))
    return r.fail(pointer, "the tensor reaches outside its " +
                               std::to_string(storageBytes(t)) + "-byte " +
                               (t.storage == StorageKind::Buffer ? "buffer " : "constant ") +
                               std::to_string(t.index));
  return success();
}

Tensor ProgramParser::tensor(const json &j, const std::string &pointer) {
  Tensor t;
  const json *buffer = r.member(j, "buffer", pointer, /*required=*/false);
  if (buffer) {
    t.index = static_cast<uint32_t>(
        r.integer(*buffer, pointer + "/buffer", 0, int64_t(p.buffers.size()) - 1));
  } else if (r.member(j, "constant", pointer, /*required=*/false)) {
    t.storage = StorageKind::Constant;
    t.index = static_cast<uint32_t>(
        r.integer(j, "constant", pointer, 0, int64_t(p.constants.size()) - 1));
  } else if (r.ok()) {
    (void)r.fail(pointer, "the tensor names neither a buffer nor a constant");
  }
  std::string dtype = r.string(j, "dtype", pointer);
  if (std::optional<DType> d = parseDType(dtype))
    t.dtype = *d;
  else if (r.ok())
    (void)r.fail(pointer + "/dtype", "unknown dtype '" + dtype + "'");
  t.sizes = extents(j, "sizes", pointer);
  t.symbolic = r.member(j, "views", pointer, /*required=*/false) != nullptr;
  if (!t.symbolic) {
    t.offset = r.integer(j, "offset", pointer, -kMaxExtent, kMaxExtent);
    t.strides = r.integers(j, "strides", pointer, -kMaxExtent, kMaxExtent);
    if (r.ok() && t.strides.size() != t.sizes.size())
      (void)r.fail(pointer + "/strides", "has " + std::to_string(t.strides.size()) +
                                             " strides for rank " +
                                             std::to_string(t.sizes.size()));
  } else {
    t.root = extents(j, "root", pointer);
    r.forEach(j, "views", pointer, [&](const json &e, const std::string &ptr, size_t v) {
      View view;
      std::string kind = r.string(e, "kind", ptr);
      std::optional<ViewKind> k = parseViewKind(kind);
      if (!k) {
        (void)r.fail(ptr + "/kind", "unknown view '" + kind + "'");
        return;
      }
      view.kind = *k;
      if (view.kind == ViewKind::Transpose) {
        view.perm = r.integers(e, "perm", ptr, -int64_t(kMaxRank), kMaxRank);
      } else if (view.kind == ViewKind::Slice) {
        view.axes = r.integers(e, "axes", ptr, -int64_t(kMaxRank), kMaxRank);
        view.starts = r.integers(e, "starts", ptr, -kMaxExtent, kMaxExtent);
        view.ends = r.integers(e, "ends", ptr, -kMaxExtent, kMaxExtent);
        view.steps = r.integers(e, "steps", ptr, -kMaxExtent, kMaxExtent);
      } else {
        view.sizes = extents(e, "sizes", ptr);
      }
      t.views.push_back(std::move(view));
    });
  }
  if (r.ok())
    (void)checkReach(t, pointer);
  return t;
}

void ProgramParser::parseKernels(const json &j) {
  r.forEach(j, "kernels", "", [&](const json &e, const std::string &ptr, size_t k) {
    Kernel kernel;
    kernel.symbol = r.string(e, "symbol", ptr);
    kernel.device = static_cast<uint32_t>(
        r.integer(e, "device", ptr, 0, int64_t(p.devices.size()) - 1));
    kernel.capsule = r.string(e, "capsule", ptr);
    kernel.revision = r.string(e, "revision", ptr);
    kernel.node = r.string(e, "node", ptr);
    kernel.label = r.string(e, "label", ptr);
    kernel.splittable = r.boolean(e, "splittable", ptr);
    if (r.ok() && p.devices[kernel.device].kernelSection.empty())
      (void)r.fail(ptr + "/device", "kernel '" + kernel.symbol + "' runs on " +
                                        p.devices[kernel.device].id +
                                        ", which has no kernel section");
    r.forEach(e, "args", ptr, [&](const json &arg, const std::string &at, size_t) {
      KernelArg ka;
      ka.tensor = tensor(arg, at);
      ka.isResult = r.boolean(arg, "result", at);
      ka.splitAxis = static_cast<int>(
          r.integer(arg, "split_axis", at, -1, int64_t(ka.tensor.sizes.size()) - 1));
      ka.contiguous = r.boolean(arg, "contiguous", at);
      if (!r.ok())
        return;
      if (ka.isResult && ka.tensor.storage != StorageKind::Buffer)
        (void)r.fail(at, "kernel '" + kernel.symbol + "' writes a constant");
      else if (ka.tensor.storage == StorageKind::Buffer &&
               p.buffers[ka.tensor.index].device != kernel.device)
        (void)r.fail(at, "kernel '" + kernel.symbol + "' on " +
                             p.devices[kernel.device].id + " reads buffer " +
                             std::to_string(ka.tensor.index) + " of " +
                             p.devices[p.buffers[ka.tensor.index].device].id);
      kernel.args.push_back(std::move(ka));
    });
    for (int64_t s : r.integers(e, "symbols", ptr, 0, int64_t(p.symbols.size()) - 1,
                                p.symbols.size()))
      kernel.symbols.push_back(static_cast<uint32_t>(s));
    kernel.sliceOrigin = r.boolean(e, "slice_origin", ptr);
    p.kernels.push_back(std::move(kernel));
  });
}

void ProgramParser::parseCopies(const json &j) {
  int64_t lastBuffer = int64_t(p.buffers.size()) - 1;
  r.forEach(j, "copies", "", [&](const json &e, const std::string &ptr, size_t c) {
    Copy copy;
    copy.source = static_cast<uint32_t>(r.integer(e, "source", ptr, 0, lastBuffer));
    copy.target = static_cast<uint32_t>(r.integer(e, "target", ptr, 0, lastBuffer));
    copy.value = r.string(e, "value", ptr);
    if (r.ok() && p.buffers[copy.source].device == p.buffers[copy.target].device)
      (void)r.fail(ptr, "copy of '" + copy.value + "' stays on one device");
    p.copies.push_back(std::move(copy));
  });
}

void ProgramParser::parseSteps(const json &j) {
  std::vector<bool> launched(p.kernels.size()), copied(p.copies.size());
  // The last step writing each buffer; inputs are written by the caller.
  std::vector<int64_t> writer(p.buffers.size(), -1);
  std::vector<bool> written(p.buffers.size(), false);
  for (const Io &in : p.inputs)
    written[in.tensor.index] = true;
  std::vector<std::vector<uint32_t>> slices(p.buffers.size());
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].sliceOf >= 0)
      slices[p.buffers[b].sliceOf].push_back(static_cast<uint32_t>(b));
  // A buffer with slices is written once they all are.
  auto wholeWritten = [&](uint32_t b) {
    return written[b] ||
           (!slices[b].empty() && std::all_of(slices[b].begin(), slices[b].end(),
                                              [&](uint32_t part) { return written[part]; }));
  };
  r.forEach(j, "steps", "", [&](const json &e, const std::string &ptr, size_t s) {
    Step step;
    if (r.member(e, "launch", ptr, /*required=*/false)) {
      step.index = static_cast<uint32_t>(
          r.integer(e, "launch", ptr, 0, int64_t(p.kernels.size()) - 1));
    } else {
      step.kind = StepKind::Copy;
      step.index = static_cast<uint32_t>(
          r.integer(e, "copy", ptr, 0, int64_t(p.copies.size()) - 1));
    }
    for (int64_t d : r.integers(e, "deps", ptr, 0, int64_t(s) - 1, s))
      step.deps.push_back(static_cast<uint32_t>(d));
    if (!r.ok())
      return;
    std::vector<bool> &once = step.kind == StepKind::Launch ? launched : copied;
    if (once[step.index]) {
      (void)r.fail(ptr, std::string(step.kind == StepKind::Launch ? "kernel " : "copy ") +
                            std::to_string(step.index) + " runs twice");
      return;
    }
    once[step.index] = true;
    std::vector<uint32_t> reads, writes;
    if (step.kind == StepKind::Launch) {
      for (const KernelArg &a : p.kernels[step.index].args)
        if (a.tensor.storage == StorageKind::Buffer)
          (a.isResult ? writes : reads).push_back(a.tensor.index);
    } else {
      reads.push_back(p.copies[step.index].source);
      writes.push_back(p.copies[step.index].target);
    }
    // Reading a buffer waits for the last step writing it and for those
    // writing its slices; one with slices is written once they all are.
    auto checkRead = [&](uint32_t b, uint32_t part) {
      if (!written[part]) {
        if (written[b])
          return true;
        (void)r.fail(ptr, "reads buffer " + std::to_string(b) + " before any step writes " +
                              (part == b ? "it" : "its slice " + std::to_string(part)));
        return false;
      }
      if (writer[part] >= 0 && std::find(step.deps.begin(), step.deps.end(),
                                         uint32_t(writer[part])) == step.deps.end()) {
        (void)r.fail(ptr + "/deps", "reads buffer " + std::to_string(b) +
                                        " but does not depend on step " +
                                        std::to_string(writer[part]) + ", which writes " +
                                        (part == b ? "it" : "its slice " + std::to_string(part)));
        return false;
      }
      return true;
    };
    for (uint32_t b : reads) {
      if ((written[b] || slices[b].empty()) && !checkRead(b, b))
        return;
      for (uint32_t part : slices[b])
        if (!checkRead(b, part))
          return;
    }
    for (uint32_t b : writes) {
      writer[b] = static_cast<int64_t>(s);
      written[b] = true;
    }
    p.steps.push_back(std::move(step));
  });
  if (!r.ok())
    return;
  for (size_t k = 0; k < launched.size(); ++k)
    if (!launched[k]) {
      (void)r.fail("/steps", "kernel " + std::to_string(k) + " is never launched");
      return;
    }
  for (size_t c = 0; c < copied.size(); ++c)
    if (!copied[c]) {
      (void)r.fail("/steps", "copy " + std::to_string(c) + " never runs");
      return;
    }
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const Tensor &t = p.outputs[o].tensor;
    if (t.storage == StorageKind::Buffer && !wholeWritten(t.index))
      (void)r.fail("/outputs/" + std::to_string(o),
                   "output '" + p.outputs[o].name + "' is never written");
  }
}

/// Whether `t` is a buffer it fills from offset 0 in row-major order, for
/// every value of the symbols (what the caller's tensors are copied into).
static bool isPlainBuffer(const Tensor &t, std::span<const int64_t> bounds) {
  if (t.storage != StorageKind::Buffer)
    return false;
  if (t.symbolic)
    return t.views.empty() && t.root == t.sizes;
  std::optional<Layout> layout = t.layout(bounds);
  return layout && layout->isContiguous();
}

std::vector<Io> ProgramParser::parseIo(const json &j, std::string_view key,
                                       bool inputs) {
  std::vector<Io> out;
  r.forEach(j, key, "", [&](const json &e, const std::string &ptr, size_t i) {
    Io io{r.string(e, "name", ptr), tensor(e, ptr)};
    if (!r.ok())
      return;
    // Outputs may repeat a value; inputs are named by the caller.
    for (const Io &other : out)
      if (inputs && other.name == io.name)
        (void)r.fail(ptr + "/name", "input '" + io.name + "' is listed twice");
    if (inputs && !isPlainBuffer(io.tensor, bounds))
      (void)r.fail(ptr, "input '" + io.name + "' is not a contiguous buffer");
    out.push_back(std::move(io));
  });
  return out;
}

/// Whether `j` is an object whose `format` and `version` are `format` and
/// kProgramVersion; members of another type are a mismatch, not a throw.
static bool hasHeader(const json &j, std::string_view format) {
  if (!j.is_object())
    return false;
  auto f = j.find("format"), v = j.find("version");
  return f != j.end() && f->is_string() && f->get_ref<const std::string &>() == format &&
         v != j.end() && v->is_number_integer() && *v == kProgramVersion;
}

std::optional<Program> ProgramParser::parse(const json &j) {
  if (!hasHeader(j, "fuel.program")) {
    (void)r.fail("", "not fuel.program version " + std::to_string(kProgramVersion));
    return std::nullopt;
  }
  parseSymbols(j);
  if (r.ok())
    parseDevices(j);
  if (r.ok())
    parseStorage(j);
  if (r.ok())
    parseKernels(j);
  if (r.ok())
    parseCopies(j);
  if (r.ok())
    p.inputs = parseIo(j, "inputs", /*inputs=*/true);
  if (r.ok())
    p.outputs = parseIo(j, "outputs", /*inputs=*/false);
  if (r.ok())
    parseSteps(j);
  if (!r.ok())
    return std::nullopt;
  return std::move(p);
}

std::optional<Program> artifact::readProgram(std::string_view text,
                                             std::string_view file, const Meta &meta,
                                             uint64_t weightBytes,
                                             DiagnosticEngine &diag) {
  Reader r(file, diag);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    (void)r.fail("", "not valid JSON");
    return std::nullopt;
  }
  return ProgramParser(r, meta, weightBytes).parse(j);
}

/// `kind:index`: lowercase letters, a colon, at most five digits.
static bool isDeviceId(std::string_view id) {
  size_t colon = id.find(':');
  std::string_view kind = id.substr(0, colon), index;
  if (colon != std::string_view::npos)
    index = id.substr(colon + 1);
  return !kind.empty() && !index.empty() && index.size() <= 5 &&
         std::all_of(kind.begin(), kind.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
         std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<Meta> artifact::readMeta(std::string_view text, std::string_view file,
                                       DiagnosticEngine &diag) {
  Reader r(file, diag);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !hasHeader(j, "fuel.artifact-meta")) {
    (void)r.fail("", "not fuel.artifact-meta version " + std::to_string(kProgramVersion));
    return std::nullopt;
  }
  Meta meta;
  const json *machine = r.member(j, "machine", "");
  if (!machine)
    return std::nullopt;
  r.forEach(*machine, "devices", "/machine", [&](const json &e, const std::string &ptr, size_t) {
    Device device;
    device.id = r.string(e, "id", ptr);
    device.kind = std::string(deviceKindOf(device.id));
    if (r.ok() && !isDeviceId(device.id))
      (void)r.fail(ptr + "/id", "'" + device.id + "' is not a device id (kind:index)");
    device.name = r.string(e, "name", ptr);
    device.target = r.string(e, "target", ptr);
    if (r.member(e, "cpu_features", ptr, /*required=*/false))
      device.cpuFeatures = r.strings(e, "cpu_features", ptr);
    meta.devices.push_back(std::move(device));
  });
  r.forEach(j, "routes", "", [&](const json &e, const std::string &ptr, size_t i) {
    meta.routes.push_back({r.string(e, "section", ptr), r.strings(e, "devices", ptr)});
  });
  if (!r.ok())
    return std::nullopt;
  return meta;
}
