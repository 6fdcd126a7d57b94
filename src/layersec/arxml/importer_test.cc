#include "layersec/arxml/importer.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "layersec/base/keyfile.h"
#include "layersec/node/node_config.h"
#include "support/vectors.h"

namespace layersec::arxml {
namespace {

using nlohmann::json;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string server_text() { return read_text(testing::source_dir() / "testdata/arxml/echo_server.arxml"); }
std::string client_text() { return read_text(testing::source_dir() / "testdata/arxml/echo_client.arxml"); }

ImportOptions server_options() {
  ImportOptions o;
  o.sync_tx_data_id = 65001;
  o.sync_rx_data_id = 65002;
  return o;
}

// Replaces the first `from` (which must be there) with `to`.
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// The error of importing `text`: its path and problem, or "" when it imports.
std::string error_of(const std::string& text, const ImportOptions& o = server_options()) {
  try {
    (void)import_arxml(text, o);
  } catch (const ArxmlError& e) {
    return e.what();
  }
  return "";
}

TEST(ArxmlImport, ServerNodeAndEngine) {
  const auto r = import_arxml(server_text(), server_options());
  const json& n = r.node;
  EXPECT_EQ(n["unicast"], "10.77.0.1");
  EXPECT_EQ(n["network"], "SecuredServer");
  ASSERT_EQ(n["services"].size(), 2u);  // the echo service and the sync service
  const json& s = n["services"][0];
  EXPECT_EQ(s["service"], "0x1234");
  EXPECT_EQ(s["instance"], "0x0001");
  EXPECT_EQ(s["unreliable"], 30509);
  EXPECT_EQ(s["major"], 1);
  EXPECT_EQ(s["methods"], json::array({"0x0001"}));
  ASSERT_EQ(s["eventgroups"].size(), 1u);
  EXPECT_EQ(s["eventgroups"][0]["eventgroup"], "0x0001");
  EXPECT_EQ(s["eventgroups"][0]["events"], json::array({"0x8001"}));
  EXPECT_FALSE(s["eventgroups"][0].contains("threshold"));  // no multicast address: noted, not used
  EXPECT_EQ(n["services"][1]["service"], "0x5ec0");
  EXPECT_EQ(n["clients"][0]["service"], "0x5ec0");

  const json& e = r.secoc;
  ASSERT_EQ(e["keyGroups"], json::parse(R"([{"name": "pair", "algorithm": "cmac-aes256"}])"));
  ASSERT_EQ(e["txPdus"].size(), 2u);
  ASSERT_EQ(e["rxPdus"].size(), 1u);
  EXPECT_EQ(e["txPdus"][0]["dataId"], 258);
  EXPECT_EQ(e["txPdus"][1]["dataId"], 259);
  EXPECT_EQ(e["rxPdus"][0]["dataId"], 257);
  for (const json* p : {&e["txPdus"][0], &e["txPdus"][1], &e["rxPdus"][0]}) {
    EXPECT_EQ((*p)["freshnessValueLength"], 64);
    EXPECT_EQ((*p)["freshnessValueTxLength"], 16);
    EXPECT_EQ((*p)["authInfoTxLength"], 64);
    EXPECT_EQ((*p)["keyGroup"], "pair");
  }
  EXPECT_EQ(e["rxPdus"][0]["authenticationVerifyAttempts"], 2);
  EXPECT_EQ(e["syncTx"]["dataId"], 65001);
  EXPECT_EQ(e["syncRx"][0]["dataId"], 65002);

  const json& sec = n["secoc"];
  EXPECT_EQ(sec["keys"], json::parse(R"([{"keyGroup": "pair", "keyId": 1, "file": "keys/pair.key"}])"));
  EXPECT_EQ(sec["bindings"], json::parse(R"([
      {"service": "0x1234", "instance": "0x0001", "method": "0x0001", "txPdu": 0, "rxPdu": 0},
      {"service": "0x1234", "instance": "0x0001", "event": "0x8001", "txPdu": 1}])"));
  EXPECT_EQ(sec["sync"]["service"], "0x5ec0");
  EXPECT_EQ(sec["sync"]["event"], "0x8fff");
  EXPECT_EQ(r.key_files, std::vector<std::string>{"keys/pair.key"});
  // Parameters with no effect here are reported, not dropped silently.
  bool noted = false;
  for (const auto& note : r.notes)
    noted = noted || note.path == "/ActiveEcuC/SecOC/EchoResponse/SecOCFreshnessValueId";
  EXPECT_TRUE(noted);
}

// The ARXML pair describes examples/node/secured_{server,client}.json: the
// imported engines agree with the hand-written ones on every PDU.
TEST(ArxmlImport, AgreesWithTheHandWrittenExamplePair) {
  for (const char* role : {"server", "client"}) {
    ImportOptions o;
    const bool server = std::string(role) == "server";
    o.sync_tx_data_id = server ? 65001 : 65002;
    o.sync_rx_data_id = server ? 65002 : 65001;
    const auto r = import_arxml(server ? server_text() : client_text(), o);
    const json ex = json::parse(read_text(testing::source_dir() / (std::string("examples/node/secured_") + role + ".json")));
    const json& want = ex["secoc"]["engine"];
    for (const char* dir : {"txPdus", "rxPdus"}) {
      ASSERT_EQ(r.secoc[dir].size(), want[dir].size()) << role << " " << dir;
      for (std::size_t i = 0; i < want[dir].size(); ++i)
        EXPECT_EQ(r.secoc[dir][i]["dataId"], want[dir][i]["dataId"]) << role << " " << dir << i;
    }
    EXPECT_EQ(r.secoc["syncTx"]["dataId"], want["syncTx"]["dataId"]) << role;
    EXPECT_EQ(r.secoc["syncRx"][0]["dataId"], want["syncRx"][0]["dataId"]) << role;
    EXPECT_EQ(r.node["secoc"]["bindings"].size(), ex["secoc"]["bindings"].size()) << role;
  }
}

// The output is what `layersec node` accepts: the whole file, with a key,
// through the node configuration loader.
TEST(ArxmlImport, NodeLoaderAcceptsTheOutput) {
  std::string dir = ::testing::TempDir() + "layersec_arxml_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::filesystem::create_directory(dir + "/keys");
  const std::vector<std::uint8_t> key(32, 0xA5);
  ASSERT_TRUE(write_key_file_hex(dir + "/keys/pair.key", key).ok());
  for (const bool server : {true, false}) {
    ImportOptions o;
    o.sync_tx_data_id = server ? 65001 : 65002;
    o.sync_rx_data_id = server ? 65002 : 65001;
    const auto r = import_arxml(server ? server_text() : client_text(), o);
    const node::NodeConfig c = node::node_config_from_json(r.node, dir);
    ASSERT_TRUE(c.secoc.has_value());
    // The imported PDUs plus the SD PDUs the loader adds (protected SD).
    EXPECT_EQ(c.secoc->engine.tx_pdus.size(), server ? 3u : 2u);
    EXPECT_EQ(c.secoc->engine.rx_pdus.size(), server ? 2u : 3u);
    EXPECT_TRUE(c.secoc->bindings.sd_tx_pdu.has_value());
    EXPECT_EQ(c.secoc->engine.key_groups[0].algorithm, secoc::AuthAlgorithm::kCmacAes256);
    EXPECT_EQ(c.secoc->bindings.messages.size(), 2u);
    EXPECT_EQ(c.secoc->keys[0].key_id, 1u);
    // Both offer the sync service; the server also the echo service.
    EXPECT_EQ(c.runtime.services.size(), server ? 2u : 1u);
    if (!server) {
      ASSERT_EQ(c.runtime.clients.size(), 2u);
      EXPECT_EQ(c.runtime.clients[0].service_id, 0x1234);
      EXPECT_EQ(c.runtime.clients[0].eventgroups, std::vector<std::uint16_t>{1});
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(ArxmlImport, BadXmlNamesTheLine) {
  EXPECT_EQ(error_of("<AUTOSAR>\n<AR-PACKAGES>\n</AUTOSAR>"),
            "(xml): not well-formed XML: Start-end tags mismatch at line 3");
  EXPECT_EQ(error_of("<FOO/>"), "(xml): the root element is <FOO>, not <AUTOSAR>");
  EXPECT_EQ(error_of(""), "(xml): not well-formed XML: No document element found at line 1");
}

TEST(ArxmlImport, DeepNestingIsRefusedWithoutRecursion) {
  std::string deep = "<AUTOSAR>";
  for (int i = 0; i < 100000; ++i) deep += "<A>";
  for (int i = 0; i < 100000; ++i) deep += "</A>";
  deep += "</AUTOSAR>";
  EXPECT_EQ(error_of(deep), "(xml): elements nested deeper than 256");
}

// SHORT-NAMEs are AUTOSAR identifiers (no '/', at most 128 characters) and
// a SHORT-NAME path is at most kMaxPathBytes long: a path names one element,
// and no error or note carries more than that.
TEST(ArxmlImport, ShortNamesAreIdentifiersAndPathsAreBounded) {
  const auto package = [](const std::string& name, const std::string& inner = "") {
    return "<AR-PACKAGE><SHORT-NAME>" + name + "</SHORT-NAME><AR-PACKAGES>" + inner + "</AR-PACKAGES></AR-PACKAGE>";
  };
  const auto doc = [](const std::string& packages) {
    return "<AUTOSAR><AR-PACKAGES>" + packages + "</AR-PACKAGES></AUTOSAR>";
  };
  const std::string rule = "is not an AUTOSAR identifier (a letter, then letters, digits or '_'; at most 128 characters)";
  EXPECT_EQ(error_of(doc(package("A", package("b/c")))), "/A/AR-PACKAGE/SHORT-NAME: 'b/c' " + rule);
  EXPECT_EQ(error_of(doc(package("1A"))), "/AR-PACKAGE/SHORT-NAME: '1A' " + rule);
  EXPECT_EQ(error_of(doc(package(std::string(129, 'n')))),
            "/AR-PACKAGE/SHORT-NAME: '" + std::string(64, 'n') + "...' " + rule);
  const std::string none = "(document): no PROVIDED-SOMEIP-SERVICE-INSTANCE or REQUIRED-SOMEIP-SERVICE-INSTANCE: a "
                           "node needs at least one";
  EXPECT_EQ(error_of(doc(package(std::string(128, 'n')))), none);
  // 7 levels of 128-character names (903 characters) are a path; 8 (1032) are not.
  const auto nested = [&](int levels, std::string& path) {
    std::vector<std::string> names;
    for (int i = 0; i < levels; ++i) names.push_back(static_cast<char>('a' + i) + std::string(127, 'n'));
    std::string inner;
    for (auto n = names.rbegin(); n != names.rend(); ++n) inner = package(*n, inner);
    path.clear();
    for (const auto& n : names) path += "/" + n;
    return doc(inner);
  };
  std::string path;
  EXPECT_EQ(error_of(nested(7, path)), none);
  const std::string eight = nested(8, path);
  EXPECT_EQ(error_of(eight), path + ": SHORT-NAME path longer than 1024 characters");
}

// Each provided instance copies its deployment's methods, events and
// eventgroups: many instances of one big deployment are refused before the
// output grows past kMaxEntries.
TEST(ArxmlImport, CopiesOfOneBigDeploymentAreBounded) {
  const auto doc = [](int instances) {
    std::string x = "<AUTOSAR><AR-PACKAGES><AR-PACKAGE><SHORT-NAME>P</SHORT-NAME><ELEMENTS>"
                    "<SOMEIP-SERVICE-INTERFACE-DEPLOYMENT><SHORT-NAME>D</SHORT-NAME>"
                    "<SERVICE-INTERFACE-ID>1</SERVICE-INTERFACE-ID><EVENT-DEPLOYMENTS>";
    for (int i = 1; i <= 4000; ++i)
      x += "<SOMEIP-EVENT-DEPLOYMENT><SHORT-NAME>E" + std::to_string(i) + "</SHORT-NAME><EVENT-ID>" +
           std::to_string(i) + "</EVENT-ID></SOMEIP-EVENT-DEPLOYMENT>";
    x += "</EVENT-DEPLOYMENTS><EVENT-GROUPS><SOMEIP-EVENT-GROUP><SHORT-NAME>G</SHORT-NAME>"
         "<EVENT-GROUP-ID>1</EVENT-GROUP-ID><EVENT-REFS>";
    for (int i = 1; i <= 4000; ++i) x += "<EVENT-REF>/P/D/E" + std::to_string(i) + "</EVENT-REF>";
    x += "</EVENT-REFS></SOMEIP-EVENT-GROUP></EVENT-GROUPS></SOMEIP-SERVICE-INTERFACE-DEPLOYMENT>";
    for (int j = 1; j <= instances; ++j)
      x += "<PROVIDED-SOMEIP-SERVICE-INSTANCE><SHORT-NAME>I" + std::to_string(j) +
           "</SHORT-NAME><SERVICE-INTERFACE-DEPLOYMENT-REF>/P/D</SERVICE-INTERFACE-DEPLOYMENT-REF>"
           "<SERVICE-INSTANCE-ID>" + std::to_string(j) + "</SERVICE-INSTANCE-ID></PROVIDED-SOMEIP-SERVICE-INSTANCE>";
    return x + "</ELEMENTS></AR-PACKAGE></AR-PACKAGES></AUTOSAR>";
  };
  // 4,002 entries per instance (the eventgroup, its 4,000 events, the instance):
  // 16 instances fit in 65,536, the 17th does not.
  EXPECT_EQ(error_of(doc(16)), "/P/I1: no UDP port: map the instance with a SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING "
                               "that has a UDP-PORT");
  EXPECT_EQ(error_of(doc(17)), "/P/I17: more than 65536 methods, events and eventgroups in the node: not one node's "
                               "deployment");
}

// Out-of-range lengths and DataIds, and a DataId used twice, are refused
// naming the AUTOSAR parameter.
TEST(ArxmlImport, LengthsAndDataIdsAreChecked) {
  const std::string s = server_text();
  const std::string pre = "SecOCTxPduProcessing/";
  const auto value = [&](const std::string& param, const std::string& from, const std::string& to) {
    return edit(s, pre + param + "</DEFINITION-REF>\n                  <VALUE>" + from + "<",
                pre + param + "</DEFINITION-REF><VALUE>" + to + "<");
  };
  const std::string at = "/ActiveEcuC/SecOC/EchoResponse/";
  EXPECT_EQ(error_of(value("SecOCFreshnessValueLength", "64", "65")),
            at + "SecOCFreshnessValueLength: 65 is out of range 0..64");
  EXPECT_EQ(error_of(value("SecOCFreshnessValueTruncLength", "16", "65")),
            at + "SecOCFreshnessValueTruncLength: longer than SecOCFreshnessValueLength (64)");
  EXPECT_EQ(error_of(value("SecOCAuthInfoTruncLength", "64", "70000")),
            at + "SecOCAuthInfoTruncLength: 70000 is out of range 0..65535");
  const std::string too_long = error_of(value("SecOCAuthInfoTruncLength", "64", "264"));
  EXPECT_EQ(too_long.rfind(at + "SecOCAuthInfoTruncLength: layersec cannot use this configuration: ", 0), 0u) << too_long;
  EXPECT_EQ(error_of(value("SecOCDataId", "259", "258")),
            "/ActiveEcuC/SecOC/TickEvent/SecOCDataId: DataId 258 is also the SecOCDataId of "
            "/ActiveEcuC/SecOC/EchoResponse (one DataId per secured PDU)");
  EXPECT_EQ(error_of(edit(s, "SecOCRxPduProcessing/SecOCDataId</DEFINITION-REF>\n                  <VALUE>257<",
                          "SecOCRxPduProcessing/SecOCDataId</DEFINITION-REF><VALUE>259<")),
            "/ActiveEcuC/SecOC/EchoRequest/SecOCDataId: DataId 259 is also the SecOCDataId of "
            "/ActiveEcuC/SecOC/TickEvent (one DataId per secured PDU)");
  ImportOptions o = server_options();
  o.sync_tx_data_id = 258;
  EXPECT_EQ(error_of(s, o), "--sync-tx-data-id: 258 is the SecOCDataId of /ActiveEcuC/SecOC/EchoResponse: the sync "
                            "messages need a DataId of their own");
  o = server_options();
  o.sync_rx_data_id = 65001;
  EXPECT_EQ(error_of(s, o), "--sync-rx-data-id: equals --sync-tx-data-id: this node would accept its own sync "
                            "messages reflected back");
  // A reference to an event that is not there, and one id given twice.
  EXPECT_EQ(error_of(edit(s, ">/Deployments/Echo_Someip/Tick</EVENT-REF>", ">/Deployments/Echo_Someip/Nope</EVENT-REF>")),
            "/Deployments/Echo_Someip/Ticks/EVENT-REFS/EVENT-REF: reference '/Deployments/Echo_Someip/Nope' names no "
            "element of this file");
  EXPECT_EQ(error_of(edit(s, "<EVENT-ID>1</EVENT-ID>", "<EVENT-ID>1</EVENT-ID><EVENT-ID>2</EVENT-ID>")),
            "/Deployments/Echo_Someip/Tick/EVENT-ID: given more than once");
}

// An AR-PACKAGE split in two parts (as merged extracts have it) is one
// package: references into either part resolve, errors name one path.
TEST(ArxmlImport, SplitPackagesAreOnePackage) {
  std::string s = server_text();
  const std::string deployment_pkg = "<AR-PACKAGE>\n      <SHORT-NAME>Deployments</SHORT-NAME>";
  ASSERT_NE(s.find(deployment_pkg), std::string::npos);
  // A second "Instances" package part holding nothing but a new element.
  s = edit(s, deployment_pkg, "<AR-PACKAGE><SHORT-NAME>Instances</SHORT-NAME><ELEMENTS><I-SIGNAL-I-PDU>"
                              "<SHORT-NAME>Extra</SHORT-NAME></I-SIGNAL-I-PDU></ELEMENTS></AR-PACKAGE>" + deployment_pkg);
  EXPECT_EQ(error_of(s), "");
  EXPECT_EQ(error_of(edit(s, "<SHORT-NAME>Extra</SHORT-NAME>", "<SHORT-NAME>Mapping</SHORT-NAME>")),
            "/Instances/Mapping: two elements have this SHORT-NAME path (<I-SIGNAL-I-PDU> and "
            "<SOMEIP-SERVICE-INSTANCE-TO-MACHINE-MAPPING>)");
}

TEST(ArxmlImport, ErrorsNameTheArxmlPath) {
  const std::string s = server_text();
  const std::string dataid = "SecOCTxPduProcessing/SecOCDataId</DEFINITION-REF>\n                  <VALUE>258</VALUE>";
  EXPECT_EQ(error_of(edit(s, dataid, "SecOCTxPduProcessing/SecOCDataId</DEFINITION-REF><VALUE>70000</VALUE>")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCDataId: 70000 is out of range 0..65535");
  EXPECT_EQ(error_of(edit(s, dataid, "SecOCTxPduProcessing/SecOCDataId</DEFINITION-REF><VALUE>x12</VALUE>")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCDataId: 'x12' is not an unsigned integer (decimal, 0x hex or 0b "
            "binary)");
  EXPECT_EQ(error_of(edit(s, dataid, "SecOCTxPduProcessing/SecOCAuthDataFreshnessLen</DEFINITION-REF><VALUE>4</VALUE>")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCDataId: required");
  // A parameter layersec cannot honour is refused, not dropped.
  EXPECT_EQ(error_of(edit(s, "SecOCTxPduProcessing/SecOCFreshnessValueId<",
                          "SecOCTxPduProcessing/SecOCUseAuthDataFreshness<")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCUseAuthDataFreshness: parameter SecOCUseAuthDataFreshness is not "
            "supported by layersec");
  EXPECT_EQ(error_of(edit(s, "SecOCTxPduProcessing/SecOCTxAuthenticPduLayer<", "SecOCTxPduProcessing/SecOCUseMessageLink<")),
            "/ActiveEcuC/SecOC/EchoResponse/AuthenticPduLayer: container SecOCUseMessageLink is not supported by layersec");
  // The engine's own checks come back with the AUTOSAR parameter's path.
  EXPECT_EQ(error_of(edit(s, "SecOCTxPduProcessing/SecOCFreshnessValueLength</DEFINITION-REF>\n                  <VALUE>64",
                          "SecOCTxPduProcessing/SecOCFreshnessValueLength</DEFINITION-REF><VALUE>32")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCFreshnessValueLength: layersec cannot use this configuration: "
            "freshnessValueLength 32 must exceed trip+reset+resetFlag bits (32) and be <= 64");
  EXPECT_EQ(error_of(edit(s, "CRYPTO_ALGOMODE_CMAC", "CRYPTO_ALGOMODE_GCM")),
            "/ActiveEcuC/Csm/CsmPrimitives/MacGenerate/MacGenerateConfig/CsmMacGenerateAlgorithmMode: algorithm "
            "CRYPTO_ALGOFAM_AES / CRYPTO_ALGOMODE_GCM is not supported (AES+CMAC, SHA2_256+HMAC)");
  EXPECT_EQ(error_of(edit(s, "<VALUE>32</VALUE>", "<VALUE>24</VALUE>")),
            "/ActiveEcuC/Csm/CsmPrimitives/MacGenerate/MacGenerateConfig/CsmMacGenerateAlgorithmKeyLength: 24 bytes: "
            "CMAC-AES keys are 16 or 32 bytes");
  EXPECT_EQ(error_of(edit(s, "/ActiveEcuC/Csm/CsmJobs/MacGenerateJob<", "/ActiveEcuC/Csm/CsmJobs/Nowhere<")),
            "/ActiveEcuC/SecOC/EchoResponse/SecOCTxAuthServiceConfigRef: reference "
            "'/ActiveEcuC/Csm/CsmJobs/Nowhere' names no element of this file");
  EXPECT_EQ(error_of(edit(s, "<TRANSPORT-PROTOCOL>UDP", "<TRANSPORT-PROTOCOL>TCP")),
            "/Deployments/Echo_Someip/Tick/TRANSPORT-PROTOCOL: transport TCP is not supported (layersec carries "
            "SOME/IP over UDP only)");
  EXPECT_EQ(error_of(edit(s, "<UDP-PORT>30509</UDP-PORT>", "<UDP-PORT>0</UDP-PORT>")),
            "/Instances/Mapping/UDP-PORT: 0 is out of range 1..65535");
  EXPECT_EQ(error_of(edit(s, "<SERVICE-INTERFACE-ID>4660", "<SERVICE-INTERFACE-ID>65535")),
            "/Deployments/Echo_Someip/SERVICE-INTERFACE-ID: 65535 is out of range 1..65534");
  EXPECT_EQ(error_of(edit(s, "<HEADER-ID>305397761</HEADER-ID>", "<HEADER-ID>1431633921</HEADER-ID>")),
            "/ActiveEcuC/SecOC/EchoResponse: protects SOME/IP message 0x5555/0x0001 of a service this node neither "
            "provides nor requires");
  EXPECT_EQ(error_of(edit(s, "<SHORT-NAME>TickEvent</SHORT-NAME>", "<SHORT-NAME>EchoResponse</SHORT-NAME>")),
            "/ActiveEcuC/SecOC/EchoResponse: two elements have this SHORT-NAME path (<ECUC-CONTAINER-VALUE> and "
            "<ECUC-CONTAINER-VALUE>)");
  // What AUTOSAR leaves to the freshness value manager is asked for, not guessed.
  EXPECT_EQ(error_of(s, ImportOptions{}),
            "--sync-tx-data-id: required: /ActiveEcuC/SecOC/EchoResponse uses counter freshness, whose sync messages "
            "need their own DataId");
  ImportOptions no_addr = server_options();
  EXPECT_EQ(error_of(edit(s, "<IPV-4-ADDRESS>10.77.0.1<", "<IPV-4-ADDRESS>10.77.0.300<"), no_addr),
            "/System/EthCluster/Channel/Endpoint/NETWORK-ENDPOINT-ADDRESSES/IPV-4-CONFIGURATION/IPV-4-ADDRESS: "
            "'10.77.0.300' is not an IPv4 address");
}

TEST(ArxmlImport, TimestampFreshnessNeedsNoSync) {
  std::string s = server_text();
  // Every PDU with SecOCUseFreshnessTimestamp: no sync options needed.
  const std::string fv = "/SecOCFreshnessValueLength</DEFINITION-REF>";
  std::size_t pos = 0;
  int n = 0;
  while ((pos = s.find(fv, pos)) != std::string::npos) {
    const auto close = s.find("</ECUC-NUMERICAL-PARAM-VALUE>", pos) + std::string("</ECUC-NUMERICAL-PARAM-VALUE>").size();
    const std::string base = s.substr(s.rfind(">", pos) + 1, pos - s.rfind(">", pos) - 1);
    s.insert(close, "<ECUC-NUMERICAL-PARAM-VALUE><DEFINITION-REF>" + base +
                        "/SecOCUseFreshnessTimestamp</DEFINITION-REF><VALUE>true</VALUE></ECUC-NUMERICAL-PARAM-VALUE>");
    pos = close;
    ++n;
  }
  ASSERT_EQ(n, 3);
  // Timestamps are sent in full (the receiver needs more than 4 x maxAge of span).
  const std::string tx16 = "SecOCFreshnessValueTruncLength</DEFINITION-REF>\n                  <VALUE>16<";
  for (auto p = s.find(tx16); p != std::string::npos; p = s.find(tx16))
    s.replace(p, tx16.size(), "SecOCFreshnessValueTruncLength</DEFINITION-REF><VALUE>64<");
  const auto r = import_arxml(s, ImportOptions{});
  EXPECT_EQ(r.secoc["txPdus"][0]["freshness"], "timestamp");
  EXPECT_FALSE(r.secoc.contains("syncTx"));
  EXPECT_FALSE(r.node["secoc"].contains("sync"));
  EXPECT_EQ(r.node["services"].size(), 1u);
}

}  // namespace
}  // namespace layersec::arxml
