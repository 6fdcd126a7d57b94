#include "layersec/macsec/pn_state.h"

#include <stdexcept>
#include <string>

#include "layersec/crypto/kdf.h"

namespace layersec::macsec {

std::string_view to_string(PnDirection d) { return d == PnDirection::kTransmit ? "tx" : "rx"; }

std::string_view to_string(PnStoreError e) {
  switch (e) {
    case PnStoreError::kIo: return "PN state could not be written or read";
    case PnStoreError::kCorrupt: return "PN state is corrupt";
  }
  return "unknown PN state error";
}

PnFingerprint pn_fingerprint(CipherSuite suite, const SaKeys& keys) {
  static constexpr std::string_view kLabel = "layersec-macsec-pn-state-v1";
  const std::uint64_t id = cipher_suite_id(suite);
  std::uint8_t id_be[8];
  for (int i = 0; i < 8; ++i) id_be[i] = static_cast<std::uint8_t>(id >> (56 - 8 * i));
  const std::uint8_t ssci[4] = {static_cast<std::uint8_t>(keys.ssci >> 24), static_cast<std::uint8_t>(keys.ssci >> 16),
                                static_cast<std::uint8_t>(keys.ssci >> 8), static_cast<std::uint8_t>(keys.ssci)};
  const ByteSpan label(reinterpret_cast<const std::uint8_t*>(kLabel.data()), kLabel.size());
  // The SSCI and salt shape the IV only for the XPN suites (14.7).
  const ByteSpan parts[5] = {label, ByteSpan(id_be, 8), keys.sak, ByteSpan(ssci, 4),
                             ByteSpan(keys.salt.data(), keys.salt.size())};
  std::uint8_t digest[32];
  const std::size_t n = is_xpn(suite) ? 5 : 3;
  if (!crypto::sha256(std::span<const ByteSpan>(parts, n), MutableByteSpan(digest, sizeof digest)).ok()) {
    throw std::runtime_error("SHA-256 failed while fingerprinting an SA key");
  }
  PnFingerprint fp{};
  std::copy(digest, digest + fp.size(), fp.begin());
  return fp;
}

Result<std::optional<std::uint64_t>, PnStoreError> MemoryPnStore::load(const PnKey& key) {
  auto it = records_.find(key);
  if (it == records_.end()) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{it->second};
}

Status<PnStoreError> MemoryPnStore::save(const PnKey& key, std::uint8_t /*an*/, std::uint64_t highest) {
  if (fail_saves_) return Err(PnStoreError::kIo);
  records_[key] = highest;
  ++saves_;
  return {};
}

}  // namespace layersec::macsec
