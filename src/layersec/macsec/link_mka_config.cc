#include "layersec/macsec/link_mka_config.h"

#include <sstream>

#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/macsec/link_config_file.h"
#include "layersec/macsec/link_config_json.h"
#include "layersec/mka/keys.h"

namespace layersec::macsec {
namespace {

using nlohmann::json;

using config_json::check_members;
using config_json::child;
using config_json::fail;
using config_json::find;
using config_json::get_string;
using config_json::get_uint;


Duration ms(std::uint64_t v) { return Duration::milliseconds(static_cast<std::int64_t>(v)); }

void parse_timers(const json& t, mka::ParticipantConfig& p) {
  const std::string at = "/timers";
  check_members(t, at,
                {"hello_ms", "bounded_hello_ms", "bounded_hellos", "life_ms", "transmit_delay_ms", "retire_ms",
                 "retire_grace_ms", "rekey_interval_ms"});
  if (auto v = get_uint(t, at, "hello_ms", 100, 60'000)) p.hello_time = ms(*v);
  if (auto v = get_uint(t, at, "bounded_hello_ms", 10, 60'000)) p.bounded_hello_time = ms(*v);
  if (auto v = get_uint(t, at, "bounded_hellos", 0, 100)) p.bounded_hellos = static_cast<std::uint32_t>(*v);
  if (auto v = get_uint(t, at, "life_ms", 300, 600'000)) p.life_time = ms(*v);
  if (p.life_time <= p.hello_time) {
    fail(find(t, "life_ms") != nullptr ? "/timers/life_ms" : "/timers/hello_ms",
         "the life time (" + std::to_string(p.life_time.ns() / 1'000'000) + " ms) must exceed the hello time (" +
             std::to_string(p.hello_time.ns() / 1'000'000) + " ms): a live peer would expire between two hellos");
  }
  if (auto v = get_uint(t, at, "transmit_delay_ms", 10, 600'000)) p.transmit_delay = ms(*v);
  if (auto v = get_uint(t, at, "retire_ms", 10, 600'000)) p.retire_time = ms(*v);
  if (auto v = get_uint(t, at, "retire_grace_ms", 0, 600'000)) p.retire_grace = ms(*v);
  if (auto v = get_uint(t, at, "rekey_interval_ms", 0, 86'400'000ULL * 365)) {
    if (*v != 0 && *v < 1000) {
      fail("/timers/rekey_interval_ms", "must be 0 (no timer rekey) or at least 1000: a SAK must outlive its rollout");
    }
    p.rekey_interval = ms(*v);
  }
}

}  // namespace

LinkMkaConfig parse_link_mka_config(const json& j, const std::filesystem::path& base_dir) {
  check_members(j, "",
                {"cak_file", "ckn", "priority", "cipher_suite", "confidentiality_offset", "port", "mac",
                 "replay_window", "lower_link", "mka_version", "max_peers", "pn_rekey_threshold", "timers"});
  LinkMkaConfig c;
  mka::ParticipantConfig& p = c.participant;

  const std::string suite_name = *get_string(j, "", "cipher_suite", /*required=*/true);
  auto suite = cipher_suite_from_string(suite_name);
  if (!suite) {
    fail("/cipher_suite", "unknown cipher suite \"" + suite_name +
                              "\" (gcm-aes-128, gcm-aes-256, gcm-aes-xpn-128 or gcm-aes-xpn-256)");
  }
  p.cipher_suite = *suite;

  const std::string ckn_text = *get_string(j, "", "ckn", /*required=*/true);
  auto ckn = from_hex(ckn_text);
  if (!ckn) fail("/ckn", "not valid hex (an even number of hex digits)");
  if (ckn->empty() || ckn->size() > mka::kMaxCknSize) {
    fail("/ckn", "must be 1.." + std::to_string(mka::kMaxCknSize) + " octets, not " + std::to_string(ckn->size()));
  }
  p.ckn = std::move(*ckn);
  p.key_server_priority = static_cast<std::uint8_t>(*get_uint(j, "", "priority", 0, 255, /*required=*/true));

  const auto offset = get_uint(j, "", "confidentiality_offset", 0, 50).value_or(0);
  if (offset != 0 && offset != 30 && offset != 50) fail("/confidentiality_offset", "must be 0, 30 or 50");
  c.confidentiality_offset = static_cast<std::uint8_t>(offset);
  p.confidentiality_offset = offset == 30   ? mka::ConfidentialityOffset::kOffset30
                             : offset == 50 ? mka::ConfidentialityOffset::kOffset50
                                            : mka::ConfidentialityOffset::kOffset0;
  c.port = static_cast<std::uint16_t>(get_uint(j, "", "port", 1, 0xFFFF).value_or(1));
  if (auto m = get_string(j, "", "mac")) {
    c.mac = net::MacAddress::parse(*m);
    if (!c.mac) fail("/mac", "not a MAC address (aa:bb:cc:dd:ee:ff)");
    if (c.mac->is_multicast()) fail("/mac", "must be a unicast address");
  }
  c.replay_window = static_cast<std::uint32_t>(get_uint(j, "", "replay_window", 0, 0xFFFFFFFFu).value_or(0));
  if (auto lower = get_string(j, "", "lower_link")) {
    if (*lower == "isolate") {
      c.lower_link = LowerLinkPolicy::kIsolate;
    } else if (*lower == "sysctl-only") {
      c.lower_link = LowerLinkPolicy::kSysctlOnly;
    } else if (*lower == "unchanged") {
      c.lower_link = LowerLinkPolicy::kUnchanged;
    } else {
      fail("/lower_link", "expected \"isolate\", \"sysctl-only\" or \"unchanged\"");
    }
  }
  p.mka_version = static_cast<std::uint8_t>(get_uint(j, "", "mka_version", 1, 3).value_or(mka::kMkaVersion));
  p.max_peers = static_cast<std::size_t>(get_uint(j, "", "max_peers", 1, 1024).value_or(64));
  if (auto v = get_uint(j, "", "pn_rekey_threshold", 0, max_pn(p.cipher_suite))) {
    if (*v != 0 && *v < kMinPnRekeyThreshold) {
      fail("/pn_rekey_threshold", "must be 0 (3/4 of the PN space) or at least " +
                                      std::to_string(kMinPnRekeyThreshold) + ": every SAK would ask for the next");
    }
    p.pn_rekey_threshold = *v;
  }
  if (const json* t = find(j, "timers")) parse_timers(*t, p);

  // The key last, once everything else is known to be right.
  const std::string file = *get_string(j, "", "cak_file", /*required=*/true);
  if (file.empty()) fail("/cak_file", "empty path");
  if (base_dir.empty()) fail("/cak_file", "key files are not read here");
  std::filesystem::path kp(file);
  if (kp.is_relative()) kp = base_dir / kp;
  c.cak_file = kp.string();
  std::string detail;
  auto key = load_key_file(c.cak_file, KeyFileOptions{}, &detail);
  if (!key) fail("/cak_file", key_file_message(c.cak_file, key.error(), detail));
  if (key->size() != 16 && key->size() != 32) {
    fail("/cak_file", c.cak_file + ": a CAK is 16 or 32 octets (802.1X-2020 §6.2), this file holds " +
                          std::to_string(key->size()));
  }
  c.cak = std::move(key).value();
  return c;
}

LinkMkaConfig parse_link_mka_config_text(std::string_view text, const std::filesystem::path& base_dir,
                                         const std::string& origin) {
  return parse_link_mka_config(config_json::parse_text(text, origin), base_dir);
}

LinkMkaConfig load_link_mka_config(const std::filesystem::path& path) {
  return config_json::load_file(path, parse_link_mka_config);
}

LinkConfig link_config_for_mka(const LinkMkaConfig& c) {
  LinkConfig l;
  l.secy.suite = c.participant.cipher_suite;
  l.secy.confidentiality = true;
  l.secy.confidentiality_offset = c.confidentiality_offset;
  l.secy.include_sci = true;
  l.secy.validate_frames = ValidateFrames::kStrict;
  l.secy.replay_protect = true;
  l.secy.replay_window = c.replay_window;
  l.port = c.port;
  l.mac = c.mac;
  l.lower_link = c.lower_link;
  return l;
}

std::string describe(const LinkMkaConfig& c) {
  const mka::ParticipantConfig& p = c.participant;
  const auto ms_of = [](Duration d) { return std::to_string(d.ns() / 1'000'000); };
  std::ostringstream o;
  o << "mka " << to_string(p.cipher_suite) << " ckn " << to_hex(ByteSpan(p.ckn.data(), p.ckn.size()))
    << " priority " << static_cast<int>(p.key_server_priority) << " cak " << mka::fingerprint(c.cak)
    << " (fingerprint) offset " << static_cast<int>(c.confidentiality_offset) << " hello " << ms_of(p.hello_time)
    << " ms (" << p.bounded_hellos << " at " << ms_of(p.bounded_hello_time) << " ms) life " << ms_of(p.life_time)
    << " ms rekey " << (p.rekey_interval == Duration::zero() ? std::string("off") : ms_of(p.rekey_interval) + " ms");
  return o.str();
}

}  // namespace layersec::macsec
