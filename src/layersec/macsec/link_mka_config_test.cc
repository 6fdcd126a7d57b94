// The --mka file (link_mka_config.h): defaults, every field, errors naming
// the JSON pointer, the CAK read through base/keyfile (mode and size
// checked, never echoed), and the link configuration MKA runs on; plus the
// JSON renderings of link_mka.h (event lines never carry a key, drop and
// rekey names cover every reason).
#include "layersec/macsec/link_mka_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "layersec/base/keyfile.h"
#include "layersec/macsec/link_mka.h"
#include "layersec/mka/keys.h"

namespace layersec::macsec {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class LinkMkaConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ls_mkacfg_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
    write_key("cak16", 16);
    write_key("cak32", 32);
    write_key("cak20", 20);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_key(const std::string& name, std::size_t size) {
    std::vector<std::uint8_t> k(size);
    for (std::size_t i = 0; i < size; ++i) k[i] = static_cast<std::uint8_t>(0xA0 + i);
    ASSERT_TRUE(write_key_file_hex((dir_ / name).string(), k, /*overwrite=*/true).ok());
  }
  static json base() {
    return json::parse(R"({ "cak_file": "cak16", "ckn": "6162636465666768", "priority": 16,
                            "cipher_suite": "gcm-aes-128" })");
  }
  // The message of the LinkConfigError `j` raises ("" when it parses).
  std::string error_of(const json& j) {
    try {
      (void)parse_link_mka_config(j, dir_);
    } catch (const LinkConfigError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(LinkMkaConfigTest, MinimalFileTakesThe8021XDefaults) {
  const LinkMkaConfig c = parse_link_mka_config(base(), dir_);
  EXPECT_EQ(c.cak.size(), 16U);
  EXPECT_EQ(c.participant.ckn, from_hex("6162636465666768").value());
  EXPECT_EQ(c.participant.key_server_priority, 16);
  EXPECT_EQ(c.participant.cipher_suite, CipherSuite::kGcmAes128);
  EXPECT_EQ(c.participant.hello_time, Duration::seconds(2));
  EXPECT_EQ(c.participant.life_time, Duration::seconds(6));
  EXPECT_EQ(c.participant.bounded_hellos, 3U);
  EXPECT_EQ(c.participant.rekey_interval, Duration::zero());
  EXPECT_EQ(c.port, 1);
  EXPECT_FALSE(c.mac.has_value());
  EXPECT_EQ(c.lower_link, LowerLinkPolicy::kIsolate);
  const LinkConfig l = link_config_for_mka(c);
  EXPECT_EQ(l.secy.suite, CipherSuite::kGcmAes128);
  EXPECT_TRUE(l.secy.confidentiality);
  EXPECT_TRUE(l.secy.protect_frames);
  EXPECT_EQ(l.secy.validate_frames, ValidateFrames::kStrict);
  EXPECT_TRUE(l.secy.replay_protect);
  EXPECT_TRUE(l.tx_sas.empty());
  EXPECT_TRUE(l.rx_scs.empty());
  EXPECT_TRUE(l.pn_state_file.empty());
}

TEST_F(LinkMkaConfigTest, EveryField) {
  json j = base();
  j["cak_file"] = (dir_ / "cak32").string();  // absolute
  j["cipher_suite"] = "GCM-AES-XPN-256";
  j["confidentiality_offset"] = 30;
  j["port"] = 9;
  j["mac"] = "02:00:00:00:00:07";
  j["replay_window"] = 64;
  j["lower_link"] = "sysctl-only";
  j["mka_version"] = 1;
  j["max_peers"] = 4;
  j["pn_rekey_threshold"] = 5000;
  j["timers"] = json::parse(R"({ "hello_ms": 1000, "bounded_hello_ms": 100, "bounded_hellos": 0,
      "life_ms": 3000, "transmit_delay_ms": 500, "retire_ms": 700, "retire_grace_ms": 0,
      "rekey_interval_ms": 2000 })");
  const LinkMkaConfig c = parse_link_mka_config(j, dir_);
  EXPECT_EQ(c.cak.size(), 32U);
  EXPECT_EQ(c.participant.cipher_suite, CipherSuite::kGcmAesXpn256);
  EXPECT_EQ(c.participant.confidentiality_offset, mka::ConfidentialityOffset::kOffset30);
  EXPECT_EQ(c.port, 9);
  EXPECT_EQ(c.mac->to_string(), "02:00:00:00:00:07");
  EXPECT_EQ(c.participant.mka_version, 1);
  EXPECT_EQ(c.participant.max_peers, 4U);
  EXPECT_EQ(c.participant.pn_rekey_threshold, 5000U);
  EXPECT_EQ(c.participant.hello_time, Duration::seconds(1));
  EXPECT_EQ(c.participant.bounded_hellos, 0U);
  EXPECT_EQ(c.participant.life_time, Duration::seconds(3));
  EXPECT_EQ(c.participant.transmit_delay, Duration::milliseconds(500));
  EXPECT_EQ(c.participant.retire_time, Duration::milliseconds(700));
  EXPECT_EQ(c.participant.retire_grace, Duration::zero());
  EXPECT_EQ(c.participant.rekey_interval, Duration::seconds(2));
  const LinkConfig l = link_config_for_mka(c);
  EXPECT_EQ(l.secy.suite, CipherSuite::kGcmAesXpn256);
  EXPECT_EQ(l.secy.confidentiality_offset, 30);
  EXPECT_EQ(l.secy.replay_window, 64U);
  EXPECT_EQ(l.port, 9);
  EXPECT_EQ(l.lower_link, LowerLinkPolicy::kSysctlOnly);
  const std::string d = describe(c);
  EXPECT_NE(d.find("GCM-AES-XPN-256"), std::string::npos);
  EXPECT_NE(d.find(mka::fingerprint(c.cak)), std::string::npos);
  EXPECT_EQ(d.find(to_hex(c.cak.span())), std::string::npos);
}

TEST_F(LinkMkaConfigTest, ErrorsNameTheJsonPointer) {
  const auto with = [](const char* key, json v) {
    json j = base();
    j[key] = std::move(v);
    return j;
  };
  const auto without = [](const char* key) {
    json j = base();
    j.erase(key);
    return j;
  };
  const auto timers = [](json t) {
    json j = base();
    j["timers"] = std::move(t);
    return j;
  };
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "/: expected an object"},
      {with("cak_fiel", "x"), "/cak_fiel: unknown member"},
      {without("cipher_suite"), "/cipher_suite: required"},
      {with("cipher_suite", "gcm-aes-192"), "/cipher_suite: unknown cipher suite"},
      {with("cipher_suite", 128), "/cipher_suite: expected a string"},
      {without("ckn"), "/ckn: required"},
      {with("ckn", "abc"), "/ckn: not valid hex"},
      {with("ckn", ""), "/ckn: must be 1..32 octets"},
      {with("ckn", std::string(66, 'a')), "/ckn: must be 1..32 octets, not 33"},
      {without("priority"), "/priority: required"},
      {with("priority", 256), "/priority: must be in 0..255"},
      {with("priority", -1), "/priority: expected a non-negative integer"},
      {with("confidentiality_offset", 20), "/confidentiality_offset: must be 0, 30 or 50"},
      {with("port", 0), "/port: must be in 1..65535"},
      {with("mac", "01:00:5e:00:00:01"), "/mac: must be a unicast address"},
      {with("mac", "nope"), "/mac: not a MAC address"},
      {with("lower_link", "open"), "/lower_link: expected"},
      {with("mka_version", 4), "/mka_version: must be in 1..3"},
      {with("max_peers", 0), "/max_peers: must be in 1..1024"},
      {with("pn_rekey_threshold", 5), "/pn_rekey_threshold: must be 0"},
      {with("pn_rekey_threshold", 0x100000000ULL), "/pn_rekey_threshold: must be in 0..4294967295"},
      {timers(json::parse(R"({"hello": 1})")), "/timers/hello: unknown member"},
      {timers(json::parse(R"({"hello_ms": 50})")), "/timers/hello_ms: must be in 100..60000"},
      {timers(json::parse(R"({"hello_ms": 6000})")), "/timers/hello_ms: the life time (6000 ms) must exceed"},
      {timers(json::parse(R"({"life_ms": 2000})")), "/timers/life_ms: the life time (2000 ms)"},
      {timers(json::parse(R"({"rekey_interval_ms": 10})")), "/timers/rekey_interval_ms: must be 0"},
      {timers(json::parse(R"({"retire_ms": 1.5})")), "/timers/retire_ms: expected a non-negative integer"},
      {timers(json::array()), "/timers: expected an object"},
      {without("cak_file"), "/cak_file: required"},
      {with("cak_file", ""), "/cak_file: empty path"},
      {with("cak_file", "missing.key"), "/cak_file: "},
      {with("cak_file", "cak20"), "/cak_file: "},
  };
  for (const auto& [j, want] : cases) {
    SCOPED_TRACE(j.dump());
    const std::string got = error_of(j);
    EXPECT_EQ(got.rfind(want, 0), 0U) << got;
  }
  EXPECT_NE(error_of(with("cak_file", "cak20")).find("16 or 32 octets"), std::string::npos);
  EXPECT_NE(error_of(with("cak_file", "missing.key")).find("missing.key"), std::string::npos);
}

