//===- GpuDispatch.cpp - What GPU backends share about dispatches ----------===//

#include "GpuDispatch.h"

#include <algorithm>

using namespace fuel;
using namespace fuel::runtime;
using nlohmann::json;

LogicalResult runtime::readGpuKernels(const json &list, size_t modules,
                                      std::vector<GpuKernelInfo> &kernels,
                                      std::string &error) {
  for (const json &k : list) {
    GpuKernelInfo kernel;
    kernel.symbol = k.at("symbol");
    kernel.signature = k.at("signature");
    for (const json &d : k.at("dispatches")) {
      GpuDispatchInfo dispatch;
      dispatch.module = d.at("module");
      dispatch.entry = d.at("entry");
      dispatch.library = d.value("library", false);
      dispatch.args = d.at("args").get<std::vector<unsigned>>();
      dispatch.workgroupSize = d.at("workgroup_size");
      const json &grid = d.at("grid");
      dispatch.gridArg = grid.at("arg");
      dispatch.skipAxes = grid.at("skip_axes").get<std::vector<unsigned>>();
      dispatch.perGroup = grid.at("per_group");
      dispatch.constants = d.at("constants").get<std::vector<int32_t>>();
      std::string where = "kernel '" + kernel.symbol + "': ";
      if (dispatch.module >= modules) {
        error = where + "dispatch names module " + std::to_string(dispatch.module) +
                " of " + std::to_string(modules);
        return failure();
      }
      if (dispatch.workgroupSize == 0 || dispatch.perGroup <= 0 ||
          std::find(dispatch.args.begin(), dispatch.args.end(), dispatch.gridArg) ==
              dispatch.args.end()) {
        error = where + "dispatch has an invalid grid or workgroup size";
        return failure();
      }
      kernel.dispatches.push_back(std::move(dispatch));
    }
    kernels.push_back(std::move(kernel));
  }
  return success();
}

LogicalResult runtime::checkGpuKernel(const GpuKernelInfo &kernel,
                                      const artifact::Kernel &info, std::string &error) {
  for (const GpuDispatchInfo &d : kernel.dispatches)
    for (unsigned a : d.args)
      if (a >= info.args.size()) {
        error = "kernel '" + info.symbol + "' binds argument " + std::to_string(a) +
                " of " + std::to_string(info.args.size());
        return failure();
      }
  return success();
}

size_t runtime::parameterWords(const GpuDispatchInfo &d, const artifact::Kernel &info) {
  size_t words = d.constants.size();
  for (unsigned a : d.args)
    words += 1 + 2 * info.args[a].tensor.sizes.size();
  return words;
}

void runtime::writeParameters(const GpuDispatchInfo &d, const artifact::Kernel &info,
                              const KernelCall &call,
                              const std::vector<int64_t> &elementOffsets,
                              int32_t *words) {
  words = std::copy(d.constants.begin(), d.constants.end(), words);
  for (size_t i = 0; i < d.args.size(); ++i) {
    const std::vector<int64_t> &desc = call.descriptors[d.args[i]];
    *words++ = static_cast<int32_t>(elementOffsets[i]);
    for (unsigned k = 0; k < 2 * info.args[d.args[i]].tensor.sizes.size(); ++k)
      *words++ = static_cast<int32_t>(desc[3 + k]);
  }
}

uint32_t runtime::workgroups(const GpuDispatchInfo &d, const artifact::Kernel &info,
                             const KernelCall &call, int64_t maxGroups) {
  const std::vector<int64_t> &grid = call.descriptors[d.gridArg];
  int64_t count = 1;
  for (unsigned axis = 0; axis < info.args[d.gridArg].tensor.sizes.size(); ++axis)
    if (std::find(d.skipAxes.begin(), d.skipAxes.end(), axis) == d.skipAxes.end())
      count *= grid[3 + axis];
  int64_t groups = (count + d.perGroup - 1) / d.perGroup;
  return static_cast<uint32_t>(std::min(groups, maxGroups));
}
