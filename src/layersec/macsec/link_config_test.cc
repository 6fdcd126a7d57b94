// Tests of the MACsec link configuration: a complete file parses into a
// working SecY, key files go through base/keyfile (mode 0600 required), and
// every error names the JSON path of the offending value.
#include "layersec/macsec/link_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "layersec/base/keyfile.h"
#include "layersec/macsec/pn_state_file.h"

namespace layersec::macsec {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LinkConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ls_linkcfg_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_key("k16a", 16, 1);
    write_key("k16b", 16, 2);
    write_key("k16c", 16, 4);
    write_key("k32", 32, 3);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_key(const std::string& name, std::size_t size, std::uint8_t seed) {
    std::vector<std::uint8_t> k(size);
    for (std::size_t i = 0; i < size; ++i) k[i] = static_cast<std::uint8_t>(seed + i);
    ASSERT_TRUE(write_key_file_hex((dir_ / name).string(), k, /*overwrite=*/true).ok());
  }

  static json base() {
    return json::parse(R"({
      "cipher_suite": "GCM-AES-128",
      "port": 1,
      "validate_frames": "strict",
      "replay_protect": true,
      "replay_window": 16,
      "tx": { "encoding_an": 1,
              "sas": [ { "an": 0, "pn": 1, "key_file": "k16a" },
                       { "an": 1, "pn": 100, "key_file": "k16c" } ] },
      "rx": [ { "sci": "0200007800020001",
                "sas": [ { "an": 0, "pn": 5, "key_file": "k16b" } ] } ]
    })");
  }

  // The message of the LinkConfigError parse_link_config throws for `j`.
  std::string error_of(const json& j) {
    try {
      (void)parse_link_config(j, dir_);
    } catch (const LinkConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
};

TEST_F(LinkConfigTest, CompleteConfigBuildsAWorkingSecY) {
  const LinkConfig c = parse_link_config(base(), dir_);
  EXPECT_EQ(c.secy.suite, CipherSuite::kGcmAes128);
  EXPECT_EQ(c.secy.validate_frames, ValidateFrames::kStrict);
  EXPECT_TRUE(c.secy.replay_protect);
  EXPECT_EQ(c.secy.replay_window, 16u);
  EXPECT_EQ(c.secy.vlan_mode, VlanMode::kStandard);
  EXPECT_FALSE(c.sci.has_value());
  EXPECT_EQ(c.encoding_an, 1);
  ASSERT_EQ(c.tx_sas.size(), 2u);
  EXPECT_EQ(c.tx_sas[1].pn, 100u);
  EXPECT_EQ(c.tx_sas[0].sak.size(), 16u);
  ASSERT_EQ(c.rx_scs.size(), 1u);
  EXPECT_EQ(c.rx_scs[0].sci.value, 0x0200007800020001ull);
  EXPECT_EQ(key_id(c.tx_sas[0].sak).size(), 8u);

  const auto mac = net::MacAddress::parse("02:00:00:78:00:01").value();
  SecY secy = make_secy(c, mac);
  EXPECT_EQ(secy.config().sci.value, 0x0200007800010001ull);  // link MAC || port 1
  EXPECT_EQ(secy.encoding_an(), 1);
  EXPECT_EQ(secy.tx_sa_status(1).next_pn, 100u);
  EXPECT_EQ(secy.rx_sa_status(c.rx_scs[0].sci, 0).lowest_pn, 5u);
  std::vector<std::uint8_t> frame(60, 0);
  frame[12] = 0x08;
  std::vector<std::uint8_t> out(frame.size() + 32);
  auto n = secy.protect(frame, out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, frame.size() + 32);
}

TEST_F(LinkConfigTest, ExplicitSciMacXpnAndClearTags) {
  json j = base();
  j["cipher_suite"] = "GCM-AES-XPN-256";
  j["sci"] = "02 00 00 78 00 01 00 07";
  j["mac"] = "02:00:00:78:00:09";
  j["vlan_mode"] = "clear-tag";
  j["clear_tags_in_icv"] = true;
  j["validate_frames"] = "check";
  for (auto* sas : {&j["tx"]["sas"], &j["rx"][0]["sas"]}) {
    for (auto& sa : *sas) {
      sa["key_file"] = "k32";
      sa["ssci"] = "00000001";
      sa["salt"] = "e630e81a48de86a21c66fa6d";
    }
  }
  // Two transmit SAs under one key share a nonce space: the second gets its own salt.
  j["tx"]["sas"][1]["salt"] = "e630e81a48de86a21c66fa6e";
  const LinkConfig c = parse_link_config(j, dir_);
  ASSERT_TRUE(c.sci.has_value());
  EXPECT_EQ(c.sci->value, 0x0200007800010007ull);
  ASSERT_TRUE(c.mac.has_value());
  EXPECT_EQ(c.mac->to_string(), "02:00:00:78:00:09");
  EXPECT_EQ(c.secy.vlan_mode, VlanMode::kClearTag);
  EXPECT_TRUE(c.secy.clear_tags_in_icv);
  EXPECT_EQ(c.secy.validate_frames, ValidateFrames::kCheck);
  EXPECT_EQ(c.tx_sas[0].ssci, 1u);
  EXPECT_EQ(c.tx_sas[0].salt[0], 0xe6);
  SecY secy = make_secy(c, *c.mac);
  EXPECT_EQ(secy.config().sci.value, 0x0200007800010007ull);
}

TEST_F(LinkConfigTest, LoadResolvesKeyFilesRelativeToTheConfigFile) {
  const auto path = dir_ / "link.json";
  std::ofstream(path) << base().dump(2);
  const LinkConfig c = load_link_config(path);
  EXPECT_EQ(c.rx_scs[0].sas[0].sak.size(), 16u);
  std::ofstream(dir_ / "broken.json") << "{ \"cipher_suite\": ";
  EXPECT_THROW((void)load_link_config(dir_ / "broken.json"), LinkConfigError);
  EXPECT_THROW((void)load_link_config(dir_ / "missing.json"), LinkConfigError);
}

TEST_F(LinkConfigTest, KeyFileReadableByOthersIsRefusedWithItsPath) {
  ASSERT_EQ(::chmod((dir_ / "k16b").c_str(), 0644), 0);
  const std::string e = error_of(base());
  EXPECT_EQ(e.rfind("/rx/0/sas/0/key_file: ", 0), 0u) << e;
  EXPECT_NE(e.find("group or others"), std::string::npos) << e;
}

TEST_F(LinkConfigTest, ErrorsNameTheJsonPath) {
  struct Case {
    const char* pointer;  // patch target, JSON pointer
    json value;           // nullptr: remove
    const char* expected_prefix;
  };
  const Case cases[] = {
      {"/cipher_suite", "GCM-AES-64", "/cipher_suite: unknown cipher suite"},
      {"/cipher_suite", nullptr, "/cipher_suite: required"},
      {"/validate_frames", "sometimes", "/validate_frames: "},
      {"/vlan_mode", "q-in-q", "/vlan_mode: "},
      {"/replay_window", -1, "/replay_window: expected a non-negative integer"},
      {"/confidentiality_offset", 20, "/confidentiality_offset: must be 0, 30 or 50"},
      {"/sci", "0200", "/sci: expected 8 octets"},
      {"/mac", "01:00:5e:00:00:01", "/mac: must be a unicast address"},
      {"/port", "one", "/port: expected a non-negative integer"},
      {"/bogus", true, "/bogus: unknown member"},
      {"/tx/sas/1/an", 4, "/tx/sas/1/an: must be at most 3"},
      {"/tx/sas/1/an", 0, "/tx/sas/1/an: AN 0 used twice"},
      {"/tx/sas/0/pn", 0, "/tx/sas/0/pn: PN 0"},
      {"/tx/sas/0/pn", 4294967296ull, "/tx/sas/0/pn: must be at most 4294967295"},
      {"/tx/sas/0/key_file", "k32", "/tx/sas/0/key_file: "},
      {"/tx/sas/0/key_file", "nonexistent", "/tx/sas/0/key_file: "},
      {"/tx/sas/0/ssci", "00000001", "/tx/sas/0/ssci: only for the XPN cipher suites"},
      {"/tx/encoding_an", 3, "/tx/encoding_an: no transmit SA with AN 3"},
      {"/tx/sas", json::array(), "/tx/sas: expected a non-empty array"},
      {"/tx", nullptr, "/tx: required"},
      {"/rx", nullptr, "/rx: expected a non-empty array"},
      {"/rx/0/sci", "zz00007800020001", "/rx/0/sci: not valid hex"},
      {"/rx/0/sas/0/extra", 1, "/rx/0/sas/0/extra: unknown member"},
      {"/clear_tags_in_icv", true, "/clear_tags_in_icv: only meaningful"},
      // Configurations that cannot work (issue 13 item 15).
      {"/port", 0, "/port: must be 1..65535: port identifier 0"},
      {"/sci", "0200007800010000", "/sci: port identifier 0"},
      {"/rx/0/sci", "0200007800020000", "/rx/0/sci: port identifier 0"},
      {"/max_frame_size", 1, "/max_frame_size: must be 0 (no limit) or 114..65535"},
      {"/max_frame_size", 113, "/max_frame_size: must be 0 (no limit) or 114..65535"},
      {"/pn_reserve_block", 0, "/pn_reserve_block: must be 1..1073741824"},
      {"/pn_reserve_block", 1073741825ull, "/pn_reserve_block: must be at most 1073741824"},
      {"/pn_state_file", "", "/pn_state_file: must not be empty"},
      {"/lower_link", "open", "/lower_link: expected \"isolate\""},
      {"/tx/sas/0/new_key", "yes", "/tx/sas/0/new_key: expected true or false"},
      {"/tx/sas/1/key_file", "k16a", "/tx/sas/1/key_file: the same key as /tx/sas/0"},
  };
  for (const auto& c : cases) {
    json j = base();
    if (c.value.is_null()) {
      j.erase(json::json_pointer(c.pointer).back());
      if (std::string(c.pointer).find('/', 1) != std::string::npos) FAIL() << "only top-level removals";
    } else {
      j[json::json_pointer(c.pointer)] = c.value;
    }
    const std::string e = error_of(j);
    EXPECT_EQ(e.rfind(c.expected_prefix, 0), 0u) << c.pointer << " -> " << e;
  }
}

TEST_F(LinkConfigTest, WrongKeyLengthNamesTheKeyItsLengthAndTheExpectedOne) {
  json j = base();
  j["tx"]["sas"][0]["key_file"] = "k32";  // a 32-octet key for GCM-AES-128
  const std::string e = error_of(j);
  EXPECT_EQ(e.rfind("/tx/sas/0/key_file: ", 0), 0u) << e;
  EXPECT_NE(e.find((dir_ / "k32").string()), std::string::npos) << e;
  EXPECT_NE(e.find("32 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("16-octet SAK"), std::string::npos) << e;
  EXPECT_NE(e.find("GCM-AES-128"), std::string::npos) << e;
  // Never a key byte: the key file holds 03 04 05 ... (seed 3).
  EXPECT_EQ(e.find("0304050607"), std::string::npos) << e;
}

TEST_F(LinkConfigTest, ValidSettingsAtTheEdgesAreAccepted) {
  json j = base();
  j["port"] = 65535;
  j["max_frame_size"] = 114;
  j["pn_reserve_block"] = 1;
  j["lower_link"] = "sysctl-only";
  j["pn_state_file"] = "state/link.pn";
  j["tx"]["sas"][0]["new_key"] = true;
  const LinkConfig c = parse_link_config(j, dir_);
  EXPECT_EQ(c.port, 65535);
  EXPECT_EQ(c.secy.max_frame_size, 114u);
  EXPECT_EQ(c.pn_reserve_block, 1u);
  EXPECT_EQ(c.lower_link, LowerLinkPolicy::kSysctlOnly);
  EXPECT_EQ(c.pn_state_file, (dir_ / "state/link.pn").string());
  EXPECT_TRUE(c.tx_sas[0].new_key);
  EXPECT_FALSE(c.tx_sas[1].new_key);
  // load_link_config puts the state file beside the configuration by default.
  const auto path = dir_ / "link.json";
  std::ofstream(path) << base().dump(2);
  EXPECT_EQ(load_link_config(path).pn_state_file, path.string() + ".pn-state");
}

TEST_F(LinkConfigTest, AReceiveScWithOurOwnSciIsRefused) {
  json j = base();
  j["rx"][0]["sci"] = "0200007800010001";  // link MAC 02:00:00:78:00:01 || port 1
  const LinkConfig c = parse_link_config(j, dir_);
  const auto mac = net::MacAddress::parse("02:00:00:78:00:01").value();
  try {
    (void)make_secy(c, mac);
    FAIL() << "a receive SC equal to our own SCI was accepted";
  } catch (const LinkConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("/rx/0/sci: is this SecY's own transmit SCI (0200007800010001", 0), 0u) << m;
  }
  // The same SCI from an explicit "sci".
  j["rx"][0]["sci"] = "0200007800090007";
  j["sci"] = "0200007800090007";
  EXPECT_THROW((void)make_secy(parse_link_config(j, dir_), mac), LinkConfigError);
}

TEST_F(LinkConfigTest, MissingPnStateIsRefusedNamingTheStateFileAndKeyId) {
  const auto path = dir_ / "link.json";
  std::ofstream(path) << base().dump(2);
  const LinkConfig c = load_link_config(path);
  auto store = FilePnStore::create(c.pn_state_file);
  ASSERT_TRUE(store.ok());
  const auto mac = net::MacAddress::parse("02:00:00:78:00:01").value();
  try {
    (void)make_secy(c, mac, &*store);
    FAIL() << "keys without PN state were accepted";
  } catch (const LinkConfigError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("/tx/sas/0: cannot install transmit SA: no PN state", 0), 0u) << m;
    EXPECT_NE(m.find(c.pn_state_file), std::string::npos) << m;
    EXPECT_NE(m.find(key_id(c.tx_sas[0].sak)), std::string::npos) << m;
    EXPECT_NE(m.find("\"new_key\": true"), std::string::npos) << m;
  }
  // All keys new: records are created; the next start resumes without the flag.
  {
    SecY y = make_secy(c, mac, &*store, /*all_keys_new=*/true);
    EXPECT_EQ(y.tx_sa_status(1).next_pn, 100u);
  }
  EXPECT_EQ(store->records().size(), 3u);  // tx AN 0, tx AN 1, rx AN 0
  SecY y = make_secy(c, mac, &*store);
  EXPECT_TRUE(y.tx_sa_status(1).pn_resumed);
  EXPECT_TRUE(y.rx_sa_status(c.rx_scs[0].sci, 0).pn_resumed);
}

TEST_F(LinkConfigTest, XpnNeedsSsciAndSalt) {
  json j = base();
  j["cipher_suite"] = "GCM-AES-XPN-128";
  EXPECT_EQ(error_of(j).rfind("/tx/sas/0/ssci: required", 0), 0u) << error_of(j);
  j["tx"]["sas"][0]["ssci"] = "00000001";
  EXPECT_EQ(error_of(j).rfind("/tx/sas/0/salt: required", 0), 0u) << error_of(j);
  j["tx"]["sas"][0]["salt"] = "00";
  EXPECT_EQ(error_of(j).rfind("/tx/sas/0/salt: expected 12 octets", 0), 0u) << error_of(j);
}

}  // namespace
}  // namespace layersec::macsec
