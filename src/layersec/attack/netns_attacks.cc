#include "layersec/attack/netns_attacks.h"

#include <algorithm>
#include <stdexcept>

#include "layersec/attack/netns_attacks_env.h"
#include "layersec/net/netns.h"

namespace layersec::attack {

bool netns_attacks_available(std::string* reason) { return net::netns_available(reason); }

std::vector<AttackRow> run_netns_attacks(const AttackOptions& options, const NetnsAttackSelection& selection) {
  AttackOptions capped = options;
  capped.attempts = std::clamp<std::uint64_t>(options.attempts, 1, kNetnsMaxAttempts);
  netns::InterruptGuard guard;
  if (netns::InterruptGuard::interrupted()) throw std::runtime_error("interrupted");
  std::vector<AttackRow> rows;
  if (selection.secoc) {
    auto got = netns::run_secoc(capped);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  if (selection.macsec) {
    auto got = netns::run_macsec(capped, selection.soak_seconds);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  if (selection.sv) {
    auto got = netns::run_sv(capped, selection.soak_seconds);
    rows.insert(rows.end(), got.begin(), got.end());
  }
  return rows;
}

}  // namespace layersec::attack
