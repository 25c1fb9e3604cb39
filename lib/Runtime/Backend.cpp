//===- Backend.cpp - The registry of device backends ----------------------===//
//
// One entry per device kind; a new backend is its folder plus a line here.
// (An explicit table, not static registration: the runtime is a static
// library, whose unreferenced registrars the linker would drop.)
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

using namespace fuel;
using namespace fuel::runtime;

namespace {
struct Registration {
  const char *kind;
  Expected<std::unique_ptr<Backend>> (*create)(const artifact::Device &, unsigned threads);
};

const Registration kBackends[] = {
    {"cpu", createCpuBackend},
    {"vulkan", [](const artifact::Device &d, unsigned) { return createVulkanBackend(d); }},
    {"cuda", [](const artifact::Device &d, unsigned) { return createCudaBackend(d); }},
};
} // namespace

Expected<std::unique_ptr<Backend>> runtime::createBackend(const artifact::Device &device,
                                                          unsigned threads) {
  for (const Registration &r : kBackends)
    if (device.kind == r.kind)
      return r.create(device, threads);
  return Error{"this runtime has no backend for devices of kind '" + device.kind + "'"};
}

std::vector<std::string> runtime::backendKinds() {
  std::vector<std::string> kinds;
  for (const Registration &r : kBackends)
    kinds.push_back(r.kind);
  return kinds;
}
