// MKA key hierarchy (IEEE 802.1X-2020 §6.2, §9.3.3, §9.8.1) and MKPDU
// integrity/SAK protection, on OpenSSL (crypto/mac.h CMAC, crypto/kdf.h key wrap).
//
//   kdf()            §6.2.1 KDF: AES-CMAC in counter mode, 128/256-bit keys
//   derive_cak/ckn   §6.2.2 CAK and CKN from an EAP MSK
//   derive_kek/ick   §9.3.3 KEK and ICK from CAK and CKN (key length = CAK's)
//   derive_sak       §9.8.1 SAK from CAK, key-server nonce, MI value list, KN
//   compute/verify_icv  the 16-octet MKPDU ICV (AES-CMAC with the ICK)
//   wrap/unwrap_key  RFC 3394 AES Key Wrap with the KEK
// Secrets are SecretBytes (zeroized); print fingerprint(), never the key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"

namespace layersec::mka {

using MacAddress = std::array<std::uint8_t, 6>;
inline constexpr std::size_t kIcvSize = 16;
using Icv = std::array<std::uint8_t, kIcvSize>;

enum class KeyError : std::uint8_t {
  kBadKeyLength,      // key not 16 or 32 octets
  kBadOutputLength,   // requested derived length not 16 or 32 octets (KDF: 1..8191 bits)
  kBadMskLength,      // MSK shorter than the CAK length
  kBadCknLength,      // CKN empty or longer than 32 octets
  kBadNonceLength,    // key-server nonce length differs from the SAK length
  kBadWrappedLength,  // wrapped key not 24 or 40 octets
  kUnwrapFailed,      // RFC 3394 integrity check failed
  kBackend,           // OpenSSL failure
};
std::string_view to_string(KeyError e);

// §6.2.1: KDF(key, label, context, out.size()*8 bits) =
//   CMAC(key, i || label || 0x00 || context || L) for i = 1..n, L 16-bit.
Status<KeyError> kdf(ByteSpan key, std::string_view label, ByteSpan context, MutableByteSpan out);

// §6.2.2: CAK = KDF(MSK[0..len), "IEEE8021 EAP CAK", mac1 || mac2, len*8);
// the numerically lower MAC first. cak_len 16 or 32.
Result<SecretBytes, KeyError> derive_cak(ByteSpan msk, const MacAddress& a, const MacAddress& b,
                                         std::size_t cak_len = 16);
// §6.2.2: CKN = KDF(MSK[0..key_len), "IEEE8021 EAP CKN", session_id || mac1 || mac2, ckn_len*8).
Result<std::vector<std::uint8_t>, KeyError> derive_ckn(ByteSpan msk, ByteSpan eap_session_id,
                                                       const MacAddress& a, const MacAddress& b,
                                                       std::size_t key_len = 16, std::size_t ckn_len = 16);
// §9.3.3: KDF(CAK, "IEEE8021 KEK"/"IEEE8021 ICK", first 16 octets of CKN zero-padded, |CAK|).
Result<SecretBytes, KeyError> derive_kek(const SecretBytes& cak, ByteSpan ckn);
Result<SecretBytes, KeyError> derive_ick(const SecretBytes& cak, ByteSpan ckn);
// §9.8.1: KDF(CAK, "IEEE8021 SAK", ks_nonce || mi_value_list || KN, sak_len*8);
// ks_nonce is sak_len octets.
Result<SecretBytes, KeyError> derive_sak(const SecretBytes& cak, ByteSpan ks_nonce, ByteSpan mi_value_list,
                                         std::uint32_t kn, std::size_t sak_len);

// ICV over the concatenation of parts (DA, SA, EtherType, EAPOL header and
// MKPDU up to the ICV). ick: 16 or 32 octets.
Result<Icv, KeyError> compute_icv(const SecretBytes& ick, std::span<const ByteSpan> parts);
Result<Icv, KeyError> compute_icv(const SecretBytes& ick, ByteSpan covered);
// Constant-time; false on mismatch, a bad ICV length or a bad key.
[[nodiscard]] bool verify_icv(const SecretBytes& ick, ByteSpan covered, ByteSpan icv);

// RFC 3394 with the default IV: key 16 or 32 octets -> 24 or 40 octets.
Result<std::vector<std::uint8_t>, KeyError> wrap_key(const SecretBytes& kek, const SecretBytes& key);
Result<SecretBytes, KeyError> unwrap_key(const SecretBytes& kek, ByteSpan wrapped);

// The first 16 hex digits of SHA-256(key): safe to log.
std::string fingerprint(ByteSpan key);
inline std::string fingerprint(const SecretBytes& key) { return fingerprint(key.span()); }

}  // namespace layersec::mka
