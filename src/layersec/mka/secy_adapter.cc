#include "layersec/mka/secy_adapter.h"

#include <algorithm>

namespace layersec::mka {

macsec::CipherSuite to_macsec(CipherSuite s) {
  switch (s) {
    case CipherSuite::kGcmAes128: return macsec::CipherSuite::kGcmAes128;
    case CipherSuite::kGcmAes256: return macsec::CipherSuite::kGcmAes256;
    case CipherSuite::kGcmAesXpn128: return macsec::CipherSuite::kGcmAesXpn128;
    case CipherSuite::kGcmAesXpn256: return macsec::CipherSuite::kGcmAesXpn256;
  }
  return macsec::CipherSuite::kGcmAes128;
}

CipherSuite from_macsec(macsec::CipherSuite s) {
  switch (s) {
    case macsec::CipherSuite::kGcmAes128: return CipherSuite::kGcmAes128;
    case macsec::CipherSuite::kGcmAes256: return CipherSuite::kGcmAes256;
    case macsec::CipherSuite::kGcmAesXpn128: return CipherSuite::kGcmAesXpn128;
    case macsec::CipherSuite::kGcmAesXpn256: return CipherSuite::kGcmAesXpn256;
  }
  return CipherSuite::kGcmAes128;
}

ConfidentialityOffset offset_of(const macsec::SecYConfig& c) {
  if (!c.confidentiality) return ConfidentialityOffset::kIntegrityOnly;
  switch (c.confidentiality_offset) {
    case 30: return ConfidentialityOffset::kOffset30;
    case 50: return ConfidentialityOffset::kOffset50;
    default: return ConfidentialityOffset::kOffset0;
  }
}

Status<SecYError> SecYAdapter::check(const SaMaterial& m) {
  if (m.sak == nullptr) {
    ++stats_.bad_key;
    return Err(SecYError::kBadKey);
  }
  if (to_macsec(m.suite) != secy_->config().suite) {
    ++stats_.refused_suite;
    return Err(SecYError::kRefused);
  }
  if (m.offset != offset_of(secy_->config())) {
    ++stats_.refused_offset;
    return Err(SecYError::kRefused);
  }
  if (m.sak->size() != sak_size(m.suite)) {
    ++stats_.bad_key;
    return Err(SecYError::kBadKey);
  }
  return {};
}

Status<SecYError> SecYAdapter::fail(macsec::SaError e) {
  switch (e) {
    case macsec::SaError::kBadKey:
      ++stats_.bad_key;
      return Err(SecYError::kBadKey);
    case macsec::SaError::kBackend:
      ++stats_.backend;
      return Err(SecYError::kBackend);
    case macsec::SaError::kNoSuchSa:
      ++stats_.refused_other;
      return Err(SecYError::kNoSuchSa);
    default:
      ++stats_.refused_other;
      return Err(SecYError::kRefused);
  }
}

namespace {

macsec::SaKeys keys_of(const SaMaterial& m) {
  macsec::SaKeys k;
  k.sak = m.sak->span();
  if (is_xpn(m.suite)) {
    k.ssci = m.ssci;
    std::copy(m.salt.begin(), m.salt.end(), k.salt.begin());
  }
  return k;
}

}  // namespace

Status<SecYError> SecYAdapter::install_rx_sa(std::uint64_t peer_sci, const SaMaterial& m, std::uint64_t lowest_pn) {
  if (auto st = check(m); !st) return st;
  const macsec::Sci sci{peer_sci};
  bool created = false;
  if (!secy_->rx_sc_stats(sci)) {
    if (auto st = secy_->add_rx_sc(sci); !st) return fail(st.error());
    created = true;
  }
  auto st = secy_->install_rx_sa(sci, m.an, keys_of(m), std::max<std::uint64_t>(lowest_pn, 1));
  if (!st) {
    if (created) secy_->remove_rx_sc(sci).ignore();
    return fail(st.error());
  }
  return {};
}

Status<SecYError> SecYAdapter::install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) {
  if (auto st = check(m); !st) return st;
  if (auto st = secy_->install_tx_sa(m.an, keys_of(m), next_pn); !st) return fail(st.error());
  // Installed enabled by the SecY; nothing may be protected with it before
  // enable_tx_sa (its AN may be the encoding AN already, e.g. AN 0 at start).
  if (auto st = secy_->enable_tx_sa(m.an, false); !st) {
    secy_->remove_tx_sa(m.an).ignore();
    return fail(st.error());
  }
  return {};
}

Status<SecYError> SecYAdapter::enable_tx_sa(std::uint8_t an) {
  if (auto st = secy_->enable_tx_sa(an, true); !st) return fail(st.error());
  if (auto st = secy_->set_encoding_sa(an); !st) {
    secy_->enable_tx_sa(an, false).ignore();
    return fail(st.error());
  }
  return {};
}

void SecYAdapter::retire_rx_sa(std::uint64_t peer_sci, std::uint8_t an) {
  secy_->remove_rx_sa(macsec::Sci{peer_sci}, an).ignore();
}

void SecYAdapter::retire_tx_sa(std::uint8_t an) { secy_->remove_tx_sa(an).ignore(); }

void SecYAdapter::remove_rx_sc(std::uint64_t peer_sci) { secy_->remove_rx_sc(macsec::Sci{peer_sci}).ignore(); }

std::uint64_t SecYAdapter::tx_next_pn(std::uint8_t an) const {
  const macsec::TxSaStatus s = secy_->tx_sa_status(an);
  return s.installed ? s.next_pn : 0;
}

std::uint64_t SecYAdapter::rx_next_pn(std::uint64_t peer_sci, std::uint8_t an) const {
  const macsec::RxSaStatus s = secy_->rx_sa_status(macsec::Sci{peer_sci}, an);
  return s.installed ? s.next_pn : 0;
}

std::uint64_t SecYAdapter::encoding_next_pn() const {
  const macsec::TxSaStatus s = secy_->tx_sa_status(secy_->encoding_an());
  return s.installed && s.enabled ? s.next_pn : 0;
}

}  // namespace layersec::mka
