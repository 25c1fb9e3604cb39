//===- FuelModule.cpp - The `fuel` Python module ---------------------------===//
//
// Python over the runtime's C interface (fuel-c/Runtime.h):
//
//   session = fuel.Session("model.fplan", threads=0, profile=False)
//   outputs = session.run({"x": array})   # {name: numpy array}
//
// Inputs are read in place when they are C-contiguous and aligned (others
// are copied once, as numpy.ascontiguousarray would); outputs are numpy
// arrays over the memory the run wrote, never copied again (with
// views=True, outputs that are views of an input or of another output are
// numpy views of that array). Runs release the
// GIL. bf16 tensors are numpy uint16 arrays of their bits (numpy has no
// bfloat16). Every failure raises fuel.Error with the runtime's diagnostics.
//
//===----------------------------------------------------------------------===//

#include "fuel-c/Runtime.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

// Array shapes pass to the C interface as they are.
static_assert(sizeof(py::ssize_t) == sizeof(int64_t));

namespace {

/// Raised as fuel.Error.
struct FuelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(fuel_status *status) {
  if (!status)
    return;
  std::string message = fuel_status_get_message(status);
  fuel_status_free(status);
  throw FuelError(message);
}

/// The numpy dtype of a fuel dtype (bf16: the bits, as uint16).
py::dtype numpyDType(fuel_dtype dtype) {
  switch (dtype) {
  case FUEL_DTYPE_F32: return py::dtype::of<float>();
  case FUEL_DTYPE_F16: return py::dtype("float16");
  case FUEL_DTYPE_BF16: return py::dtype::of<uint16_t>();
  case FUEL_DTYPE_F64: return py::dtype::of<double>();
  case FUEL_DTYPE_I8: return py::dtype::of<int8_t>();
  case FUEL_DTYPE_I32: return py::dtype::of<int32_t>();
  case FUEL_DTYPE_I64: return py::dtype::of<int64_t>();
  case FUEL_DTYPE_U8: return py::dtype::of<uint8_t>();
  case FUEL_DTYPE_BOOL: return py::dtype::of<bool>();
  case FUEL_DTYPE_I16: return py::dtype::of<int16_t>();
  case FUEL_DTYPE_U16: return py::dtype::of<uint16_t>();
  case FUEL_DTYPE_U32: return py::dtype::of<uint32_t>();
  case FUEL_DTYPE_U64: return py::dtype::of<uint64_t>();
  }
  throw FuelError("unknown dtype value " + std::to_string(int(dtype)));
}

/// The fuel dtype an array of `dtype` passes as, given what the plan wants
/// (uint16 passes as bf16 only where bf16 is wanted).
fuel_dtype fuelDType(const py::dtype &dtype, fuel_dtype wanted) {
  if (wanted == FUEL_DTYPE_BF16 && dtype.equal(numpyDType(FUEL_DTYPE_BF16)))
    return FUEL_DTYPE_BF16;
  for (fuel_dtype d : {FUEL_DTYPE_F32, FUEL_DTYPE_F16, FUEL_DTYPE_F64, FUEL_DTYPE_I8,
                       FUEL_DTYPE_I16, FUEL_DTYPE_I32, FUEL_DTYPE_I64, FUEL_DTYPE_U8,
                       FUEL_DTYPE_U16, FUEL_DTYPE_U32, FUEL_DTYPE_U64, FUEL_DTYPE_BOOL})
    if (dtype.equal(numpyDType(d)))
      return d;
  throw FuelError("numpy dtype " + py::cast<std::string>(py::str(py::handle(dtype))) +
                  " is not one of fuel's element types");
}

struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> dimSymbols;
};

/// Memory a run's outputs were written to, malloc'd without the GIL and
/// handed to numpy afterwards.
struct OutputBuffers {
  struct Output {
    fuel_dtype dtype;
    std::vector<int64_t> shape;
    void *data = nullptr;
  };
  std::vector<Output> outputs;
  ~OutputBuffers() {
    for (Output &o : outputs)
      std::free(o.data);
  }
  static void *allocate(void *user, size_t index, fuel_dtype dtype, size_t rank,
                        const int64_t *shape, size_t bytes) {
    auto *self = static_cast<OutputBuffers *>(user);
    if (index >= self->outputs.size())
      return nullptr;
    Output &o = self->outputs[index];
    o.dtype = dtype;
    o.shape.assign(shape, shape + rank);
    o.data = std::malloc(bytes ? bytes : 1);
    return o.data;
  }
  /// Output `index` as an array that owns its memory.
  py::array take(size_t index) {
    Output &o = outputs[index];
    py::capsule owner(o.data, [](void *p) { std::free(p); });
    o.data = nullptr;
    return py::array(numpyDType(o.dtype), o.shape, {}, owner.get_pointer(), owner);
  }
};

