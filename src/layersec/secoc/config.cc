#include "layersec/secoc/config.h"

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>


namespace layersec::secoc {
namespace {

using nlohmann::json;

std::string at(const std::string& path, const std::string& key) { return path + "." + key; }
std::string idx(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::uint64_t get_uint(const json& obj, const std::string& key, const std::string& path,
                       std::uint64_t max, std::uint64_t def, bool required = false) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) throw ConfigError(at(path, key), "required");
    return def;
  }
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
    throw ConfigError(at(path, key), "must be a non-negative integer");
  const auto v = it->get<std::uint64_t>();
  if (v > max) throw ConfigError(at(path, key), "must be <= " + std::to_string(max));
  return v;
}

std::string get_string(const json& obj, const std::string& key, const std::string& path,
                       const std::string& def, bool required = false) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) throw ConfigError(at(path, key), "required");
    return def;
  }
  if (!it->is_string()) throw ConfigError(at(path, key), "must be a string");
  return it->get<std::string>();
}

const json& get_array(const json& obj, const std::string& key, const std::string& path) {
  static const json empty = json::array();
  const auto it = obj.find(key);
  if (it == obj.end()) return empty;
  if (!it->is_array()) throw ConfigError(at(path, key), "must be an array");
  return *it;
}

void check_keys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed) {
  if (!obj.is_object()) throw ConfigError(path, "must be an object");
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) throw ConfigError(at(path, it.key()), "unknown key");
  }
}

AuthAlgorithm algorithm_by_name(const std::string& s, const std::string& path) {
  if (s == "cmac-aes128") return AuthAlgorithm::kCmacAes128;
  if (s == "cmac-aes256") return AuthAlgorithm::kCmacAes256;
  if (s == "hmac-sha256") return AuthAlgorithm::kHmacSha256;
  if (s == "aes128-gcm") return AuthAlgorithm::kAesGcm128;
  if (s == "aes256-gcm") return AuthAlgorithm::kAesGcm256;
  throw ConfigError(path, "unknown algorithm '" + s +
                              "' (cmac-aes128, cmac-aes256, hmac-sha256, aes128-gcm, aes256-gcm)");
}

std::uint32_t group_by_name(const EngineConfig& c, const std::string& name, const std::string& path) {
  for (std::size_t i = 0; i < c.key_groups.size(); ++i)
    if (c.key_groups[i].name == name) return static_cast<std::uint32_t>(i);
  throw ConfigError(path, "no key group named '" + name + "'");
}

