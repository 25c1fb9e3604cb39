//===- Base64.cpp - Binary data in JSON text -------------------------------===//

#include "fuel/Support/Base64.h"

#include <cstdint>

using namespace fuel;

static constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string fuel::encodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t word = 0;
    for (size_t k = 0; k < 3; ++k)
      word = word << 8 | (k < n ? static_cast<uint8_t>(bytes[i + k]) : 0);
    for (size_t k = 0; k < 4; ++k)
      out += k <= n ? kAlphabet[(word >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::optional<std::string> fuel::decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t word = 0;
    size_t padding = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      uint32_t v = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
      } else if (padding) {
        return std::nullopt; // Data after padding.
      } else if (c >= 'A' && c <= 'Z') {
        v = c - 'A';
      } else if (c >= 'a' && c <= 'z') {
        v = c - 'a' + 26;
      } else if (c >= '0' && c <= '9') {
        v = c - '0' + 52;
      } else if (c == '+' || c == '/') {
        v = c == '+' ? 62 : 63;
      } else {
        return std::nullopt;
      }
      word = word << 6 | v;
    }
    for (size_t k = 0; k < 3 - padding; ++k)
      out += static_cast<char>((word >> (16 - 8 * k)) & 0xFF);
  }
  return out;
}
