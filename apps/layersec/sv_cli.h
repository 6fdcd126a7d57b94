// Option parsing shared by the `layersec sv ...` commands (cmd_sv.cc: pcap,
// decode, bench sv; cmd_sv_net.cc: publish, subscribe, kdc): one stream's
// options and their mapping to the sv core's configurations, the --kdc
// client options and every option of `sv subscribe`. The work itself is in
// src/layersec/sv_io (docs/sv.md).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_checks.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/security.h"
#include "layersec/sv/stream.h"
#include "layersec/sv/subscriber.h"
#include "layersec/sv_io/keys.h"
#include "layersec/sv_io/lookup.h"

namespace layersec::app::svcli {

using namespace layersec::sv;
using sv_io::need_profile;
using sv_io::need_scheme;

// Longest --duration / --remove time any sv command accepts (about 115 days;
// far inside int64 nanoseconds).
inline constexpr double kMaxRunSeconds = 1e7;
// `sv subscribe --floor-reserve` default: frameCounters reserved per save of
// the --state file (about 2 s of 4000/1, 85 ms of 96000/1).
inline constexpr std::uint64_t kDefaultFloorReserve = 8192;

// --- one stream's options (sv pcap / publish send it, sv decode / subscribe receive it) ---

struct StreamOptions {
  std::string profile = "4000/1";
  std::string sv_id = "LAYERSEC01";
  std::uint16_t appid = 0x4000;
  std::string auth = "none";
  std::string key_file;
  std::uint32_t key_id = 1;
  std::uint32_t smp_cnt_wrap = 0;  // 0: the profile's default
  // sender only
  std::uint32_t conf_rev = 1;
  bool no_vlan = false;
  bool simulate = false;
};

enum class StreamRole : std::uint8_t { kSender, kReceiver };

inline void add_stream_options(CLI::App* cmd, StreamOptions& o, StreamRole role) {
  const bool tx = role == StreamRole::kSender;
  cmd->add_option("--profile", o.profile, "profile name or RATE/ASDUS (default 4000/1)");
  cmd->add_option("--sv-id", o.sv_id, tx ? "svID (default LAYERSEC01)" : "expected svID");
  cmd->add_option("--appid", o.appid, tx ? "APPID (default 0x4000 = 16384)" : "subscribed APPID")
      ->check(whole_in(0, 0xFFFF));
  cmd->add_option("--auth", o.auth,
                  tx ? "none, hmac-sha256[-80|-128], aes-gmac-[64|128], blake2s, chaskey12-full, chaskey12-selective"
                     : "expected authentication scheme (default none)");
  cmd->add_option("--key", o.key_file, "key file (hex text, mode 0600)");
  cmd->add_option("--key-id", o.key_id, tx ? "key id carried in the extension (default 1)" : "key id (default 1)")
      ->check(whole_in(0, 0xFFFFFFFFu));
  cmd->add_option("--smp-cnt-wrap", o.smp_cnt_wrap,
                  tx ? "smpCnt wraps at N, 1..65536 (default: the sample rate, 65536 above 65536/s)"
                     : "the publisher's smpCnt wrap, 1..65536 (default: the profile's, 65536 above 65536/s)")
      ->check(whole_in(1, kMaxSmpCntWrap));
  if (tx) {
    cmd->add_option("--conf-rev", o.conf_rev, "confRev (default 1)")->check(whole_in(0, 0xFFFFFFFFu));
    cmd->add_flag("--no-vlan", o.no_vlan, "omit the 802.1Q priority tag");
    cmd->add_flag("--simulate", o.simulate, "set the Simulate bit");
  }
}

// Where a publisher or subscriber gets its keys from `sv kdc` (instead of --key).
struct KdcClientOptions {
  std::string endpoint;  // ADDRESS:PORT of `sv kdc`; empty: keys from --key
  std::string id;
  std::string dir;
  std::string kem = "ml-kem-768";
};

inline void add_kdc_client_options(CLI::App* cmd, KdcClientOptions& o) {
  cmd->add_option("--kdc", o.endpoint, "get the stream's keys from `sv kdc` at ADDRESS:PORT (UDP) instead of --key");
  cmd->add_option("--id", o.id, "IED identity registered at the KDC (with --kdc)");
  cmd->add_option("--kdc-dir", o.dir, "directory with kdc.pub and ID.id (with --kdc)");
  cmd->add_option("--kem", o.kem, "ML-KEM set of the KDC (default ml-kem-768)");
}

struct SubscribeOptions {
  std::string iface;
  StreamOptions stream;
  double duration_s = 0;
  double interval_s = 1;
  double timeout_ms = 100;
  bool json = false;
  bool accept_simulated = false;
  bool realtime = false;
  KdcClientOptions kdc;
  std::string state_path;  // --state: the counter floor file (empty: the floor is not persisted)
  bool first_start = false;
  std::uint64_t floor_reserve = kDefaultFloorReserve;
};

inline void add_subscribe_options(CLI::App* subc, SubscribeOptions& o) {
  subc->add_option("--iface", o.iface, "interface to receive on")->required();
  add_stream_options(subc, o.stream, StreamRole::kReceiver);
  subc->add_option("--duration", o.duration_s, "seconds to run, 0..1e7 (default 0: until SIGINT/SIGTERM)")
      ->check(finite_in(0, kMaxRunSeconds));
  subc->add_option("--interval", o.interval_s, "seconds between reports, 0.001..86400 (default 1)")
      ->check(finite_in(0.001, 86'400));
  subc->add_option("--timeout-ms", o.timeout_ms, "stream timeout, 0.001..3600000 ms (default 100)")
      ->check(finite_in(0.001, 3'600'000));
  subc->add_flag("--json", o.json, "JSON lines: {type: stats|final, streams:[{counters}], rejections, ...}");
  subc->add_flag("--accept-simulated", o.accept_simulated, "deliver frames with the Simulate bit");
  subc->add_flag("--realtime", o.realtime, "mlockall + SCHED_FIFO priority 70 (root); warns and goes on if refused");
  add_kdc_client_options(subc, o.kdc);
  subc->add_option("--state", o.state_path,
                   "counter floor file (0600; secured streams): a restarted subscriber refuses every frameCounter "
                   "it may have accepted before; missing or corrupt: refuses to start");
  subc->add_flag("--first-start", o.first_start, "with --state: create the floor file if there is none (first run)");
  subc->add_option("--floor-reserve", o.floor_reserve,
                   "with --state: frameCounters reserved per save, 1..1e9 (default 8192; a crash loses at most "
                   "this many genuine frames)")
      ->check(whole_in(1, kMaxFloorReserve));
}



// The publisher's stream for `o` at profile `p` (scheme from --auth).
inline StreamConfig stream_config(const StreamOptions& o, const Profile& p) {
  StreamConfig c;
  c.asdus_per_frame = p.asdus_per_frame;
  c.eth.has_vlan = !o.no_vlan;
  c.sv_id = o.sv_id;
  c.appid = o.appid;
  c.conf_rev = o.conf_rev;
  c.simulate = o.simulate;
  c.smp_cnt_wrap = o.smp_cnt_wrap;
  c.security = need_scheme(o.auth);
  c.security.sender_id = o.appid;
  return c;
}

// The subscription for `o` at profile `p` (no timeout set).
inline SubscriptionConfig subscription_config(const StreamOptions& o, const Profile& p,
                                              bool accept_simulated) {
  SubscriptionConfig s;
  s.appid = o.appid;
  s.sv_id = o.sv_id;
  s.asdus_per_frame = p.asdus_per_frame;
  s.smp_cnt_wrap = o.smp_cnt_wrap != 0 ? o.smp_cnt_wrap : p.smp_cnt_wrap();
  if (s.smp_cnt_wrap < p.asdus_per_frame) {
    throw std::runtime_error("--smp-cnt-wrap " + std::to_string(s.smp_cnt_wrap) + " is below the " +
                             std::to_string(p.asdus_per_frame) + " ASDUs of a " + std::string(p.name) + " frame");
  }
  s.security = need_scheme(o.auth);
  s.accept_simulated = accept_simulated;
  return s;
}

// The --key file's key for a scheme that needs one.
inline KeyMaterial file_key(const StreamOptions& o) {
  if (o.key_file.empty()) throw std::runtime_error("--auth " + o.auth + " needs --key FILE");
  return sv_io::key_material(sv_io::load_key_file(o.key_file), o.key_id);
}

}  // namespace layersec::app::svcli
