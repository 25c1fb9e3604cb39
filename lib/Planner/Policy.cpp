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

  LogicalResult parse() { return success(finish(parseDocument())); }

private:
  bool parseDocument();
  bool parseMember(std::string_view key, size_t offset);
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

  ExecutionConfig &config;
};
} // namespace

bool PolicyParser::parseDocument() {
  return readDocument("fuel.policy", "policy format",
                      [&](std::string_view key, size_t offset) {
                        return parseMember(key, offset);
                      });
}

bool PolicyParser::parseMember(std::string_view key, size_t offset) {
  bool alive = true;
  std::string member(key);
  auto s = scope(keep(key));
  bool valid = true;
  std::string text;
  if (member == "allow_devices") {
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
    alive = readNumberAtLeast(config.maxRelativeError, valid, 0, false);
  } else if (member == "prefer_bit_stable") {
    alive = readFlag(config.preferBitStable, valid);
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
  return alive;
}

LogicalResult fuel::parsePolicyJson(std::string_view text,
                                    std::string_view fileName,
                                    DiagnosticEngine &diag,
                                    ExecutionConfig &config) {
  return PolicyParser(text, fileName, diag, config).parse();
}

LogicalResult fuel::loadPolicy(const std::string &path, DiagnosticEngine &diag,
                               ExecutionConfig &config) {
  std::shared_ptr<const FileBuffer> buffer = openInputFile(path, "policy", diag);
  if (!buffer)
    return failure();
  return parsePolicyJson(buffer->text(), path, diag, config);
}
