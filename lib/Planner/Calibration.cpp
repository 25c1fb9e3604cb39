//===- Calibration.cpp - Measured kernel latencies ------------------------===//

#include "fuel/Planner/Calibration.h"

#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/JsonDocumentParser.h"

#include <cmath>

using namespace fuel;

int CalibrationTable::sizeClass(double elements) {
  return elements < 1 ? 0 : static_cast<int>(std::floor(std::log2(elements)));
}

void CalibrationTable::add(OpKind op, DType dtype, DeviceKind backend,
                           std::string provider, Entry entry) {
  entries[{op, dtype, backend, std::move(provider), sizeClass(entry.elements)}] =
      entry;
}

std::optional<double> CalibrationTable::lookup(OpKind op, DType dtype,
                                               DeviceKind backend,
                                               std::string_view provider,
                                               double elements) const {
  auto it = entries.find(
      {op, dtype, backend, std::string(provider), sizeClass(elements)});
  if (it == entries.end())
    return std::nullopt;
  return it->second.latency * elements / std::max(it->second.elements, 1.0);
}

namespace {
class CalibrationParser : public JsonDocumentParser {
public:
  using JsonDocumentParser::JsonDocumentParser;

  std::optional<CalibrationTable> parse() {
    if (!finish(parseDocument()))
      return std::nullopt;
    return std::move(table);
  }

private:
  bool parseDocument();
  bool parseEntry();

  CalibrationTable table;
};
} // namespace

bool CalibrationParser::parseDocument() {
  return readDocument("fuel.calibration", "calibration format",
                      [&](std::string_view key, size_t offset) {
                        if (key != "entries")
                          return unknownMember(offset, key, "calibration",
                                               "format, version, entries");
                        auto s = scope("entries");
                        return forEachElement([&] { return parseEntry(); });
                      });
}

bool CalibrationParser::parseEntry() {
  bool alive = true;
  size_t start = reader.offset();
  if (!expect(JsonKind::Object, "an entry object", alive))
    return alive;
  reader.beginObject();
  std::optional<OpKind> op;
  std::optional<DType> dtype;
  std::optional<DeviceKind> backend;
  std::string provider = "fuelc-codegen";
  CalibrationTable::Entry entry{0, 0};
  bool valid = true, sawElements = false, sawLatency = false, sawOp = false,
       sawDType = false, sawBackend = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    std::string text;
    if (key == "op" || key == "dtype" || key == "backend") {
      std::string member(key);
      auto s = scope(member == "op" ? "op" : member == "dtype" ? "dtype" : "backend");
      (member == "op" ? sawOp : member == "dtype" ? sawDType : sawBackend) = true;
      bool ok = true;
      alive = readText(text, ok);
      if (!ok) {
        valid = false;
        continue;
      }
      if (member == "op" && !(op = parseOpKind(text)))
        errorAt(offset, "unknown op '" + text + "'");
      if (member == "dtype" && !(dtype = parseDType(text)))
        errorAt(offset, "unknown dtype '" + text + "'");
      if (member == "backend") {
        for (DeviceKind k : {DeviceKind::CPU, DeviceKind::CUDA, DeviceKind::Vulkan})
          if (deviceKindName(k) == text)
            backend = k;
        if (!backend)
          errorAt(offset, "unknown backend '" + text +
                              "' (expected cpu, cuda or vulkan)");
      }
    } else if (key == "provider") {
      auto s = scope("provider");
      alive = readText(provider, valid);
    } else if (key == "elements") {
      auto s = scope("elements");
      sawElements = true;
      alive = readNumberAtLeast(entry.elements, valid, 0, true);
    } else if (key == "latency") {
      auto s = scope("latency");
      sawLatency = true;
      alive = readNumberAtLeast(entry.latency, valid, 0, true);
    } else {
      alive = unknownMember(offset, key, "calibration entry",
                            "op, dtype, backend, provider, elements, latency");
    }
  }
  if (!alive || reader.failed())
    return syntaxError();
  for (auto [seen, member] :
       {std::pair{sawOp, "op"}, std::pair{sawDType, "dtype"},
        std::pair{sawBackend, "backend"}, std::pair{sawElements, "elements"},
        std::pair{sawLatency, "latency"}})
    if (!seen)
      errorAt(start, std::string("entry is missing member '") + member + "'");
  if (op && dtype && backend && valid && sawElements && sawLatency)
    table.add(*op, *dtype, *backend, provider, entry);
  return true;
}

std::optional<CalibrationTable>
fuel::parseCalibrationJson(std::string_view text, std::string_view fileName,
                           DiagnosticEngine &diag) {
  return CalibrationParser(text, fileName, diag).parse();
}

std::optional<CalibrationTable> fuel::loadCalibration(const std::string &path,
                                                      DiagnosticEngine &diag) {
  std::shared_ptr<const FileBuffer> buffer =
      openInputFile(path, "calibration", diag);
  if (!buffer)
    return std::nullopt;
  return parseCalibrationJson(buffer->text(), path, diag);
}
