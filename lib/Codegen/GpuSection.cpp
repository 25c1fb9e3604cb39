//===- GpuSection.cpp - The kernel list of GPU artifact sections -----------===//

#include "GpuSection.h"

using namespace fuel;

std::map<std::string, std::string> codegen::revisionsOf(const std::vector<GpuKernel> &kernels) {
  std::map<std::string, std::string> revisions;
  for (const GpuKernel &k : kernels)
    revisions[k.symbol] = k.revision;
  return revisions;
}

bool codegen::hasGeneratedDispatch(const std::vector<GpuKernel> &kernels) {
  for (const GpuKernel &k : kernels)
    for (const GpuDispatch &d : k.dispatches)
      if (!d.isLibrary)
        return true;
  return false;
}

nlohmann::ordered_json codegen::describeGpuKernels(
    const std::vector<GpuKernel> &kernels,
    const std::function<std::pair<unsigned, std::string>(const GpuDispatch &)> &moduleOf) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const GpuKernel &kernel : kernels) {
    nlohmann::ordered_json dispatches = nlohmann::ordered_json::array();
    for (const GpuDispatch &d : kernel.dispatches) {
      auto [module, entry] = moduleOf(d);
      dispatches.push_back({{"module", module},
                            {"entry", entry},
                            {"library", d.isLibrary},
                            {"args", d.args},
                            {"workgroup_size", d.workgroupSize},
                            {"grid",
                             {{"arg", d.grid.arg},
                              {"skip_axes", d.grid.skipAxes},
                              {"per_group", d.grid.perGroup}}},
                            {"constants", d.constants}});
    }
    list.push_back({{"symbol", kernel.symbol},
                    {"signature", kernel.signature},
                    {"dispatches", std::move(dispatches)}});
  }
  return list;
}