TEST_F(LinkMkaConfigTest, CakFileMustBePrivate) {
  ASSERT_EQ(::chmod((dir_ / "cak16").c_str(), 0644), 0);
  const std::string e = error_of(base());
  EXPECT_EQ(e.rfind("/cak_file: ", 0), 0U) << e;
  EXPECT_NE(e.find("group or others"), std::string::npos) << e;
  // The key's bytes never appear in a message.
  EXPECT_EQ(e.find("a0a1a2"), std::string::npos);
}

TEST_F(LinkMkaConfigTest, NoBaseDirectoryReadsNoKey) {
  try {
    (void)parse_link_mka_config(base(), {});
    FAIL() << "parsed without a base directory";
  } catch (const LinkConfigError& e) {
    EXPECT_STREQ(e.what(), "/cak_file: key files are not read here");
  }
}

TEST_F(LinkMkaConfigTest, TextAndFileErrorsNameTheOrigin) {
  try {
    (void)parse_link_mka_config_text("{", dir_, "x.json");
    FAIL();
  } catch (const LinkConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("x.json: not valid JSON", 0), 0U);
  }
  const fs::path f = dir_ / "m.json";
  {
    std::FILE* out = std::fopen(f.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs(R"({ "cak_file": "cak16", "ckn": "61", "priority": 300, "cipher_suite": "gcm-aes-256" })", out);
    std::fclose(out);
  }
  try {
    (void)load_link_mka_config(f);
    FAIL();
  } catch (const LinkConfigError& e) {
    EXPECT_EQ(std::string(e.what()), f.string() + ": /priority: must be in 0..255");
  }
}

