/* The runtime's C interface, compiled as C: every malformed call gets the
 * status it documents with a message naming the problem, and runs of the
 * MLP example (x[B, 64] -> probs[B, 10], planned with B <= 4) behave as the
 * plan says; views.fplan (test/unit/Runtime/plans/views.json) checks runs
 * that take views. Usage: fuel-c-api-test MLP.fplan VIEWS.fplan */
#include "fuel-c/Runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
      ++failures;                                                                  \
    }                                                                              \
  } while (0)

/* Checks that `status` failed with `code` and a message containing `text`,
 * and frees it. */
static void expectStatus(fuel_status *status, fuel_status_code code, const char *text,
                         int line) {
  if (!status) {
    fprintf(stderr, "line %d: expected status %d ('%s'), got success\n", line, code, text);
    ++failures;
    return;
  }
  const char *message = fuel_status_get_message(status);
  if (fuel_status_get_code(status) != code || !strstr(message, text)) {
    fprintf(stderr, "line %d: expected status %d with '%s', got %d: %s\n", line, code, text,
            fuel_status_get_code(status), message);
    ++failures;
  }
  fuel_status_free(status);
}
#define EXPECT_STATUS(call, code, text) expectStatus((call), (code), (text), __LINE__)

/* Output memory from malloc, recorded for the checks and freed after. */
struct Outputs {
  float *data[4];
  int64_t shape[4][2];
  size_t count;
  int refuse;
};

static void *allocateOutput(void *user, size_t index, fuel_dtype dtype, size_t rank,
                            const int64_t *shape, size_t bytes) {
  struct Outputs *out = user;
  if (out->refuse || index >= 4 || rank != 2 || dtype != FUEL_DTYPE_F32)
    return NULL;
  out->data[index] = malloc(bytes);
  out->shape[index][0] = shape[0];
  out->shape[index][1] = shape[1];
  out->count = index + 1;
  return out->data[index];
}

static void freeOutputs(struct Outputs *out) {
  for (size_t i = 0; i < out->count; ++i)
    free(out->data[i]);
  memset(out, 0, sizeof *out);
}

/* Deterministic values in [-2, 2), never all zero. */
static void fillRandom(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 16384.0f - 2.0f;
  }
}

static void checkInfo(fuel_session *session) {
  CHECK(fuel_session_input_count(session) == 1);
  CHECK(fuel_session_output_count(session) == 1);
  fuel_tensor_info info;
  CHECK(fuel_session_input_info(session, 0, &info) == NULL);
  CHECK(strcmp(info.name, "x") == 0 && info.dtype == FUEL_DTYPE_F32 && info.rank == 2);
  CHECK(info.shape[0] == 4 && info.shape[1] == 64);
  CHECK(strcmp(info.dim_symbols[0], "B") == 0 && strcmp(info.dim_symbols[1], "") == 0);
  CHECK(fuel_session_output_info(session, 0, &info) == NULL);
  CHECK(strcmp(info.name, "probs") == 0 && info.shape[1] == 10);
  EXPECT_STATUS(fuel_session_input_info(session, 1, &info), FUEL_INVALID_ARGUMENT,
                "index 1 is out of range (the plan has 1 inputs)");
  EXPECT_STATUS(fuel_session_output_info(session, 0, NULL), FUEL_INVALID_ARGUMENT,
                "info is NULL");
  CHECK(strstr(fuel_session_route_report(session), "chosen") != NULL);
  CHECK(fuel_dtype_size(FUEL_DTYPE_I64) == 8 && fuel_dtype_size((fuel_dtype)42) == 0);
  CHECK(strcmp(fuel_dtype_name(FUEL_DTYPE_BF16), "bf16") == 0);
}

/* Softmax rows: each in (0, 1), each row summing to 1; rows of a batch do
 * not depend on each other, so a smaller batch gives the same rows. */
