#include "layersec/macsec/link_config.h"

#include <fstream>
#include <set>
#include <sstream>

#include "layersec/base/hex.h"
#include "layersec/base/file.h"
#include "layersec/base/keyfile.h"
#include "layersec/crypto/kdf.h"
#include "layersec/macsec/link_config_json.h"

namespace layersec::macsec {
namespace {

using nlohmann::json;

using config_json::check_members;
using config_json::child;
using config_json::fail;
using config_json::find;
using config_json::get_bool;

std::uint64_t get_uint(const json& obj, const std::string& pointer, const char* key, std::uint64_t def,
                       std::uint64_t max, bool required = false) {
  const json* v = find(obj, key);
  if (v == nullptr) {
    if (required) fail(child(pointer, key), "required");
    return def;
  }
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    fail(child(pointer, key), "expected a non-negative integer");
  }
  const auto x = v->get<std::uint64_t>();
  if (x > max) fail(child(pointer, key), "must be at most " + std::to_string(max));
  return x;
}

std::string get_string(const json& obj, const std::string& pointer, const char* key, bool required) {
  const json* v = find(obj, key);
  if (v == nullptr) {
    if (required) fail(child(pointer, key), "required");
    return {};
  }
  if (!v->is_string()) fail(child(pointer, key), "expected a string");
  return v->get<std::string>();
}

// Hex with optional spaces, ':' or '-' separators.
std::vector<std::uint8_t> hex_field(const std::string& pointer, const std::string& text, std::size_t size) {
  std::string digits;
  for (char c : text) {
    if (c == ' ' || c == ':' || c == '-') continue;
    digits.push_back(c);
  }
  auto v = from_hex(digits);
  if (!v) fail(pointer, "not valid hex");
  if (v->size() != size) fail(pointer, "expected " + std::to_string(size) + " octets");
  return *v;
}

Sci parse_sci(const std::string& pointer, const std::string& text) {
  const auto b = hex_field(pointer, text, 8);
  std::uint64_t v = 0;
  for (auto x : b) v = (v << 8) | x;
  if ((v & 0xFFFF) == 0) fail(pointer, "port identifier 0 (the last 4 hex digits) names no port; ports start at 1");
  return Sci{v};
}

SaConfig parse_sa(const json& j, const std::string& pointer, CipherSuite suite,
                  const std::filesystem::path& base_dir) {
  check_members(j, pointer, {"an", "pn", "key_file", "ssci", "salt", "new_key"});
  SaConfig sa;
  sa.pointer = pointer;
  sa.an = static_cast<std::uint8_t>(get_uint(j, pointer, "an", 0, 3, /*required=*/true));
  sa.pn = get_uint(j, pointer, "pn", 1, max_pn(suite));
  if (sa.pn == 0) fail(child(pointer, "pn"), "PN 0 is not a valid packet number");
  sa.key_file = get_string(j, pointer, "key_file", /*required=*/true);
  std::filesystem::path kp(sa.key_file);
  if (kp.is_relative()) kp = base_dir / kp;
  KeyFileOptions ko;
  ko.expected_size = sak_size(suite);
  std::string detail;
  auto key = load_key_file(kp.string(), ko, &detail);
  if (!key) {
    // The message names the file, its decoded length and the suite's SAK
    // length (keyfile's detail), never a key byte.
    fail(child(pointer, "key_file"), key_file_message(kp.string(), key.error(), detail) +
                                         (key.error() == KeyFileError::kWrongSize
                                              ? " (" + std::string(to_string(suite)) + " needs a " +
                                                    std::to_string(sak_size(suite)) + "-octet SAK)"
                                              : std::string()));
  }
  sa.sak = std::move(key).value();
  sa.new_key = get_bool(j, pointer, "new_key", false);
  const std::string ssci = get_string(j, pointer, "ssci", false);
  const std::string salt = get_string(j, pointer, "salt", false);
  if (is_xpn(suite)) {
    if (ssci.empty()) fail(child(pointer, "ssci"), "required for " + std::string(to_string(suite)));
    if (salt.empty()) fail(child(pointer, "salt"), "required for " + std::string(to_string(suite)));
    const auto s = hex_field(child(pointer, "ssci"), ssci, 4);
    sa.ssci = (Ssci{s[0]} << 24) | (Ssci{s[1]} << 16) | (Ssci{s[2]} << 8) | Ssci{s[3]};
    const auto sl = hex_field(child(pointer, "salt"), salt, kSaltSize);
    std::copy(sl.begin(), sl.end(), sa.salt.begin());
  } else {
    if (find(j, "ssci") != nullptr) fail(child(pointer, "ssci"), "only for the XPN cipher suites");
    if (find(j, "salt") != nullptr) fail(child(pointer, "salt"), "only for the XPN cipher suites");
  }
  return sa;
}

void check_unique_an(const std::vector<SaConfig>& sas) {
  std::set<int> seen;
  for (const auto& sa : sas) {
    if (!seen.insert(sa.an).second) fail(child(sa.pointer, "an"), "AN " + std::to_string(sa.an) + " used twice");
  }
}

// The IV is SCI || PN (XPN: (SSCI || PN) XOR salt), without the AN: two SAs
// of one SC under the same key share one nonce space and would repeat PNs.
void check_unique_keys(const std::vector<SaConfig>& sas, CipherSuite suite) {
  for (std::size_t i = 0; i < sas.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (pn_fingerprint(suite, sas[i].keys()) == pn_fingerprint(suite, sas[k].keys())) {
        fail(child(sas[i].pointer, "key_file"),
             "the same key as " + sas[k].pointer + " (key id " + key_id(sas[i].sak) +
                 "): two SAs of one SC under one key share one nonce space (the IV has no AN) and would repeat "
                 "PNs; give each SA its own key");
      }
    }
  }
}

}  // namespace