// Common part of tx and rx PDUs: profile and AUTOSAR overrides.
PduProfile parse_profile(const json& p, const std::string& path, const EngineConfig& c) {
  PduProfile prof = profile_by_name(get_string(p, "profile", path, "vendor"), c.trip_bits,
                                    c.reset_bits, at(path, "profile"));
  const std::string kind = get_string(p, "freshness", path, "counter");
  if (kind != "counter" && kind != "timestamp")
    throw ConfigError(at(path, "freshness"), "must be \"counter\" or \"timestamp\"");
  if (kind == "timestamp") {
    if (!prof.freshness.has_freshness())
      throw ConfigError(at(path, "freshness"), "profile " + std::string(to_string(prof.kind)) +
                                                   " has no freshness value to carry a timestamp");
    if (prof.kind == ProfileKind::kAeadGcm)
      throw ConfigError(at(path, "freshness"),
                        "timestamp freshness is refused with aead-gcm: a clock that steps back "
                        "across a restart would repeat a GCM nonce");
    prof.freshness = FreshnessLayout::timestamp_us(64, 64);
  }
  if (p.contains("algorithm")) {
    prof.algorithm = algorithm_by_name(get_string(p, "algorithm", path, ""), at(path, "algorithm"));
    if (is_aead(prof.algorithm) && prof.kind != ProfileKind::kAeadGcm)
      throw ConfigError(at(path, "algorithm"),
                        "AES-GCM is only available through the explicit non-standard profile "
                        "\"aead-gcm\"");
    if (!is_aead(prof.algorithm) && prof.kind == ProfileKind::kAeadGcm)
      throw ConfigError(at(path, "algorithm"), "profile aead-gcm needs aes128-gcm or aes256-gcm");
  }
  const bool touched = p.contains("algorithm") || p.contains("authInfoTxLength") ||
                       p.contains("freshnessValueLength") || p.contains("freshnessValueTxLength") ||
                       p.contains("resetFlagLength");
  if (touched && prof.kind != ProfileKind::kAeadGcm) prof.kind = ProfileKind::kCustom;
  prof.auth_info_tx_length = static_cast<std::uint16_t>(
      get_uint(p, "authInfoTxLength", path, 256, prof.auth_info_tx_length));
  const unsigned fv_len = static_cast<unsigned>(
      get_uint(p, "freshnessValueLength", path, 64, prof.freshness.total()));
  const unsigned fv_tx = static_cast<unsigned>(
      get_uint(p, "freshnessValueTxLength", path, 64, prof.freshness.tx_bits));
  const unsigned flag = static_cast<unsigned>(
      get_uint(p, "resetFlagLength", path, 16, prof.freshness.reset_flag_bits));
  if (prof.freshness.timestamp) {
    if (flag != 0) throw ConfigError(at(path, "resetFlagLength"), "timestamp freshness has no reset flag");
    prof.freshness = FreshnessLayout::timestamp_us(static_cast<std::uint8_t>(fv_len),
                                                   static_cast<std::uint8_t>(fv_tx));
    if (!prof.freshness.valid())
      throw ConfigError(at(path, "freshnessValueLength"),
                        "timestamp freshness needs freshnessValueLength 48..64 and "
                        "1 <= freshnessValueTxLength <= freshnessValueLength");
  } else if (fv_len != prof.freshness.total() || fv_tx != prof.freshness.tx_bits ||
             flag != prof.freshness.reset_flag_bits) {
    prof.freshness = make_layout(fv_len, fv_tx, flag, c.trip_bits, c.reset_bits,
                                 at(path, "freshnessValueLength"));
  }
  prof.auth_pdu_header_length =
      static_cast<std::uint8_t>(get_uint(p, "authPduHeaderLength", path, 4, 0));
  prof.secured_area_offset =
      static_cast<std::uint32_t>(get_uint(p, "securedAreaOffset", path, 0xFFFF, 0));
  prof.secured_area_length =
      static_cast<std::uint32_t>(get_uint(p, "securedAreaLength", path, 0xFFFF, 0));
  if (is_aead(prof.algorithm) && (prof.secured_area_offset || prof.secured_area_length))
    throw ConfigError(at(path, "securedAreaOffset"),
                      "the AES-GCM profile encrypts the whole Authentic I-PDU");
  if (const std::string why = prof.validate(); !why.empty()) throw ConfigError(path, why);
  return prof;
}

}  // namespace

FreshnessLayout make_layout(unsigned fv_length, unsigned fv_tx_length, unsigned reset_flag,
                            std::uint8_t trip_bits, std::uint8_t reset_bits,
                            const std::string& path) {
  if (fv_length == 0) {
    if (fv_tx_length != 0) throw ConfigError(path, "freshnessValueTxLength needs a freshness value");
    return FreshnessLayout{};
  }
  const unsigned fixed = unsigned{trip_bits} + reset_bits + reset_flag;
  if (fv_length > 64 || fv_length <= fixed)
    throw ConfigError(path, "freshnessValueLength " + std::to_string(fv_length) +
                                " must exceed trip+reset+resetFlag bits (" +
                                std::to_string(fixed) + ") and be <= 64");
  FreshnessLayout l{trip_bits, reset_bits, static_cast<std::uint8_t>(fv_length - fixed),
                    static_cast<std::uint8_t>(reset_flag), static_cast<std::uint8_t>(fv_tx_length),
                    false};
  if (!l.valid())
    throw ConfigError(path, "freshnessValueTxLength must be > resetFlagLength and <= resetFlagLength + "
                            "message counter bits (" + std::to_string(l.msg_bits) + ")");
  return l;
}