static void checkRuns(fuel_session *session) {
  float x[4 * 64];
  fillRandom(x, 4 * 64, 7);
  int64_t shape4[2] = {4, 64}, shape2[2] = {2, 64};
  fuel_input input = {"x", FUEL_DTYPE_F32, 2, shape4, x, sizeof x};
  struct Outputs full = {0}, half = {0};
  CHECK(fuel_session_run(session, &input, 1, NULL, 0, allocateOutput, &full) == NULL);
  CHECK(full.count == 1 && full.shape[0][0] == 4 && full.shape[0][1] == 10);
  input.shape = shape2;
  input.bytes = 2 * 64 * sizeof(float);
  fuel_symbol b2 = {"B", 2}; /* Set as well as bound: they agree. */
  CHECK(fuel_session_run(session, &input, 1, &b2, 1, allocateOutput, &half) == NULL);
  CHECK(half.count == 1 && half.shape[0][0] == 2);
  if (full.count == 1 && half.count == 1) {
    for (int r = 0; r < 4; ++r) {
      double sum = 0;
      for (int c = 0; c < 10; ++c) {
        float p = full.data[0][r * 10 + c];
        CHECK(p > 0 && p < 1);
        sum += p;
      }
      CHECK(fabs(sum - 1) < 1e-5);
    }
    CHECK(memcmp(full.data[0], half.data[0], 2 * 10 * sizeof(float)) == 0);
  }
  freeOutputs(&full);
  freeOutputs(&half);
}

