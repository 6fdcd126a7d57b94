// The "secoc" section of the node configuration (node_config.h): the engine
// (secoc/config.h JSON, paths rewritten under $.secoc.engine), SD protection
// (on by default), one key file per key group (read through base/keyfile),
// the state file, bindings, deliberately unprotected ids and the sync binding.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/base/keyfile.h"
#include "layersec/node/node_config_parse.h"
#include "layersec/secoc/profile.h"

namespace layersec::node::config_parse {
namespace {

using someip::HeaderAuth;
using someip::MessageRef;
using someip::SecocBinding;
using someip::SecocBindings;

bool has_tx_pdu(const secoc::EngineConfig& e, std::uint32_t id) {
  return std::any_of(e.tx_pdus.begin(), e.tx_pdus.end(),
                     [&](const secoc::TxPduConfig& p) { return p.id == id; });
}
bool has_rx_pdu(const secoc::EngineConfig& e, std::uint32_t id) {
  return std::any_of(e.rx_pdus.begin(), e.rx_pdus.end(),
                     [&](const secoc::RxPduConfig& p) { return p.id == id; });
}

// Tracks which binding already uses a PDU so a PDU serves one message id.
struct PduUse {
  std::map<std::uint32_t, std::string> tx, rx;
};

std::optional<std::uint32_t> get_pdu(const json& obj, const char* key, const std::string& path,
                                     const secoc::EngineConfig& e, bool tx,
                                     std::map<std::uint32_t, std::string>& used) {
  const json* v = find(obj, key);
  if (!v) return std::nullopt;
  const auto id = static_cast<std::uint32_t>(parse_config_uint(*v, at(path, key), secoc::kMaxPduId));
  if (tx ? !has_tx_pdu(e, id) : !has_rx_pdu(e, id))
    fail(at(path, key), std::string("no ") + (tx ? "txPdus" : "rxPdus") + " entry with id " +
                            std::to_string(id) + " in $.secoc.engine");
  const auto [it, fresh] = used.emplace(id, path);
  if (!fresh) fail(at(path, key), "PDU " + std::to_string(id) + " is already bound at " + it->second);
  return id;
}

// "$.secoc.sd": protected SD is the default whenever SecOC is configured.
//   absent / {"keyGroup": NAME, "dataId", "maxAgeMs", "maxSources"}: SD PDUs
//       with timestamp freshness are added to the engine (one MAC key group
//       needed: the only one, or the one named);
//   {"txPdu": N, "rxPdu": M}: the engine's own PDUs (timestamp freshness);
//   {"protect": false}: unprotected SD, explicitly (spoofable discovery).
void parse_secoc_sd(const json& s, const std::string& path, NodeSecoc& ns) {
  secoc::EngineConfig& eng = ns.engine;
  const std::string sp = at(path, "sd");
  static const json kEmpty = json::object();
  const json* sd = find(s, "sd");
  const json& o = sd ? *sd : kEmpty;
  check_keys(o, sp, {"protect", "txPdu", "rxPdu", "keyGroup", "dataId", "maxAgeMs", "maxSources"});
  if (!get_bool(o, "protect", sp, true)) {
    if (o.size() != 1) fail(sp, "\"protect\": false takes no other keys");
    ns.bindings.sd_unprotected = true;
    return;
  }
  const bool explicit_pdus = find(o, "txPdu") || find(o, "rxPdu");
  if (explicit_pdus) {
    for (const char* k : {"keyGroup", "dataId", "maxAgeMs", "maxSources"})
      if (find(o, k)) fail(at(sp, k), "not with \"txPdu\"/\"rxPdu\" (configure those PDUs in $.secoc.engine)");
    std::map<std::uint32_t, std::string> unused_tx, unused_rx;
    ns.bindings.sd_tx_pdu = get_pdu(o, "txPdu", sp, eng, true, unused_tx);
    ns.bindings.sd_rx_pdu = get_pdu(o, "rxPdu", sp, eng, false, unused_rx);
    if (!ns.bindings.sd_tx_pdu || !ns.bindings.sd_rx_pdu)
      fail(sp, "SD protection needs both \"txPdu\" and \"rxPdu\"");
    for (const auto& t : eng.tx_pdus)
      if (t.id == *ns.bindings.sd_tx_pdu && !t.profile.freshness.timestamp)
        fail(at(sp, "txPdu"), "tx PDU " + std::to_string(t.id) +
                                  " must use \"freshness\": \"timestamp\" (SD runs before any sync "
                                  "message can reach a peer)");
    for (const auto& r : eng.rx_pdus)
      if (r.id == *ns.bindings.sd_rx_pdu && !r.profile.freshness.timestamp)
        fail(at(sp, "rxPdu"), "rx PDU " + std::to_string(r.id) +
                                  " must use \"freshness\": \"timestamp\" (it verifies every peer's SD "
                                  "from the first message and refuses an earlier run's)");
    return;
  }
  // Synthesised SD PDUs on a MAC key group.
  std::uint32_t group = 0;
  if (const json* g = find(o, "keyGroup")) {
    if (!g->is_string()) fail(at(sp, "keyGroup"), "must be a string");
    const std::string name = g->get<std::string>();
    bool found = false;
    for (std::size_t i = 0; i < eng.key_groups.size(); ++i)
      if (eng.key_groups[i].name == name) {
        group = static_cast<std::uint32_t>(i);
        found = true;
      }
    if (!found) fail(at(sp, "keyGroup"), "no key group named '" + name + "' in $.secoc.engine.keyGroups");
  } else {
    std::vector<std::uint32_t> macs;
    for (std::size_t i = 0; i < eng.key_groups.size(); ++i)
      if (!secoc::is_aead(eng.key_groups[i].algorithm)) macs.push_back(static_cast<std::uint32_t>(i));
    if (macs.size() != 1)
      fail(sp, std::string("SD is protected by default when SecOC is configured: ") +
                   (macs.empty() ? "add a MAC (CMAC/HMAC) key group for it"
                                 : "name the key group that protects it with \"keyGroup\"") +
                   ", give engine PDUs with \"txPdu\"/\"rxPdu\", or turn it off explicitly with "
                   "{\"protect\": false}");
    group = macs[0];
  }
  const secoc::AuthAlgorithm alg = eng.key_groups[group].algorithm;
  if (secoc::is_aead(alg)) fail(at(sp, "keyGroup"), "SD needs a MAC key group (CMAC or HMAC), not AES-GCM");
  secoc::PduProfile prof = secoc::PduProfile::vendor();
  prof.kind = secoc::ProfileKind::kCustom;
  prof.algorithm = alg;
  prof.auth_info_tx_length = 64;
  prof.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  const auto data_id = static_cast<std::uint16_t>(get_uint(o, "dataId", sp, 0xFFFF, kDefaultSdDataId));
  std::uint32_t tx_id = 0, rx_id = 0;
  for (const auto& t : eng.tx_pdus) tx_id = std::max(tx_id, t.id + 1);
  for (const auto& r : eng.rx_pdus) rx_id = std::max(rx_id, r.id + 1);
  if (tx_id > secoc::kMaxPduId || rx_id > secoc::kMaxPduId) fail(sp, "no free PDU id left for SD");
  eng.tx_pdus.push_back({tx_id, data_id, prof, group});
  secoc::RxPduConfig r;
  r.id = rx_id;
  r.data_id = data_id;
  r.profile = prof;
  r.key_group = group;
  // Reorder-tolerant: a peer's unicast and multicast SD datagrams arrive on
  // different sockets and may swap; each is still accepted once.
  r.mode = secoc::FreshnessMode::kReorderTolerant;
  r.window = secoc::kDefaultWindow;
  r.max_age = get_ms(o, "maxAgeMs", sp, 1, 3600000, secoc::kDefaultMaxAge);
  r.max_sources = static_cast<std::uint32_t>(get_uint(o, "maxSources", sp, secoc::kMaxSources, 64));
  if (r.max_sources == 0) fail(at(sp, "maxSources"), "must be >= 1");
  eng.rx_pdus.push_back(r);
  try {
    eng.validate();
  } catch (const secoc::ConfigError& e) {
    fail(sp, std::string("the SD PDUs do not fit the engine: ") + e.what());
  }
  ns.bindings.sd_tx_pdu = tx_id;
  ns.bindings.sd_rx_pdu = rx_id;
}

}  // namespace

NodeSecoc parse_secoc(const json& s, const std::string& path, const std::string& base_dir,
                      const ServiceIndex& services) {
  check_keys(s, path, {"engine", "keys", "stateFile", "bindings", "sd", "sync", "dataToAuthenticator",
                       "unprotected"});
  NodeSecoc ns;
  const json* engine = find(s, "engine");
  if (!engine) fail(at(path, "engine"), "required (the SecOC engine configuration)");
  const std::string ep = at(path, "engine");
  try {
    ns.engine = secoc::config_from_json(*engine);
  } catch (const secoc::ConfigError& e) {
    // The engine loader names paths from its own root "$".
    std::string p = e.path();
    p = p.size() >= 1 && p[0] == '$' ? ep + p.substr(1) : ep + "." + p;
    std::string what = e.what();
    const std::string prefix = e.path() + ": ";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    fail(p, what);
  }
  secoc::EngineConfig& eng = ns.engine;

  // What every binding authenticates besides the payload.
  auto header_mode = [&](const json& obj, const std::string& p, HeaderAuth def) {
    const std::string v = get_string(obj, "dataToAuthenticator", p, std::string(to_string(def)));
    if (v == "someip-header") return HeaderAuth::kSomeipHeader;
    if (v == "payload-only") return HeaderAuth::kPayloadOnly;
    fail(at(p, "dataToAuthenticator"),
         "must be \"someip-header\" (DataId, SOME/IP header and payload are authenticated; the "
         "default) or \"payload-only\" (the AUTOSAR layout: header unauthenticated, for "
         "interoperability only)");
  };
  ns.bindings.header = header_mode(s, path, HeaderAuth::kSomeipHeader);

  // SD protection, before the key files are read (it may add engine PDUs).
  parse_secoc_sd(s, path, ns);

  ns.state_file = resolve(base_dir, get_string(s, "stateFile", path, "", true));
  if (ns.state_file.empty()) fail(at(path, "stateFile"), "must not be empty");

  // Keys: one file per key group, every group covered.
  const json& keys = get_array(s, "keys", path);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string kp = idx(at(path, "keys"), i);
    check_keys(keys[i], kp, {"keyGroup", "keyId", "file", "format"});
    NodeKey k;
    k.group_name = get_string(keys[i], "keyGroup", kp, "", true);
    bool found = false;
    for (std::size_t g = 0; g < eng.key_groups.size(); ++g)
      if (eng.key_groups[g].name == k.group_name) {
        k.group = static_cast<std::uint32_t>(g);
        found = true;
      }
    if (!found) fail(at(kp, "keyGroup"), "no key group named '" + k.group_name + "' in $.secoc.engine.keyGroups");
    for (const auto& other : ns.keys)
      if (other.group == k.group)
        fail(at(kp, "keyGroup"), "key group '" + k.group_name + "' already has a key file");
    k.key_id = static_cast<std::uint32_t>(get_uint(keys[i], "keyId", kp, 0xFFFFFFFF, 1));
    const std::string fmt = get_string(keys[i], "format", kp, "hex");
    KeyFileOptions opt;
    // base/keyfile.h: hex text is the one encoding of a key file.
    if (fmt == "hex") opt.format = KeyFileFormat::kHex;
    else fail(at(kp, "format"), "must be \"hex\" (the only key file encoding; raw and auto are not read)");
    opt.expected_size = secoc::key_size(eng.key_groups[k.group].algorithm);
    k.path = resolve(base_dir, get_string(keys[i], "file", kp, "", true));
    auto loaded = load_key_file(k.path, opt);
    if (!loaded) {
      std::string why(to_string(loaded.error()));
      if (loaded.error() == KeyFileError::kWrongSize || loaded.error() == KeyFileError::kBadFormat)
        why += " (key group '" + k.group_name + "' needs " + std::to_string(opt.expected_size) +
               " bytes, " + fmt + ")";
      fail(at(kp, "file"), k.path + ": " + why);
    }
    k.key = std::move(loaded.value());
    ns.keys.push_back(std::move(k));
  }
  for (std::size_t g = 0; g < eng.key_groups.size(); ++g)
    if (std::none_of(ns.keys.begin(), ns.keys.end(), [&](const NodeKey& k) { return k.group == g; }))
      fail(at(path, "keys"), "no key file for key group '" + eng.key_groups[g].name + "'");

