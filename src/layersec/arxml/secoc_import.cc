#include "layersec/arxml/secoc_import.h"

#include <map>
#include <set>

#include "layersec/arxml/ecuc.h"

namespace layersec::arxml {
namespace {

using nlohmann::json;

// SOME/IP Message IDs of PDU triggerings, from the system description's
// socket connections.
std::map<const void*, std::uint32_t> header_ids(const Document& d) {
  std::map<const void*, std::uint32_t> out;
  for (const auto& ident : d.all("SOCKET-CONNECTION-IPDU-IDENTIFIER")) {
    const auto ref = only_child(d, ident, "PDU-TRIGGERING-REF");
    const auto hid = only_child(d, ident, "HEADER-ID");
    if (!ref || !hid) continue;
    const auto trig = d.deref(ref);
    const auto id = static_cast<std::uint32_t>(parse_uint(text_of(hid), d.path_of(hid), 0, 0xFFFFFFFF));
    const auto [it, fresh] = out.emplace(trig.internal_object(), id);
    if (!fresh && it->second != id)
      throw ArxmlError(d.path_of(hid), "a second HEADER-ID for the PDU triggering " + d.path_of(trig));
  }
  return out;
}

// The Csm MAC configuration a SecOC PDU's auth service reference leads to:
// the container itself (R4.2: a CsmMacGenerate/VerifyConfig) or, for a Csm
// job (R4.3+), the configuration under its CsmJobPrimitiveRef.
pugi::xml_node find_mac_config(pugi::xml_node c) {
  std::vector<pugi::xml_node> todo{c};
  for (std::size_t depth = 0; depth < 4 && !todo.empty(); ++depth) {
    std::vector<pugi::xml_node> next;
    for (const auto& n : todo) {
      const std::string def = definition_name(n);
      if (def == "CsmMacGenerateConfig" || def == "CsmMacVerifyConfig") return n;
      for (const auto& s : ecuc_children(n)) next.push_back(s);
    }
    todo = std::move(next);
  }
  return {};
}

struct KeyChoice {
  std::string group;
  std::string algorithm;
  std::optional<std::uint32_t> key_id;
  std::string path;
};

KeyChoice key_from_auth_service(const Document& d, pugi::xml_node target, bool tx) {
  KeyChoice k;
  pugi::xml_node mac_config = find_mac_config(target);
  pugi::xml_node key;
  if (!mac_config) {
    // A Csm job: the primitive and the key are references.
    EcucValues job(d, target, {}, {});
    const auto prim = job.take_ref("CsmJobPrimitiveRef");
    if (!prim) throw ArxmlError(job.path_of("CsmJobPrimitiveRef"), "required (the MAC algorithm)");
    mac_config = find_mac_config(*prim);
    if (!mac_config)
      throw ArxmlError(d.path_of(*prim), "no CsmMacGenerateConfig or CsmMacVerifyConfig: only MAC primitives "
                                         "can authenticate SecOC PDUs here");
    if (const auto kr = job.take_ref("CsmJobKeyRef")) key = *kr;
  }
  const std::string p = tx ? "CsmMacGenerate" : "CsmMacVerify";
  if (definition_name(mac_config) != p + "Config")
    throw ArxmlError(d.path_of(mac_config), std::string("a ") + (tx ? "Tx" : "Rx") + " PDU needs a " + p +
                                                "Config, not " + definition_name(mac_config));
  EcucValues mac(d, mac_config, {}, {});
  const auto family = mac.take_text(p + "AlgorithmFamily");
  const auto mode = mac.take_text(p + "AlgorithmMode");
  const auto key_len = mac.take_uint(p + "AlgorithmKeyLength", 1, 4096);
  if (!family) throw ArxmlError(mac.path_of(p + "AlgorithmFamily"), "required");
  if (!mode) throw ArxmlError(mac.path_of(p + "AlgorithmMode"), "required");
  if (*family == "CRYPTO_ALGOFAM_AES" && *mode == "CRYPTO_ALGOMODE_CMAC") {
    if (!key_len)
      throw ArxmlError(mac.path_of(p + "AlgorithmKeyLength"), "required: 16 (AES-128) or 32 (AES-256) bytes");
    if (*key_len == 16) k.algorithm = "cmac-aes128";
    else if (*key_len == 32) k.algorithm = "cmac-aes256";
    else throw ArxmlError(mac.path_of(p + "AlgorithmKeyLength"), std::to_string(*key_len) +
                                                                   " bytes: CMAC-AES keys are 16 or 32 bytes");
  } else if (*family == "CRYPTO_ALGOFAM_SHA2_256" && *mode == "CRYPTO_ALGOMODE_HMAC") {
    if (key_len && *key_len != 32)
      throw ArxmlError(mac.path_of(p + "AlgorithmKeyLength"), "layersec's HMAC-SHA256 keys are 32 bytes");
    k.algorithm = "hmac-sha256";
  } else {
    throw ArxmlError(mac.path_of(p + "AlgorithmMode"), "algorithm " + *family + " / " + *mode +
                                                           " is not supported (AES+CMAC, SHA2_256+HMAC)");
  }
  if (key) {
    EcucValues kv(d, key, {}, {});
    k.key_id = static_cast<std::uint32_t>(kv.take_uint("CsmKeyId", 0, 0xFFFFFFFF).value_or(1));
    k.group = Document::short_name(key);
    k.path = d.path_of(key);
  }
  return k;
}

// State shared by the PDUs of one import: the socket connections' Message
// IDs, the key groups by name, and the Csm lookups already done.
struct Context {
  std::map<const void*, std::uint32_t> hids;
  std::map<std::string, std::size_t> group_index;  // name -> SecocImport::groups
  std::map<std::pair<const void*, bool>, KeyChoice> keys;  // (auth service, tx) -> key
};

SecocPdu read_pdu(const Document& d, pugi::xml_node c, bool tx, Context& ctx, std::vector<SecocKeyGroup>& groups,
                  std::vector<ImportNote>& notes) {
  const std::string X = tx ? "Tx" : "Rx";
  EcucValues v(d, c,
               {"SecOC" + X + "AuthenticPduLayer", "SecOC" + X + "SecuredPduLayer", "SecOC" + X + "SecuredPdu",
                "SecOC" + X + "PduSecuredArea"});
  SecocPdu pdu;
  pdu.tx = tx;
  pdu.path = v.path();
  json& e = pdu.entry;
  e["profile"] = "custom";
  const auto data_id = v.take_uint("SecOCDataId", 0, 0xFFFF);
  if (!data_id) throw ArxmlError(v.path_of("SecOCDataId"), "required");
  e["dataId"] = *data_id;
  const auto one_of = [&](const char* a, const char* b) -> std::optional<std::uint64_t> {
    if (v.has(a) && v.has(b)) throw ArxmlError(v.path_of(b), std::string("given together with ") + a);
    auto r = v.take_uint(a, 0, 0xFFFF);
    return r ? r : v.take_uint(b, 0, 0xFFFF);
  };
  const auto fv_len = v.take_uint("SecOCFreshnessValueLength", 0, 64);
  const auto fv_tx = one_of("SecOCFreshnessValueTxLength", "SecOCFreshnessValueTruncLength");
  const auto auth_len = one_of("SecOCAuthInfoTxLength", "SecOCAuthInfoTruncLength");
  if (!fv_len) throw ArxmlError(v.path_of("SecOCFreshnessValueLength"), "required");
  if (!fv_tx) throw ArxmlError(v.path_of("SecOCFreshnessValueTruncLength"), "required");
  if (!auth_len) throw ArxmlError(v.path_of("SecOCAuthInfoTruncLength"), "required");
  if (*fv_tx > *fv_len)
    throw ArxmlError(v.path_of(v.has("SecOCFreshnessValueTxLength") ? "SecOCFreshnessValueTxLength"
                                                                     : "SecOCFreshnessValueTruncLength"),
                     "longer than SecOCFreshnessValueLength (" + std::to_string(*fv_len) + ")");
  e["freshnessValueLength"] = *fv_len;
  e["freshnessValueTxLength"] = *fv_tx;
  e["authInfoTxLength"] = *auth_len;
  if (const auto h = v.take_uint("SecOCAuthPduHeaderLength", 0, 4)) e["authPduHeaderLength"] = *h;
  if (const auto o = v.take_uint("SecOCSecured" + X + "PduOffset", 0, 0xFFFF)) e["securedAreaOffset"] = *o;
  if (const auto l = v.take_uint("SecOCSecured" + X + "PduLength", 0, 0xFFFF)) e["securedAreaLength"] = *l;
  const bool timestamp = v.take_bool("SecOCUseFreshnessTimestamp").value_or(false);
  if (timestamp) e["freshness"] = "timestamp";
  pdu.counter_freshness = !timestamp && *fv_len > 0;
  if (!tx) {
    if (const auto a = v.take_uint("SecOCAuthenticationVerifyAttempts", 0, 0xFFFF))
      e["authenticationVerifyAttempts"] = std::max<std::uint64_t>(*a, 1);
    if (const auto w = v.take_uint("SecOCRxAcceptanceWindow", 1, 0xFFFFFFFF)) e["window"] = *w;
    if (pdu.counter_freshness) e["syncChannel"] = 0;
  }
  // Algorithm and key.
  const auto svc = v.take_ref("SecOC" + X + "AuthServiceConfigRef");
  if (!svc) throw ArxmlError(v.path_of("SecOC" + X + "AuthServiceConfigRef"), "required (the Csm MAC job)");
  auto cached = ctx.keys.find({svc->internal_object(), tx});
  if (cached == ctx.keys.end())
    cached = ctx.keys.emplace(std::make_pair(svc->internal_object(), tx), key_from_auth_service(d, *svc, tx)).first;
  KeyChoice k = cached->second;
  if (const auto kid = v.take_uint("SecOCKeyId", 0, 0xFFFFFFFF)) {
    if (k.key_id && *k.key_id != *kid)
      throw ArxmlError(v.path_of("SecOCKeyId"), "differs from the CsmKeyId of " + k.path);
    k.key_id = static_cast<std::uint32_t>(*kid);
  }
  if (!k.key_id) throw ArxmlError(v.path_of("SecOCKeyId"), "no key: give the Csm job a CsmJobKeyRef or the PDU a SecOCKeyId");
  if (k.group.empty()) {
    k.group = "key" + std::to_string(*k.key_id);
    k.path = v.path_of("SecOCKeyId");
  }
  if (const auto gi = ctx.group_index.find(k.group); gi != ctx.group_index.end()) {
    const SecocKeyGroup& g = groups[gi->second];
    if (g.algorithm != k.algorithm || g.key_id != *k.key_id)
      throw ArxmlError(v.path(), "uses key " + k.group + " with " + k.algorithm + " (key id " +
                                     std::to_string(*k.key_id) + "), but another PDU uses it with " + g.algorithm +
                                     " (key id " + std::to_string(g.key_id) + ")");
  } else {
    ctx.group_index.emplace(k.group, groups.size());
    groups.push_back({k.group, k.algorithm, *k.key_id, k.path});
  }
  e["keyGroup"] = k.group;
  e["algorithm"] = k.algorithm;
  pdu.key_group = k.group;
  // The SOME/IP message: secured-layer EcuC Pdu -> its PDU triggering -> the
  // socket connection's HEADER-ID.
  if (const auto ecuc_pdu = v.take_ref("SecOC" + X + "SecuredLayerPduRef")) {
    EcucValues pv(d, *ecuc_pdu, {}, {});
    pv.ignore({"PduLength", "MetaDataLength", "J1939Requestable", "SysTPduToFrameTriggeringRef",
               "EcucPduDefaultPartitionRef", "MetaDataTypeRef"});
    if (const auto trig = pv.take_ref("SysTPduToPduTriggeringRef")) {
      const auto it = ctx.hids.find(trig->internal_object());
      if (it == ctx.hids.end())
        throw ArxmlError(d.path_of(*trig), "no SOCKET-CONNECTION-IPDU-IDENTIFIER names this PDU triggering: "
                                            "its SOME/IP message is unknown");
      pdu.message_id = it->second;
    }
    pv.finish();
  }
  // No effect on the wire here (buffers, PduR/Csm handles, reporting, retry
  // counts of an asynchronous Csm, the FVM's own ids).
  v.ignore({"SecOC" + X + "AuthenticLayerPduId", "SecOC" + X + "SecuredLayerPduId",
            "SecOC" + X + "AuthenticLayerPduRef", "SecOCPduType", "SecOCFreshnessValueId",
            "SecOCSecondaryFreshnessValueId", "SecOCAuthenticationBuildAttempts", "SecOCAuthenticationRetries",
            "SecOCFreshnessCounterSyncAttempts", "SecOCReceptionOverflowStrategy", "SecOCReceptionQueueSize",
            "SecOCVerificationStatusPropagationMode", "SecOCClientServerVerificationStatusPropagationMode",
            "SecOCSameBufferPduRef", "SecOCProvideTxTruncatedFreshnessValue", "SecOCUseTxConfirmation",
            "SecOCTxPduUnusedAreasDefault", "SecOCRxPduUnusedAreasDefault", "SecOCDefaultAuthenticationInformationPattern"});
  for (const auto& path : v.ignored()) notes.push_back({path, "ignored: no effect on the wire in layersec"});
  v.finish();
  return pdu;
}

}  // namespace

SecocImport import_secoc(const Document& d) {
  SecocImport out;
  const auto modules = ecuc_modules(d, "SecOC");
  if (modules.empty()) return out;
  if (modules.size() > 1) throw ArxmlError(d.path_of(modules[1]), "a second SecOC module configuration");
  out.present = true;
  Context ctx;
  ctx.hids = header_ids(d);
  std::vector<pugi::xml_node> tx;
  std::vector<pugi::xml_node> rx;
  for (const auto& c : ecuc_children(modules[0])) {
    const std::string def = definition_name(c);
    if (def == "SecOCTxPduProcessing") tx.push_back(c);
    else if (def == "SecOCRxPduProcessing") rx.push_back(c);
    else if (def == "SecOCGeneral" || def == "SecOCSameBufferPduCollection")
      out.notes.push_back({d.path_of(c), "ignored: module-wide settings with no effect on the wire in layersec"});
    else throw ArxmlError(d.path_of(c), "container " + def + " is not supported by layersec");
  }
  for (const auto& c : tx) out.pdus.push_back(read_pdu(d, c, true, ctx, out.groups, out.notes));
  for (const auto& c : rx) out.pdus.push_back(read_pdu(d, c, false, ctx, out.groups, out.notes));
  return out;
}

}  // namespace layersec::arxml