class Session {
public:
  Session(const std::string &path, uint32_t threads, bool profile, bool trace) {
    fuel_session_options options{threads, profile ? 1u : 0u, trace ? 1u : 0u};
    fuel_session *loaded = nullptr;
    {
      py::gil_scoped_release release;
      fuel_status *status = fuel_session_load_file(path.c_str(), &options, &loaded);
      py::gil_scoped_acquire acquire;
      check(status);
    }
    session.reset(loaded);
    inputInfos = infos(fuel_session_input_count(loaded), fuel_session_input_info);
    outputInfos = infos(fuel_session_output_count(loaded), fuel_session_output_info);
  }

  const std::vector<TensorInfo> &inputs() const { return inputInfos; }
  /// The dtype the plan wants for input `name` (f32 for a name it lacks:
  /// the run then says so).
  fuel_dtype inputDType(const std::string &name) const {
    for (size_t i = 0; i < inputInfos.size(); ++i)
      if (inputInfos[i].name == name)
        return inputDTypes[i];
    return FUEL_DTYPE_F32;
  }
  const std::vector<TensorInfo> &outputs() const { return outputInfos; }
  std::string routeReport() const { return fuel_session_route_report(session.get()); }

  py::dict run(const py::dict &feeds, const std::map<std::string, int64_t> &symbolValues,
               bool takeViews) {
    py::object require = py::module_::import("numpy").attr("require");
    std::vector<py::array> arrays; // Keeps every input alive through the run.
    std::vector<std::string> names;
    arrays.reserve(feeds.size());
    names.reserve(feeds.size());
    std::vector<fuel_input> inputs;
    for (auto [key, value] : feeds) {
      const std::string &name = names.emplace_back(py::cast<std::string>(key));
      // The array itself when C-contiguous and aligned; a copy otherwise.
      const py::array &a = arrays.emplace_back(require(value, py::none(), "CA"));
      inputs.push_back({name.c_str(), fuelDType(a.dtype(), inputDType(name)),
                        size_t(a.ndim()), reinterpret_cast<const int64_t *>(a.shape()),
                        a.data(), size_t(a.nbytes())});
    }
    std::vector<fuel_symbol> symbols;
    for (const auto &[name, value] : symbolValues)
      symbols.push_back({name.c_str(), value});
    OutputBuffers buffers;
    buffers.outputs.resize(outputInfos.size());
    // With views: each output's extents and strides, filled for a view.
    std::vector<std::vector<int64_t>> dims(2 * outputInfos.size());
    std::vector<fuel_output_view> views(outputInfos.size());
    for (size_t i = 0; i < views.size(); ++i) {
      dims[2 * i].resize(outputInfos[i].shape.size());
      dims[2 * i + 1].resize(outputInfos[i].shape.size());
      views[i] = {FUEL_VIEW_NONE, 0, 0, dims[2 * i].data(), dims[2 * i + 1].data()};
    }
    fuel_status *status;
    {
      py::gil_scoped_release release;
      status = takeViews
                   ? fuel_session_run_views(session.get(), inputs.data(), inputs.size(),
                                            symbols.data(), symbols.size(),
                                            &OutputBuffers::allocate, &buffers, views.data())
                   : fuel_session_run(session.get(), inputs.data(), inputs.size(), symbols.data(),
                                      symbols.size(), &OutputBuffers::allocate, &buffers);
    }
    check(status);
    std::vector<py::array> arraysOut(outputInfos.size());
    for (size_t i = 0; i < outputInfos.size(); ++i)
      if (views[i].source == FUEL_VIEW_NONE)
        arraysOut[i] = buffers.take(i);
    // Views last: their sources (inputs, outputs that are no views) exist.
    for (size_t i = 0; i < outputInfos.size(); ++i) {
      const fuel_output_view &v = views[i];
      if (v.source == FUEL_VIEW_NONE)
        continue;
      const py::array &base = v.source == FUEL_VIEW_INPUT ? arrays[v.index] : arraysOut[v.index];
      std::vector<py::ssize_t> strides;
      for (int64_t stride : dims[2 * i + 1])
        strides.push_back(stride * base.itemsize());
      arraysOut[i] =
          py::array(base.dtype(), dims[2 * i], strides,
                    static_cast<const char *>(base.data()) + v.offset * base.itemsize(), base);
    }
    py::dict results;
    for (size_t i = 0; i < outputInfos.size(); ++i)
      results[py::str(outputInfos[i].name)] = arraysOut[i];
    return results;
  }