PduProfile profile_by_name(const std::string& name, std::uint8_t trip_bits,
                           std::uint8_t reset_bits, const std::string& path) {
  PduProfile p;
  if (name == "profile1") p = PduProfile::profile1();
  else if (name == "profile2") p = PduProfile::profile2();
  else if (name == "profile3" || name == "jaspar") p = PduProfile::profile3();
  else if (name == "vendor") p = PduProfile::vendor();
  else if (name == "custom") { p = PduProfile::vendor(); p.kind = ProfileKind::kCustom; }
  else if (name == "aead-gcm") p = PduProfile::aead_gcm();
  else
    throw ConfigError(path, "unknown profile '" + name +
                                "' (profile1, profile2, profile3, vendor, custom, aead-gcm)");
  if (p.freshness.has_freshness())
    p.freshness = make_layout(p.freshness.total(), p.freshness.tx_bits, p.freshness.reset_flag_bits,
                              trip_bits, reset_bits, path);
  return p;
}

void EngineConfig::validate() const {
  bool any_fv = false;
  std::set<std::uint32_t> ids;
  for (std::size_t i = 0; i < tx_pdus.size(); ++i) {
    const auto& p = tx_pdus[i];
    const std::string path = idx("$.txPdus", i);
    if (p.id > kMaxPduId) throw ConfigError(path + ".id", "must be <= 65535");
    if (!ids.insert(p.id).second) throw ConfigError(path + ".id", "duplicate tx PDU id");
    if (p.key_group >= key_groups.size()) throw ConfigError(path + ".keyGroup", "out of range");
    if (key_groups[p.key_group].algorithm != p.profile.algorithm)
      throw ConfigError(path + ".keyGroup", "key group algorithm differs from the PDU's");
    if (const auto why = p.profile.validate(); !why.empty()) throw ConfigError(path, why);
    if (p.profile.freshness.timestamp && is_aead(p.profile.algorithm))
      throw ConfigError(path + ".freshness", "timestamp freshness is refused with aead-gcm");
    if (is_aead(p.profile.algorithm) && !has_sender_id && sender_id == 0)
      throw ConfigError("$.senderId",
                        "required by the aead-gcm tx PDU " + std::to_string(p.id) +
                            ": it is part of the GCM nonce and every sender sharing the key needs "
                            "its own");
    any_fv = any_fv || (p.profile.freshness.has_freshness() && !p.profile.freshness.timestamp);
  }
  ids.clear();
  for (std::size_t i = 0; i < rx_pdus.size(); ++i) {
    const auto& p = rx_pdus[i];
    const std::string path = idx("$.rxPdus", i);
    if (p.id > kMaxPduId) throw ConfigError(path + ".id", "must be <= 65535");
    if (!ids.insert(p.id).second) throw ConfigError(path + ".id", "duplicate rx PDU id");
    if (p.key_group >= key_groups.size()) throw ConfigError(path + ".keyGroup", "out of range");
    if (key_groups[p.key_group].algorithm != p.profile.algorithm)
      throw ConfigError(path + ".keyGroup", "key group algorithm differs from the PDU's");
    if (const auto why = p.profile.validate(); !why.empty()) throw ConfigError(path, why);
    if (p.verify_attempts < 1 || p.verify_attempts > kMaxVerifyAttempts)
      throw ConfigError(path + ".authenticationVerifyAttempts",
                        "must be 1.." + std::to_string(kMaxVerifyAttempts));
    if (is_aead(p.profile.algorithm) && !p.has_sender_id && p.sender_id == 0)
      throw ConfigError(path + ".senderId",
                        "required for an aead-gcm rx PDU: the GCM nonce carries the sender's "
                        "senderId, and without it every PDU fails as mac-mismatch");
    if (p.profile.freshness.timestamp) {
      if (is_aead(p.profile.algorithm))
        throw ConfigError(path + ".freshness", "timestamp freshness is refused with aead-gcm");
      if (p.max_age <= Duration::zero() || p.max_age > Duration::seconds(3600))
        throw ConfigError(path + ".maxAgeMs", "must be 1..3600000 for timestamp freshness");
      if (p.max_sources < 1 || p.max_sources > kMaxSources)
        throw ConfigError(path + ".maxSources", "must be 1.." + std::to_string(kMaxSources));
      if (p.mode == FreshnessMode::kReorderTolerant && (p.window < 1 || p.window > 256))
        throw ConfigError(path + ".window", "reorder-tolerant windows are 1..256");
      // The receiver picks the value nearest its own clock: the transmitted
      // bits must span more than twice the accepted age on either side.
      const unsigned tx = p.profile.freshness.tx_bits;
      if (tx < 63 && static_cast<double>(std::uint64_t{1} << tx) <= 4.0 * p.max_age.us())
        throw ConfigError(path + ".freshnessValueTxLength",
                          std::to_string(tx) + " transmitted bits span " +
                              std::to_string((std::uint64_t{1} << tx) / 1000) +
                              " ms of microseconds: need more than 4 x maxAgeMs");
      if (p.has_sync_channel)
        throw ConfigError(path + ".syncChannel", "timestamp freshness needs no sync channel");
    } else if (p.profile.freshness.has_freshness()) {
      const unsigned lsb = p.profile.freshness.msg_lower_bits();
      const std::uint64_t limit =
          lsb >= 63 ? ~std::uint64_t{0}
                    : (p.mode == FreshnessMode::kStrict ? (std::uint64_t{1} << lsb)
                                                        : (std::uint64_t{1} << (lsb - 1)));
      if (p.window < 1 || p.window > limit)
        throw ConfigError(path + ".window",
                          "must be 1.." + std::to_string(limit) + " for " + std::to_string(lsb) +
                              " transmitted message-counter bits in this mode");
      if (p.mode == FreshnessMode::kReorderTolerant && p.window > 256)
        throw ConfigError(path + ".window", "reorder-tolerant windows are limited to 256");
      if (!p.has_sync_channel)
        throw ConfigError(path + ".syncChannel", "required for a PDU with a freshness value");
      bool found = false;
      for (const auto& s : sync_rx) found = found || s.id == p.sync_channel;
      if (!found) throw ConfigError(path + ".syncChannel", "no syncRx entry with this id");
    }
  }
  for (std::size_t i = 0; i < sync_rx.size(); ++i) {
    const std::string path = idx("$.syncRx", i);
    if (sync_rx[i].key_group >= key_groups.size() || is_aead(key_groups[sync_rx[i].key_group].algorithm))
      throw ConfigError(path + ".keyGroup", "must name a MAC (not AES-GCM) key group");
    if (sync_rx[i].auth_info_tx_length < 1 ||
        sync_rx[i].auth_info_tx_length > full_tag_bits(key_groups[sync_rx[i].key_group].algorithm))
      throw ConfigError(path + ".authInfoTxLength", "out of range for the key group's MAC");
    for (std::size_t k = 0; k < i; ++k)
      if (sync_rx[k].id == sync_rx[i].id) throw ConfigError(path + ".id", "duplicate sync channel");
    if (sync_rx[i].period <= Duration::zero()) throw ConfigError(path + ".periodMs", "must be > 0");
    if (sync_rx[i].max_age < Duration::zero() || sync_rx[i].max_age > Duration::seconds(3600))
      throw ConfigError(path + ".maxAgeMs", "must be 0..3600000 (0 = no time bound)");
  }
  if (sync_tx.enabled) {
    if (sync_tx.key_group >= key_groups.size() || is_aead(key_groups[sync_tx.key_group].algorithm))
      throw ConfigError("$.syncTx.keyGroup", "must name a MAC (not AES-GCM) key group");
    if (sync_tx.auth_info_tx_length < 1 ||
        sync_tx.auth_info_tx_length > full_tag_bits(key_groups[sync_tx.key_group].algorithm))
      throw ConfigError("$.syncTx.authInfoTxLength", "out of range for the key group's MAC");
    if (sync_tx.period <= Duration::zero()) throw ConfigError("$.syncTx.periodMs", "must be > 0");
  }
  if (trip_bits > 24 || reset_bits > 24)
    throw ConfigError("$.tripCounterLength", "trip and reset counters are limited to 24 bits (JASPAR)");
  if (any_fv && trip_bits == 0)
    throw ConfigError("$.tripCounterLength", "must be >= 1 so restarts never reuse a FV");
}

