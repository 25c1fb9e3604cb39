//===- Sha256.h - SHA-256 digests -------------------------------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, for artifact section hashes and kernel revisions.
// Loading an artifact hashes every byte of it, so on x86 CPUs with the SHA
// extensions the compression runs on them (about 5x the portable code).
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
  enum class Implementation { Fastest, Portable };
  /// `Portable` skips the SHA extensions (to test the portable code on CPUs
  /// that have them).
  explicit Sha256(Implementation implementation = Implementation::Fastest);
  void update(std::string_view bytes);
  Sha256Digest finish();

  static Sha256Digest of(std::string_view bytes) {
    Sha256 h;
    h.update(bytes);
    return h.finish();
  }

private:
  /// Compresses `count` 64-byte blocks at `p` into the state.
  void blocks(const uint8_t *p, size_t count);
  std::array<uint32_t, 8> state;
  bool accelerated;
  uint8_t buffer[64];
  size_t buffered = 0;
  uint64_t length = 0;
};

std::string toHex(const Sha256Digest &digest);

} // namespace fuel

#endif // FUEL_SUPPORT_SHA256_H
