#include "layersec/mka/gated_secy_driver.h"

namespace layersec::mka {

Status<SecYError> GatedSecYDriver::install_tx_sa(const SaMaterial& m, std::uint64_t next_pn) {
  if (auto st = inner_.install_tx_sa(m, next_pn); !st) return st;
  if (auto st = secy_.enable_tx_sa(m.an, false); !st) {
    // Cannot happen for an SA just installed; never leave it enabled.
    secy_.remove_tx_sa(m.an).ignore();
    return Err(SecYError::kBackend);
  }
  return {};
}

Status<SecYError> GatedSecYDriver::enable_tx_sa(std::uint8_t an) {
  if (auto st = secy_.enable_tx_sa(an, true); !st) {
    return Err(st.error() == macsec::SaError::kNoSuchSa ? SecYError::kNoSuchSa : SecYError::kRefused);
  }
  if (auto st = inner_.enable_tx_sa(an); !st) {
    secy_.enable_tx_sa(an, false).ignore();
    return st;
  }
  return {};
}

std::uint64_t GatedSecYDriver::encoding_next_pn() const {
  const macsec::TxSaStatus s = secy_.tx_sa_status(secy_.encoding_an());
  return s.installed && s.enabled ? s.next_pn : 0;
}

}  // namespace layersec::mka
