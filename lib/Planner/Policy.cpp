//===- Policy.cpp - Reading planning policy files -------------------------===//
//
// A fuel.policy file holds what the plan flags say (devices, trust,
// precision, providers, pins, dims, residencies, placer), so a deployment can
// keep its policy under version control; flags given beside it win.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/ExecutionConfig.h"

#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/JsonDocumentParser.h"

#include <cmath>

using namespace fuel;

std::optional<PlacerKind> fuel::parsePlacerKind(std::string_view name) {
  for (PlacerKind kind :
       {PlacerKind::Optimal, PlacerKind::Greedy, PlacerKind::ChainDp})
    if (placerName(kind) == name)
      return kind;
  return std::nullopt;
}

namespace {
class PolicyParser : public JsonDocumentParser {
public:
  PolicyParser(std::string_view text, std::string_view fileName,
               DiagnosticEngine &diag, ExecutionConfig &config)
      : JsonDocumentParser(text, fileName, diag), config(config) {}

  LogicalResult parse() {
    bool alive = parseDocument() && reader.expectEnd();
    if (!alive && reader.failed())
      syntaxError();
    bool ok = alive && !hasPendingErrors();
    flushDiagnostics();
    return success(ok);
  }

private:
  bool parseDocument();
  bool readText(std::string &out, bool &valid) {
    bool alive = true;
    if (!expect(JsonKind::String, "a string", alive)) {
      valid = false;
      return alive;
    }
    std::string_view s;
    if (!reader.readString(s))
      return syntaxError();
    out = s;
    return true;
  }
  bool readDevice(DeviceRef &out) {
    size_t offset = reader.offset();
    std::string text;
    bool valid = true;
    if (!readText(text, valid))
      return false;
    if (!valid)
      return true;
    if (std::optional<DeviceRef> d = parseDevice(text))
      out = *d;
    else
      errorAt(offset, "invalid device '" + text +
                          "' (expected cpu:N, cuda:N or vulkan:N)");
    return true;
  }
  template <typename Fn> bool forEachElement(Fn fn) {
    bool alive = true;
    if (!expect(JsonKind::Array, "an array", alive))
      return alive;
    reader.beginArray();
    for (int64_t i = 0; alive && reader.nextElement(); ++i) {
      auto e = scope(i);
      alive = fn();
    }
    return alive && (!reader.failed() || syntaxError());
  }
  template <typename Fn> bool forEachMember(Fn fn) {
    bool alive = true;
    if (!expect(JsonKind::Object, "an object", alive))
      return alive;
    reader.beginObject();
    std::string_view key;
    while (alive && reader.nextMember(key)) {
      std::string name(key);
      auto e = scope(keep(key));
      alive = fn(name);
    }
    return alive && (!reader.failed() || syntaxError());
  }

  ExecutionConfig &config;
};
} // namespace

bool PolicyParser::parseDocument() {
  bool alive = true;
  if (!expect(JsonKind::Object, "a JSON object at the top level", alive))
    return false;
  size_t start = reader.offset();
  reader.beginObject();
  bool sawFormat = false, sawVersion = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    std::string member(key);
    auto s = scope(keep(key));
    bool valid = true;
    std::string text;
    if (member == "format") {
      sawFormat = true;
      alive = readText(text, valid);
      if (valid && text != "fuel.policy")
        errorAt(offset, "unknown format '" + text + "' (expected \"fuel.policy\")");
    } else if (member == "version") {
      sawVersion = true;
      JsonNumber n;
      if (!expect(JsonKind::Number, "an integer", alive))
        continue;
      if (!reader.readNumber(n))
        return syntaxError();
      if (!n.isInteger || n.integer != 1) {
        errorAt(offset, "unsupported policy format version " + literal(offset) +
                            " (this fuelc reads version 1)");
        return false;
      }
    } else if (member == "allow_devices") {
      config.allowedDevices.clear();
      alive = forEachElement([&] {
        config.allowedDevices.emplace_back();
        return readDevice(config.allowedDevices.back());
      });
    } else if (member == "trust") {
      alive = readText(text, valid);
      if (std::optional<TrustLevel> t = parseTrustLevel(text))
        config.minimumTrust = *t;
      else if (valid)
        errorAt(offset, "unknown trust level '" + text +
                            "' (expected verified, checked, fuzzed or "
                            "trusted-external)");
    } else if (member == "placer") {
      alive = readText(text, valid);
      if (std::optional<PlacerKind> p = parsePlacerKind(text))
        config.placer = *p;
      else if (valid)
        errorAt(offset, "unknown placer '" + text +
                            "' (expected optimal, greedy or chain-dp)");
    } else if (member == "precision_floor") {
      JsonNumber n;
      if (!expect(JsonKind::Number, "a number", alive))
        continue;
      if (!reader.readNumber(n))
        return syntaxError();
      if (n.real < 0)
        errorAt(offset, "the precision floor must be non-negative");
      config.maxRelativeError = n.real;
    } else if (member == "prefer_bit_stable") {
      if (!expect(JsonKind::Bool, "a boolean", alive))
        continue;
      alive = reader.readBool(config.preferBitStable) || syntaxError();
    } else if (member == "prefer_providers") {
      config.preferredProviders.clear();
      alive = forEachElement([&] {
        config.preferredProviders.emplace_back();
        bool ok = true;
        return readText(config.preferredProviders.back(), ok);
      });
    } else if (member == "pins") {
      alive = forEachMember([&](const std::string &node) {
        return readDevice(config.pins[node]);
      });
    } else if (member == "dims") {
      alive = forEachMember([&](const std::string &symbol) {
        size_t at = reader.offset();
        bool ok = true;
        if (!expect(JsonKind::Number, "an extent", ok))
          return ok;
        JsonNumber n;
        if (!reader.readNumber(n))
          return syntaxError();
        if (!n.isInteger || n.overflow || n.integer < 0)
          errorAt(at, "extent must be a non-negative integer, got " + literal(at));
        config.dims[symbol] = n.integer;
        return true;
      });
    } else if (member == "input_residency") {
      alive = readDevice(config.inputResidency);
    } else if (member == "output_residency") {
      alive = readDevice(config.outputResidency);
    } else {
      alive = unknownMember(offset, key, "policy",
                            "format, version, allow_devices, trust, placer, "
                            "precision_floor, prefer_bit_stable, "
                            "prefer_providers, pins, dims, input_residency, "
                            "output_residency");
    }
  }
  if (!alive || reader.failed())
    return false;
  if (!sawFormat)
    errorAt(start, "missing member 'format' (must be \"fuel.policy\")");
  if (!sawVersion)
    errorAt(start, "missing member 'version'");
  return true;
}

LogicalResult fuel::parsePolicyJson(std::string_view text,
                                    std::string_view fileName,
                                    DiagnosticEngine &diag,
                                    ExecutionConfig &config) {
  return PolicyParser(text, fileName, diag, config).parse();
}

LogicalResult fuel::loadPolicy(const std::string &path, DiagnosticEngine &diag,
                               ExecutionConfig &config) {
  std::string error;
  std::shared_ptr<const FileBuffer> buffer = FileBuffer::open(path, error);
  if (!buffer) {
    SourceLocation loc;
    loc.file = path;
    diag.error(std::move(loc), "cannot read policy file: " + error);
    return failure();
  }
  return parsePolicyJson(buffer->text(), path, diag, config);
}