std::string EngineConfig::describe() const {
  std::ostringstream o;
  o << "secoc engine: senderId=" << sender_id << " trip=" << unsigned{trip_bits}
    << " reset=" << unsigned{reset_bits} << " bits\n";
  for (const auto& g : key_groups)
    o << "  key group " << g.name << ": " << to_string(g.algorithm)
      << " (a group key authenticates the group, not the member)\n";
  for (const auto& p : tx_pdus)
    o << "  tx pdu " << p.id << " dataId=0x" << std::hex << p.data_id << std::dec << ": "
      << p.profile.describe() << "\n";
  for (const auto& p : rx_pdus) {
    o << "  rx pdu " << p.id << " dataId=0x" << std::hex << p.data_id << std::dec << ": "
      << p.profile.describe() << "; mode="
      << (p.mode == FreshnessMode::kStrict ? "strict" : "reorder-tolerant") << " W=" << p.window
      << " attempts=" << unsigned{p.verify_attempts};
    if (p.profile.freshness.timestamp)
      o << " freshness=timestamp maxAge=" << p.max_age.ms() << " ms sources=" << p.max_sources;
    o << "\n";
  }
  for (const auto& s : sync_rx) {
    o << "  sync rx channel " << s.id << " period " << s.period.ms() << " ms, ";
    if (s.max_age == Duration::zero())
      o << "NO time bound: a held-back PDU is accepted whenever it is released\n";
    else
      o << "time bound: a PDU is stale " << (s.period + s.max_age).ms()
        << " ms after its reset cycle started\n";
  }
  if (sync_tx.enabled)
    o << "  sync tx dataId=0x" << std::hex << sync_tx.data_id << std::dec << " MAC "
      << sync_tx.auth_info_tx_length << " bits (forgery 2^-" << sync_tx.auth_info_tx_length
      << " per attempt), period " << sync_tx.period.ms() << " ms\n";
  return o.str();
}