// ------------------------------------------------------------ JSON renderings

TEST(LinkMkaJson, EveryDropAndRekeyReasonHasItsOwnName) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < mka::kDropReasonCount; ++i) {
    names.insert(std::string(drop_key(static_cast<mka::DropReason>(i))));
  }
  EXPECT_EQ(names.size(), mka::kDropReasonCount);
  EXPECT_EQ(names.count("unknown"), 0U);
  names.clear();
  for (std::size_t i = 0; i < mka::kRekeyReasonCount; ++i) {
    names.insert(std::string(rekey_key(static_cast<mka::RekeyReason>(i))));
  }
  EXPECT_EQ(names.size(), mka::kRekeyReasonCount);
}

TEST(LinkMkaJson, SakEventsCarryKnAnAndTheFingerprintOnly) {
  mka::Event e;
  e.type = mka::EventType::kSakInstalled;
  e.at = TimePoint::from_ns(1234);
  e.ki.kn = 7;
  e.ki.mi[0] = 0xAB;
  e.an = 2;
  e.sak_fingerprint = "0123456789abcdef";
  const json j = mka_event_json(e);
  EXPECT_EQ(j["event"], "mka_sak_installed");
  EXPECT_EQ(j["t_ns"], 1234);
  EXPECT_EQ(j["kn"], 7);
  EXPECT_EQ(j["an"], 2);
  EXPECT_EQ(j["sak_fingerprint"], "0123456789abcdef");
  EXPECT_EQ(j["key_server_mi"], "ab0000000000000000000000");
  e.type = mka::EventType::kPeerLost;
  e.sci = 0x0200000000010001ULL;
  e.loss = mka::PeerLossReason::kLifeTimeExpired;
  const json l = mka_event_json(e);
  EXPECT_EQ(l["event"], "mka_peer_lost");
  EXPECT_EQ(l["sci"], "0200000000010001");
  EXPECT_EQ(l["reason"], "life time expired");
  EXPECT_FALSE(l.contains("sak_fingerprint"));
}

}  // namespace
}  // namespace layersec::macsec
