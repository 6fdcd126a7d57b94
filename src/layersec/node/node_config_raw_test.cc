// "$.raw" and "$.tsn" of the node configuration: a good file maps every
// field, and every refusal names its JSON path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/base/keyfile.h"
#include "layersec/node/node_config.h"

namespace layersec::node {
namespace {

using nlohmann::json;

json good() {
  return json::parse(R"({
    "unicast": "10.81.0.1",
    "services": [{"service": "0x1111", "instance": 1, "unreliable": 30501}],
    "raw": {"interface": "tsnA", "mtu": 1500,
            "neighbours": [{"address": "10.81.0.2", "mac": "02:00:00:51:00:02"}]},
    "tsn": {
      "port_mbit_s": 100,
      "taprio": "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 sched-entry S 02 300000 sched-entry S 01 700000",
      "default_pcp": 0, "queue_limit_frames": 64, "late_tolerance_us": 100,
      "streams": [
        {"match": "ip", "handle": 1, "dst_ip": "10.81.0.2", "protocol": "udp", "src_port": 30501,
         "set_vid": 10, "set_pcp": 5},
        {"match": "ip", "handle": 2, "dst_ip": "10.81.0.2", "protocol": "udp", "src_port": 30502,
         "set_vid": 20, "set_pcp": 0}]}
  })");
}

// Expects `j` refused at `path` with a problem containing `problem`.
void expect_refused(const json& j, const std::string& path, const std::string& problem,
                    const std::string& base_dir) {
  SCOPED_TRACE(path);
  try {
    (void)node_config_from_json(j, base_dir);
    ADD_FAILURE() << "accepted; expected " << path << ": " << problem;
  } catch (const NodeConfigError& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    EXPECT_NE(e.problem().find(problem), std::string::npos) << e.what();
  }
}

// The good file with `edit` applied, refused.
void expect_error(const std::function<void(json&)>& edit, const std::string& path, const std::string& problem,
                  const std::string& base_dir = "") {
  json j = good();
  edit(j);
  expect_refused(j, path, problem, base_dir);
}

TEST(NodeConfigRaw, GoodFileMapsEveryField) {
  const NodeConfig c = node_config_from_json(good());
  ASSERT_TRUE(c.raw);
  EXPECT_EQ(c.raw->interface, "tsnA");
  EXPECT_EQ(c.raw->mtu, 1500u);
  ASSERT_EQ(c.raw->neighbours.size(), 1u);
  EXPECT_EQ(c.raw->neighbours.begin()->first, net::Ipv4Address::from_octets(10, 81, 0, 2));
  EXPECT_EQ(c.raw->neighbours.begin()->second, *net::MacAddress::parse("02:00:00:51:00:02"));
  ASSERT_TRUE(c.tsn);
  EXPECT_EQ(c.tsn->port_bps, 100'000'000u);
  EXPECT_EQ(c.tsn->schedule.num_tc, 2);
  EXPECT_EQ(c.tsn->streams.size(), 2u);
  EXPECT_EQ(c.tsn->queue_limit_frames, 64u);
  EXPECT_EQ(c.tsn->late_tolerance_ns, 100'000);
  EXPECT_EQ(c.tsn->tags.count({10, 5}), 1u);

  json j = good();
  j.erase("tsn");
  EXPECT_FALSE(node_config_from_json(j).tsn);
  j.erase("raw");
  const NodeConfig udp = node_config_from_json(j);
  EXPECT_FALSE(udp.raw);
  EXPECT_FALSE(udp.tsn);
}

TEST(NodeConfigRaw, TaprioFileIsReadRelativeToTheConfiguration) {
  const std::string dir = ::testing::TempDir() + "layersec_rawtsn_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/sched.txt") << "tc qdisc replace dev eth0 parent root taprio num_tc 2 \\\n"
                                       "  map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 \\\n"
                                       "  sched-entry S 02 500000 sched-entry S 01 500000 clockid CLOCK_TAI\n";
  json j = good();
  j["tsn"].erase("taprio");
  j["tsn"]["taprio_file"] = "sched.txt";
  const NodeConfig c = node_config_from_json(j, dir);
  ASSERT_TRUE(c.tsn);
  EXPECT_EQ(c.tsn->schedule.gcl.entries.size(), 2u);
  expect_error([](json& k) {
                 k["tsn"].erase("taprio");
                 k["tsn"]["taprio_file"] = "missing.txt";
               },
               "$.tsn.taprio_file", "missing.txt", dir);
  std::filesystem::remove_all(dir);
}

TEST(NodeConfigRaw, RawErrors) {
  expect_error([](json& j) { j["raw"] = 1; }, "$.raw", "must be an object");
  expect_error([](json& j) { j["raw"]["bogus"] = 1; }, "$.raw.bogus", "unknown key");
  expect_error([](json& j) { j["raw"].erase("interface"); }, "$.raw.interface", "required");
  expect_error([](json& j) { j["raw"]["interface"] = ""; }, "$.raw.interface", "not an interface name");
  expect_error([](json& j) { j["raw"]["interface"] = "a-very-long-name-of-an-if"; }, "$.raw.interface",
               "not an interface name");
  expect_error([](json& j) { j["raw"]["interface"] = "a/b"; }, "$.raw.interface", "no '/'");
  expect_error([](json& j) { j["raw"]["mtu"] = 100; }, "$.raw.mtu", "must be >= 576");
  expect_error([](json& j) { j["raw"]["mtu"] = 9001; }, "$.raw.mtu", "must be <= 9000");
  expect_error([](json& j) { j["raw"]["neighbours"] = "x"; }, "$.raw.neighbours", "must be an array");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["port"] = 1; }, "$.raw.neighbours[0].port", "unknown key");
  expect_error([](json& j) { j["raw"]["neighbours"][0].erase("address"); }, "$.raw.neighbours[0].address",
               "required");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["address"] = "10.81.0"; }, "$.raw.neighbours[0].address",
               "not an IPv4 address");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["address"] = "224.0.0.1"; },
               "$.raw.neighbours[0].address", "not a host address");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["address"] = "10.81.0.1"; },
               "$.raw.neighbours[0].address", "own address");
  expect_error([](json& j) { j["raw"]["neighbours"][0].erase("mac"); }, "$.raw.neighbours[0].mac", "required");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["mac"] = "02:00:00"; }, "$.raw.neighbours[0].mac",
               "not a MAC address");
  expect_error([](json& j) { j["raw"]["neighbours"][0]["mac"] = "01:00:5e:00:00:01"; },
               "$.raw.neighbours[0].mac", "group");
  expect_error([](json& j) { j["raw"]["neighbours"].push_back(j["raw"]["neighbours"][0]); },
               "$.raw.neighbours[1].address", "listed twice");
  expect_error([](json& j) { j["device"] = "eth0"; }, "$.device", "not used with \"raw\"");
}

