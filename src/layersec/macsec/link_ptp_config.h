// The gPTP settings of a MACsec link (`layersec macsec up ... --ptp FILE`):
// one IEEE 802.1AS port on the link's lower interface, run in the link's
// process, and whether its frames travel inside the link's SecY. Start-up
// code: errors are LinkConfigError whose message begins with the JSON pointer
// of the offending value ("/role: 'master' is not gm, slave or auto").
//
//   {
//     "protect": true,                   // gPTP inside MACsec frames of this link's SecY (default);
//                                        // false: plain 0x88F7 to 01-80-C2-00-00-0E, as ptp4l sends
//     "profile": "gptp",                 // "gptp" (BMCA, Announce) or "automotive" (static roles)
//     "role": "slave",                   // "gm", "slave" or "auto" (gptp only: the BMCA decides)
//     "domain": 0,                       // 0..127
//     "priority1": 248, "priority2": 248,  // 0..255 (gptp BMCA)
//     "log_sync_interval": -3,           // -8..8 (initialLogSyncInterval)
//     "log_announce_interval": 0,        // -8..8
//     "log_pdelay_interval": 0,          // -8..8 (initialLogPdelayReqInterval)
//     "neighbor_prop_delay_thresh_ns": 800,  // 1..1000000000 (asCapable; a veth needs ~100000)
//     "minor_version": 1,                // minorVersionPTP sent: 1, or 0 for linuxptp 3.x
//     "servo": "hw",                     // PI constants: "hw" (linuxptp's hardware ones) or "sw" (ptp4l -S)
//     "interval_request": false,         // automotive slave: ask for 1 s Sync by Signaling once synchronised
//     "offset_threshold_ns": 30,         // ... once 10 offsets in a row are within this (1..1000000000)
//     "tx_timestamp_timeout_ms": 50      // wait for an event message's TX timestamp, 1..1000
//   }
//
// Every member is optional but "role" under the automotive profile (static
// roles). Unknown members are refused. A configuration this parser accepts
// constructs a ptp::TimeAwareSystem (checked here, so the link never fails
// later on it).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "layersec/ptp/time_aware_system.h"

namespace layersec::macsec {

struct LinkPtpConfig {
  bool protect = true;
  ptp::SystemConfig system{};  // clock_identity 0: from the link's MAC
  bool software_servo = false; // "servo": "sw"
  int tx_timestamp_timeout_ms = 50;
};

LinkPtpConfig parse_link_ptp_config(const nlohmann::json& j);
// JSON text (parse errors are LinkConfigError naming `origin`).
LinkPtpConfig parse_link_ptp_config_text(std::string_view text, const std::string& origin = "ptp configuration");
// Reads a regular file (bounded) and parses it.
LinkPtpConfig load_link_ptp_config(const std::filesystem::path& path);

// One line for start-up output: protection, profile, role, domain, intervals.
std::string describe(const LinkPtpConfig& c);

}  // namespace layersec::macsec
