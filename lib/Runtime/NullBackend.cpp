//===- NullBackend.cpp - A device whose kernels do nothing ----------------===//
//
// Stands in for any device (RuntimeOptions::nullDevices) to test the
// runtime's scheduling without its hardware: kernels do nothing, and every
// launch, submission, wait and copy is reported to the session's log in
// order. A null CPU runs launches at once, in host memory; any other null
// device is a deferred queue like a GPU's: launches and copies wait in it
// until a flush or an event submits them (in flight) and a wait completes
// them, and its memory is reached only through uploads and downloads. An
// event is a position in the queue (how many launches and copies precede
// it), so a log shows how far each wait reached: "wait for 3" waits for the
// first three, "wait 2" completes the two in flight.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <map>

using namespace fuel;
using namespace fuel::runtime;

namespace {
class NullBackend final : public Backend {
public:
  NullBackend(const artifact::Device &device, NullDeviceLog log)
      : id(device.id), hostMemory(device.kind == "cpu"), log(std::move(log)) {}

  Expected<void> allocateArena(uint64_t bytes) override {
    arena.assign(std::max<uint64_t>(bytes, 1), 0);
    return {};
  }
  char *arenaBase() override { return arena.data(); }
  bool isHostMemory() const override { return hostMemory; }
  Expected<void> loadKernels(std::string_view, const artifact::Program &program,
                             unsigned device) override {
    for (const artifact::Kernel &k : program.kernels)
      if (k.device == device)
        symbols[k.symbol] = &k;
    return {};
  }
  /// Any kernel of the device's program resolves (to its program entry).
  void *findKernel(const std::string &symbol) override {
    auto it = symbols.find(symbol);
    return it == symbols.end() ? nullptr : const_cast<artifact::Kernel *>(it->second);
  }
  std::optional<std::string> kernelSignature(const std::string &) override {
    return std::nullopt; // No binary to disagree with the program.
  }
  void launch(KernelCall &call) override {
    auto *kernel = static_cast<const artifact::Kernel *>(call.entry);
    report("launch " + kernel->symbol);
    enqueue();
  }
  void upload(char *to, const char *from, size_t bytes) override {
    report("upload");
    std::memcpy(to, from, bytes);
    enqueue();
  }
  const char *enqueueDownload(size_t slot, const char *from, size_t bytes) override {
    if (hostMemory)
      return from;
    report("download");
    enqueue();
    std::vector<char> &region = downloadSlots[slot];
    region.assign(from, from + bytes);
    return region.data();
  }
  void flush() override {
    if (submitted == enqueued)
      return;
    report("submit " + std::to_string(enqueued - submitted));
    submitted = enqueued;
  }
  Event record() override {
    flush();
    return enqueued;
  }
  void waitFor(Event event) override {
    if (event <= completed)
      return;
    report("wait for " + std::to_string(event));
    completed = event;
  }
  void wait() override {
    if (hostMemory)
      return;
    flush();
    report("wait " + std::to_string(submitted - completed));
    completed = submitted;
  }
  std::string describe() const override { return "null"; }

private:
  void enqueue() {
    if (hostMemory)
      return;
    ++enqueued;
  }
  void report(const std::string &event) {
    if (log)
      log(id + " " + event);
  }

  std::string id;
  bool hostMemory;
  NullDeviceLog log;
  std::vector<char> arena;
  std::map<std::string, const artifact::Kernel *> symbols;
  std::map<size_t, std::vector<char>> downloadSlots;
  // Positions in the queue: enqueued, submitted and completed work.
  uint64_t enqueued = 0, submitted = 0, completed = 0;
};
} // namespace

std::unique_ptr<Backend> runtime::createNullBackend(const artifact::Device &device,
                                                    NullDeviceLog log) {
  return std::make_unique<NullBackend>(device, std::move(log));
}
