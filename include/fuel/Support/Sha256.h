//===- Sha256.h - SHA-256 digests -------------------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, for artifact section hashes and kernel revisions.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_SHA256_H
#define FUEL_SUPPORT_SHA256_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fuel {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
public:
  Sha256();
  void update(std::string_view bytes);
  Sha256Digest finish();

  static Sha256Digest of(std::string_view bytes) {
    Sha256 h;
    h.update(bytes);
    return h.finish();
  }

private:
  void block(const uint8_t *p);
  std::array<uint32_t, 8> state;
  uint8_t buffer[64];
  size_t buffered = 0;
  uint64_t length = 0;
};

std::string toHex(const Sha256Digest &digest);

} // namespace fuel

#endif // FUEL_SUPPORT_SHA256_H