TEST(NodeConfigRaw, TsnErrorsNameTheirPath) {
  expect_error([](json& j) { j.erase("raw"); }, "$.tsn", "needs the raw transport");
  expect_error([](json& j) { j["tsn"] = json::array(); }, "$.tsn", "must be an object");
  expect_error([](json& j) { j["tsn"]["layout"] = "clear-tag"; }, "$.tsn.layout", "\"macsec\" section");
  expect_error([](json& j) { j["tsn"]["clear_tags_in_icv"] = true; }, "$.tsn.clear_tags_in_icv", "\"macsec\" section");
  expect_error([](json& j) { j["tsn"]["bogus"] = 1; }, "$.tsn.bogus", "unknown member");
  expect_error([](json& j) { j["tsn"].erase("port_mbit_s"); }, "$.tsn.port_mbit_s", "required");
  expect_error([](json& j) { j["tsn"]["port_mbit_s"] = 0; }, "$.tsn.port_mbit_s", "must be in");
  expect_error([](json& j) { j["tsn"].erase("taprio"); }, "$.tsn.taprio", "required");
  expect_error([](json& j) { j["tsn"]["taprio_file"] = "x"; }, "$.tsn.taprio_file", "not both");
  expect_error([](json& j) { j["tsn"]["taprio"] = "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 "
                                                   "base-time 0 sched-entry S 04 1000000"; },
               "$.tsn.taprio", "entry 0");
  expect_error(
      [](json& j) {
        j["tsn"]["taprio"] = "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 "
                             "sched-entry S 02 300000 sched-entry S 01 700000 clockid CLOCK_REALTIME";
      },
      "$.tsn.taprio", "CLOCK_TAI");
  expect_error([](json& j) { j["tsn"]["default_pcp"] = 8; }, "$.tsn.default_pcp", "must be in 0..7");
  expect_error([](json& j) { j["tsn"]["queue_limit_frames"] = 0; }, "$.tsn.queue_limit_frames", "must be in");
  expect_error([](json& j) { j["tsn"]["late_tolerance_us"] = -1; }, "$.tsn.late_tolerance_us", "must be in");
  expect_error([](json& j) { j["tsn"]["streams"] = 1; }, "$.tsn.streams", "expected an array");
  expect_error([](json& j) { j["tsn"]["streams"][1]["set_pcp"] = 9; }, "$.tsn.streams[1].set_pcp", "0..7");
  expect_error([](json& j) { j["tsn"]["streams"][0]["set_vid"] = 4095; }, "$.tsn.streams[0].set_vid", "");
  expect_error([](json& j) { j["tsn"]["streams"][0].erase("set_vid"); }, "$.tsn.streams[0].set_vid", "required");
  expect_error([](json& j) { j["tsn"]["streams"][0]["match"] = "mac"; }, "$.tsn.streams[0].match", "neither");
  expect_error([](json& j) { j["tsn"]["streams"][0]["dst_ip"] = "10.1"; }, "$.tsn.streams[0].dst_ip",
               "dotted-quad");
  expect_error([](json& j) { j["tsn"]["streams"][0]["protocol"] = "sctp"; }, "$.tsn.streams[0].protocol", "udp");
  expect_error([](json& j) { j["tsn"]["streams"][0]["dscp"] = 64; }, "$.tsn.streams[0].dscp", "must be in 0..63");
  expect_error([](json& j) { j["tsn"]["streams"][0]["dst_port"] = 0; }, "$.tsn.streams[0].dst_port", "must be in");
  expect_error([](json& j) { j["tsn"]["streams"][0]["extra"] = 0; }, "$.tsn.streams[0].extra", "unknown member");
}