  PduUse use;
  if (ns.bindings.sd_tx_pdu) {  // SD PDUs serve SD only
    use.tx.emplace(*ns.bindings.sd_tx_pdu, at(path, "sd"));
    use.rx.emplace(*ns.bindings.sd_rx_pdu, at(path, "sd"));
  }
  const json& bindings = get_array(s, "bindings", path);
  std::set<std::tuple<std::uint16_t, std::uint16_t, std::uint16_t>> bound;
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const std::string bp = idx(at(path, "bindings"), i);
    check_keys(bindings[i], bp, {"service", "instance", "method", "event", "txPdu", "rxPdu",
                                 "dataToAuthenticator"});
    SecocBinding b;
    b.service_id = get_id(bindings[i], "service", bp, 0x0001, 0xFFFE, "service id");
    b.instance_id = get_id(bindings[i], "instance", bp, 0x0001, 0xFFFF, "instance id", 0xFFFF);
    const bool has_m = find(bindings[i], "method") != nullptr;
    const bool has_e = find(bindings[i], "event") != nullptr;
    if (has_m == has_e) fail(bp, "give exactly one of \"method\" and \"event\"");
    b.method_or_event = has_m ? get_id(bindings[i], "method", bp, 0x0000, 0x7FFF, "method id")
                              : get_id(bindings[i], "event", bp, 0x8000, 0xFFFE, "event id");
    const auto offered = services.offered_matches(b.service_id, b.instance_id);
    const ClientConfig* client = services.client(b.service_id);
    if (offered.empty() && !client)
      fail(at(bp, "service"), "service " + hex16(b.service_id) +
                                  (b.instance_id == 0xFFFF ? "" : "." + hex16(b.instance_id)) +
                                  " is neither in $.services nor in $.clients");
    for (const std::size_t o : offered) {
      const OfferedIndex& oi = services.offered[o];
      const bool known = has_m ? (oi.methods.count(b.method_or_event) ||
                                  oi.accessors.count(b.method_or_event))
                               : oi.events.count(b.method_or_event) > 0;
      if (!known && !client)
        fail(at(bp, has_m ? "method" : "event"),
             std::string(has_m ? "method " : "event ") + hex16(b.method_or_event) +
                 " is not configured in service " + hex16(b.service_id));
    }
    if (!bound.insert({b.service_id, b.instance_id, b.method_or_event}).second)
      fail(bp, "this message is already bound");
    b.tx_pdu = get_pdu(bindings[i], "txPdu", bp, eng, true, use.tx);
    b.rx_pdu = get_pdu(bindings[i], "rxPdu", bp, eng, false, use.rx);
    if (!b.tx_pdu && !b.rx_pdu) fail(bp, "give \"txPdu\", \"rxPdu\" or both");
    const HeaderAuth h = header_mode(bindings[i], bp, ns.bindings.header);
    if (h != ns.bindings.header) {
      if (h == HeaderAuth::kSomeipHeader)
        fail(at(bp, "dataToAuthenticator"),
             "\"someip-header\" on one binding while $.secoc.dataToAuthenticator is \"payload-only\": "
             "make someip-header the default and mark the payload-only bindings instead");
      ns.bindings.payload_only.push_back({b.service_id, b.instance_id, b.method_or_event});
    }
    ns.bindings.messages.push_back(b);
  }

  // Message ids of SecOC services deliberately sent and accepted in clear
  // (every other unbound id of such a service is rejected and counted).
  const json& clear = get_array(s, "unprotected", path);
  for (std::size_t i = 0; i < clear.size(); ++i) {
    const std::string up = idx(at(path, "unprotected"), i);
    check_keys(clear[i], up, {"service", "instance", "method", "event"});
    MessageRef r;
    r.service_id = get_id(clear[i], "service", up, 0x0001, 0xFFFE, "service id");
    r.instance_id = get_id(clear[i], "instance", up, 0x0001, 0xFFFF, "instance id", 0xFFFF);
    const bool has_m = find(clear[i], "method") != nullptr;
    if (has_m == (find(clear[i], "event") != nullptr)) fail(up, "give exactly one of \"method\" and \"event\"");
    r.method_or_event = has_m ? get_id(clear[i], "method", up, 0x0000, 0x7FFF, "method id")
                              : get_id(clear[i], "event", up, 0x8000, 0xFFFE, "event id");
    if (bound.count({r.service_id, r.instance_id, r.method_or_event}))
      fail(up, "this message is bound in $.secoc.bindings; it cannot also be unprotected");
    ns.bindings.unprotected.push_back(r);
  }


  const bool sends_sync = eng.sync_tx.enabled;
  const bool receives_sync = !eng.sync_rx.empty();
  if (const json* sy = find(s, "sync")) {
    const std::string sp = at(path, "sync");
    check_keys(*sy, sp, {"service", "instance", "event", "rxChannel"});
    SecocBindings& b = ns.bindings;
    b.sync_service = get_id(*sy, "service", sp, 0x0001, 0xFFFE, "service id");
    b.sync_instance = get_id(*sy, "instance", sp, 0x0001, 0xFFFE, "instance id", 1);
    b.sync_event = get_id(*sy, "event", sp, 0x8000, 0xFFFE, "event id");
    b.sync_rx_channel = static_cast<std::uint32_t>(get_uint(*sy, "rxChannel", sp, secoc::kMaxPduId, 0));
    if (find(*sy, "rxChannel") && !receives_sync)
      fail(at(sp, "rxChannel"), "$.secoc.engine has no syncRx channel");
    if (receives_sync &&
        std::none_of(eng.sync_rx.begin(), eng.sync_rx.end(),
                     [&](const secoc::SyncRxConfig& r) { return r.id == b.sync_rx_channel; }))
      fail(at(sp, "rxChannel"), "no syncRx entry with id " + std::to_string(b.sync_rx_channel) +
                                    " in $.secoc.engine");
    const auto offered = services.offered_matches(*b.sync_service, b.sync_instance);
    if (sends_sync) {
      if (offered.empty())
        fail(at(sp, "service"), "this node sends sync messages (syncTx), so service " +
                                    hex16(*b.sync_service) + "." + hex16(b.sync_instance) +
                                    " must be in $.services");
      if (!services.offered[offered[0]].events.count(b.sync_event))
        fail(at(sp, "event"), "event " + hex16(b.sync_event) + " is not an event of service " +
                                  hex16(*b.sync_service));
    }
    if (receives_sync && offered.empty() && !services.client(*b.sync_service))
      fail(at(sp, "service"), "this node receives sync messages (syncRx), so service " +
                                  hex16(*b.sync_service) + " must be in $.clients or $.services");
  } else if (sends_sync || receives_sync) {
    fail(at(path, "sync"), std::string("required: the engine ") +
                               (sends_sync ? "sends (syncTx)" : "receives (syncRx)") +
                               " sync messages; name the event that carries them");
  }
  return ns;
}

}  // namespace layersec::node::config_parse
