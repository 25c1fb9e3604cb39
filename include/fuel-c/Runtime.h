/*===- fuel-c/Runtime.h - C interface to the fuel runtime ---------*- C -*-===*\
|*                                                                            *|
|* Loads and runs .fplan artifacts from any language: opaque handles, a      *|
|* status object for every failure (NULL is success), no C++ type in the     *|
|* interface. The C++ interface is fuel/Runtime/Runtime.h; this one is a thin *|
|* layer over it with the same contract (fail-fast load, runs that take      *|
|* turns on one session).                                                     *|
|*                                                                            *|
|* Stability: functions are only ever added; enumerator values and struct    *|
|* layouts never change. FUEL_C_API_VERSION counts additions.                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef FUEL_C_RUNTIME_H
#define FUEL_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FUEL_C_API_VERSION 2

/* Element types. A fuel_dtype is an integer, not an enum, so that any value
 * a caller passes is defined behaviour (and refused when unknown); these
 * are its values, which never change. */
typedef int32_t fuel_dtype;
enum {
  FUEL_DTYPE_F32 = 0,
  FUEL_DTYPE_F16 = 1,
  FUEL_DTYPE_BF16 = 2,
  FUEL_DTYPE_F64 = 3,
  FUEL_DTYPE_I8 = 4,
  FUEL_DTYPE_I32 = 5,
  FUEL_DTYPE_I64 = 6,
  FUEL_DTYPE_U8 = 7,
  FUEL_DTYPE_BOOL = 8,
  FUEL_DTYPE_I16 = 9,
  FUEL_DTYPE_U16 = 10,
  FUEL_DTYPE_U32 = 11,
  FUEL_DTYPE_U64 = 12
};

typedef enum fuel_status_code {
  FUEL_OK = 0,
  /* A malformed call: a null pointer, an index out of range, an unknown
   * dtype value, an input named twice. */
  FUEL_INVALID_ARGUMENT = 1,
  /* The artifact cannot run here (unreadable, corrupted, no route). */
  FUEL_LOAD_FAILED = 2,
  /* The inputs do not fit the plan (name, dtype, shape, size, alignment),
   * a device failed, or memory for an output was refused. */
  FUEL_RUN_FAILED = 3
} fuel_status_code;

/* A failure: its code and message. Functions return NULL on success and a
 * status the caller frees with fuel_status_free otherwise. */
typedef struct fuel_status fuel_status;
fuel_status_code fuel_status_get_code(const fuel_status *status);
/* Every diagnostic of the failure, one per line, each naming where. */
const char *fuel_status_get_message(const fuel_status *status);
void fuel_status_free(fuel_status *status);

/* The size in bytes of one element of `dtype`; 0 for an unknown value. */
size_t fuel_dtype_size(fuel_dtype dtype);
/* "f32", "i64", ...; "" for an unknown value. */
const char *fuel_dtype_name(fuel_dtype dtype);

typedef struct fuel_session_options {
  /* Threads for CPU kernels (the caller's included); 0: one per CPU this
   * process may use. */
  uint32_t threads;
  /* Nonzero: time every kernel (fuel_session_profile_report). */
  uint32_t profile;
  /* Nonzero: record a timeline of the runs (fuel_session_trace_json). */
  uint32_t trace;
} fuel_session_options;

/* A loaded artifact; safe to use from several threads (runs take turns). */
typedef struct fuel_session fuel_session;

/* Loads the artifact at `path`; `options` may be NULL (the defaults). */
fuel_status *fuel_session_load_file(const char *path, const fuel_session_options *options,
                                    fuel_session **session);
/* Loads an artifact held in memory (copied: the caller's bytes may go
 * after the call); `name` names it in messages and may be NULL. */
fuel_status *fuel_session_load_memory(const void *data, size_t bytes, const char *name,
                                      const fuel_session_options *options,
                                      fuel_session **session);
void fuel_session_free(fuel_session *session);

/* A graph input or output as the plan holds it. The pointers stay valid
 * while the session lives. */
typedef struct fuel_tensor_info {
  const char *name;
  fuel_dtype dtype;
  size_t rank;
  /* Extents at the plan's bounds: a dim bound at run time may be smaller. */
  const int64_t *shape;
  /* Per dim, the symbol bound at run time, "" for a fixed dim. */
  const char *const *dim_symbols;
} fuel_tensor_info;

