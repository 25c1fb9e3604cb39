//===- CapsuleManifest.cpp - Hand-written kernels' capsule manifests ------===//
//
// A manifest describes the capsules of hand-written kernels (kernels/<backend>/)
// so that the planner prices and admits them like generated ones. The
// revision of each capsule is the hash of its kernel source: changing the
// kernel changes the plans that use it.
//
//===----------------------------------------------------------------------===//

#include "fuel/Planner/Capsule.h"

#include "fuel/Support/FileBuffer.h"
#include "fuel/Support/JsonDocumentParser.h"
#include "fuel/Support/Sha256.h"

#include <algorithm>
#include <filesystem>

using namespace fuel;

namespace {
class ManifestParser : public JsonDocumentParser {
public:
  ManifestParser(std::string_view text, std::string_view fileName,
                 const std::string &baseDir, DiagnosticEngine &diag)
      : JsonDocumentParser(text, fileName, diag), baseDir(baseDir) {}

  std::optional<std::vector<Capsule>> parse() {
    bool alive = parseDocument() && reader.expectEnd();
    if (!alive && reader.failed())
      syntaxError();
    bool ok = alive && !hasPendingErrors();
    flushDiagnostics();
    if (!ok)
      return std::nullopt;
    return std::move(capsules);
  }

private:
  bool parseDocument();
  bool parseCapsule();
  bool readText(std::string &out, bool &valid);
  bool readNumber(double &out, bool &valid, double min);
  bool readFlag(bool &out, bool &valid);

  std::string baseDir;
  std::vector<Capsule> capsules;
};
} // namespace

bool ManifestParser::readText(std::string &out, bool &valid) {
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

bool ManifestParser::readNumber(double &out, bool &valid, double min) {
  bool alive = true;
  size_t offset = reader.offset();
  if (!expect(JsonKind::Number, "a number", alive)) {
    valid = false;
    return alive;
  }
  JsonNumber n;
  if (!reader.readNumber(n))
    return syntaxError();
  if (n.real < min) {
    errorAt(offset, std::string(min == 0 ? "expected a non-negative number"
                                         : "expected a number of at least 1") +
                        ", got " + literal(offset));
    valid = false;
  }
  out = n.real;
  return true;
}

bool ManifestParser::readFlag(bool &out, bool &valid) {
  bool alive = true;
  if (!expect(JsonKind::Bool, "a boolean", alive)) {
    valid = false;
    return alive;
  }
  return reader.readBool(out) || syntaxError();
}

bool ManifestParser::parseDocument() {
  bool alive = true;
  if (!expect(JsonKind::Object, "a JSON object at the top level", alive))
    return false;
  size_t start = reader.offset();
  reader.beginObject();
  bool sawFormat = false, sawVersion = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    bool valid = true;
    if (key == "format") {
      auto s = scope("format");
      std::string format;
      alive = readText(format, valid);
      sawFormat = true;
      if (valid && format != "fuel.capsules")
        errorAt(offset, "unknown format '" + format +
                            "' (expected \"fuel.capsules\")");
    } else if (key == "version") {
      auto s = scope("version");
      double version = 0;
      alive = readNumber(version, valid, 0);
      sawVersion = true;
      if (valid && version != 1) {
        errorAt(offset, "unsupported capsule manifest version " +
                            literal(offset) + " (this fuelc reads version 1)");
        return false;
      }
    } else if (key == "capsules") {
      auto s = scope("capsules");
      if (!expect(JsonKind::Array, "an array", alive))
        continue;
      reader.beginArray();
      for (int64_t i = 0; alive && reader.nextElement(); ++i) {
        auto e = scope(i);
        alive = parseCapsule();
      }
      alive = alive && (!reader.failed() || syntaxError());
    } else {
      alive = unknownMember(offset, key, "capsule manifest",
                            "format, version, capsules");
    }
  }
  if (!alive || reader.failed())
    return false;
  if (!sawFormat)
    errorAt(start, "missing member 'format' (must be \"fuel.capsules\")");
  if (!sawVersion)
    errorAt(start, "missing member 'version'");
  return true;
}