// A `macsec up --config` file with its key files in a temporary folder.
class NodeConfigMacsec : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "layersec_rawmacsec_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(write_key_file_hex(dir_ + "/a.key", std::vector<std::uint8_t>(16, 0x11)).ok());
    ASSERT_TRUE(write_key_file_hex(dir_ + "/b.key", std::vector<std::uint8_t>(16, 0x22)).ok());
    write_link("link.json", "");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write_link(const std::string& name, const std::string& extra) {
    std::ofstream(dir_ + "/" + name) << R"({"cipher_suite": "GCM-AES-128", "port": 1,)" << extra << R"(
      "tx": {"encoding_an": 0, "sas": [{"an": 0, "pn": 1, "key_file": "a.key"}]},
      "rx": [{"sci": "0200005100020001", "sas": [{"an": 0, "pn": 1, "key_file": "b.key"}]}]})";
  }
  json with_macsec() {
    json j = good();
    j["macsec"] = {{"config", "link.json"}};
    return j;
  }
  std::string dir_;
};

TEST_F(NodeConfigMacsec, LinkFileIsReadAndTheTsnLayoutIsAllowed) {
  json j = with_macsec();
  j["tsn"]["layout"] = "standard";
  const NodeConfig c = node_config_from_json(j, dir_);
  ASSERT_TRUE(c.macsec);
  EXPECT_EQ(c.macsec->path, dir_ + "/link.json");
  EXPECT_EQ(c.macsec->link.tx_sas.size(), 1u);
  EXPECT_EQ(c.macsec->link.rx_scs.size(), 1u);
  ASSERT_TRUE(c.tsn);
  EXPECT_EQ(c.tsn->layout, macsec::VlanMode::kStandard);
}

TEST_F(NodeConfigMacsec, Errors) {
  auto expect = [&](const json& j, const std::string& path, const std::string& problem) {
    expect_refused(j, path, problem, dir_);
  };
  json j = with_macsec();
  j.erase("raw");
  j.erase("tsn");
  expect(j, "$.macsec", "needs the raw transport");
  j = with_macsec();
  j["macsec"]["bogus"] = 1;
  expect(j, "$.macsec.bogus", "unknown key");
  j = with_macsec();
  j["macsec"].erase("config");
  expect(j, "$.macsec.config", "required");
  j = with_macsec();
  j["macsec"]["config"] = "missing.json";
  expect(j, "$.macsec.config", "missing.json");
  j = with_macsec();
  j["macsec"]["new_key"] = true;  // --first-start says that, once
  expect(j, "$.macsec.new_key", "unknown key");
  write_link("mac.json", R"("mac": "02:00:00:51:00:01",)");
  j = with_macsec();
  j["macsec"]["config"] = "mac.json";
  expect(j, "$.macsec.config", "/mac: not used");
  write_link("bad.json", R"("replay_window": -1,)");
  j = with_macsec();
  j["macsec"]["config"] = "bad.json";
  expect(j, "$.macsec.config", "bad.json: /replay_window");
  std::filesystem::permissions(dir_ + "/a.key", std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  expect(with_macsec(), "$.macsec.config", "a.key");
}

}  // namespace
}  // namespace layersec::node
