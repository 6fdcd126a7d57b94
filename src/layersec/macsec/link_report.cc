#include "layersec/macsec/link_report.h"

#include <algorithm>
#include <string>

namespace layersec::macsec {

nlohmann::json rotation_actions_json(const std::vector<RotationAction>& actions) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : actions) {
    nlohmann::json j{{"action", std::string(to_string(x.kind))}, {"an", x.an}};
    using K = RotationAction::Kind;
    if (x.kind != K::kTxSaInstalled && x.kind != K::kTxSaRemoved && x.kind != K::kEncodingSaSwitched &&
        x.kind != K::kSettingChanged)
      j["sci"] = sci_text(x.sci);
    if (x.pn != 0) j["pn"] = x.pn;
    if (!x.detail.empty()) {
      const char* name = x.kind == K::kSettingChanged       ? "setting"
                         : x.kind == K::kEncodingSaSwitched ? "previous"
                                                            : "key_id";
      j[name] = x.detail;
    }
    a.push_back(std::move(j));
  }
  return a;
}

void print_link_sas(std::ostream& out, const LinkConfig& config) {
  for (const auto& sa : config.tx_sas) {
    out << "  tx an " << int{sa.an} << " pn " << sa.pn << " key id " << key_id(sa.sak)
        << (sa.an == config.encoding_an ? " (encoding)" : "") << "\n";
  }
  for (const auto& sc : config.rx_scs) {
    for (const auto& sa : sc.sas) {
      out << "  rx sci " << sci_text(sc.sci) << " an " << int{sa.an} << " pn " << sa.pn << " key id "
          << key_id(sa.sak) << "\n";
    }
  }
}

void report_pn_resumption(std::ostream& out, const SecY& secy, const LinkConfig& config, bool new_key) {
  for (const auto& sa : config.tx_sas) {
    const auto st = secy.tx_sa_status(sa.an);
    if (st.pn_resumed && (new_key || sa.new_key)) {
      out << "macsec up: note: key id " << key_id(sa.sak)
          << " is not new (it has PN state); resuming instead of starting at its configured PN\n";
    }
    if (st.pn_resumed && st.pn_persisted > 0) {
      out << "macsec up: warning: static SAK key id " << key_id(sa.sak) << " (tx AN " << int{sa.an}
          << ") was used before this start (PNs up to " << st.pn_persisted << " may have been sent); "
          << "resuming at PN " << st.next_pn << ". Replace static SAKs regularly (or use MKA)\n";
    }
  }
  for (const auto& sc : config.rx_scs) {
    for (const auto& sa : sc.sas) {
      const auto st = secy.rx_sa_status(sc.sci, sa.an);
      if (st.pn_resumed && st.pn_persisted > 0) {
        out << "macsec up: rx sci " << sci_text(sc.sci) << " an " << int{sa.an} << " key id " << key_id(sa.sak)
            << ": PN state restored, frames with PN <= " << st.pn_persisted
            << " (anything accepted before this start) are refused\n";
      }
    }
  }
}

bool every_key_new(const LinkConfig& config, bool new_key) {
  if (new_key) return true;
  bool all_new = std::all_of(config.tx_sas.begin(), config.tx_sas.end(), [](const auto& sa) { return sa.new_key; });
  for (const auto& sc : config.rx_scs) {
    all_new = all_new && std::all_of(sc.sas.begin(), sc.sas.end(), [](const auto& sa) { return sa.new_key; });
  }
  return all_new;
}

}  // namespace layersec::macsec