bool ManifestParser::parseCapsule() {
  bool alive = true;
  size_t start = reader.offset();
  if (!expect(JsonKind::Object, "a capsule object", alive))
    return alive;
  reader.beginObject();
  Capsule c;
  c.provider = "fuel-kernels";
  c.dtypes = 0;
  bool valid = true, sawId = false, sawOp = false, sawBackend = false,
       sawDTypes = false, sawSource = false;
  std::string_view key;
  while (alive && reader.nextMember(key)) {
    size_t offset = reader.offset();
    std::string text;
    double number = 0;
    std::string member(key);
    auto s = scope(keep(key));
    if (member == "id") {
      sawId = true;
      alive = readText(c.id, valid);
    } else if (member == "op") {
      sawOp = true;
      alive = readText(text, valid);
      std::optional<OpKind> op = parseOpKind(text);
      if (op && isKernelOp(*op))
        c.op = *op;
      else if (!text.empty())
        errorAt(offset, "'" + text + "' is not an op a kernel can implement"),
            valid = false;
    } else if (member == "backend") {
      sawBackend = true;
      alive = readText(text, valid);
      bool found = false;
      for (DeviceKind k : {DeviceKind::CPU, DeviceKind::CUDA, DeviceKind::Vulkan})
        if (deviceKindName(k) == text) {
          c.backend = k;
          found = true;
        }
      if (!found && valid) {
        errorAt(offset, "unknown backend '" + text +
                            "' (expected cpu, cuda or vulkan)");
        valid = false;
      }
    } else if (member == "dtypes") {
      sawDTypes = true;
      if (!expect(JsonKind::Array, "an array of dtype names", alive)) {
        valid = false;
        continue;
      }
      reader.beginArray();
      for (int64_t i = 0; alive && reader.nextElement(); ++i) {
        auto e = scope(i);
        size_t at = reader.offset();
        alive = readText(text, valid);
        if (std::optional<DType> t = parseDType(text))
          c.dtypes |= 1u << static_cast<unsigned>(*t);
        else if (alive) {
          errorAt(at, "unknown dtype '" + text + "'");
          valid = false;
        }
      }
      alive = alive && (!reader.failed() || syntaxError());
    } else if (member == "provider") {
      alive = readText(c.provider, valid);
    } else if (member == "trust") {
      alive = readText(text, valid);
      if (std::optional<TrustLevel> t = parseTrustLevel(text))
        c.trust = *t;
      else if (valid) {
        errorAt(offset, "unknown trust level '" + text +
                            "' (expected verified, checked, fuzzed or "
                            "trusted-external)");
        valid = false;
      }
    } else if (member == "max_relative_error") {
      alive = readNumber(c.maxRelativeError, valid, 0);
    } else if (member == "bit_stable") {
      alive = readFlag(c.bitStable, valid);
    } else if (member == "strided_inputs") {
      alive = readFlag(c.stridedInputs, valid);
    } else if (member == "max_rank") {
      alive = readNumber(number, valid, 0);
      c.predicate.maxRank = static_cast<unsigned>(std::min(number, 64.0));
    } else if (member == "max_elements") {
      alive = readNumber(number, valid, 1);
      c.predicate.maxElements =
          static_cast<int64_t>(std::min(number, double(int64_t(1) << 59)));
    } else if (member == "efficiency") {
      alive = readNumber(c.efficiency, valid, 0);
      if (valid && (c.efficiency <= 0 || c.efficiency > 1)) {
        errorAt(offset, "efficiency must be in (0, 1], got " + literal(offset));
        valid = false;
      }
    } else if (member == "fixed_overhead") {
      alive = readNumber(c.fixedOverhead, valid, 0);
    } else if (member == "workspace_bytes") {
      alive = readNumber(number, valid, 0);
      c.workspaceBytes = static_cast<uint64_t>(number);
    } else if (member == "source") {
      sawSource = true;
      alive = readText(text, valid);
      std::string why;
      std::shared_ptr<const FileBuffer> source =
          FileBuffer::open(baseDir + "/" + text, why, /*regularOnly=*/true);
      if (!source) {
        errorAt(offset, "cannot read kernel source '" + text + "': " + why);
        valid = false;
      } else {
        c.revision = "sha256:" + toHex(Sha256::of(source->text()));
      }
    } else {
      alive = unknownMember(offset, key, "capsule",
                            "id, op, backend, dtypes, provider, trust, "
                            "max_relative_error, bit_stable, strided_inputs, "
                            "max_rank, max_elements, efficiency, "
                            "fixed_overhead, workspace_bytes, source");
    }
  }
  if (!alive || reader.failed())
    return syntaxError();
  for (auto [seen, name] :
       {std::pair{sawId, "id"}, std::pair{sawOp, "op"},
        std::pair{sawBackend, "backend"}, std::pair{sawDTypes, "dtypes"},
        std::pair{sawSource, "source"}})
    if (!seen) {
      errorAt(start, std::string("capsule is missing member '") + name + "'");
      valid = false;
    }
  if (valid)
    capsules.push_back(std::move(c));
  return true;
}

LogicalResult CapsuleRegistry::addManifest(std::string_view text,
                                           std::string_view fileName,
                                           const std::string &baseDir,
                                           DiagnosticEngine &diag) {
  std::optional<std::vector<Capsule>> parsed =
      ManifestParser(text, fileName, baseDir, diag).parse();
  if (!parsed)
    return failure();
  bool ok = true;
  for (Capsule &c : *parsed) {
    bool duplicate = std::any_of(capsules.begin(), capsules.end(),
                                 [&](const Capsule &o) { return o.id == c.id; });
    if (duplicate) {
      SourceLocation loc;
      loc.file = fileName;
      diag.error(std::move(loc), "capsule id '" + c.id + "' is already registered");
      ok = false;
      continue;
    }
    add(std::move(c));
  }
  return success(ok);
}

LogicalResult CapsuleRegistry::addManifestDirectory(const std::string &dir,
                                                    DiagnosticEngine &diag) {
  std::error_code ec;
  std::vector<std::filesystem::path> manifests;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".json")
      manifests.push_back(it->path());
  if (ec) {
    SourceLocation loc;
    loc.file = dir;
    diag.error(std::move(loc), "cannot read kernel directory: " + ec.message());
    return failure();
  }
  std::sort(manifests.begin(), manifests.end()); // Deterministic order.
  bool ok = true;
  for (const std::filesystem::path &path : manifests) {
    std::string error;
    std::shared_ptr<const FileBuffer> text = FileBuffer::open(path, error);
    if (!text) {
      SourceLocation loc;
      loc.file = path.string();
      diag.error(std::move(loc), "cannot read capsule manifest: " + error);
      ok = false;
      continue;
    }
    ok &= succeeded(addManifest(text->text(), path.string(),
                                path.parent_path().string(), diag));
  }
  return success(ok);
}
