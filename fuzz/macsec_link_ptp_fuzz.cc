// Fuzz target: the gPTP file of a MACsec link (macsec/link_ptp_config.h,
// `layersec macsec up --ptp`). Property: every input is refused with
// LinkConfigError (whose message starts with a JSON pointer or names the
// input) or yields a configuration that constructs a ptp::TimeAwareSystem,
// whose describe() line names its protection, and that parses again to the
// same settings from the JSON it implies. Anything else, a crash or a
// sanitizer report, is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_ptp_config.h"

using namespace layersec;

namespace {
void require(bool c) {
  if (!c) std::abort();
}

// The JSON a configuration implies (round trip).
nlohmann::json to_json(const macsec::LinkPtpConfig& c) {
  const ptp::SystemConfig& s = c.system;
  return nlohmann::json{
      {"protect", c.protect},
      {"profile", s.profile == ptp::Profile::kGptp ? "gptp" : "automotive"},
      {"role", s.role == ptp::Role::kGm ? "gm" : s.role == ptp::Role::kSlave ? "slave" : "auto"},
      {"domain", s.domain},
      {"priority1", s.priority1},
      {"priority2", s.priority2},
      {"log_sync_interval", s.log_sync_interval},
      {"log_announce_interval", s.log_announce_interval},
      {"log_pdelay_interval", s.pdelay.log_interval},
      {"neighbor_prop_delay_thresh_ns", s.pdelay.neighbor_prop_delay_thresh_ns},
      {"minor_version", s.minor_version},
      {"servo", c.software_servo ? "sw" : "hw"},
      {"interval_request", s.interval_request},
      {"offset_threshold_ns", static_cast<std::int64_t>(s.offset_threshold_ns)},
      {"tx_timestamp_timeout_ms", c.tx_timestamp_timeout_ms}};
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  macsec::LinkPtpConfig c;
  try {
    c = macsec::parse_link_ptp_config_text(std::string_view(reinterpret_cast<const char*>(data), size), "input");
  } catch (const macsec::LinkConfigError& e) {
    const std::string what = e.what();
    require(!what.empty() && (what[0] == '/' || what.rfind("input: ", 0) == 0));
    return 0;
  }
  ptp::SystemConfig s = c.system;
  s.clock_identity = 1;
  ptp::TimeAwareSystem check(s);  // must not throw: the parser checked it
  require(macsec::describe(c).find("protected") != std::string::npos);
  const macsec::LinkPtpConfig again = macsec::parse_link_ptp_config(to_json(c));
  require(to_json(again) == to_json(c));
  require(again.system.servo.kp_scale == c.system.servo.kp_scale);
  require(again.system.servo.step_threshold_ns == c.system.servo.step_threshold_ns);
  return 0;
}
