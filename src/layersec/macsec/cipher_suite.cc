#include "layersec/macsec/cipher_suite.h"

#include <cctype>

namespace layersec::macsec {

std::string_view to_string(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return "GCM-AES-128";
    case CipherSuite::kGcmAes256: return "GCM-AES-256";
    case CipherSuite::kGcmAesXpn128: return "GCM-AES-XPN-128";
    case CipherSuite::kGcmAesXpn256: return "GCM-AES-XPN-256";
  }
  return "unknown";
}

std::optional<CipherSuite> cipher_suite_from_string(std::string_view name) {
  for (auto s : {CipherSuite::kGcmAes128, CipherSuite::kGcmAes256, CipherSuite::kGcmAesXpn128,
                 CipherSuite::kGcmAesXpn256}) {
    const std::string_view n = to_string(s);
    if (n.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < n.size() && same; ++i)
      same = std::toupper(static_cast<unsigned char>(name[i])) == n[i];
    if (same) return s;
  }
  return std::nullopt;
}

std::uint64_t cipher_suite_id(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return 0x0080C20001000001ULL;
    case CipherSuite::kGcmAes256: return 0x0080C20001000002ULL;
    case CipherSuite::kGcmAesXpn128: return 0x0080C20001000003ULL;
    case CipherSuite::kGcmAesXpn256: return 0x0080C20001000004ULL;
  }
  return 0;
}

std::size_t sak_size(CipherSuite s) {
  return (s == CipherSuite::kGcmAes128 || s == CipherSuite::kGcmAesXpn128) ? 16 : 32;
}

bool is_xpn(CipherSuite s) {
  return s == CipherSuite::kGcmAesXpn128 || s == CipherSuite::kGcmAesXpn256;
}

std::uint64_t max_pn(CipherSuite s) { return is_xpn(s) ? UINT64_MAX : 0xFFFFFFFFULL; }

std::string_view to_string(CipherError e) {
  switch (e) {
    case CipherError::kBadKeyLength: return "SAK length does not match the Cipher Suite";
    case CipherError::kBackend: return "crypto back end failure";
    case CipherError::kIcvMismatch: return "ICV mismatch";
  }
  return "unknown cipher error";
}

Result<SaCipher, CipherError> SaCipher::create(CipherSuite suite, const SaKeys& keys, Sci sci) {
  if (keys.sak.size() != sak_size(suite)) return Err(CipherError::kBadKeyLength);
  auto gcm = crypto::AesGcm::create(keys.sak);
  if (!gcm) return Err(CipherError::kBackend);
  SaCipher c(suite, std::move(gcm).value());
  if (is_xpn(suite)) {
    // 14.7: IV = (SSCI || PN) XOR Salt; the SSCI part is fixed per SA.
    c.iv_base_ = keys.salt;
    std::uint8_t ssci[4];
    store_be32(ssci, keys.ssci);
    for (int i = 0; i < 4; ++i) c.iv_base_[i] ^= ssci[i];
  } else {
    store_be64(c.iv_base_.data(), sci.value);  // 14.5: IV = SCI || PN
  }
  return c;
}

std::array<std::uint8_t, 12> SaCipher::iv(std::uint64_t pn) const {
  std::array<std::uint8_t, 12> out = iv_base_;
  if (is_xpn(suite_)) {
    std::uint8_t p[8];
    store_be64(p, pn);
    for (int i = 0; i < 8; ++i) out[4 + i] ^= p[i];
  } else {
    store_be32(out.data() + 8, static_cast<std::uint32_t>(pn));
  }
  return out;
}

Status<CipherError> SaCipher::protect(std::uint64_t pn, const CipherParts& parts,
                                      MutableByteSpan icv) {
  const auto nonce = iv(pn);
  auto st = gcm_.seal(nonce, parts.aad, parts.confidential, icv.first(kIcvSize));
  if (!st) return Err(CipherError::kBackend);
  return {};
}

Status<CipherError> SaCipher::validate(std::uint64_t pn, const CipherParts& parts, ByteSpan icv) {
  const auto nonce = iv(pn);
  auto st = gcm_.open(nonce, parts.aad, parts.confidential, icv.first(kIcvSize));
  if (!st) {
    return Err(st.error() == crypto::CryptoError::kAuthFailed ? CipherError::kIcvMismatch
                                                              : CipherError::kBackend);
  }
  return {};
}

}  // namespace layersec::macsec
