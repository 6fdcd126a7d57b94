// Message authentication codes behind one interface, with contexts built once
// per key and reused for every message (no allocation per message).
//
//   AES-CMAC-128/192/256 (RFC 4493, NIST SP 800-38B)      cmac.h: CMAC over OpenSSL
//                                                         AES-CBC (EVP_MAC "CMAC" is
//                                                         the cross-check)
//   HMAC-SHA256 (RFC 2104 / FIPS 198-1)                   OpenSSL EVP_MAC "HMAC"
//   keyed BLAKE2s-256 (RFC 7693)                          OpenSSL EVP_MAC "BLAKE2SMAC"
//   Chaskey (8 rounds) and Chaskey-12 (ISO/IEC 29192-6)   written here (chaskey.h)
//
// AES-GMAC needs an IV per message and has its own class in aead.h.
//
// Truncation: tags keep their most significant bits. compute_bits() writes
// ceil(bits/8) bytes and clears the unused low bits of the last byte, so a
// 28-bit SecOC MAC is bit-exact; verify_bits() compares in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::crypto {

enum class CryptoError : std::uint8_t {
  kBadKeyLength,    // key size not allowed for the algorithm
  kBadTagLength,    // requested tag longer than the algorithm's or zero
  kBadNonceLength,  // IV/nonce size not allowed
  kBufferTooSmall,  // output buffer shorter than needed
  kAuthFailed,      // tag did not verify
  kBadInput,        // malformed input (e.g. key-wrap length not a multiple of 8)
  kBackend,         // the crypto library reported an internal failure
};
std::string_view to_string(CryptoError e);

enum class MacAlgorithm : std::uint8_t {
  kCmacAes128,
  kCmacAes192,
  kCmacAes256,
  kHmacSha256,
  kBlake2s256,
  kChaskey8,
  kChaskey12,
};
std::string_view to_string(MacAlgorithm a);
// Key length in bytes required by `a` (HMAC/BLAKE2s: the recommended length).
std::size_t mac_key_size(MacAlgorithm a);
// Full tag length in bytes.
std::size_t mac_tag_size(MacAlgorithm a);

// A keyed MAC context. Thread-compatible (one user at a time).
class Mac {
 public:
  virtual ~Mac() = default;
  [[nodiscard]] virtual MacAlgorithm algorithm() const = 0;
  // Length of the untruncated tag in bytes.
  [[nodiscard]] virtual std::size_t tag_size() const = 0;

  // Incremental interface: begin(), any number of update(), then finish().
  // finish() writes min(out.size(), tag_size()) bytes of the tag (MSB first);
  // it fails with kBufferTooSmall only when out is empty.
  virtual void begin() = 0;
  virtual void update(ByteSpan data) = 0;
  virtual Status<CryptoError> finish(MutableByteSpan out) = 0;

  // One-shot over one message or over the concatenation of several parts.
  // The one-message form is what hot paths call: an implementation may run
  // it without the incremental interface's per-call bookkeeping (EvpMac does
  // one EVP_MAC_init/update/final).
  virtual Status<CryptoError> compute(ByteSpan message, MutableByteSpan out);
  Status<CryptoError> compute(std::span<const ByteSpan> parts, MutableByteSpan out);

  // Truncated to `bits` (1..8*tag_size()): writes ceil(bits/8) bytes into
  // out (which must be that large), low unused bits of the last byte cleared.
  Status<CryptoError> compute_bits(std::span<const ByteSpan> parts, std::size_t bits,
                                   MutableByteSpan out);
  // Recomputes and compares the first `bits` bits of `tag` in constant time.
  // Returns false on mismatch or on a bad length.
  [[nodiscard]] bool verify_bits(std::span<const ByteSpan> parts, ByteSpan tag, std::size_t bits);
};

// Builds a MAC context for `algorithm` keyed with `key`.
Result<std::unique_ptr<Mac>, CryptoError> make_mac(MacAlgorithm algorithm, ByteSpan key);

// Constant-time comparison of equal-length buffers (false if lengths differ;
// the length itself is not secret).
[[nodiscard]] bool ct_equal(ByteSpan a, ByteSpan b);
// Constant-time comparison of the first `bits` bits (MSB-first) of a and b.
[[nodiscard]] bool ct_equal_bits(ByteSpan a, ByteSpan b, std::size_t bits);

// Keeps the first `bits` bits of `tag` in `out` (ceil(bits/8) bytes), clearing
// the unused low bits of the last byte.
void truncate_bits(ByteSpan tag, std::size_t bits, MutableByteSpan out);

}  // namespace layersec::crypto
