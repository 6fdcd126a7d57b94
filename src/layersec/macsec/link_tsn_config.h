// The TSN settings of a MACsec link (`layersec macsec up ... --tsn FILE`): the
// emulated port speed, the 802.1Qbv schedule in taprio syntax, the stream
// identification rules that tag untagged frames at this first hop, and where
// the VLAN tag goes relative to the SecTAG. Start-up code: errors are
// LinkConfigError whose message begins with the JSON pointer of the offending
// value ("/streams/1/set_pcp: must be at most 7").
//
//   {
//     "port_mbit_s": 100,                   // emulated port speed, 1..100000
//     "taprio": "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0
//                sched-entry S 02 300000 sched-entry S 01 700000",
//     "taprio_file": "schedule.txt",        // instead of "taprio" (relative to this file)
//     "layout": "clear-tag",                // VLAN tag before the SecTAG (a bridge reads PCP/VID),
//                                           // or "standard" (tag inside the Secure Data)
//     "clear_tags_in_icv": false,           // clear-tag only: the ICV covers the tag
//     "default_pcp": 0,                     // class of untagged frames no rule matches
//     "queue_limit_frames": 256,            // per class, 1..65536
//     "late_tolerance_us": 50,              // driver lateness counted as late, 0..1000000
//     "streams": [                          // 802.1CB identification, first match wins
//       { "match": "ip", "handle": 1, "dst_ip": "10.0.0.2", "protocol": "udp",
//         "dst_port": 5000, "set_vid": 10, "set_pcp": 5 },
//       { "match": "null", "handle": 2, "dst_mac": "02:00:00:00:00:02", "untagged_only": true,
//         "set_vid": 20, "set_pcp": 0 } ]
//   }
//
// IP rule fields (each optional, a wildcard when absent): dst_mac, vid,
// src_ip, dst_ip (dotted quad), dscp (0..63), protocol ("udp", "tcp" or
// 0..255), src_port, dst_port (1..65535, UDP/TCP only). Null rules need
// dst_mac and either vid or untagged_only. set_vid 1..4094, set_pcp 0..7.
// Exactly one of taprio / taprio_file; the schedule is validated against the
// port speed (tsn::parse_taprio), its base time is on CLOCK_TAI.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/macsec/secy.h"
#include "layersec/tsn/stream_id.h"
#include "layersec/tsn/taprio.h"

namespace layersec::macsec {

inline constexpr std::uint64_t kMaxTsnPortMbit = 100'000;

struct LinkTsnConfig {
  std::uint64_t port_bps = 1'000'000'000;
  tsn::TaprioSchedule schedule;
  std::string schedule_text;  // as given (for the start-up line)
  VlanMode layout = VlanMode::kClearTag;
  bool clear_tags_in_icv = false;
  std::uint8_t default_pcp = 0;
  std::size_t queue_limit_frames = 256;
  std::int64_t late_tolerance_ns = 50'000;
  tsn::StreamIdentifier streams;
  std::set<std::pair<std::uint16_t, std::uint8_t>> tags;  // every rule's (set_vid, set_pcp): the only tags a receiver pops
};

// `base_dir` resolves a relative taprio_file; pass an empty path to refuse
// taprio_file (the fuzz target does).
LinkTsnConfig parse_link_tsn_config(const nlohmann::json& j, const std::filesystem::path& base_dir);
// JSON text (parse errors are LinkConfigError naming `origin`).
LinkTsnConfig parse_link_tsn_config_text(std::string_view text, const std::filesystem::path& base_dir,
                                         const std::string& origin = "tsn configuration");
// Reads a regular file (bounded) and parses it.
LinkTsnConfig load_link_tsn_config(const std::filesystem::path& path);

// One line for start-up output: speed, layout, classes, rules.
std::string describe(const LinkTsnConfig& c);

}  // namespace layersec::macsec