LinkConfig parse_link_config(const json& j, const std::filesystem::path& base_dir) {
  const std::string root;
  check_members(j, root,
                {"cipher_suite", "sci", "port", "mac", "confidentiality", "confidentiality_offset", "include_sci",
                 "use_es", "validate_frames", "replay_protect", "replay_window", "vlan_mode", "clear_tags_in_icv",
                 "max_frame_size", "tx", "rx", "rx_retire_delay_ms", "rx_retire_timeout_ms", "pn_state_file",
                 "pn_reserve_block", "lower_link"});
  LinkConfig c;
  const std::string suite_name = get_string(j, root, "cipher_suite", /*required=*/true);
  auto suite = cipher_suite_from_string(suite_name);
  if (!suite) fail("/cipher_suite", "unknown cipher suite \"" + suite_name + "\"");
  c.secy.suite = *suite;
  if (const std::string s = get_string(j, root, "sci", false); !s.empty()) c.sci = parse_sci("/sci", s);
  c.port = static_cast<std::uint16_t>(get_uint(j, root, "port", 1, 0xFFFF));
  if (c.port == 0) fail("/port", "must be 1..65535: port identifier 0 names no port (an SCI's port starts at 1)");
  if (const std::string m = get_string(j, root, "mac", false); !m.empty()) {
    c.mac = net::MacAddress::parse(m);
    if (!c.mac) fail("/mac", "not a MAC address (aa:bb:cc:dd:ee:ff)");
    if (c.mac->is_multicast()) fail("/mac", "must be a unicast address");
  }
  c.secy.confidentiality = get_bool(j, root, "confidentiality", true);
  const auto offset = get_uint(j, root, "confidentiality_offset", 0, 50);
  if (offset != 0 && offset != 30 && offset != 50) fail("/confidentiality_offset", "must be 0, 30 or 50");
  c.secy.confidentiality_offset = static_cast<std::uint8_t>(offset);
  c.secy.include_sci = get_bool(j, root, "include_sci", true);
  c.secy.use_es = get_bool(j, root, "use_es", false);
  const std::string vf = get_string(j, root, "validate_frames", false);
  if (vf.empty() || vf == "strict") {
    c.secy.validate_frames = ValidateFrames::kStrict;
  } else if (vf == "check") {
    c.secy.validate_frames = ValidateFrames::kCheck;
  } else if (vf == "disabled") {
    c.secy.validate_frames = ValidateFrames::kDisabled;
  } else {
    fail("/validate_frames", "expected \"strict\", \"check\" or \"disabled\"");
  }
  c.secy.replay_protect = get_bool(j, root, "replay_protect", true);
  c.secy.replay_window = static_cast<std::uint32_t>(get_uint(j, root, "replay_window", 0, 0xFFFFFFFFu));
  const std::string vm = get_string(j, root, "vlan_mode", false);
  if (vm.empty() || vm == "standard") {
    c.secy.vlan_mode = VlanMode::kStandard;
  } else if (vm == "clear-tag") {
    c.secy.vlan_mode = VlanMode::kClearTag;
  } else {
    fail("/vlan_mode", "expected \"standard\" or \"clear-tag\"");
  }
  c.secy.clear_tags_in_icv = get_bool(j, root, "clear_tags_in_icv", false);
  if (c.secy.clear_tags_in_icv && c.secy.vlan_mode != VlanMode::kClearTag) {
    fail("/clear_tags_in_icv", "only meaningful with \"vlan_mode\": \"clear-tag\"");
  }
  c.secy.max_frame_size = get_uint(j, root, "max_frame_size", 0, 65535);
  if (c.secy.max_frame_size != 0 && c.secy.max_frame_size < kMinMaxFrameSize) {
    fail("/max_frame_size", "must be 0 (no limit) or " + std::to_string(kMinMaxFrameSize) +
                                "..65535: a secure frame must hold a 68-octet IPv4 packet (the minimum MTU) "
                                "with its Ethernet header and 32 octets of SecTAG and ICV");
  }
  if (const std::string f = get_string(j, root, "pn_state_file", false); !f.empty()) {
    std::filesystem::path sp(f);
    if (sp.is_relative()) sp = base_dir / sp;
    c.pn_state_file = sp.string();
  } else if (find(j, "pn_state_file") != nullptr) {
    fail("/pn_state_file", "must not be empty");
  }
  c.pn_reserve_block = get_uint(j, root, "pn_reserve_block", c.pn_reserve_block, kMaxPnReserveBlock);
  if (c.pn_reserve_block == 0) fail("/pn_reserve_block", "must be 1.." + std::to_string(kMaxPnReserveBlock));
  const std::string lower = get_string(j, root, "lower_link", false);
  if (lower.empty() || lower == "isolate") {
    c.lower_link = LowerLinkPolicy::kIsolate;
  } else if (lower == "sysctl-only") {
    c.lower_link = LowerLinkPolicy::kSysctlOnly;
  } else if (lower == "unchanged") {
    c.lower_link = LowerLinkPolicy::kUnchanged;
  } else {
    fail("/lower_link", "expected \"isolate\", \"sysctl-only\" or \"unchanged\"");
  }
  c.rx_retire_delay_ms = static_cast<std::uint32_t>(get_uint(j, root, "rx_retire_delay_ms", 1000, 3600000));
  c.rx_retire_timeout_ms = static_cast<std::uint32_t>(get_uint(j, root, "rx_retire_timeout_ms", 60000, 86400000));

  const json* tx = find(j, "tx");
  if (tx == nullptr) fail("/tx", "required");
  check_members(*tx, "/tx", {"encoding_an", "sas"});
  const json* tx_sas = find(*tx, "sas");
  if (tx_sas == nullptr || !tx_sas->is_array() || tx_sas->empty()) fail("/tx/sas", "expected a non-empty array");
  if (tx_sas->size() > 4) fail("/tx/sas", "at most four SAs");
  for (std::size_t i = 0; i < tx_sas->size(); ++i) {
    c.tx_sas.push_back(parse_sa((*tx_sas)[i], child("/tx/sas", i), c.secy.suite, base_dir));
  }
  check_unique_an(c.tx_sas);
  check_unique_keys(c.tx_sas, c.secy.suite);
  c.encoding_an = static_cast<std::uint8_t>(get_uint(*tx, "/tx", "encoding_an", c.tx_sas.front().an, 3));
  bool found = false;
  for (const auto& sa : c.tx_sas) found = found || sa.an == c.encoding_an;
  if (!found) fail("/tx/encoding_an", "no transmit SA with AN " + std::to_string(c.encoding_an));

  const json* rx = find(j, "rx");
  if (rx == nullptr || !rx->is_array() || rx->empty()) fail("/rx", "expected a non-empty array of receive SCs");
  std::set<std::uint64_t> scis;
  for (std::size_t i = 0; i < rx->size(); ++i) {
    const std::string p = child("/rx", i);
    const json& sc = (*rx)[i];
    check_members(sc, p, {"sci", "sas"});
    RxScConfig r;
    r.pointer = p;
    r.sci = parse_sci(child(p, "sci"), get_string(sc, p, "sci", /*required=*/true));
    if (!scis.insert(r.sci.value).second) fail(child(p, "sci"), "receive SC listed twice");
    const json* sas = find(sc, "sas");
    if (sas == nullptr || !sas->is_array() || sas->empty()) fail(child(p, "sas"), "expected a non-empty array");
    if (sas->size() > 4) fail(child(p, "sas"), "at most four SAs");
    for (std::size_t k = 0; k < sas->size(); ++k) {
      r.sas.push_back(parse_sa((*sas)[k], child(child(p, "sas"), k), c.secy.suite, base_dir));
    }
    check_unique_an(r.sas);
    check_unique_keys(r.sas, c.secy.suite);
    c.rx_scs.push_back(std::move(r));
  }
  return c;
}

