#include "layersec/arxml/importer.h"

#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "layersec/arxml/secoc_import.h"
#include "layersec/arxml/someip_import.h"
#include "layersec/node/node_config.h"
#include "layersec/secoc/config.h"

namespace layersec::arxml {
namespace {

using nlohmann::json;

std::string hex16(std::uint32_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v & 0xFFFF);
  return buf;
}

// The AUTOSAR parameter behind an engine JSON key, for error messages.
const char* autosar_name(const std::string& key, bool tx) {
  static const std::map<std::string, std::pair<const char*, const char*>> names = {
      {"dataId", {"SecOCDataId", "SecOCDataId"}},
      {"freshnessValueLength", {"SecOCFreshnessValueLength", "SecOCFreshnessValueLength"}},
      {"freshnessValueTxLength", {"SecOCFreshnessValueTruncLength", "SecOCFreshnessValueTruncLength"}},
      {"authInfoTxLength", {"SecOCAuthInfoTruncLength", "SecOCAuthInfoTruncLength"}},
      {"authPduHeaderLength", {"SecOCAuthPduHeaderLength", "SecOCAuthPduHeaderLength"}},
      {"securedAreaOffset", {"SecOCSecuredTxPduOffset", "SecOCSecuredRxPduOffset"}},
      {"securedAreaLength", {"SecOCSecuredTxPduLength", "SecOCSecuredRxPduLength"}},
      {"window", {"SecOCRxAcceptanceWindow", "SecOCRxAcceptanceWindow"}},
      {"authenticationVerifyAttempts", {"SecOCAuthenticationVerifyAttempts", "SecOCAuthenticationVerifyAttempts"}},
      {"keyGroup", {"SecOCTxAuthServiceConfigRef", "SecOCRxAuthServiceConfigRef"}},
      {"algorithm", {"SecOCTxAuthServiceConfigRef", "SecOCRxAuthServiceConfigRef"}},
  };
  const auto it = names.find(key);
  if (it == names.end()) return nullptr;
  return tx ? it->second.first : it->second.second;
}

// "$.rxPdus[2].window: ..." from the engine loader -> the PDU's ARXML path.
[[noreturn]] void rethrow_engine_error(const secoc::ConfigError& e, const std::vector<const SecocPdu*>& tx,
                                       const std::vector<const SecocPdu*>& rx) {
  const std::string& p = e.path();
  const std::string problem = std::string(e.what()).substr(p.size() + 2);
  for (const auto& [prefix, list, is_tx] :
       {std::tuple{std::string("$.txPdus["), &tx, true}, std::tuple{std::string("$.rxPdus["), &rx, false}}) {
    if (p.rfind(prefix, 0) != 0) continue;
    const auto close = p.find(']', prefix.size());
    const auto i = static_cast<std::size_t>(std::stoul(p.substr(prefix.size(), close - prefix.size())));
    if (i >= list->size()) break;
    std::string where = (*list)[i]->path;
    if (close + 1 < p.size() && p[close + 1] == '.')
      if (const char* name = autosar_name(p.substr(close + 2), is_tx)) where += std::string("/") + name;
    throw ArxmlError(where, "layersec cannot use this configuration: " + problem);
  }
  throw ArxmlError("(secoc engine " + p + ")", problem);
}

}  // namespace

