//===- CApi.cpp - The runtime's C interface -------------------------------===//
//
// fuel-c/Runtime.h over runtime::Session. Every entry point checks its
// pointers and enum values before use and returns a status naming the
// problem; no C++ exception crosses the interface.
//
//===----------------------------------------------------------------------===//

#include "fuel-c/Runtime.h"

#include "fuel/Runtime/Runtime.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

using namespace fuel;
using namespace fuel::runtime;

struct fuel_status {
  fuel_status_code code;
  std::string message;
};

namespace {
/// TensorInfo with the C view of it (pointers into the strings and vectors
/// above them, which never move once built).
struct CTensorInfo {
  TensorInfo info;
  std::vector<const char *> dimSymbols;
};
} // namespace

struct fuel_session {
  std::unique_ptr<Session> session;
  std::vector<CTensorInfo> inputs, outputs;
};

static fuel_status *makeStatus(fuel_status_code code, std::string message) {
  return new (std::nothrow) fuel_status{code, std::move(message)};
}

/// Collects a call's diagnostics as the status message.
namespace {
class StatusCollector {
public:
  StatusCollector() {
    diag.setHandler([this](const Diagnostic &d) { printDiagnosticText(text, d); });
  }
  DiagnosticEngine diag;
  fuel_status *status(fuel_status_code code) {
    std::string message = text.str();
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return makeStatus(code, message.empty() ? "failed without a diagnostic" : message);
  }

private:
  std::ostringstream text;
};
} // namespace

// The C enum is the C++ one, value for value.
static_assert(FUEL_DTYPE_F32 == int(DType::F32) && FUEL_DTYPE_F16 == int(DType::F16) &&
              FUEL_DTYPE_BF16 == int(DType::BF16) && FUEL_DTYPE_F64 == int(DType::F64) &&
              FUEL_DTYPE_I8 == int(DType::I8) && FUEL_DTYPE_I32 == int(DType::I32) &&
              FUEL_DTYPE_I64 == int(DType::I64) && FUEL_DTYPE_U8 == int(DType::U8) &&
              FUEL_DTYPE_BOOL == int(DType::Bool) && FUEL_DTYPE_I16 == int(DType::I16) &&
              FUEL_DTYPE_U16 == int(DType::U16) && FUEL_DTYPE_U32 == int(DType::U32) &&
              FUEL_DTYPE_U64 == int(DType::U64) && kNumDTypes == 13);

static bool isDType(int value) { return value >= 0 && unsigned(value) < kNumDTypes; }

/// Runs `body`, turning an escaping exception (allocation failure) into a
/// status: the interface is C.
template <typename Body> static fuel_status *guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return makeStatus(FUEL_RUN_FAILED, "out of memory");
  } catch (const std::exception &e) {
    return makeStatus(FUEL_RUN_FAILED, std::string("internal error: ") + e.what());
  }
}

