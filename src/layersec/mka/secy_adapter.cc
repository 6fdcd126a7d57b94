#include "layersec/mka/secy_adapter.h"

namespace layersec::mka {
namespace {

SecYError from(macsec::SaError e) {
  switch (e) {
    case macsec::SaError::kBadKey: return SecYError::kBadKey;
    case macsec::SaError::kBackend:
    case macsec::SaError::kPnStore: return SecYError::kBackend;
    case macsec::SaError::kNoSuchSa:
    case macsec::SaError::kNoSuchSc: return SecYError::kNoSuchSa;
    default: return SecYError::kRefused;
  }
}

macsec::SaKeys keys_of(const SaMaterial& m) {
  macsec::SaKeys k;
  k.sak = m.sak->span();
  k.ssci = m.ssci;
  k.salt = m.salt;
  return k;
}

}  // namespace

bool MacsecSecYDriver::matches(const SaMaterial& m) const {
  const macsec::SecYConfig& c = secy_.config();
  if (m.sak == nullptr || m.suite != c.suite) return false;
  if (m.offset == ConfidentialityOffset::kIntegrityOnly) return !c.confidentiality;
  return c.confidentiality && c.confidentiality_offset == offset_octets(m.offset);
}

Status<SecYError> MacsecSecYDriver::install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m,
                                                  std::uint64_t lowest_pn) {
  if (!matches(m)) return Err(SecYError::kRefused);
  const macsec::Sci sci{peer_sci};
  const bool new_sc = !secy_.rx_sc_stats(sci).has_value();
  if (new_sc) {
    if (auto s = secy_.add_rx_sc(sci); !s) return Err(from(s.error()));
  }
  auto s = secy_.install_rx_sa(sci, m.an, keys_of(m), lowest_pn, macsec::PnStart::kNewKey);
  if (!s) {
    const SecYError e = from(s.error());
    if (new_sc) secy_.remove_rx_sc(sci).ignore();
    return Err(e);
  }
  return {};
}

Status<SecYError> MacsecSecYDriver::install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) {
  if (!matches(m)) return Err(SecYError::kRefused);
  if (auto s = secy_.install_tx_sa(m.an, keys_of(m), next_pn, macsec::PnStart::kNewKey); !s) {
    return Err(from(s.error()));
  }
  return {};
}

Status<SecYError> MacsecSecYDriver::enable_tx_sa(std::uint8_t an) {
  if (auto s = secy_.set_encoding_sa(an); !s) return Err(from(s.error()));
  return {};
}

void MacsecSecYDriver::retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) {
  secy_.remove_rx_sa(macsec::Sci{peer_sci}, an).ignore();  // absent is fine
}

void MacsecSecYDriver::retire_tx_sa(std::uint8_t an) { secy_.remove_tx_sa(an).ignore(); }

void MacsecSecYDriver::remove_rx_sc(std::uint64_t peer_sci) { secy_.remove_rx_sc(macsec::Sci{peer_sci}).ignore(); }

std::uint64_t MacsecSecYDriver::tx_next_pn(std::uint8_t an) const {
  const macsec::TxSaStatus s = secy_.tx_sa_status(an);
  return s.installed ? s.next_pn : 0;
}

std::uint64_t MacsecSecYDriver::rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const {
  const macsec::RxSaStatus s = secy_.rx_sa_status(macsec::Sci{peer_sci}, an);
  return s.installed ? s.next_pn : 0;
}

}  // namespace layersec::mka
