//===- Base64.h - Binary data in JSON text -------------------------*- C++ -*-===//
//
// RFC 4648 base64 with padding, for binaries (SPIR-V modules) carried in the
// JSON sections of an artifact.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_BASE64_H
#define FUEL_SUPPORT_BASE64_H

#include <optional>
#include <string>
#include <string_view>

namespace fuel {

std::string encodeBase64(std::string_view bytes);
/// The decoded bytes, or nullopt when `text` is not canonical base64.
std::optional<std::string> decodeBase64(std::string_view text);

} // namespace fuel

#endif // FUEL_SUPPORT_BASE64_H