  std::string profileReport() const {
    return take(fuel_session_profile_report(session.get()));
  }
  std::string traceJson() const { return take(fuel_session_trace_json(session.get())); }
  void resetProfile() { fuel_session_reset_profile(session.get()); }
  bool choosing() const { return fuel_session_choosing(session.get()) != 0; }

private:
  static std::string take(char *text) {
    std::unique_ptr<char, void (*)(char *)> owned(text, fuel_string_free);
    return owned ? owned.get() : "";
  }
  using InfoFn = fuel_status *(*)(const fuel_session *, size_t, fuel_tensor_info *);
  std::vector<TensorInfo> infos(size_t count, InfoFn get) {
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < count; ++i) {
      fuel_tensor_info info;
      check(get(session.get(), i, &info));
      TensorInfo &t = out.emplace_back();
      t.name = info.name;
      t.dtype = fuel_dtype_name(info.dtype);
      t.shape.assign(info.shape, info.shape + info.rank);
      for (size_t d = 0; d < info.rank; ++d)
        t.dimSymbols.push_back(info.dim_symbols[d]);
      if (get == fuel_session_input_info)
        inputDTypes.push_back(info.dtype);
    }
    return out;
  }

  std::unique_ptr<fuel_session, void (*)(fuel_session *)> session{nullptr,
                                                                  fuel_session_free};
  std::vector<TensorInfo> inputInfos, outputInfos;
  std::vector<fuel_dtype> inputDTypes;
};

} // namespace

PYBIND11_MODULE(fuel, m) {
  m.doc() = "Loads and runs fuelc's .fplan artifacts (the fuel runtime).";
  py::register_exception<FuelError>(m, "Error", PyExc_RuntimeError);

  py::class_<TensorInfo>(m, "TensorInfo", "A graph input or output as the plan holds it.")
      .def_readonly("name", &TensorInfo::name)
      .def_readonly("dtype", &TensorInfo::dtype)
      .def_readonly("shape", &TensorInfo::shape,
                    "Extents at the plan's bounds (a symbolic dim may be smaller).")
      .def_readonly("dim_symbols", &TensorInfo::dimSymbols,
                    "Per dim, the symbol bound at run time ('' for a fixed dim).")
      .def("__repr__", [](const TensorInfo &t) {
        std::string s = "TensorInfo(" + t.name + ": " + t.dtype + "[";
        for (size_t d = 0; d < t.shape.size(); ++d)
          s += (d ? ", " : "") +
               (t.dimSymbols[d].empty() ? std::to_string(t.shape[d])
                                        : t.dimSymbols[d] + "<=" + std::to_string(t.shape[d]));
        return s + "])";
      });

  py::class_<Session>(m, "Session", "A loaded artifact; runs from several threads take turns.")
      .def(py::init<const std::string &, uint32_t, bool, bool>(), py::arg("path"),
           py::arg("threads") = 0, py::arg("profile") = false, py::arg("trace") = false,
           "Loads the artifact at path, checking everything its plan needs.")
      .def_property_readonly("inputs", &Session::inputs)
      .def_property_readonly("outputs", &Session::outputs)
      .def_property_readonly("route_report", &Session::routeReport,
                             "Which route was chosen and why earlier ones were skipped.")
      .def("run", &Session::run, py::arg("inputs"),
           py::arg("symbols") = std::map<std::string, int64_t>{}, py::arg("views") = false,
           "Runs the plan on {name: array} (symbols also set by {name: value}, which the "
           "inputs must agree with); returns {name: array} in the graph's output order. "
           "With views=True, outputs that are views of an input or of another output "
           "(a reshape, transpose or slice of it) are numpy views of that array, not copies.")
      .def("profile_report", &Session::profileReport,
           "Time per kernel kind and device over the runs so far (with profile=True).")
      .def("trace_json", &Session::traceJson,
           "The runs so far as Chrome trace JSON (with trace=True).")
      .def("reset_profile", &Session::resetProfile,
           "Forgets the runs so far, for the profile and the trace.")
      .def_property_readonly("choosing", &Session::choosing,
                             "Whether the runtime still measures choices later runs keep (with "
                             "several threads, which kernels split): a benchmark of the steady "
                             "state warms up until this is False.");
}
