//===- Machine.cpp - Reading fuel.machine files ---------------------------===//

#include "fuel/Planner/Machine.h"

#include "fuel/Planner/Placement.h"
#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/JsonDocumentParser.h"

#include <cmath>

using namespace fuel;

std::optional<unsigned> Machine::indexOf(DeviceRef ref) const {
  for (unsigned i = 0; i < devices.size(); ++i)
    if (devices[i].ref == ref)
      return i;
  return std::nullopt;
}

void Machine::linkMatrices(std::vector<double> &latency,
                           std::vector<double> &inverseBandwidth) const {
  size_t k = devices.size();
  latency.assign(k * k, kInfiniteCost);
  inverseBandwidth.assign(k * k, kInfiniteCost);
  for (size_t i = 0; i < k; ++i) {
    latency[i * k + i] = 0;
    inverseBandwidth[i * k + i] = 0;
  }
  for (const LinkSpec &link : links) {
    size_t a = *indexOf(link.from), b = *indexOf(link.to);
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      latency[x * k + y] = link.latency;
      inverseBandwidth[x * k + y] = 1.0 / link.bandwidth;
    }
  }
}

namespace {
class MachineJsonParser : public JsonDocumentParser {
public:
  using JsonDocumentParser::JsonDocumentParser;

  std::optional<Machine> parse() {
    bool alive = parseDocument();
    if (alive && !reader.failed())
      checkLinks();
    if (!finish(alive))
      return std::nullopt;
    return std::move(machine);
  }

private:
  bool parseDocument();
  bool parseDevice(DeviceSpec &device);
  bool parseLink(LinkSpec &link, size_t start);
  bool parseDeviceRef(DeviceRef &ref, bool &valid);
  void checkLinks();

  Machine machine;
  std::vector<size_t> deviceOffsets, linkOffsets;
};
} // namespace

bool MachineJsonParser::parseDeviceRef(DeviceRef &ref, bool &valid) {
  size_t offset = reader.offset();
  std::string text;
  bool ok = true;
  if (!readText(text, ok))
    return false;
  if (!ok) {
    valid = false;
    return true;
  }
  std::optional<DeviceRef> parsed = fuel::parseDevice(text);
  if (!parsed) {
    errorAt(offset, "invalid device '" + text +
                        "' (expected cpu:N, cuda:N or vulkan:N)");
    valid = false;
    return true;
  }
  ref = *parsed;
  return true;
}

bool MachineJsonParser::parseDocument() {
  bool ok = readDocument(
      "fuel.machine", "machine format", [&](std::string_view key, size_t offset) {
        bool valid = true;
        if (key == "name" || key == "description") {
          auto s = scope(key == "name" ? "name" : "description");
          return readText(key == "name" ? machine.name : machine.description,
                          valid);
        }
        if (key != "devices" && key != "links")
          return unknownMember(offset, key, "machine",
                               "format, version, name, description, devices, "
                               "links");
        bool devices = key == "devices";
        auto s = scope(devices ? "devices" : "links");
        return forEachElement([&] {
          size_t at = reader.offset();
          if (devices) {
            deviceOffsets.push_back(at);
            machine.devices.emplace_back();
            return parseDevice(machine.devices.back());
          }
          linkOffsets.push_back(at);
          machine.links.emplace_back();
          return parseLink(machine.links.back(), at);
        });
      });
  if (ok && machine.devices.empty())
    errorAt(documentStart, "a machine needs at least one device");
  return ok;
}