EngineConfig config_from_json(const json& j) {
  const std::string root = "$";
  check_keys(j, root, {"senderId", "tripCounterLength", "resetCounterLength", "keyRolloverWindowMs",
                       "keyGroups", "syncTx", "syncRx", "txPdus", "rxPdus"});
  EngineConfig c;
  c.sender_id = static_cast<std::uint16_t>(get_uint(j, "senderId", root, 0xFFFF, 0));
  c.has_sender_id = j.contains("senderId");
  c.trip_bits = static_cast<std::uint8_t>(get_uint(j, "tripCounterLength", root, 24, kDefaultTripBits));
  c.reset_bits =
      static_cast<std::uint8_t>(get_uint(j, "resetCounterLength", root, 24, kDefaultResetBits));
  c.rollover_window = Duration::milliseconds(
      static_cast<std::int64_t>(get_uint(j, "keyRolloverWindowMs", root, 86400000, 60000)));
  const auto& groups = get_array(j, "keyGroups", root);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string path = idx("$.keyGroups", i);
    check_keys(groups[i], path, {"name", "algorithm"});
    KeyGroupConfig g;
    g.name = get_string(groups[i], "name", path, "", true);
    g.algorithm = algorithm_by_name(get_string(groups[i], "algorithm", path, "", true),
                                    at(path, "algorithm"));
    for (const auto& o : c.key_groups)
      if (o.name == g.name) throw ConfigError(at(path, "name"), "duplicate key group name");
    c.key_groups.push_back(g);
  }
  if (j.contains("syncTx")) {
    const std::string path = "$.syncTx";
    const json& s = j["syncTx"];
    check_keys(s, path, {"dataId", "keyGroup", "authInfoTxLength", "periodMs"});
    c.sync_tx.enabled = true;
    c.sync_tx.data_id = static_cast<std::uint16_t>(get_uint(s, "dataId", path, 0xFFFF, 0, true));
    c.sync_tx.key_group =
        group_by_name(c, get_string(s, "keyGroup", path, "", true), at(path, "keyGroup"));
    c.sync_tx.auth_info_tx_length =
        static_cast<std::uint16_t>(get_uint(s, "authInfoTxLength", path, 256, 64));
    c.sync_tx.period = Duration::milliseconds(
        static_cast<std::int64_t>(get_uint(s, "periodMs", path, 65535, 1000)));
  }
  const auto& srx = get_array(j, "syncRx", root);
  for (std::size_t i = 0; i < srx.size(); ++i) {
    const std::string path = idx("$.syncRx", i);
    check_keys(srx[i], path, {"id", "dataId", "keyGroup", "authInfoTxLength", "periodMs", "maxAgeMs"});
    SyncRxConfig s;
    s.id = static_cast<std::uint32_t>(get_uint(srx[i], "id", path, kMaxPduId, 0, true));
    s.data_id = static_cast<std::uint16_t>(get_uint(srx[i], "dataId", path, 0xFFFF, 0, true));
    s.key_group = group_by_name(c, get_string(srx[i], "keyGroup", path, "", true), at(path, "keyGroup"));
    s.auth_info_tx_length =
        static_cast<std::uint16_t>(get_uint(srx[i], "authInfoTxLength", path, 256, 64));
    s.period = Duration::milliseconds(
        static_cast<std::int64_t>(get_uint(srx[i], "periodMs", path, 65535, 1000)));
    s.max_age = Duration::milliseconds(static_cast<std::int64_t>(
        get_uint(srx[i], "maxAgeMs", path, 3600000, static_cast<std::uint64_t>(kDefaultMaxAge.ms()))));
    c.sync_rx.push_back(s);
  }
  const auto& tx = get_array(j, "txPdus", root);
  for (std::size_t i = 0; i < tx.size(); ++i) {
    const std::string path = idx("$.txPdus", i);
    check_keys(tx[i], path, {"id", "profile", "dataId", "keyGroup", "algorithm", "authInfoTxLength",
                             "freshnessValueLength", "freshnessValueTxLength", "resetFlagLength",
                             "authPduHeaderLength", "securedAreaOffset", "securedAreaLength",
                             "freshness"});
    TxPduConfig p;
    p.id = static_cast<std::uint32_t>(get_uint(tx[i], "id", path, kMaxPduId, 0, true));
    p.data_id = static_cast<std::uint16_t>(get_uint(tx[i], "dataId", path, 0xFFFF, 0, true));
    p.key_group = group_by_name(c, get_string(tx[i], "keyGroup", path, "", true), at(path, "keyGroup"));
    p.profile = parse_profile(tx[i], path, c);
    if (c.key_groups[p.key_group].algorithm != p.profile.algorithm)
      throw ConfigError(at(path, "keyGroup"), "key group algorithm " +
                                                  std::string(to_string(c.key_groups[p.key_group].algorithm)) +
                                                  " differs from the PDU's " +
                                                  std::string(to_string(p.profile.algorithm)));
    c.tx_pdus.push_back(p);
  }
  const auto& rx = get_array(j, "rxPdus", root);
  for (std::size_t i = 0; i < rx.size(); ++i) {
    const std::string path = idx("$.rxPdus", i);
    check_keys(rx[i], path, {"id", "profile", "dataId", "keyGroup", "algorithm", "authInfoTxLength",
                             "freshnessValueLength", "freshnessValueTxLength", "resetFlagLength",
                             "authPduHeaderLength", "securedAreaOffset", "securedAreaLength",
                             "syncChannel", "freshnessMode", "window",
                             "authenticationVerifyAttempts", "senderId", "freshness", "maxAgeMs",
                             "maxSources"});
    RxPduConfig p;
    p.id = static_cast<std::uint32_t>(get_uint(rx[i], "id", path, kMaxPduId, 0, true));
    p.data_id = static_cast<std::uint16_t>(get_uint(rx[i], "dataId", path, 0xFFFF, 0, true));
    p.key_group = group_by_name(c, get_string(rx[i], "keyGroup", path, "", true), at(path, "keyGroup"));
    p.profile = parse_profile(rx[i], path, c);
    if (c.key_groups[p.key_group].algorithm != p.profile.algorithm)
      throw ConfigError(at(path, "keyGroup"), "key group algorithm differs from the PDU's");
    const std::string mode = get_string(rx[i], "freshnessMode", path, "strict");
    if (mode == "strict") p.mode = FreshnessMode::kStrict;
    else if (mode == "reorder-tolerant") p.mode = FreshnessMode::kReorderTolerant;
    else throw ConfigError(at(path, "freshnessMode"), "must be \"strict\" or \"reorder-tolerant\"");
    // Default W = 32, capped by what the transmitted bits can disambiguate.
    std::uint64_t def_w = kDefaultWindow;
    if (p.profile.freshness.has_freshness() && !p.profile.freshness.timestamp) {
      const unsigned lsb = p.profile.freshness.msg_lower_bits();
      const std::uint64_t cap = lsb >= 63 ? ~std::uint64_t{0}
                                          : (p.mode == FreshnessMode::kStrict
                                                 ? (std::uint64_t{1} << lsb)
                                                 : (std::uint64_t{1} << (lsb - 1)));
      def_w = std::min<std::uint64_t>(def_w, cap);
    }
    p.window = static_cast<std::uint32_t>(get_uint(rx[i], "window", path, 0xFFFFFFFF, def_w));
    p.verify_attempts =
        static_cast<std::uint8_t>(get_uint(rx[i], "authenticationVerifyAttempts", path, 255, 1));
    if (rx[i].contains("syncChannel")) {
      p.has_sync_channel = true;
      p.sync_channel = static_cast<std::uint32_t>(get_uint(rx[i], "syncChannel", path, kMaxPduId, 0));
    }
    p.sender_id = static_cast<std::uint16_t>(get_uint(rx[i], "senderId", path, 0xFFFF, 0));
    p.has_sender_id = rx[i].contains("senderId");
    if (!p.profile.freshness.timestamp && (rx[i].contains("maxAgeMs") || rx[i].contains("maxSources")))
      throw ConfigError(at(path, rx[i].contains("maxAgeMs") ? "maxAgeMs" : "maxSources"),
                        "only for \"freshness\": \"timestamp\" (counter freshness is time-bound "
                        "through its syncRx channel's maxAgeMs)");
    p.max_age = Duration::milliseconds(static_cast<std::int64_t>(
        get_uint(rx[i], "maxAgeMs", path, 3600000, static_cast<std::uint64_t>(kDefaultMaxAge.ms()))));
    p.max_sources = static_cast<std::uint32_t>(get_uint(rx[i], "maxSources", path, kMaxSources, 1));
    c.rx_pdus.push_back(p);
  }
  c.validate();
  return c;
}

}  // namespace layersec::secoc
