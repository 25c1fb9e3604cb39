/* The same as consumer.cpp through the installed C interface: loads an
 * artifact, runs it on ones and prints the output's shape and sum. */
#include "fuel-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>

struct Output {
  int64_t shape[2];
  float *data;
};

static void *allocate(void *user, size_t index, fuel_dtype dtype, size_t rank,
                      const int64_t *shape, size_t bytes) {
  struct Output *out = user;
  if (index != 0 || dtype != FUEL_DTYPE_F32 || rank != 2)
    return NULL;
  out->shape[0] = shape[0];
  out->shape[1] = shape[1];
  return out->data = malloc(bytes);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  fuel_session *session = NULL;
  fuel_status *status = fuel_session_load_file(argv[1], NULL, &session);
  if (status) {
    fprintf(stderr, "%s\n", fuel_status_get_message(status));
    return 1;
  }
  float x[2 * 64];
  for (int i = 0; i < 2 * 64; ++i)
    x[i] = 1;
  int64_t shape[2] = {2, 64};
  struct Output out = {{0, 0}, NULL};
  fuel_input input = {"x", FUEL_DTYPE_F32, 2, shape, x, sizeof x};
  status = fuel_session_run(session, &input, 1, NULL, 0, allocate, &out);
  if (status) {
    fprintf(stderr, "%s\n", fuel_status_get_message(status));
    return 1;
  }
  double sum = 0;
  for (int64_t i = 0; i < out.shape[0] * out.shape[1]; ++i)
    sum += out.data[i];
  printf("c: output [%lld, %lld] sum %g\n", (long long)out.shape[0], (long long)out.shape[1],
         sum);
  free(out.data);
  fuel_session_free(session);
  return 0;
}
