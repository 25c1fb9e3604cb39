//===- GpuDispatch.cpp - What GPU backends share about dispatches ----------===//

#include "GpuDispatch.h"

#include <algorithm>
#include <limits>
#include <type_traits>

using namespace fuel;
using namespace fuel::runtime;
using nlohmann::json;

/// `j` as integer type T, when it is an integer in T's range.
template <typename T> static std::optional<T> integerValue(const json &j) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v <= uint64_t(std::numeric_limits<T>::max()))
      return static_cast<T>(v);
  } else if (j.is_number_integer()) {
    int64_t v = j.get<int64_t>();
    if (v >= int64_t(std::numeric_limits<T>::min()) &&
        (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max())))
      return static_cast<T>(v);
  }
  return std::nullopt;
}

template <typename T>
std::optional<T> runtime::jsonMember(const json &object, std::string_view key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key);
  if (it == object.end())
    return std::nullopt;
  const json &j = *it;
  if constexpr (std::is_same_v<T, bool>) {
    return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return j.is_string() ? std::optional<std::string>(j.get<std::string>()) : std::nullopt;
  } else if constexpr (std::is_integral_v<T>) {
    return integerValue<T>(j);
  } else {
    using Element = typename T::value_type;
    if (!j.is_array())
      return std::nullopt;
    T out;
    for (const json &e : j) {
      std::optional<Element> v = integerValue<Element>(e);
      if (!v)
        return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
}

template std::optional<bool> runtime::jsonMember(const json &, std::string_view);
template std::optional<std::string> runtime::jsonMember(const json &, std::string_view);
template std::optional<unsigned> runtime::jsonMember(const json &, std::string_view);
template std::optional<int> runtime::jsonMember(const json &, std::string_view);
template std::optional<int64_t> runtime::jsonMember(const json &, std::string_view);
template std::optional<std::vector<unsigned>> runtime::jsonMember(const json &, std::string_view);
template std::optional<std::vector<int32_t>> runtime::jsonMember(const json &, std::string_view);

/// Reads one dispatch of kernel `symbol`.
static Expected<GpuDispatchInfo> readDispatch(const json &d, const std::string &symbol,
                                              size_t modules) {
  std::string where = "kernel '" + symbol + "': ";
  GpuDispatchInfo dispatch;
  std::optional<unsigned> module = jsonMember<unsigned>(d, "module");
  std::optional<std::string> entry = jsonMember<std::string>(d, "entry");
  std::optional<std::vector<unsigned>> args = jsonMember<std::vector<unsigned>>(d, "args");
  std::optional<unsigned> workgroupSize = jsonMember<unsigned>(d, "workgroup_size");
  std::optional<std::vector<int32_t>> constants = jsonMember<std::vector<int32_t>>(d, "constants");
  const json *grid = d.is_object() && d.contains("grid") ? &d["grid"] : nullptr;
  std::optional<unsigned> gridArg;
  std::optional<std::vector<unsigned>> skipAxes;
  std::optional<int64_t> perGroup;
  if (grid) {
    gridArg = jsonMember<unsigned>(*grid, "arg");
    skipAxes = jsonMember<std::vector<unsigned>>(*grid, "skip_axes");
    perGroup = jsonMember<int64_t>(*grid, "per_group");
  }
  if (!module || !entry || !args || !workgroupSize || !constants || !gridArg || !skipAxes ||
      !perGroup)
    return Error{where + "a dispatch lacks a member or has one of the wrong type"};
  if (*module >= modules)
    return Error{where + "dispatch names module " + std::to_string(*module) + " of " +
                 std::to_string(modules)};
  if (*workgroupSize == 0 || *perGroup <= 0 ||
      std::find(args->begin(), args->end(), *gridArg) == args->end())
    return Error{where + "dispatch has an invalid grid or workgroup size"};
  dispatch.module = *module;
  dispatch.entry = std::move(*entry);
  dispatch.library = jsonMember<bool>(d, "library").value_or(false);
  dispatch.args = std::move(*args);
  dispatch.workgroupSize = *workgroupSize;
  dispatch.gridArg = *gridArg;
  dispatch.skipAxes = std::move(*skipAxes);
  dispatch.perGroup = *perGroup;
  dispatch.constants = std::move(*constants);
  return dispatch;
}

Expected<void> runtime::readGpuKernels(const json &list, size_t modules,
                                       std::vector<GpuKernelInfo> &kernels) {
  if (!list.is_array())
    return Error{"'kernels' is not an array"};
  for (const json &k : list) {
    GpuKernelInfo kernel;
    std::optional<std::string> symbol = jsonMember<std::string>(k, "symbol");
    std::optional<std::string> signature = jsonMember<std::string>(k, "signature");
    if (!symbol || !signature || !k.contains("dispatches") || !k["dispatches"].is_array())
      return Error{"a kernel lacks 'symbol', 'signature' or 'dispatches'"};
    kernel.symbol = std::move(*symbol);
    kernel.signature = std::move(*signature);
    for (const json &d : k["dispatches"]) {
      Expected<GpuDispatchInfo> dispatch = readDispatch(d, kernel.symbol, modules);
      if (!dispatch)
        return Error{dispatch.error()};
      kernel.dispatches.push_back(std::move(*dispatch));
    }
    kernels.push_back(std::move(kernel));
  }
  return {};
}

Expected<void> runtime::checkGpuKernel(const GpuKernelInfo &kernel, const artifact::Kernel &info) {
  for (const GpuDispatchInfo &d : kernel.dispatches)
    for (unsigned a : d.args)
      if (a >= info.args.size())
        return Error{"kernel '" + info.symbol + "' binds argument " + std::to_string(a) + " of " +
                     std::to_string(info.args.size())};
  return {};
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
