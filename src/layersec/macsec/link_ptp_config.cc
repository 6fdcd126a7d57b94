#include "layersec/macsec/link_ptp_config.h"

#include <sstream>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_config_file.h"
#include "layersec/macsec/link_config_json.h"
#include "layersec/ptp/servo.h"

namespace layersec::macsec {
namespace {

using nlohmann::json;

using config_json::check_members;
using config_json::fail;
using config_json::get_bool;
using config_json::get_int;
using config_json::get_string;

std::int8_t log_interval(const json& j, const char* key, std::int8_t def) {
  return static_cast<std::int8_t>(get_int(j, "", key, -8, 8).value_or(def));
}

}  // namespace

LinkPtpConfig parse_link_ptp_config(const json& j) {
  check_members(j, "",
                {"protect", "profile", "role", "domain", "priority1", "priority2", "log_sync_interval",
                 "log_announce_interval", "log_pdelay_interval", "neighbor_prop_delay_thresh_ns", "minor_version",
                 "servo", "interval_request", "offset_threshold_ns", "tx_timestamp_timeout_ms"});
  LinkPtpConfig c;
  ptp::SystemConfig& s = c.system;
  c.protect = get_bool(j, "", "protect", true);
  const std::string profile = get_string(j, "", "profile").value_or("gptp");
  if (profile == "gptp") {
    s.profile = ptp::Profile::kGptp;
  } else if (profile == "automotive") {
    s.profile = ptp::Profile::kAutomotive;
  } else {
    fail("/profile", "'" + profile + "' is neither \"gptp\" nor \"automotive\"");
  }
  const auto role = get_string(j, "", "role");
  if (!role && s.profile == ptp::Profile::kAutomotive) {
    fail("/role", "required under the automotive profile (static roles: \"gm\" or \"slave\")");
  }
  const std::string r = role.value_or("auto");
  if (r == "gm") {
    s.role = ptp::Role::kGm;
  } else if (r == "slave") {
    s.role = ptp::Role::kSlave;
  } else if (r == "auto") {
    if (s.profile == ptp::Profile::kAutomotive) fail("/role", "\"auto\" needs the BMCA: the automotive profile has none");
    s.role = ptp::Role::kAuto;
  } else {
    fail("/role", "'" + r + "' is not \"gm\", \"slave\" or \"auto\"");
  }
  s.domain = static_cast<std::uint8_t>(get_int(j, "", "domain", 0, 127).value_or(0));
  s.priority1 = static_cast<std::uint8_t>(get_int(j, "", "priority1", 0, 255).value_or(248));
  s.priority2 = static_cast<std::uint8_t>(get_int(j, "", "priority2", 0, 255).value_or(248));
  s.log_sync_interval = log_interval(j, "log_sync_interval", -3);
  s.log_announce_interval = log_interval(j, "log_announce_interval", 0);
  s.pdelay.log_interval = log_interval(j, "log_pdelay_interval", 0);
  s.pdelay.neighbor_prop_delay_thresh_ns =
      get_int(j, "", "neighbor_prop_delay_thresh_ns", 1, 1'000'000'000).value_or(800);
  s.minor_version = static_cast<std::uint8_t>(get_int(j, "", "minor_version", 0, 1).value_or(1));
  const std::string servo = get_string(j, "", "servo").value_or("hw");
  if (servo == "sw") {
    c.software_servo = true;
    s.servo = ptp::software_timestamp_servo();
  } else if (servo != "hw") {
    fail("/servo", "'" + servo + "' is neither \"hw\" nor \"sw\"");
  }
  // automotive-slave.cfg: step_threshold 1 (s); gptp: never step once locked.
  if (s.profile == ptp::Profile::kAutomotive) s.servo.step_threshold_ns = 1e9;
  s.interval_request = get_bool(j, "", "interval_request", false);
  if (s.interval_request && (s.profile != ptp::Profile::kAutomotive || s.role != ptp::Role::kSlave)) {
    fail("/interval_request", "only an automotive slave asks its master for other intervals");
  }
  s.offset_threshold_ns = static_cast<double>(get_int(j, "", "offset_threshold_ns", 1, 1'000'000'000).value_or(30));
  c.tx_timestamp_timeout_ms = static_cast<int>(get_int(j, "", "tx_timestamp_timeout_ms", 1, 1000).value_or(50));
  // Whatever is left for the core to refuse is refused here, at start-up
  // (a placeholder clock identity: the link's MAC gives the real one).
  ptp::SystemConfig probe = s;
  probe.clock_identity = 1;
  try {
    ptp::TimeAwareSystem check(probe);
  } catch (const ptp::ConfigError& e) {
    fail("", e.what());
  }
  return c;
}

LinkPtpConfig parse_link_ptp_config_text(std::string_view text, const std::string& origin) {
  return parse_link_ptp_config(config_json::parse_text(text, origin));
}

LinkPtpConfig load_link_ptp_config(const std::filesystem::path& path) {
  return config_json::load_file(
      path, [](const nlohmann::json& j, const std::filesystem::path&) { return parse_link_ptp_config(j); }, 1 << 16);
}

std::string describe(const LinkPtpConfig& c) {
  const ptp::SystemConfig& s = c.system;
  std::ostringstream o;
  o << (c.protect ? "protected (gPTP inside MACsec of this SecY)" : "unprotected (plain 0x88F7)") << ", profile "
    << (s.profile == ptp::Profile::kGptp ? "gptp" : "automotive") << ", role "
    << (s.role == ptp::Role::kGm ? "gm" : s.role == ptp::Role::kSlave ? "slave" : "auto") << ", domain "
    << int{s.domain} << ", log sync/pdelay/announce " << int{s.log_sync_interval} << "/"
    << int{s.pdelay.log_interval} << "/" << int{s.log_announce_interval} << ", delay threshold "
    << s.pdelay.neighbor_prop_delay_thresh_ns << " ns, servo " << (c.software_servo ? "sw" : "hw");
  return o.str();
}

}  // namespace layersec::macsec