ImportResult import_arxml(std::string_view text, const ImportOptions& opt) {
  const Document d(text);
  SomeipImport so = import_someip(d);
  SecocImport sc = import_secoc(d);
  ImportResult r;
  r.notes = std::move(so.notes);
  r.notes.insert(r.notes.end(), sc.notes.begin(), sc.notes.end());
  if (so.services.empty() && so.clients.empty())
    throw ArxmlError("(document)", "no PROVIDED-SOMEIP-SERVICE-INSTANCE or REQUIRED-SOMEIP-SERVICE-INSTANCE: "
                                   "a node needs at least one");
  const std::string unicast = opt.unicast ? *opt.unicast : so.unicast.value_or("");
  if (unicast.empty())
    throw ArxmlError("--unicast", "no SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING names the node's network "
                                  "endpoint: give its IPv4 address");
  const std::string name = !opt.name.empty() ? opt.name : (!so.machine.empty() ? so.machine : "layersec-node");
  json& node = r.node;
  node["unicast"] = unicast;
  node["network"] = name;
  node["services"] = so.services;
  node["clients"] = so.clients;

  if (sc.present && !sc.pdus.empty()) {
    json engine;
    json groups = json::array();
    for (const auto& g : sc.groups) groups.push_back({{"name", g.name}, {"algorithm", g.algorithm}});
    engine["keyGroups"] = groups;
    std::vector<const SecocPdu*> tx;
    std::vector<const SecocPdu*> rx;
    json tx_json = json::array();
    json rx_json = json::array();
    const SecocPdu* counter_tx = nullptr;
    const SecocPdu* counter_rx = nullptr;
    // (service, method/event) -> binding
    std::map<std::pair<std::uint16_t, std::uint16_t>, json> bindings;
    // SecOCDataId -> PDU path. The DataId is what tells PDUs of one key group
    // apart in the MAC: two PDUs with one DataId would accept each other's
    // frames (relabelling, reflection), so each is used once per node.
    std::map<std::uint64_t, std::string> data_ids;
    for (const auto& p : sc.pdus) {
      const auto did = p.entry["dataId"].get<std::uint64_t>();
      if (const auto [at, fresh] = data_ids.emplace(did, p.path); !fresh)
        throw ArxmlError(p.path + "/SecOCDataId", "DataId " + std::to_string(did) + " is also the SecOCDataId of " +
                                                      at->second + " (one DataId per secured PDU)");
    }
    const auto sync_id_unused = [&](const char* option, std::uint16_t id) {
      if (const auto at = data_ids.find(id); at != data_ids.end())
        throw ArxmlError(option, std::to_string(id) + " is the SecOCDataId of " + at->second +
                                     ": the sync messages need a DataId of their own");
    };
    for (const auto& p : sc.pdus) {
      auto& list = p.tx ? tx : rx;
      json e = p.entry;
      e["id"] = list.size();
      (p.tx ? tx_json : rx_json).push_back(e);
      r.notes.push_back({p.path, std::string(p.tx ? "txPdu " : "rxPdu ") + std::to_string(list.size())});
      list.push_back(&p);
      if (p.counter_freshness && p.tx && !counter_tx) counter_tx = &p;
      if (p.counter_freshness && !p.tx && !counter_rx) counter_rx = &p;
      if (!p.message_id)
        throw ArxmlError(p.path, std::string("no SOME/IP message: give SecOC") + (p.tx ? "Tx" : "Rx") +
                                     "SecuredLayerPduRef an EcuC Pdu whose SysTPduToPduTriggeringRef names a PDU "
                                     "triggering with a SOCKET-CONNECTION-IPDU-IDENTIFIER");
      const auto service = static_cast<std::uint16_t>(*p.message_id >> 16);
      const auto id = static_cast<std::uint16_t>(*p.message_id & 0xFFFF);
      std::uint16_t instance = 0xFFFF;
      if (const auto o = so.offered.find(service); o != so.offered.end()) {
        if (o->second.size() == 1) instance = o->second[0];
      } else if (const auto q = so.required.find(service); q != so.required.end()) {
        instance = q->second;
      } else {
        throw ArxmlError(p.path, "protects SOME/IP message " + hex16(service) + "/" + hex16(id) +
                                     " of a service this node neither provides nor requires");
      }
      json& b = bindings[{service, id}];
      if (b.is_null())
        b = {{"service", hex16(service)}, {"instance", hex16(instance)}, {id >= 0x8000 ? "event" : "method", hex16(id)}};
      const char* key = p.tx ? "txPdu" : "rxPdu";
      if (b.contains(key))
        throw ArxmlError(p.path, "a second " + std::string(p.tx ? "Tx" : "Rx") + " PDU for SOME/IP message " +
                                     hex16(service) + "/" + hex16(id));
      b[key] = list.size() - 1;
    }
    engine["txPdus"] = tx_json;
    engine["rxPdus"] = rx_json;
    json secoc_section;
    if (counter_tx) {
      if (!opt.sync_tx_data_id)
        throw ArxmlError("--sync-tx-data-id", "required: " + counter_tx->path +
                                                  " uses counter freshness, whose sync messages need their own DataId");
      sync_id_unused("--sync-tx-data-id", *opt.sync_tx_data_id);
      engine["syncTx"] = {{"dataId", *opt.sync_tx_data_id}, {"keyGroup", counter_tx->key_group}};
    }
    if (counter_rx) {
      if (!opt.sync_rx_data_id)
        throw ArxmlError("--sync-rx-data-id", "required: " + counter_rx->path +
                                                  " uses counter freshness: the DataId of the peer's sync messages");
      sync_id_unused("--sync-rx-data-id", *opt.sync_rx_data_id);
      if (counter_tx && *opt.sync_rx_data_id == *opt.sync_tx_data_id)
        throw ArxmlError("--sync-rx-data-id", "equals --sync-tx-data-id: this node would accept its own sync "
                                              "messages reflected back");
      engine["syncRx"] = json::array({{{"id", 0}, {"dataId", *opt.sync_rx_data_id}, {"keyGroup", counter_rx->key_group}}});
    }
    try {
      (void)secoc::config_from_json(engine);
    } catch (const secoc::ConfigError& e) {
      rethrow_engine_error(e, tx, rx);
    }
    if (counter_tx || counter_rx) {
      const std::string s = hex16(opt.sync_service);
      for (const auto& list : {node["services"], node["clients"]})
        for (const auto& x : list)
          if (x["service"] == s)
            throw ArxmlError("--sync-service", s + " is a service of the ARXML file: choose another for the sync messages");
      if (counter_tx)
        node["services"].push_back({{"service", s}, {"instance", hex16(opt.sync_instance)}, {"unreliable", opt.sync_port},
                                    {"eventgroups", json::array({{{"eventgroup", "0x0001"},
                                                                  {"events", json::array({hex16(opt.sync_event)})}}})}});
      if (counter_rx)
        node["clients"].push_back({{"service", s}, {"instance", hex16(opt.sync_instance)}, {"eventgroups", json::array({"0x0001"})}});
      secoc_section["sync"] = {{"service", s}, {"instance", hex16(opt.sync_instance)}, {"event", hex16(opt.sync_event)},
                               {"rxChannel", 0}};
    }
    json keys = json::array();
    for (const auto& g : sc.groups) {
      const std::string file = opt.key_dir + "/" + g.name + ".key";
      keys.push_back({{"keyGroup", g.name}, {"keyId", g.key_id}, {"file", file}});
      r.key_files.push_back(file);
      r.notes.push_back({g.path, "key group " + g.name + " (" + g.algorithm + ", key id " + std::to_string(g.key_id) +
                                     "): key file " + file});
    }
    if (sc.groups.size() > 1) {
      if (opt.sd_key_group.empty())
        throw ArxmlError("--sd-key-group", "required: the file has several key groups and SOME/IP-SD is protected "
                                           "with one of them (the same on every node of the segment)");
      bool found = false;
      for (const auto& g : sc.groups) found = found || g.name == opt.sd_key_group;
      if (!found) throw ArxmlError("--sd-key-group", "no key group named " + opt.sd_key_group);
      secoc_section["sd"] = {{"keyGroup", opt.sd_key_group}};
    }
    json b = json::array();
    for (auto& [k, v] : bindings) b.push_back(v);
    secoc_section["engine"] = engine;
    secoc_section["keys"] = keys;
    secoc_section["stateFile"] = opt.state_file.empty() ? name + ".secoc-state" : opt.state_file;
    secoc_section["bindings"] = b;
    node["secoc"] = secoc_section;
    r.secoc = engine;
  }
  // The SOME/IP part through the node loader (the "secoc" section needs the
  // key files, which the import does not make; the tests load the whole file).
  json plain = node;
  plain.erase("secoc");
  try {
    (void)node::node_config_from_json(plain);
  } catch (const node::NodeConfigError& e) {
    throw ArxmlError("(node " + e.path() + ")", "layersec cannot use this deployment: " + e.problem());
  }
  return r;
}

}  // namespace layersec::arxml