static void checkBadRuns(fuel_session *session) {
  float x[4 * 64];
  fillRandom(x, 4 * 64, 11);
  int64_t shape[2] = {4, 64}, tooBig[2] = {5, 64}, wrongRank[1] = {256};
  struct Outputs out = {0};
  fuel_input input = {"x", FUEL_DTYPE_F32, 2, shape, x, sizeof x};
  EXPECT_STATUS(fuel_session_run(NULL, &input, 1, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "session is NULL");
  EXPECT_STATUS(fuel_session_run(session, &input, 1, NULL, 0, NULL, &out), FUEL_INVALID_ARGUMENT,
                "allocate is NULL");
  EXPECT_STATUS(fuel_session_run(session, NULL, 1, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "inputs is NULL");
  EXPECT_STATUS(fuel_session_run(session, &input, 0, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "missing input 'x'");

  fuel_input two[2] = {input, input};
  EXPECT_STATUS(fuel_session_run(session, two, 2, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "input 1 ('x') is given twice");
  fuel_input bad = input;
  bad.name = NULL;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "input 0 has a NULL name");
  bad = input;
  bad.name = "y";
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "the plan has no input named 'y' (its inputs: x)");
  bad = input;
  bad.dtype = (fuel_dtype)99;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "unknown dtype value 99");
  bad = input;
  bad.dtype = FUEL_DTYPE_I32;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "input 'x' must be f32, got i32");
  bad = input;
  bad.shape = NULL;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "has rank 2 and a NULL shape");
  bad = input;
  bad.rank = 1;
  bad.shape = wrongRank;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "input 'x' must have shape [B, 64]");
  bad = input;
  bad.shape = tooBig;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "the inputs bind B=5, but the plan's buffers hold B <= 4");
  bad = input;
  bad.bytes = sizeof x - 4;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "input 'x' holds 1020 bytes; its shape needs 1024");
  bad = input;
  bad.data = NULL;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "input 'x' has no data");
  bad = input;
  bad.data = (const char *)x + 1;
  EXPECT_STATUS(fuel_session_run(session, &bad, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "input 'x' is not aligned to its 4-byte elements");
  fuel_symbol b3 = {"B", 3}, unknown = {"T", 1}, negative = {"B", -1}, unnamed = {NULL, 4};
  EXPECT_STATUS(fuel_session_run(session, &input, 1, &b3, 1, allocateOutput, &out),
                FUEL_RUN_FAILED, "input 'x' binds symbol 'B' to 4, but it is set to 3");
  EXPECT_STATUS(fuel_session_run(session, &input, 1, &unknown, 1, allocateOutput, &out),
                FUEL_RUN_FAILED, "the plan has no symbol named 'T' (its symbols: B)");
  EXPECT_STATUS(fuel_session_run(session, &input, 1, &negative, 1, allocateOutput, &out),
                FUEL_RUN_FAILED, "symbol 'B' is set to -1; an extent is 0 or more");
  EXPECT_STATUS(fuel_session_run(session, &input, 1, &unnamed, 1, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "symbol 0 has a NULL name");
  EXPECT_STATUS(fuel_session_run(session, &input, 1, NULL, 1, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "symbols is NULL");
  fuel_symbol twice[2] = {b3, b3};
  EXPECT_STATUS(fuel_session_run(session, &input, 1, twice, 2, allocateOutput, &out),
                FUEL_INVALID_ARGUMENT, "symbol 1 ('B') is given twice");
  out.refuse = 1;
  EXPECT_STATUS(fuel_session_run(session, &input, 1, NULL, 0, allocateOutput, &out), FUEL_RUN_FAILED,
                "no memory was given for output 'probs'");
  freeOutputs(&out);
}

static void checkBadLoads(void) {
  fuel_session *session = (fuel_session *)&failures; /* Overwritten with NULL. */
  EXPECT_STATUS(fuel_session_load_file("/nonexistent.fplan", NULL, &session),
                FUEL_LOAD_FAILED, "/nonexistent.fplan");
  CHECK(session == NULL);
  EXPECT_STATUS(fuel_session_load_file(NULL, NULL, &session), FUEL_INVALID_ARGUMENT,
                "path is NULL");
  EXPECT_STATUS(fuel_session_load_file("x.fplan", NULL, NULL), FUEL_INVALID_ARGUMENT,
                "session is NULL");
  EXPECT_STATUS(fuel_session_load_memory("FUELPLAN", 8, "short.fplan", NULL, &session),
                FUEL_LOAD_FAILED, "short.fplan");
  EXPECT_STATUS(fuel_session_load_memory(NULL, 8, NULL, NULL, &session),
                FUEL_INVALID_ARGUMENT, "data is NULL");
  fuel_session_options many = {100000, 0, 0};
  EXPECT_STATUS(fuel_session_load_memory("", 0, NULL, &many, &session), FUEL_LOAD_FAILED,
                "the runtime runs at most 1024");
  CHECK(fuel_status_get_code(NULL) == FUEL_OK);
  CHECK(strcmp(fuel_status_get_message(NULL), "") == 0);
  fuel_session_free(NULL);
  CHECK(fuel_session_input_count(NULL) == 0);
}

/* The artifact loaded from memory, with profiling on: the report names the
 * kernels that ran. It never chooses thread splits (fuel_session_choosing):
 * not with one thread, nor with two, its kernels being too small to split. */
static void checkMemoryLoad(const char *path) {
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f)
    return;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *bytes = malloc((size_t)size);
  CHECK(fread(bytes, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  fuel_session *session = NULL;
  fuel_session_options options = {1, 1, 1};
  CHECK(fuel_session_load_memory(bytes, (size_t)size, "copy.fplan", &options, &session) ==
        NULL);
  free(bytes); /* The session holds its own copy. */
  if (!session)
    return;
  float x[64];
  fillRandom(x, 64, 3);
  int64_t shape[2] = {1, 64};
  fuel_input input = {"x", FUEL_DTYPE_F32, 2, shape, x, sizeof x};
  struct Outputs out = {0};
  CHECK(fuel_session_run(session, &input, 1, NULL, 0, allocateOutput, &out) == NULL);
  freeOutputs(&out);
  char *report = fuel_session_profile_report(session);
  CHECK(report && strstr(report, "cpu:0") != NULL);
  fuel_string_free(report);
  char *trace = fuel_session_trace_json(session);
  CHECK(trace && strstr(trace, "\"traceEvents\"") && strstr(trace, "\"cat\": \"run\""));
  fuel_string_free(trace);
  /* One thread: nothing to choose. */
  CHECK(fuel_session_choosing(session) == 0);
  fuel_session_free(session);
  CHECK(fuel_session_choosing(NULL) == 0);

  /* Two threads, but kernels of one row, too small to split: nothing to
   * choose. */
  fuel_session_options two = {2, 0, 0};
  CHECK(fuel_session_load_file(path, &two, &session) == NULL);
  if (!session)
    return;
  CHECK(fuel_session_run(session, &input, 1, NULL, 0, allocateOutput, &out) == NULL);
  freeOutputs(&out);
  CHECK(fuel_session_choosing(session) == 0);
  fuel_session_free(session);
}

/* views.fplan: x[4, 6] -> t = relu(x)^T, r = relu(x), f = x as [3, 8], x. */
static void checkViews(const char *path) {
  fuel_session *session = NULL;
  fuel_status *status = fuel_session_load_file(path, NULL, &session);
  CHECK(!status);
  if (status) {
    fuel_status_free(status);
    return;
  }
  float x[24];
  fillRandom(x, 24, 9);
  int64_t shape[2] = {4, 6};
  fuel_input in = {"x", FUEL_DTYPE_F32, 2, shape, x, sizeof x};
  int64_t dims[4][2][2]; /* Per output: shape, strides. */
  fuel_output_view views[4];
  for (int i = 0; i < 4; ++i) {
    views[i].shape = dims[i][0];
    views[i].strides = dims[i][1];
  }
  struct Outputs out = {0};
  CHECK(!fuel_session_run_views(session, &in, 1, NULL, 0, allocateOutput, &out, views));
  /* Only r (output 1) was given memory; t views it, f and x view the input. */
  CHECK(out.count == 2 && out.data[0] == NULL && out.data[1] != NULL);
  CHECK(views[0].source == FUEL_VIEW_OUTPUT && views[0].index == 1);
  CHECK(views[1].source == FUEL_VIEW_NONE);
  CHECK(views[2].source == FUEL_VIEW_INPUT && views[2].index == 0);
  CHECK(views[3].source == FUEL_VIEW_INPUT && views[3].index == 0);
  CHECK(dims[0][0][0] == 6 && dims[0][0][1] == 4 && dims[2][0][0] == 3 && dims[2][0][1] == 8);
  if (out.data[1])
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 4; ++j) { /* t[i][j] through the view: relu(x[j][i]). */
        float want = x[j * 6 + i] > 0 ? x[j * 6 + i] : 0;
        CHECK(out.data[1][views[0].offset + i * dims[0][1][0] + j * dims[0][1][1]] == want);
      }
  freeOutputs(&out);
  views[2].shape = NULL;
  EXPECT_STATUS(fuel_session_run_views(session, &in, 1, NULL, 0, allocateOutput, &out, views),
                FUEL_INVALID_ARGUMENT, "view 2 ('f') has a NULL shape or strides");
  EXPECT_STATUS(fuel_session_run_views(session, &in, 1, NULL, 0, allocateOutput, &out, NULL),
                FUEL_INVALID_ARGUMENT, "fuel_session_run_views: views is NULL");
  freeOutputs(&out);
  fuel_session_free(session);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fuel-c-api-test MLP.fplan VIEWS.fplan\n");
    return 2;
  }
  fuel_session *session = NULL;
  fuel_status *status = fuel_session_load_file(argv[1], NULL, &session);
  if (status) {
    fprintf(stderr, "load failed: %s\n", fuel_status_get_message(status));
    fuel_status_free(status);
    return 1;
  }
  checkInfo(session);
  checkRuns(session);
  checkBadRuns(session);
  fuel_session_free(session);
  checkBadLoads();
  checkMemoryLoad(argv[1]);
  checkViews(argv[2]);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("c-api: all checks passed\n");
  return failures != 0;
}
