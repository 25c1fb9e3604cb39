//===- ProgramWriter.cpp - A lowered program as fuel.program JSON ---------===//
//
// Members are written in a fixed order, so equal programs print to equal
// bytes (artifacts are deterministic).
//
//===----------------------------------------------------------------------===//

#include "fuel/Artifact/Program.h"

#include <nlohmann/json.hpp>

using namespace fuel;
using namespace fuel::artifact;
using json = nlohmann::ordered_json;

static json extentJson(const Extent &e) {
  return e.isStatic() ? json(e.constant) : json{{"symbol", e.symbol}};
}

static json extentsJson(const std::vector<Extent> &extents) {
  json out = json::array();
  for (const Extent &e : extents)
    out.push_back(extentJson(e));
  return out;
}

static std::string_view viewKindName(ViewKind kind) {
  switch (kind) {
  case ViewKind::Transpose:
    return "transpose";
  case ViewKind::Slice:
    return "slice";
  case ViewKind::Broadcast:
    return "broadcast";
  case ViewKind::Reshape:
    return "reshape";
  }
  return "";
}

static json tensorJson(const Tensor &t) {
  json j;
  j[t.storage == StorageKind::Buffer ? "buffer" : "constant"] = t.index;
  j["dtype"] = std::string(dtypeName(t.dtype));
  j["sizes"] = extentsJson(t.sizes);
  if (!t.symbolic) {
    j["offset"] = t.offset;
    j["strides"] = t.strides;
    return j;
  }
  j["root"] = extentsJson(t.root);
  json views = json::array();
  for (const View &v : t.views) {
    json view{{"kind", std::string(viewKindName(v.kind))}};
    switch (v.kind) {
    case ViewKind::Transpose:
      view["perm"] = v.perm;
      break;
    case ViewKind::Slice:
      view["axes"] = v.axes;
      view["starts"] = v.starts;
      view["ends"] = v.ends;
      view["steps"] = v.steps;
      break;
    case ViewKind::Broadcast:
    case ViewKind::Reshape:
      view["sizes"] = extentsJson(v.sizes);
      break;
    }
    views.push_back(std::move(view));
  }
  j["views"] = std::move(views);
  return j;
}

static json ioJson(const std::vector<Io> &list) {
  json out = json::array();
  for (const Io &io : list) {
    json j{{"name", io.name}};
    j.update(tensorJson(io.tensor));
    out.push_back(std::move(j));
  }
  return out;
}

std::string artifact::printProgram(const Program &p) {
  json j;
  j["format"] = "fuel.program";
  j["version"] = kProgramVersion;
  json symbols = json::array();
  for (const Symbol &s : p.symbols) {
    json sym{{"name", s.name}, {"bound", s.bound}};
    if (!s.isFree()) {
      sym["factor"] = s.factor;
      sym["of"] = s.of;
    }
    symbols.push_back(std::move(sym));
  }
  j["symbols"] = std::move(symbols);
  json devices = json::array();
  for (const Device &d : p.devices)
    devices.push_back({{"id", d.id},
                       {"arena_bytes", d.arenaBytes},
                       {"kernels", d.kernelSection}});
  j["devices"] = std::move(devices);
  json buffers = json::array();
  for (const Buffer &b : p.buffers) {
    buffers.push_back({{"device", b.device}, {"offset", b.offset}, {"size", b.size}});
    if (b.sliceOf >= 0)
      buffers.back()["slice_of"] = b.sliceOf;
  }
  j["buffers"] = std::move(buffers);
  json constants = json::array();
  for (const Constant &c : p.constants)
    constants.push_back({{"offset", c.offset}, {"size", c.size}});
  j["constants"] = std::move(constants);
  json kernels = json::array();
  for (const Kernel &k : p.kernels) {
    json args = json::array();
    for (const KernelArg &a : k.args) {
      json arg = tensorJson(a.tensor);
      arg["result"] = a.isResult;
      arg["split_axis"] = a.splitAxis;
      arg["contiguous"] = a.contiguous;
      args.push_back(std::move(arg));
    }
    kernels.push_back({{"symbol", k.symbol},
                       {"device", k.device},
                       {"capsule", k.capsule},
                       {"revision", k.revision},
                       {"node", k.node},
                       {"label", k.label},
                       {"splittable", k.splittable},
                       {"args", std::move(args)},
                       {"symbols", k.symbols},
                       {"slice_origin", k.sliceOrigin}});
  }
  j["kernels"] = std::move(kernels);
  json copies = json::array();
  for (const Copy &c : p.copies)
    copies.push_back({{"source", c.source}, {"target", c.target}, {"value", c.value}});
  j["copies"] = std::move(copies);
  json steps = json::array();
  for (const Step &s : p.steps)
    steps.push_back({{s.kind == StepKind::Launch ? "launch" : "copy", s.index},
                     {"deps", s.deps}});
  j["steps"] = std::move(steps);
  j["inputs"] = ioJson(p.inputs);
  j["outputs"] = ioJson(p.outputs);
  return j.dump(1) + "\n";
}
