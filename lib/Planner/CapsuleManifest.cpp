//===- CapsuleManifest.cpp - Hand-written kernels' capsule manifests ------===//
//
// A manifest describes the capsules of hand-written kernels (kernels/<backend>/)
// so that the planner prices and admits them like generated ones. The
// revision of each capsule is the hash of its kernel source (every file of
// it, with the headers they include): changing the kernel changes the plans
// that use it.
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
    if (!finish(parseDocument()))
      return std::nullopt;
    return std::move(capsules);
  }

private:
  bool parseDocument();
  bool parseCapsule();

  Expected<std::string> sourceRevision(const std::vector<std::string> &files) const;

  std::string baseDir;
  std::vector<Capsule> capsules;
};
} // namespace

/// The capsule's revision: the SHA-256 of its source, or, for several files
/// (those listed and the headers they include with `#include "..."`,
/// transitively, each once), of each file's name and hash in that order.
Expected<std::string> ManifestParser::sourceRevision(const std::vector<std::string> &files) const {
  if (files.empty())
    return Error{"'source' names no file"};
  std::vector<std::string> names(files);
  std::string listing, only;
  for (size_t i = 0; i < names.size(); ++i) {
    Expected<std::shared_ptr<const FileBuffer>> source =
        FileBuffer::open(baseDir + "/" + names[i], /*regularOnly=*/true);
    if (!source)
      return Error{"cannot read kernel source '" + names[i] + "': " + source.error()};
    std::string_view text = (*source)->text();
    only = toHex(Sha256::of(text));
    listing += names[i] + " " + only + "\n";
    std::string dir = std::filesystem::path(names[i]).parent_path().string();
    constexpr std::string_view kInclude = "#include \"";
    for (size_t at = text.find(kInclude); at != std::string_view::npos;
         at = text.find(kInclude, at + 1)) {
      size_t begin = at + kInclude.size(), end = text.find_first_of("\"\n", begin);
      if (end == std::string_view::npos || text[end] != '"')
        continue;
      std::string header = std::string(text.substr(begin, end - begin));
      if (!dir.empty())
        header = dir + "/" + header;
      if (std::find(names.begin(), names.end(), header) == names.end())
        names.push_back(header);
    }
  }
  return "sha256:" + (names.size() == 1 ? only : toHex(Sha256::of(listing)));
}

bool ManifestParser::parseDocument() {
  return readDocument("fuel.capsules", "capsule manifest",
                      [&](std::string_view key, size_t offset) {
                        if (key != "capsules")
                          return unknownMember(offset, key, "capsule manifest",
                                               "format, version, capsules");
                        auto s = scope("capsules");
                        return forEachElement([&] { return parseCapsule(); });
                      });
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
    } else if (member == "dtypes" || member == "operand_dtypes") {
      sawDTypes |= member == "dtypes";
      uint32_t &mask = member == "dtypes" ? c.dtypes : c.operandDTypes;
      alive = forEachElement([&] {
        size_t at = reader.offset();
        bool isString = true;
        if (!readText(text, isString))
          return false;
        if (std::optional<DType> t = parseDType(text); t && isString) {
          mask |= 1u << static_cast<unsigned>(*t);
        } else {
          if (isString)
            errorAt(at, "unknown dtype '" + text + "'");
          valid = false;
        }
        return true;
      });
    } else if (member == "symbol") {
      alive = readText(c.symbol, valid);
    } else if (member == "attention_symbol") {
      alive = readText(c.attentionSymbol, valid);
    } else if (member == "pooled_symbol") {
      alive = readText(c.pooledSymbol, valid);
    } else if (member == "cpu_features") {
      alive = forEachElement([&] {
        bool isString = true;
        if (!readText(text, isString))
          return false;
        if (isString)
          c.cpuFeatures.push_back(text);
        valid &= isString;
        return true;
      });
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
      alive = readNumberAtLeast(c.maxRelativeError, valid, 0, false);
    } else if (member == "bit_stable") {
      alive = readFlag(c.bitStable, valid);
    } else if (member == "strided_inputs") {
      alive = readFlag(c.stridedInputs, valid);
    } else if (member == "max_rank") {
      alive = readNumberAtLeast(number, valid, 0, false);
      c.predicate.maxRank = static_cast<unsigned>(std::min(number, 64.0));
    } else if (member == "max_elements") {
      alive = readNumberAtLeast(number, valid, 1, false);
      c.predicate.maxElements =
          static_cast<int64_t>(std::min(number, double(int64_t(1) << 59)));
    } else if (member == "efficiency") {
      alive = readNumberAtLeast(c.efficiency, valid, 0, false);
      if (valid && (c.efficiency <= 0 || c.efficiency > 1)) {
        errorAt(offset, "efficiency must be in (0, 1], got " + literal(offset));
        valid = false;
      }
    } else if (member == "fixed_overhead") {
      alive = readNumberAtLeast(c.fixedOverhead, valid, 0, false);
    } else if (member == "workspace_bytes") {
      alive = readNumberAtLeast(number, valid, 0, false);
      c.workspaceBytes = static_cast<uint64_t>(number);
    } else if (member == "source") {
      sawSource = true;
      std::vector<std::string> files;
      bool named = true; // Every file is named by a string.
      auto readFile = [&] {
        bool isString = true;
        if (!readText(text, isString))
          return false;
        if (isString)
          files.push_back(text);
        named &= isString;
        return true;
      };
      alive = reader.peek() == JsonKind::Array ? forEachElement(readFile) : readFile();
      if (alive && named) {
        if (Expected<std::string> revision = sourceRevision(files))
          c.revision = *revision;
        else
          errorAt(offset, revision.error());
      }
      valid &= named && !c.revision.empty();
    } else {
      alive = unknownMember(offset, key, "capsule",
                            "id, op, backend, dtypes, operand_dtypes, provider, trust, "
                            "max_relative_error, bit_stable, strided_inputs, "
                            "max_rank, max_elements, efficiency, "
                            "fixed_overhead, workspace_bytes, source, symbol, "
                            "attention_symbol, pooled_symbol, cpu_features");
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
    std::shared_ptr<const FileBuffer> text =
        openInputFile(path.string(), "capsule manifest", diag);
    if (!text) {
      ok = false;
      continue;
    }
    ok &= succeeded(addManifest(text->text(), path.string(),
                                path.parent_path().string(), diag));
  }
  return success(ok);
}
