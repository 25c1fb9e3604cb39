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
  std::unique_ptr<Backend> (*create)(const artifact::Device &, unsigned threads,
                                     std::string &why);
};

const Registration kBackends[] = {
    {"cpu", createCpuBackend},
    {"vulkan", [](const artifact::Device &d, unsigned, std::string &why) {
       return createVulkanBackend(d, why);
     }},
    {"cuda", [](const artifact::Device &d, unsigned, std::string &why) {
       return createCudaBackend(d, why);
     }},
};
} // namespace

std::unique_ptr<Backend> runtime::createBackend(const artifact::Device &device,
                                                unsigned threads,
                                                std::string &why) {
  for (const Registration &r : kBackends)
    if (device.kind == r.kind)
      return r.create(device, threads, why);
  why = "this runtime has no backend for devices of kind '" + device.kind + "'";
  return nullptr;
}

std::vector<std::string> runtime::backendKinds() {
  std::vector<std::string> kinds;
  for (const Registration &r : kBackends)
    kinds.push_back(r.kind);
  return kinds;
}