bool MachineJsonParser::parseDevice(DeviceSpec &device) {
  bool alive = true;
  size_t start = reader.offset();
  if (!expect(JsonKind::Object, "a device object", alive))
    return alive;
  reader.beginObject();
  bool sawId = false, sawBandwidth = false, sawCapacity = false,
       sawFlops = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    bool valid = true;
    if (key == "id") {
      auto s = scope("id");
      sawId = true;
      alive = parseDeviceRef(device.ref, valid);
      if (valid) {
        for (size_t i = 0; i + 1 < deviceOffsets.size(); ++i)
          if (machine.devices[i].ref == device.ref)
            errorAt(offset, "device '" + formatDevice(device.ref) +
                                "' is listed twice");
      }
    } else if (key == "name" || key == "target") {
      auto s = scope(key == "name" ? "name" : "target");
      alive = readText(key == "name" ? device.name : device.target, valid);
    } else if (key == "peak_flops") {
      auto s = scope("peak_flops");
      sawFlops = true;
      if (!expect(JsonKind::Object, "an object of FLOP/s per dtype", alive))
        continue;
      reader.beginObject();
      std::string_view dtypeName;
      while (alive && reader.nextMember(dtypeName)) {
        size_t at = reader.offset();
        std::optional<DType> dtype = parseDType(dtypeName);
        if (!dtype) {
          alive = unknownMember(at, dtypeName, "peak_flops",
                                "dtype names: f32, f16, bf16, f64, i8, i16, "
                                "i32, i64, u8, u16, u32, u64, bool");
          continue;
        }
        auto d = scope(fuel::dtypeName(*dtype));
        alive = readNumberAtLeast(
            device.peakFlops[static_cast<unsigned>(*dtype)], valid, 0, false);
      }
      alive = alive && (!reader.failed() || syntaxError());
    } else if (key == "memory_bandwidth") {
      auto s = scope("memory_bandwidth");
      sawBandwidth = true;
      alive = readNumberAtLeast(device.memoryBandwidth, valid, 0, true);
    } else if (key == "memory_capacity") {
      auto s = scope("memory_capacity");
      sawCapacity = true;
      alive = readNumberAtLeast(device.memoryCapacity, valid, 0, true);
    } else if (key == "launch_overhead") {
      auto s = scope("launch_overhead");
      alive = readNumberAtLeast(device.launchOverhead, valid, 0, false);
    } else if (key == "workgroup_size") {
      auto s = scope("workgroup_size");
      double size = 0;
      alive = readNumberAtLeast(size, valid, 1, false);
      // Workgroup reductions halve the group: a power of two.
      if (valid && (size != std::floor(size) || size < 32 || size > 1024 ||
                    (static_cast<int>(size) & (static_cast<int>(size) - 1))))
        errorAt(offset, "workgroup_size must be a power of two from 32 to 1024");
      else if (valid)
        device.workgroupSize = static_cast<unsigned>(size);
    } else {
      alive = unknownMember(offset, key, "device",
                            "id, name, target, peak_flops, memory_bandwidth, "
                            "memory_capacity, launch_overhead, workgroup_size");
    }
  }
  if (!alive || reader.failed())
    return syntaxError();
  for (auto [seen, member] :
       {std::pair{sawId, "id"}, std::pair{sawFlops, "peak_flops"},
        std::pair{sawBandwidth, "memory_bandwidth"},
        std::pair{sawCapacity, "memory_capacity"}})
    if (!seen)
      errorAt(start, std::string("device is missing member '") + member + "'");
  return true;
}

bool MachineJsonParser::parseLink(LinkSpec &link, size_t start) {
  bool alive = true;
  if (!expect(JsonKind::Object, "a link object", alive))
    return alive;
  reader.beginObject();
  bool sawFrom = false, sawTo = false, sawBandwidth = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    bool valid = true;
    if (key == "from" || key == "to") {
      bool from = key == "from";
      auto s = scope(from ? "from" : "to");
      (from ? sawFrom : sawTo) = true;
      alive = parseDeviceRef(from ? link.from : link.to, valid);
    } else if (key == "bandwidth") {
      auto s = scope("bandwidth");
      sawBandwidth = true;
      alive = readNumberAtLeast(link.bandwidth, valid, 0, true);
    } else if (key == "latency") {
      auto s = scope("latency");
      alive = readNumberAtLeast(link.latency, valid, 0, false);
    } else {
      alive = unknownMember(offset, key, "link",
                            "from, to, bandwidth, latency");
    }
  }
  if (!alive || reader.failed())
    return syntaxError();
  for (auto [seen, member] :
       {std::pair{sawFrom, "from"}, std::pair{sawTo, "to"},
        std::pair{sawBandwidth, "bandwidth"}})
    if (!seen)
      errorAt(start, std::string("link is missing member '") + member + "'");
  return true;
}

void MachineJsonParser::checkLinks() {
  for (size_t i = 0; i < machine.links.size(); ++i) {
    const LinkSpec &link = machine.links[i];
    auto s = scope("links");
    auto e = scope(static_cast<int64_t>(i));
    for (DeviceRef end : {link.from, link.to})
      if (!machine.indexOf(end))
        errorAt(linkOffsets[i], "link names device '" + formatDevice(end) +
                                    "', which the machine does not have");
    if (link.from == link.to)
      errorAt(linkOffsets[i], "a link must join two different devices");
  }
}

std::optional<Machine> fuel::parseMachineJson(std::string_view text,
                                              std::string_view fileName,
                                              DiagnosticEngine &diag) {
  return MachineJsonParser(text, fileName, diag).parse();
}

std::optional<Machine> fuel::loadMachine(const std::string &nameOrPath,
                                         DiagnosticEngine &diag) {
  std::string_view preset = machinePresetText(nameOrPath);
  if (!preset.empty())
    return parseMachineJson(preset, "<preset " + nameOrPath + ">", diag);
  Expected<std::shared_ptr<const FileBuffer>> buffer = FileBuffer::open(nameOrPath);
  if (!buffer) {
    // Not openInputFile: a missing machine is often a mistyped preset name.
    std::string presets;
    for (std::string_view name : machinePresetNames())
      presets += (presets.empty() ? "" : ", ") + std::string(name);
    SourceLocation loc;
    loc.file = nameOrPath;
    diag.error(std::move(loc), "cannot read machine file: " + buffer.error() +
                                   " (built-in machines: " + presets + ")");
    return std::nullopt;
  }
  return parseMachineJson((*buffer)->text(), nameOrPath, diag);
}
