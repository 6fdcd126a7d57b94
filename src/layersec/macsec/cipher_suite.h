// MACsec Cipher Suites (IEEE 802.1AE-2018 clause 14): GCM-AES-128,
// GCM-AES-256 and the extended packet numbering suites GCM-AES-XPN-128 and
// GCM-AES-XPN-256 (802.1AEbw, 14.6/14.7).
//
// SaCipher is the per-SA crypto state: one crypto::AesGcm (OpenSSL context)
// built when the SA is installed, the SA's SCI (32-bit PN suites) or SSCI and
// Salt (XPN suites), so that per frame only the 12-octet IV is formed on the
// stack:
//   GCM-AES-128/256 (14.5):  IV = SCI(8) || PN(4)
//   GCM-AES-XPN (14.7):      IV = (SSCI(4) || PN(8)) XOR Salt(12)
// protect()/validate() work in place on caller buffers and never allocate.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/crypto/aead.h"
#include "layersec/macsec/sectag.h"

namespace layersec::macsec {

enum class CipherSuite : std::uint8_t {
  kGcmAes128,
  kGcmAes256,
  kGcmAesXpn128,
  kGcmAesXpn256,
};

// "GCM-AES-128", "GCM-AES-256", "GCM-AES-XPN-128", "GCM-AES-XPN-256".
std::string_view to_string(CipherSuite s);
// Parses the names above (case-insensitive); nullopt otherwise.
std::optional<CipherSuite> cipher_suite_from_string(std::string_view name);
// Cipher Suite Identifier of 802.1AE-2018 Table 14-1 (00-80-C2-00-01-00-00-0x).
std::uint64_t cipher_suite_id(CipherSuite s);
// SAK length in octets: 16 or 32.
std::size_t sak_size(CipherSuite s);
// True for the extended packet numbering suites (64-bit PN).
bool is_xpn(CipherSuite s);
// Largest PN an SA of the suite may use: 2^32-1 or 2^64-1 (10.5.2: the PN
// never wraps; the SA stops once it is used).
std::uint64_t max_pn(CipherSuite s);

inline constexpr std::size_t kSaltSize = 12;
using Salt = std::array<std::uint8_t, kSaltSize>;
using Ssci = std::uint32_t;

// Key material of one SA as it comes from configuration or MKA.
struct SaKeys {
  ByteSpan sak;    // 16 or 32 octets, matching the suite
  Ssci ssci = 0;   // XPN: Short SCI of the transmitter using this SA
  Salt salt{};     // XPN: 96-bit salt from the key agreement
};

enum class CipherError : std::uint8_t {
  kBadKeyLength,  // SAK size does not match the suite
  kBackend,       // OpenSSL failed to build or run the context
  kIcvMismatch,   // the ICV did not verify
};
std::string_view to_string(CipherError e);

// What the cipher protects in one frame: the AAD parts (DA/SA, optional clear
// tags, SecTAG, and any User Data sent in clear) and the octets encrypted in
// place (empty for integrity-only protection).
struct CipherParts {
  std::span<const ByteSpan> aad;
  MutableByteSpan confidential;
};

class SaCipher {
 public:
  // Builds the AES-GCM context once. `sci` is the SCI of the SC that owns the
  // SA (used in the IV of the 32-bit PN suites).
  static Result<SaCipher, CipherError> create(CipherSuite suite, const SaKeys& keys, Sci sci);

  [[nodiscard]] CipherSuite suite() const { return suite_; }

  // Encrypts parts.confidential in place and writes the 16-octet ICV.
  Status<CipherError> protect(std::uint64_t pn, const CipherParts& parts, MutableByteSpan icv);
  // Verifies the ICV and decrypts parts.confidential in place. On
  // kIcvMismatch the confidential octets are zeroed and must not be used.
  Status<CipherError> validate(std::uint64_t pn, const CipherParts& parts, ByteSpan icv);

  // The IV for `pn` (exposed for tests and diagnostics).
  [[nodiscard]] std::array<std::uint8_t, 12> iv(std::uint64_t pn) const;

 private:
  SaCipher(CipherSuite suite, crypto::AesGcm gcm) : suite_(suite), gcm_(std::move(gcm)) {}
  CipherSuite suite_;
  crypto::AesGcm gcm_;
  // The IV with the PN part zero: SCI || 0 (32-bit PN) or (SSCI || 0) ^ Salt.
  std::array<std::uint8_t, 12> iv_base_{};
};

}  // namespace layersec::macsec
