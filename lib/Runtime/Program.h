//===- Program.h - A route of an artifact, ready to execute -----*- C++ -*-===//
//
// What the runtime reads from an artifact's meta, graph and plan sections
// for the chosen route: devices, buffers, kernels with their argument
// bindings, and the execution order of kernel launches and copies.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_LIB_RUNTIME_PROGRAM_H
#define FUEL_LIB_RUNTIME_PROGRAM_H

#include "fuel/Artifact/Artifact.h"
#include "fuel/IR/Graph.h"
#include "fuel/Support/LogicalResult.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fuel::runtime {

struct DeviceInfo {
  std::string id;   // "cpu:0"
  DeviceKind kind;
  std::string name; // As the machine description names it.
  std::string target;
  std::vector<std::string> cpuFeatures;
};

/// Where a value lives: a planned buffer, or a constant in the weights.
struct Binding {
  ValueRef value;
  std::optional<size_t> buffer; // Index into Program::buffers.
};

struct KernelArgInfo {
  Binding binding;
  bool isResult = false;
  int splitAxis = -1;
  bool contiguous = true;
  unsigned rank = 0;
};

struct KernelInfo {
  std::string symbol;
  /// The capsule of the kernel's root step (for fail-fast messages).
  std::string capsule, rootName;
  unsigned device = 0;
  std::vector<NodeId> nodes;
  bool splittable = false;
  std::vector<KernelArgInfo> args;
  /// Symbol ids (of the runtime's graph) the kernel reads, in its order.
  std::vector<uint32_t> symbols;
  /// "linear+gelu": the op kinds it computes, for profiles.
  std::string label;
};

struct BufferInfo {
  unsigned device = 0;
  uint64_t offset = 0, size = 0;
};

struct CopyInfo {
  ValueRef value;
  unsigned from = 0, to = 0;
  size_t source = 0, target = 0; // Buffer indices.
};

struct Program {
  std::vector<DeviceInfo> devices;
  std::vector<uint64_t> arenaBytes; // Per device.
  std::vector<BufferInfo> buffers;
  std::vector<KernelInfo> kernels;
  std::vector<CopyInfo> copies;
  /// Execution order: kernel launches (index) and copies (~index).
  std::vector<int64_t> order;
  std::vector<Binding> inputs, outputs;
  /// Largest extent of each symbol (by the runtime graph's symbol id) the
  /// plan's buffers hold.
  std::vector<int64_t> symbolBounds;
};

struct Route {
  std::string planSection;
  std::vector<std::string> devices;
  /// Kernel binary section of each backend (`x86` -> `kernels.x86`).
  std::map<std::string, std::string> kernelSections;
};

/// The artifact's devices and routes (from `meta`).
LogicalResult readMeta(std::string_view meta, std::vector<DeviceInfo> &devices,
                       std::vector<Route> &routes, std::string &error);

/// The plan section of a route over `graph`.
LogicalResult readProgram(std::string_view plan, const Graph &graph,
                          const std::vector<DeviceInfo> &devices,
                          Program &program, std::string &error);

} // namespace fuel::runtime

#endif // FUEL_LIB_RUNTIME_PROGRAM_H