std::string read_config_text(const std::filesystem::path& path, std::size_t max_bytes) {
  try {
    return read_regular_file(path.string(), max_bytes);
  } catch (const FileError& e) {
    throw LinkConfigError(std::string(e.what()));
  }
}

LinkConfig load_link_config(const std::filesystem::path& path) {
  const json j = config_json::parse_text(read_config_text(path, 1 << 20), path.string());
  auto dir = path.parent_path();
  if (dir.empty()) dir = ".";
  LinkConfig c = parse_link_config(j, dir);
  if (c.pn_state_file.empty()) c.pn_state_file = path.string() + ".pn-state";
  return c;
}

Sci resolve_sci(const LinkConfig& config, const net::MacAddress& link_mac) {
  if (config.sci) return *config.sci;
  return Sci::from_parts(link_mac.bytes.data(), config.port);
}

void check_own_sci(const LinkConfig& config, Sci own) {
  for (const auto& rx : config.rx_scs) {
    if (rx.sci == own) {
      fail(child(rx.pointer, "sci"), "is this SecY's own transmit SCI (" + sci_text(own) +
                                         ", from \"sci\" or the MAC and \"port\"); a receive SC must be a peer's");
    }
  }
}

SecY make_secy(const LinkConfig& config, const net::MacAddress& link_mac, PnStore* store, bool all_keys_new) {
  SecYConfig sc = config.secy;
  sc.sci = resolve_sci(config, link_mac);
  check_own_sci(config, sc.sci);
  std::optional<SecY> secy;
  try {
    secy.emplace(sc);
  } catch (const std::invalid_argument& e) {
    throw LinkConfigError(std::string("/: ") + e.what());
  }
  if (store != nullptr) secy->set_pn_store(store, config.pn_reserve_block);
  auto start = [&](const SaConfig& sa) { return all_keys_new || sa.new_key ? PnStart::kNewKey : PnStart::kResume; };
  for (const auto& sa : config.tx_sas) {
    auto st = secy->install_tx_sa(sa.an, sa.keys(), sa.pn, start(sa));
    if (!st) fail(sa.pointer, "cannot install transmit SA: " + sa_error_text(st.error(), sa, config));
  }
  if (auto st = secy->set_encoding_sa(config.encoding_an); !st) {
    fail("/tx/encoding_an", std::string(to_string(st.error())));
  }
  for (const auto& rx : config.rx_scs) {
    if (auto st = secy->add_rx_sc(rx.sci); !st) fail(child(rx.pointer, "sci"), std::string(to_string(st.error())));
    for (const auto& sa : rx.sas) {
      auto st = secy->install_rx_sa(rx.sci, sa.an, sa.keys(), sa.pn, start(sa));
      if (!st) fail(sa.pointer, "cannot install receive SA: " + sa_error_text(st.error(), sa, config));
    }
  }
  return std::move(*secy);
}

std::string sa_error_text(SaError e, const SaConfig& sa, const LinkConfig& config) {
  std::string text(to_string(e));
  if (e == SaError::kPnStateMissing) {
    text += ": " + config.pn_state_file + " has no record of key id " + key_id(sa.sak) +
            "; if this key has never been used, mark the SA \"new_key\": true (or start with --new-key once), "
            "otherwise restore the state file or install a new key";
  } else if (e == SaError::kPnStateUsedUp) {
    text += " (key id " + key_id(sa.sak) + ")";
  }
  return text;
}

std::string sci_text(Sci sci) {
  const auto b = sci.bytes();
  return to_hex(ByteSpan(b.data(), b.size()));
}

std::string key_id(const SecretBytes& key) {
  std::uint8_t digest[32];
  const ByteSpan parts[1] = {key.span()};
  if (!crypto::sha256(parts, digest).ok()) return "?";
  return to_hex(ByteSpan(digest, 4));
}

}  // namespace layersec::macsec
