#include "layersec/macsec/kernel_pn_handoff.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace layersec::macsec {

void consume_pn_state_for_kernel(LinkConfig& config, Sci sci, PnStore& store, bool new_key) {
  const std::uint64_t last = max_pn(config.secy.suite);
  auto take = [&](SaConfig& sa, PnDirection dir, Sci sa_sci) {
    const PnKey key{dir, sa_sci, pn_fingerprint(config.secy.suite, sa.keys())};
    auto record = store.load(key);
    if (!record) throw std::runtime_error(sa.pointer + ": PN state store failed");
    if (!*record && !(new_key || sa.new_key)) {
      throw std::runtime_error(sa.pointer + ": " + sa_error_text(SaError::kPnStateMissing, sa, config));
    }
    if (*record && **record >= last) {
      throw std::runtime_error(sa.pointer + ": " + sa_error_text(SaError::kPnStateUsedUp, sa, config) +
                               " (a key given to the kernel back end serves one run)");
    }
    if (*record) sa.pn = std::max(sa.pn, **record + 1);
    if (!store.save(key, sa.an, last)) throw std::runtime_error(sa.pointer + ": cannot write the PN state file");
  };
  for (auto& sa : config.tx_sas) take(sa, PnDirection::kTransmit, sci);
  for (auto& sc : config.rx_scs) {
    for (auto& sa : sc.sas) take(sa, PnDirection::kReceive, sc.sci);
  }
}

}  // namespace layersec::macsec
