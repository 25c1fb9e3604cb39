//===- CApiRunFuzzer.cpp - libFuzzer target for the C interface's run -----===//
//
// Arbitrary bytes as the arguments of fuel_session_run (or
// fuel_session_run_views, with or without room for the views) on the MLP
// example (x[B, 64], B <= 4): up to three inputs with any name, dtype value,
// rank, extents (negative and huge included), data (none, misaligned, any
// size up to what the fuzzer allocated), symbols set by name, and an
// allocator that may refuse or give misaligned memory. No crash, no
// sanitizer report; every failure has a message.
//
//===----------------------------------------------------------------------===//

#include "fuel-c/Runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
fuel_session *session = nullptr;

/// Reads the input's bytes in order; zeros once they run out.
class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t byte() { return at < size ? data[at++] : 0; }
  int64_t word() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v = v << 8 | byte();
    return static_cast<int64_t>(v);
  }
  /// Small extents mostly, any 64-bit value sometimes.
  int64_t extent() {
    uint8_t kind = byte();
    return kind < 200 ? kind % 9 : kind < 240 ? 64 : word();
  }

private:
  const uint8_t *data;
  size_t size, at = 0;
};

/// Output memory: refused past 4 outputs or 1 MiB, misaligned by `shift`.
struct Outputs {
  std::vector<std::vector<char>> buffers;
  size_t shift = 0;
};

void *allocate(void *user, size_t, fuel_dtype, size_t, const int64_t *, size_t bytes) {
  auto *outputs = static_cast<Outputs *>(user);
  if (outputs->buffers.size() >= 4 || bytes > (1u << 20))
    return nullptr;
  return outputs->buffers.emplace_back(bytes + outputs->shift).data() + outputs->shift;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // run-fuzzer.sh plans the examples into seeds/ (with the release fuelc).
  fuel_session_options options{1, 0, 0};
  if (fuel_status *status = fuel_session_load_file("seeds/mlp.fplan", &options, &session)) {
    std::fprintf(stderr, "c-api-run-fuzzer: %s\n", fuel_status_get_message(status));
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"x", "y", "", nullptr};
  ByteReader in(data, size);
  size_t count = in.byte() % 4;
  std::vector<fuel_input> inputs(count);
  std::vector<std::vector<int64_t>> shapes(count);
  std::vector<std::vector<char>> memory(count);
  for (size_t i = 0; i < count; ++i) {
    fuel_input &input = inputs[i];
    input.name = names[in.byte() % 4];
    input.dtype = static_cast<fuel_dtype>(static_cast<int8_t>(in.byte()) % 12);
    size_t rank = in.byte() % 6;
    for (size_t d = 0; d < rank; ++d)
      shapes[i].push_back(in.extent());
    input.rank = rank;
    input.shape = (in.byte() % 16 || rank == 0) ? shapes[i].data() : nullptr;
    size_t bytes = (in.byte() % 8 == 0) ? static_cast<uint64_t>(in.word()) % 4096
                                          : 4 * 64 * (1 + in.byte() % 4);
    size_t misalign = in.byte() % 4;
    memory[i].assign(bytes + misalign, '\1');
    input.data = in.byte() % 16 ? memory[i].data() + misalign : nullptr;
    input.bytes = bytes;
  }
  Outputs outputs;
  outputs.shift = in.byte() % 4 == 0 ? 2 : 0;
  // Symbols: none, B, an unknown one, a NULL name; any value.
  static const char *const symbolNames[] = {"B", "T", nullptr};
  std::vector<fuel_symbol> symbols(in.byte() % 3);
  for (fuel_symbol &s : symbols)
    s = {symbolNames[in.byte() % 3], in.extent()};
  const fuel_symbol *symbolData = symbols.empty() ? nullptr : symbols.data();
  int64_t dims[2][2];
  fuel_output_view view{FUEL_VIEW_NONE, 0, 0, dims[0], dims[1]};
  uint8_t entry = in.byte() % 4;
  if (entry == 1)
    view.shape = nullptr;
  fuel_status *status =
      entry == 0 ? fuel_session_run(session, inputs.data(), count, symbolData, symbols.size(),
                                    allocate, &outputs)
                 : fuel_session_run_views(session, inputs.data(), count, symbolData, symbols.size(),
                                          allocate, &outputs, entry == 2 ? nullptr : &view);
  if (status && std::strlen(fuel_status_get_message(status)) == 0)
    std::abort();
  fuel_status_free(status);
  return 0;
}