extern "C" {

fuel_status_code fuel_status_get_code(const fuel_status *status) {
  return status ? status->code : FUEL_OK;
}

const char *fuel_status_get_message(const fuel_status *status) {
  return status ? status->message.c_str() : "";
}

void fuel_status_free(fuel_status *status) { delete status; }

size_t fuel_dtype_size(fuel_dtype dtype) {
  return isDType(dtype) ? dtypeByteSize(DType(dtype)) : 0;
}

const char *fuel_dtype_name(fuel_dtype dtype) {
  // dtypeName's views are of string literals, so NUL-terminated.
  return isDType(dtype) ? dtypeName(DType(dtype)).data() : "";
}

static std::vector<CTensorInfo> cInfos(std::vector<TensorInfo> infos) {
  std::vector<CTensorInfo> out(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    out[i].info = std::move(infos[i]);
    for (const std::string &s : out[i].info.dimSymbols)
      out[i].dimSymbols.push_back(s.c_str());
  }
  return out;
}

static fuel_status *loadSession(std::shared_ptr<const FileBuffer> bytes, std::string name,
                                const fuel_session_options *options, StatusCollector &errors,
                                fuel_session **session) {
  RuntimeOptions runtimeOptions;
  if (options) {
    runtimeOptions.threads = options->threads;
    runtimeOptions.profile = options->profile != 0;
    runtimeOptions.trace = options->trace != 0;
  }
  std::unique_ptr<Session> loaded =
      Session::load(std::move(bytes), name, runtimeOptions, errors.diag);
  if (!loaded)
    return errors.status(FUEL_LOAD_FAILED);
  auto handle = std::make_unique<fuel_session>();
  handle->inputs = cInfos(loaded->inputs());
  handle->outputs = cInfos(loaded->outputs());
  handle->session = std::move(loaded);
  *session = handle.release();
  return nullptr;
}

fuel_status *fuel_session_load_file(const char *path, const fuel_session_options *options,
                                    fuel_session **session) {
  if (!session)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_load_file: session is NULL");
  *session = nullptr;
  if (!path)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_load_file: path is NULL");
  return guarded([&] {
    StatusCollector errors;
    std::shared_ptr<const FileBuffer> bytes = openInputFile(path, "artifact", errors.diag);
    if (!bytes)
      return errors.status(FUEL_LOAD_FAILED);
    return loadSession(std::move(bytes), path, options, errors, session);
  });
}

fuel_status *fuel_session_load_memory(const void *data, size_t bytes, const char *name,
                                      const fuel_session_options *options,
                                      fuel_session **session) {
  if (!session)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_load_memory: session is NULL");
  *session = nullptr;
  if (!data && bytes > 0)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_load_memory: data is NULL");
  return guarded([&] {
    StatusCollector errors;
    std::string copy(static_cast<const char *>(data), data ? bytes : 0);
    return loadSession(FileBuffer::fromBytes(std::move(copy)), name ? name : "<memory>",
                       options, errors, session);
  });
}

void fuel_session_free(fuel_session *session) { delete session; }

size_t fuel_session_input_count(const fuel_session *session) {
  return session ? session->inputs.size() : 0;
}

size_t fuel_session_output_count(const fuel_session *session) {
  return session ? session->outputs.size() : 0;
}

static fuel_status *tensorInfo(const fuel_session *session, size_t index,
                               fuel_tensor_info *info, bool inputs, const char *caller) {
  if (!session || !info)
    return makeStatus(FUEL_INVALID_ARGUMENT,
                      std::string(caller) + ": " + (session ? "info" : "session") +
                          " is NULL");
  const std::vector<CTensorInfo> &list = inputs ? session->inputs : session->outputs;
  if (index >= list.size())
    return makeStatus(FUEL_INVALID_ARGUMENT,
                      std::string(caller) + ": index " + std::to_string(index) +
                          " is out of range (the plan has " + std::to_string(list.size()) +
                          (inputs ? " inputs)" : " outputs)"));
  const CTensorInfo &c = list[index];
  info->name = c.info.name.c_str();
  info->dtype = fuel_dtype(c.info.dtype);
  info->rank = c.info.shape.size();
  info->shape = c.info.shape.data();
  info->dim_symbols = c.dimSymbols.data();
  return nullptr;
}

fuel_status *fuel_session_input_info(const fuel_session *session, size_t index,
                                     fuel_tensor_info *info) {
  return tensorInfo(session, index, info, /*inputs=*/true, "fuel_session_input_info");
}

fuel_status *fuel_session_output_info(const fuel_session *session, size_t index,
                                      fuel_tensor_info *info) {
  return tensorInfo(session, index, info, /*inputs=*/false, "fuel_session_output_info");
}

const char *fuel_session_route_report(const fuel_session *session) {
  return session ? session->session->routeReport().c_str() : "";
}

/// The C inputs as the C++ run takes them, or a status naming the first
/// malformed one.
static fuel_status *readInputs(const fuel_input *inputs, size_t count,
                               std::map<std::string, TensorRef> &refs) {
  if (!inputs && count > 0)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_run: inputs is NULL");
  for (size_t i = 0; i < count; ++i) {
    const fuel_input &in = inputs[i];
    std::string where = "fuel_session_run: input " + std::to_string(i);
    if (!in.name)
      return makeStatus(FUEL_INVALID_ARGUMENT, where + " has a NULL name");
    where += " ('" + std::string(in.name) + "')";
    if (!isDType(in.dtype))
      return makeStatus(FUEL_INVALID_ARGUMENT, where + " has an unknown dtype value " +
                                                   std::to_string(int(in.dtype)));
    if (!in.shape && in.rank > 0)
      return makeStatus(FUEL_INVALID_ARGUMENT, where + " has rank " +
                                                   std::to_string(in.rank) +
                                                   " and a NULL shape");
    TensorRef ref{DType(in.dtype), {in.shape, in.rank}, in.data, in.bytes};
    if (!refs.emplace(in.name, ref).second)
      return makeStatus(FUEL_INVALID_ARGUMENT, where + " is given twice");
  }
  return nullptr;
}

/// The C symbols as the C++ run takes them, or a status naming the first
/// malformed one.
static fuel_status *readSymbols(const fuel_symbol *symbols, size_t count,
                                std::map<std::string, int64_t> &values) {
  if (!symbols && count > 0)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_run: symbols is NULL");
  for (size_t i = 0; i < count; ++i) {
    std::string where = "fuel_session_run: symbol " + std::to_string(i);
    if (!symbols[i].name)
      return makeStatus(FUEL_INVALID_ARGUMENT, where + " has a NULL name");
    if (!values.emplace(symbols[i].name, symbols[i].value).second)
      return makeStatus(FUEL_INVALID_ARGUMENT,
                        where + " ('" + symbols[i].name + "') is given twice");
  }
  return nullptr;
}

static_assert(int(OutputView::Source::None) == FUEL_VIEW_NONE &&
              int(OutputView::Source::Input) == FUEL_VIEW_INPUT &&
              int(OutputView::Source::Output) == FUEL_VIEW_OUTPUT);

/// fuel_session_run, and with `views` fuel_session_run_views (`entry`
/// names which in messages).
static fuel_status *run(const char *entry, fuel_session *session, const fuel_input *inputs,
                        size_t input_count, const fuel_symbol *symbols, size_t symbol_count,
                        fuel_output_allocator allocate, void *user_data, fuel_output_view *views) {
  std::string name = entry;
  if (!session)
    return makeStatus(FUEL_INVALID_ARGUMENT, name + ": session is NULL");
  if (!allocate)
    return makeStatus(FUEL_INVALID_ARGUMENT, name + ": allocate is NULL");
  return guarded([&] {
    std::map<std::string, TensorRef> refs;
    if (fuel_status *malformed = readInputs(inputs, input_count, refs))
      return malformed;
    std::map<std::string, int64_t> values;
    if (fuel_status *malformed = readSymbols(symbols, symbol_count, values))
      return malformed;
    std::vector<TensorInfo> outputs = session->session->outputs();
    for (size_t i = 0; views && i < outputs.size(); ++i)
      if ((!views[i].shape || !views[i].strides) && !outputs[i].shape.empty())
        return makeStatus(FUEL_INVALID_ARGUMENT, name + ": view " + std::to_string(i) + " ('" +
                                                     outputs[i].name +
                                                     "') has a NULL shape or strides");
    StatusCollector errors;
    auto give = [&](size_t index, DType dtype, std::span<const int64_t> shape,
                    size_t bytes) {
      return allocate(user_data, index, fuel_dtype(dtype), shape.size(), shape.data(),
                      bytes);
    };
    std::vector<OutputView> where;
    if (failed(session->session->run(refs, give, errors.diag, values, views ? &where : nullptr)))
      return errors.status(FUEL_RUN_FAILED);
    std::vector<TensorInfo> planInputs = session->session->inputs();
    for (size_t i = 0; views && i < where.size(); ++i) {
      fuel_output_view &v = views[i];
      v.source = int32_t(where[i].source);
      v.index = where[i].index;
      v.offset = where[i].offset;
      if (where[i].source == OutputView::Source::Input) // As the caller ordered them.
        for (size_t j = 0; j < input_count; ++j)
          if (planInputs[where[i].index].name == inputs[j].name)
            v.index = j;
      std::copy(where[i].shape.begin(), where[i].shape.end(), v.shape);
      std::copy(where[i].strides.begin(), where[i].strides.end(), v.strides);
    }
    return static_cast<fuel_status *>(nullptr);
  });
}

fuel_status *fuel_session_run(fuel_session *session, const fuel_input *inputs, size_t input_count,
                              const fuel_symbol *symbols, size_t symbol_count,
                              fuel_output_allocator allocate, void *user_data) {
  return run("fuel_session_run", session, inputs, input_count, symbols, symbol_count, allocate,
             user_data, nullptr);
}

fuel_status *fuel_session_run_views(fuel_session *session, const fuel_input *inputs,
                                    size_t input_count, const fuel_symbol *symbols,
                                    size_t symbol_count, fuel_output_allocator allocate,
                                    void *user_data, fuel_output_view *views) {
  if (!views)
    return makeStatus(FUEL_INVALID_ARGUMENT, "fuel_session_run_views: views is NULL");
  return run("fuel_session_run_views", session, inputs, input_count, symbols, symbol_count,
             allocate, user_data, views);
}

/// A malloc'd copy of `text`, which the caller frees with fuel_string_free.
static char *cString(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out)
    std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

char *fuel_session_profile_report(const fuel_session *session) {
  return session ? cString(session->session->profileReport()) : nullptr;
}

char *fuel_session_trace_json(const fuel_session *session) {
  return session ? cString(session->session->traceJson()) : nullptr;
}

void fuel_session_reset_profile(fuel_session *session) {
  if (session)
    session->session->resetProfile();
}

int fuel_session_choosing(const fuel_session *session) {
  return session && session->session->choosing() ? 1 : 0;
}

void fuel_string_free(char *string) { std::free(string); }

} // extern "C"