size_t fuel_session_input_count(const fuel_session *session);
size_t fuel_session_output_count(const fuel_session *session);
fuel_status *fuel_session_input_info(const fuel_session *session, size_t index,
                                     fuel_tensor_info *info);
fuel_status *fuel_session_output_info(const fuel_session *session, size_t index,
                                      fuel_tensor_info *info);
/* Which route was chosen and why earlier ones were skipped. */
const char *fuel_session_route_report(const fuel_session *session);

/* An input: dense, row-major memory the run reads (in place where the plan
 * allows) and never writes; aligned to its element size. */
typedef struct fuel_input {
  const char *name;
  fuel_dtype dtype;
  size_t rank;
  const int64_t *shape;
  const void *data;
  size_t bytes;
} fuel_input;

/* Gives a run the memory for output `index` (`bytes` long, dense and
 * row-major at `shape`), before it executes; the run fills it before
 * returning (outputs computed on the CPU are written there in place when
 * it is aligned to their elements and holds no input). Returning NULL for
 * bytes > 0 fails the run with FUEL_RUN_FAILED. */
typedef void *(*fuel_output_allocator)(void *user_data, size_t index, fuel_dtype dtype,
                                       size_t rank, const int64_t *shape, size_t bytes);

/* A symbolic dim set by name, as well as from the inputs' shapes. */
typedef struct fuel_symbol {
  const char *name;
  int64_t value;
} fuel_symbol;

/* Runs the plan once on `inputs` (every graph input, once each, in any
 * order): binds symbolic dims from their shapes and from `symbols` (which
 * the inputs must agree with; may be NULL when symbol_count is 0),
 * executes every step and writes each output into memory `allocate`
 * gives. */
fuel_status *fuel_session_run(fuel_session *session, const fuel_input *inputs,
                              size_t input_count, const fuel_symbol *symbols,
                              size_t symbol_count, fuel_output_allocator allocate,
                              void *user_data);

/* Where fuel_session_run_views left an output: FUEL_VIEW_NONE, written
 * into memory the allocator gave; FUEL_VIEW_INPUT or FUEL_VIEW_OUTPUT, a
 * view of input `index` (in the caller's `inputs` order) or of output
 * `index` (never itself a view): its element at multi-index i is element
 * offset + sum(i[d] * strides[d]) of that tensor's dense memory. */
enum { FUEL_VIEW_NONE = 0, FUEL_VIEW_INPUT = 1, FUEL_VIEW_OUTPUT = 2 };
typedef struct fuel_output_view {
  int32_t source;
  size_t index;
  int64_t offset;
  /* Given by the caller: room for the output's rank (fuel_session_output_info)
   * entries each, which the run fills for a view. */
  int64_t *shape;
  int64_t *strides;
} fuel_output_view;

/* fuel_session_run for callers that take views: outputs that are views of
 * an input or of another output (a reshape, transpose or slice of it) get
 * no memory from `allocate` and no copy; views[i] (one per output) says
 * where output i lies. Since FUEL_C_API_VERSION 2. */
fuel_status *fuel_session_run_views(fuel_session *session, const fuel_input *inputs,
                                    size_t input_count, const fuel_symbol *symbols,
                                    size_t symbol_count, fuel_output_allocator allocate,
                                    void *user_data, fuel_output_view *views);

/* Time per kernel kind and device over the runs so far (tab-separated,
 * with a header line); the caller frees it with fuel_string_free. */
char *fuel_session_profile_report(const fuel_session *session);
/* The runs so far as Chrome trace JSON (with the trace option): a track for
 * the host and one per device; freed with fuel_string_free. */
char *fuel_session_trace_json(const fuel_session *session);
/* Forgets the runs so far, for the profile and the trace. */
void fuel_session_reset_profile(fuel_session *session);
/* 1 while a backend is still measuring choices that later runs keep (with
 * more than one thread, the CPU backend's first ten runs choose which
 * kernels split, once one large enough to split has run): a benchmark of
 * the steady state warms up until it is 0 (later, a run of each choice
 * now and then checks it still holds). 0 for a null session. */
int fuel_session_choosing(const fuel_session *session);
void fuel_string_free(char *string);

#ifdef __cplusplus
}
#endif

#endif /* FUEL_C_RUNTIME_H */
