#include "layersec/node/node_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/keyfile.h"

namespace layersec::node {
namespace {

using namespace someip;  // the configuration maps to the runtime's types

using nlohmann::json;

const std::vector<std::uint8_t> kKey32(32, 0x11);
const std::vector<std::uint8_t> kKey16(16, 0x22);

// A complete, valid node configuration in vsomeip style (strings for numbers
// and booleans), with SecOC and a test section. Keys live in a temp folder.
class NodeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "layersec_nodecfg_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(write_key_file_hex(dir_ + "/body.key", kKey32).ok());
    ASSERT_TRUE(write_key_file_hex(dir_ + "/sync.key", kKey16).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static json good() {
    return json::parse(R"({
      "unicast": "10.77.0.1",
      "netmask": "255.255.255.0",
      "logging": {"level": "debug", "console": "true"},
      "network": "server",
      "applications": [{"name": "srv", "id": "0x1001", "threads": "2"}],
      "service-discovery": {
        "enable": "true", "multicast": "224.244.224.245", "port": "30490", "protocol": "udp",
        "initial_delay_min": "10", "initial_delay_max": "100", "repetitions_base_delay": "200",
        "repetitions_max": "3", "ttl": "3", "cyclic_offer_delay": "2000",
        "request_response_delay": "1500", "ttl_factor_offers": "2"
      },
      "services": [{
        "service": "0x1234", "instance": "0x5678", "unreliable": "30509", "major": 2, "minor": "7",
        "methods": ["0x0421", {"method": "0x0422", "fire_and_forget": "true"}],
        "events": [{"event": "0x8777", "is_field": "true", "is_reliable": "false",
                    "getter": "0x0001", "setter": "0x0002"},
                   {"event": "0x8779", "update-cycle": 100}],
        "eventgroups": [
          {"eventgroup": "0x4455", "events": ["0x8777", "0x8778"],
           "multicast": {"address": "224.225.226.233", "port": "32344"}, "threshold": "2"},
          {"eventgroup": 17, "events": ["0x8779", "0x8FFF"]}
        ]
      }],
      "clients": [{"service": "0x4321", "instance": "0x0001", "unreliable": ["40000"],
                   "eventgroups": ["0x0001", 2]}],
      "secoc": {
        "engine": {
          "senderId": 1,
          "keyGroups": [{"name": "body", "algorithm": "cmac-aes256"},
                        {"name": "sync", "algorithm": "cmac-aes128"}],
          "syncTx": {"dataId": 65000, "keyGroup": "sync", "periodMs": 1000},
          "syncRx": [{"id": 3, "dataId": 65001, "keyGroup": "sync"}],
          "txPdus": [{"id": 0, "dataId": 256, "keyGroup": "body"},
                     {"id": 1, "dataId": 257, "keyGroup": "body"},
                     {"id": 2, "dataId": 258, "keyGroup": "body", "freshness": "timestamp"}],
          "rxPdus": [{"id": 0, "dataId": 512, "keyGroup": "body", "syncChannel": 3},
                     {"id": 1, "dataId": 513, "keyGroup": "body", "syncChannel": 3},
                     {"id": 2, "dataId": 258, "keyGroup": "body", "freshness": "timestamp",
                      "maxSources": 16}]
        },
        "keys": [{"keyGroup": "body", "keyId": 7, "file": "body.key"},
                 {"keyGroup": "sync", "file": "sync.key", "format": "hex"}],
        "stateFile": "server.state",
        "bindings": [
          {"service": "0x1234", "instance": "0x5678", "method": "0x0421", "rxPdu": 0, "txPdu": 0},
          {"service": "0x1234", "event": "0x8777", "txPdu": 1},
          {"service": "0x4321", "event": "0x8001", "rxPdu": 1}
        ],
        "sd": {"txPdu": 2, "rxPdu": 2},
        "sync": {"service": "0x1234", "instance": "0x5678", "event": "0x8FFF", "rxChannel": 3}
      },
      "test": {
        "serve": [{"service": "0x1234", "method": "0x0421", "reply": "echo"},
                  {"service": "0x1234", "instance": "0x5678", "method": "0x0422", "reply": "fixed",
                   "payload": "cafe"}],
        "publish": [{"service": "0x1234", "event": "0x8777", "interval_ms": 50, "payload_size": 16,
                     "count": 10}],
        "requests": [{"service": "0x4321", "method": "0x0001", "interval_ms": "100",
                      "payload": "0102", "timeout_ms": 500},
                     {"service": "0x4321", "method": 2, "payload_size": 3, "fire_and_forget": true}]
      }
    })");
  }

  NodeConfig load(const json& j) { return node_config_from_json(j, dir_); }

  // Expects the configuration to be refused at `path` with a problem that
  // contains `problem`.
  void expect_error(const json& j, const std::string& path, const std::string& problem) {
    try {
      load(j);
      ADD_FAILURE() << "accepted; expected " << path << ": " << problem;
    } catch (const NodeConfigError& e) {
      EXPECT_EQ(e.path(), path) << e.what();
      EXPECT_NE(e.problem().find(problem), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()), e.path() + ": " + e.problem());
    }
  }
  // Applies `edit` to the good configuration and expects the error.
  void expect_edit_error(const std::function<void(json&)>& edit, const std::string& path,
                         const std::string& problem) {
    json j = good();
    edit(j);
    SCOPED_TRACE(path);
    expect_error(j, path, problem);
  }

  std::string dir_;
};

TEST_F(NodeConfigTest, GoodFileMapsEveryField) {
  const NodeConfig c = load(good());
  EXPECT_EQ(c.unicast, IpAddress::v4(10, 77, 0, 1));
  const RuntimeConfig& r = c.runtime;
  EXPECT_EQ(r.name, "server");
  EXPECT_EQ(r.client_id, 0x1001);
  EXPECT_TRUE(r.sd_enabled);
  EXPECT_EQ(r.sd_multicast.address, IpAddress::v4(224, 244, 224, 245));
  EXPECT_EQ(r.sd_multicast.port, 30490);
  EXPECT_EQ(r.sd_timing.initial_delay_min, Duration::milliseconds(10));
  EXPECT_EQ(r.sd_timing.initial_delay_max, Duration::milliseconds(100));
  EXPECT_EQ(r.sd_timing.repetitions_base_delay, Duration::milliseconds(200));
  EXPECT_EQ(r.sd_timing.repetitions_max, 3u);
  EXPECT_EQ(r.sd_timing.cyclic_offer_delay, Duration::milliseconds(2000));
  EXPECT_EQ(r.sd_timing.ttl, 3u);
  EXPECT_EQ(r.sd_timing.request_response_delay_min, Duration::milliseconds(750));
  EXPECT_EQ(r.sd_timing.request_response_delay_max, Duration::milliseconds(1500));

  ASSERT_EQ(r.services.size(), 1u);
  const ServiceConfig& s = r.services[0];
  EXPECT_EQ(s.service_id, 0x1234);
  EXPECT_EQ(s.instance_id, 0x5678);
  EXPECT_EQ(s.udp_port, 30509);
  EXPECT_EQ(s.major_version, 2);
  EXPECT_EQ(s.minor_version, 7u);
  ASSERT_EQ(s.methods.size(), 2u);
  EXPECT_EQ(s.methods[0].method_id, 0x0421);
  EXPECT_FALSE(s.methods[0].fire_and_forget);
  EXPECT_EQ(s.methods[1].method_id, 0x0422);
  EXPECT_TRUE(s.methods[1].fire_and_forget);
  // 0x8777 and 0x8779 declared, 0x8778 and 0x8FFF created from the eventgroups.
  ASSERT_EQ(s.events.size(), 4u);
  EXPECT_EQ(s.events[0].event_id, 0x8777);
  EXPECT_TRUE(s.events[0].is_field);
  EXPECT_EQ(s.events[0].getter_method, 0x0001);
  EXPECT_EQ(s.events[0].setter_method, 0x0002);
  EXPECT_EQ(s.events[0].eventgroups, std::vector<std::uint16_t>{0x4455});
  EXPECT_EQ(s.events[1].event_id, 0x8779);
  EXPECT_EQ(s.events[1].eventgroups, std::vector<std::uint16_t>{17});
  EXPECT_EQ(s.events[2].event_id, 0x8778);
  EXPECT_FALSE(s.events[2].is_field);
  EXPECT_EQ(s.events[3].event_id, 0x8FFF);
  ASSERT_EQ(s.eventgroups.size(), 2u);
  EXPECT_EQ(s.eventgroups[0].eventgroup_id, 0x4455);
  ASSERT_TRUE(s.eventgroups[0].multicast.has_value());
  EXPECT_EQ(s.eventgroups[0].multicast->address, IpAddress::v4(224, 225, 226, 233));
  EXPECT_EQ(s.eventgroups[0].multicast->port, 32344);
  EXPECT_EQ(s.eventgroups[0].multicast_threshold, 2u);
  EXPECT_FALSE(s.eventgroups[1].multicast.has_value());

  ASSERT_EQ(r.clients.size(), 1u);
  EXPECT_EQ(r.clients[0].service_id, 0x4321);
  EXPECT_EQ(r.clients[0].instance_id, 1);
  EXPECT_EQ(r.clients[0].major_version, 0xFF);
  EXPECT_EQ(r.clients[0].udp_port, 40000);
  EXPECT_EQ(r.clients[0].eventgroups, (std::vector<std::uint16_t>{1, 2}));

  ASSERT_TRUE(c.secoc.has_value());
  const NodeSecoc& sc = *c.secoc;
  EXPECT_EQ(sc.engine.tx_pdus.size(), 3u);
  EXPECT_EQ(sc.state_file, dir_ + "/server.state");
  ASSERT_EQ(sc.keys.size(), 2u);
  EXPECT_EQ(sc.keys[0].group, 0u);
  EXPECT_EQ(sc.keys[0].key_id, 7u);
  EXPECT_EQ(std::vector<std::uint8_t>(sc.keys[0].key.span().begin(), sc.keys[0].key.span().end()), kKey32);
  EXPECT_EQ(sc.keys[1].group, 1u);
  EXPECT_EQ(sc.keys[1].key_id, 1u);
  EXPECT_EQ(sc.keys[1].key.size(), 16u);
  ASSERT_EQ(sc.bindings.messages.size(), 3u);
  EXPECT_EQ(sc.bindings.messages[0].instance_id, 0x5678);
  EXPECT_EQ(sc.bindings.messages[0].rx_pdu, 0u);
  EXPECT_EQ(sc.bindings.messages[0].tx_pdu, 0u);
  EXPECT_EQ(sc.bindings.messages[1].instance_id, 0xFFFF);
  EXPECT_EQ(sc.bindings.messages[1].method_or_event, 0x8777);
  EXPECT_FALSE(sc.bindings.messages[1].rx_pdu.has_value());
  EXPECT_EQ(sc.bindings.sd_tx_pdu, 2u);
  EXPECT_EQ(sc.bindings.sd_rx_pdu, 2u);
  EXPECT_EQ(sc.bindings.sync_service, 0x1234);
  EXPECT_EQ(sc.bindings.sync_instance, 0x5678);
  EXPECT_EQ(sc.bindings.sync_event, 0x8FFF);
  EXPECT_EQ(sc.bindings.sync_rx_channel, 3u);

  ASSERT_EQ(c.test.serve.size(), 2u);
  EXPECT_EQ(c.test.serve[0].instance, 0x5678);  // the only offered instance
  EXPECT_EQ(c.test.serve[0].reply, ReplyKind::kEcho);
  EXPECT_EQ(c.test.serve[1].reply, ReplyKind::kFixed);
  EXPECT_EQ(c.test.serve[1].payload, (std::vector<std::uint8_t>{0xCA, 0xFE}));
  ASSERT_EQ(c.test.publish.size(), 1u);
  EXPECT_EQ(c.test.publish[0].interval, Duration::milliseconds(50));
  EXPECT_EQ(c.test.publish[0].payload_size, 16u);
  EXPECT_EQ(c.test.publish[0].count, 10u);
  ASSERT_EQ(c.test.requests.size(), 2u);
  EXPECT_EQ(c.test.requests[0].instance, 1);
  EXPECT_EQ(c.test.requests[0].payload, (std::vector<std::uint8_t>{1, 2}));
  EXPECT_EQ(c.test.requests[0].timeout, Duration::milliseconds(500));
  EXPECT_FALSE(c.test.requests[1].payload.has_value());
  EXPECT_EQ(c.test.requests[1].payload_size, 3u);
  EXPECT_TRUE(c.test.requests[1].fire_and_forget);

  // vsomeip settings without meaning here are listed, not silently dropped.
  for (const char* p : {"$.netmask", "$.logging", "$.applications[0].threads",
                        "$.service-discovery.ttl_factor_offers", "$.services[0].events[1].update-cycle"})
    EXPECT_NE(std::find(c.ignored.begin(), c.ignored.end(), p), c.ignored.end()) << p;
}

TEST_F(NodeConfigTest, MinimalFileGetsDefaults) {
  const NodeConfig c = load(json::parse(
      R"({"unicast": "127.0.0.1", "clients": [{"service": 4660}]})"));
  EXPECT_EQ(c.runtime.name, "layersec-node");
  EXPECT_EQ(c.runtime.client_id, 0x0001);
  EXPECT_EQ(c.runtime.client_port, 30501);
  EXPECT_TRUE(c.runtime.sd_enabled);
  EXPECT_EQ(c.runtime.sd_multicast.address, IpAddress::v4(224, 224, 224, 245));
  EXPECT_EQ(c.runtime.sd_timing.initial_delay_max, Duration::milliseconds(3000));
  EXPECT_EQ(c.runtime.sd_timing.ttl, kTtlInfinite);
  EXPECT_EQ(c.runtime.clients[0].service_id, 0x1234);
  EXPECT_EQ(c.runtime.clients[0].instance_id, 0xFFFF);
  EXPECT_EQ(c.runtime.clients[0].udp_port, 0);
  EXPECT_FALSE(c.secoc.has_value());
  EXPECT_TRUE(c.test.serve.empty());
  EXPECT_TRUE(c.ignored.empty());
}

TEST_F(NodeConfigTest, TopLevelOptions) {
  json j = json::parse(R"({"unicast": "10.0.0.1", "device": "eth0", "name": "n", "client_id": "0x10",
    "client_port": 30600, "request_timeout_ms": 250, "max_message_size": 4096, "tp_segment_size": 1024,
    "tp_reassembly_timeout_ms": 100, "max_pending_requests": 8,
    "service-discovery": {"enable": false, "request_response_delay": 0},
    "clients": [{"service": "0x10"}]})");
  const NodeConfig c = load(j);
  EXPECT_EQ(c.device, "eth0");
  EXPECT_EQ(c.runtime.name, "n");
  EXPECT_EQ(c.runtime.client_id, 0x10);
  EXPECT_EQ(c.runtime.client_port, 30600);
  EXPECT_EQ(c.runtime.request_timeout, Duration::milliseconds(250));
  EXPECT_EQ(c.runtime.max_message_size, 4096u);
  EXPECT_EQ(c.runtime.tp_segment_size, 1024u);
  EXPECT_EQ(c.runtime.tp_reassembly_timeout, Duration::milliseconds(100));
  EXPECT_EQ(c.runtime.max_pending_requests, 8u);
  EXPECT_FALSE(c.runtime.sd_enabled);
  EXPECT_EQ(c.runtime.sd_timing.request_response_delay_max, Duration::zero());
}

TEST(NodeConfigNumbers, VsomeipNumberAndBooleanForms) {
  EXPECT_EQ(parse_config_uint(json("0x1234"), "$.x", 0xFFFF), 0x1234u);
  EXPECT_EQ(parse_config_uint(json("0XaBc"), "$.x", 0xFFFF), 0xABCu);
  EXPECT_EQ(parse_config_uint(json("30509"), "$.x", 0xFFFF), 30509u);
  EXPECT_EQ(parse_config_uint(json(17), "$.x", 0xFFFF), 17u);
  EXPECT_EQ(parse_config_uint(json("18446744073709551615"), "$.x", UINT64_MAX), UINT64_MAX);
  for (const json& bad : {json("0x"), json(""), json("12a"), json("0x12g"), json(" 1"), json("-1"),
                          json(1.5), json(true), json::array(), json(nullptr)}) {
    EXPECT_THROW(parse_config_uint(bad, "$.x", 0xFFFF), NodeConfigError) << bad.dump();
  }
  try {
    parse_config_uint(json(-3), "$.a.b", 10);
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_EQ(e.path(), "$.a.b");
    EXPECT_EQ(e.problem(), "must not be negative");
  }
  try {
    parse_config_uint(json("0x10000"), "$.p", 0xFFFF);
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_EQ(e.problem(), "must be <= 65535");
  }
  EXPECT_THROW(parse_config_uint(json("184467440737095516160"), "$.x", UINT64_MAX), NodeConfigError);
  EXPECT_TRUE(parse_config_bool(json(true), "$.b"));
  EXPECT_TRUE(parse_config_bool(json("true"), "$.b"));
  EXPECT_FALSE(parse_config_bool(json("false"), "$.b"));
  EXPECT_THROW(parse_config_bool(json("yes"), "$.b"), NodeConfigError);
  EXPECT_THROW(parse_config_bool(json(1), "$.b"), NodeConfigError);
}

TEST_F(NodeConfigTest, TopLevelErrors) {
  expect_error(json::array(), "$", "must be an object");
  expect_edit_error([](json& j) { j["unicats"] = "1.2.3.4"; }, "$.unicats", "unknown key");
  expect_edit_error([](json& j) { j.erase("unicast"); }, "$.unicast", "required");
  expect_edit_error([](json& j) { j["unicast"] = "10.0.0.256"; }, "$.unicast", "not an IPv4 address");
  expect_edit_error([](json& j) { j["unicast"] = "fd00::1"; }, "$.unicast", "not an IPv4 address");
  expect_edit_error([](json& j) { j["unicast"] = 5; }, "$.unicast", "must be a string");
  expect_edit_error([](json& j) { j["unicast"] = "239.0.0.1"; }, "$.unicast", "multicast");
  expect_edit_error([](json& j) { j["device"] = 1; }, "$.device", "must be a string");
  expect_edit_error([](json& j) { j["applications"] = json::object(); }, "$.applications", "must be an array");
  expect_edit_error([](json& j) { j["applications"].push_back({{"name", "b"}}); }, "$.applications",
                    "one application per node");
  expect_edit_error([](json& j) { j["applications"][0]["id"] = "0xFFFF"; }, "$.applications[0].id",
                    "client id 0xffff out of range");
  expect_edit_error([](json& j) { j["applications"][0]["x"] = 1; }, "$.applications[0].x", "unknown key");
  expect_edit_error([](json& j) { j["client_id"] = 2; }, "$.client_id", "not both");
  expect_edit_error([](json& j) { j["client_port"] = 0; }, "$.client_port", "port must be 1..65535");
  expect_edit_error([](json& j) { j["client_port"] = "30490"; }, "$.client_port", "is the SD port");
  expect_edit_error([](json& j) { j["request_timeout_ms"] = 0; }, "$.request_timeout_ms", ">= 1 ms");
  expect_edit_error([](json& j) { j["max_message_size"] = 8; }, "$.max_message_size", ">= 16");
  expect_edit_error([](json& j) { j["tp_segment_size"] = 1000; }, "$.tp_segment_size", "multiple of 16");
  expect_edit_error([](json& j) { j["tp_segment_size"] = 1408; }, "$.tp_segment_size", "<= 1392");
  expect_edit_error([](json& j) { j["max_pending_requests"] = 0; }, "$.max_pending_requests", ">= 1");
  expect_edit_error([](json& j) { j["network"] = 3; }, "$.network", "must be a string");
  expect_edit_error([](json& j) { j["services"] = json::object(); }, "$.services", "must be an array");
  expect_edit_error(
      [](json& j) {
        j.erase("services");
        j.erase("clients");
        j.erase("secoc");
        j.erase("test");
      },
      "$", "neither \"services\" nor \"clients\"");
}

TEST_F(NodeConfigTest, ServiceDiscoveryErrors) {
  const std::string sd = "$.service-discovery";
  auto edit = [&](const char* key, json value) {
    return [key, value](json& j) { j["service-discovery"][key] = value; };
  };
  expect_edit_error(edit("enable", "yes"), sd + ".enable", "true or false");
  expect_edit_error(edit("multicast", "10.0.0.1"), sd + ".multicast", "not an IPv4 multicast address");
  expect_edit_error(edit("port", 0), sd + ".port", "1..65535");
  expect_edit_error(edit("port", 70000), sd + ".port", "<= 65535");
  expect_edit_error(edit("protocol", "tcp"), sd + ".protocol", "udp only");
  expect_edit_error(edit("initial_delay_min", "200"), sd + ".initial_delay_max", ">= initial_delay_min");
  expect_edit_error(edit("initial_delay_max", "3600001"), sd + ".initial_delay_max", "<= 3600000");
  expect_edit_error(edit("repetitions_max", 17), sd + ".repetitions_max", "<= 16");
  expect_edit_error(edit("repetitions_base_delay", 0), sd + ".repetitions_base_delay", "repetitions_max > 0");
  expect_edit_error(edit("cyclic_offer_delay", 0), sd + ".cyclic_offer_delay", ">= 1 ms");
  expect_edit_error(edit("ttl", 0), sd + ".ttl", "TTL 0 means stop");
  expect_edit_error(edit("ttl", "0x1000000"), sd + ".ttl", "<= 16777215");
  expect_edit_error(edit("bogus", 1), sd + ".bogus", "unknown key");
  expect_edit_error([](json& j) { j["service-discovery"] = "on"; }, sd, "must be an object");
  expect_edit_error([](json& j) { j["services"][0]["unreliable"] = 30490; }, "$.services[0].unreliable",
                    "is the SD port");
}

TEST_F(NodeConfigTest, ServiceErrors) {
  const std::string s = "$.services[0]";
  auto edit = [](const char* key, json value) {
    return [key, value](json& j) { j["services"][0][key] = value; };
  };
  expect_edit_error([](json& j) { j["services"][0] = 1; }, s, "must be an object");
  expect_edit_error(edit("servcie", 1), s + ".servcie", "unknown key");
  expect_edit_error([](json& j) { j["services"][0].erase("service"); }, s + ".service", "required");
  expect_edit_error(edit("service", "0xFFFF"), s + ".service", "service id 0xffff out of range 0x0001..0xfffe");
  expect_edit_error(edit("service", 0), s + ".service", "out of range");
  expect_edit_error(edit("instance", "0x0"), s + ".instance", "instance id 0x0000 out of range");
  expect_edit_error([](json& j) { j["services"][0].erase("instance"); }, s + ".instance", "required");
  expect_edit_error([](json& j) { j["services"][0].erase("unreliable"); }, s + ".unreliable", "required");
  expect_edit_error(edit("reliable", "30510"), s + ".reliable", "TCP");
  expect_edit_error(edit("multicast", json::object()), s + ".multicast", "service-level multicast");
  expect_edit_error(edit("major", 255), s + ".major", "<= 254");
  expect_edit_error(edit("minor", "0xFFFFFFFF"), s + ".minor", "<= 4294967294");
  expect_edit_error(edit("methods", "0x0421"), s + ".methods", "must be an array");
  expect_edit_error(edit("methods", json::array({"0x8000"})), s + ".methods[0]", "method id 0x8000 out of range");
  expect_edit_error(edit("methods", json::array({1, "0x1"})), s + ".methods[1]", "listed twice");
  expect_edit_error(edit("methods", json::array({{{"method", 1}, {"ff", true}}})), s + ".methods[0].ff",
                    "unknown key");
  expect_edit_error(edit("methods", json::array({{{"method", 1}, {"fire_and_forget", 2}}})),
                    s + ".methods[0].fire_and_forget", "true or false");
  expect_edit_error(edit("methods", json::array({json::object()})), s + ".methods[0].method", "required");
  // events
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["event"] = "0x7FFF"; },
                    s + ".events[0].event", "event id 0x7fff out of range 0x8000..0xfffe");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["is_reliable"] = true; },
                    s + ".events[0].is_reliable", "TCP");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["is_field"] = false; },
                    s + ".events[0].getter", "only fields");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["getter"] = "0x0421"; },
                    s + ".events[0].getter", "already used");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["setter"] = "0x0001"; },
                    s + ".events[0].setter", "already used");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["getter"] = "0x8001"; },
                    s + ".events[0].getter", "method id 0x8001 out of range");
  expect_edit_error([](json& j) { j["services"][0]["events"][1]["event"] = "0x8777"; },
                    s + ".events[1].event", "listed twice");
  expect_edit_error([](json& j) { j["services"][0]["events"][0]["notify"] = 1; },
                    s + ".events[0].notify", "unknown key");
  expect_edit_error([](json& j) { j["services"][0]["events"].push_back({{"event", "0x9000"}}); },
                    s + ".events[2]", "in no eventgroup");
  // eventgroups
  const std::string g = s + ".eventgroups[0]";
  auto eg = [](const char* key, json value) {
    return [key, value](json& j) { j["services"][0]["eventgroups"][0][key] = value; };
  };
  expect_edit_error(eg("eventgroup", "0xFFFF"), g + ".eventgroup", "eventgroup id 0xffff out of range");
  expect_edit_error([](json& j) { j["services"][0]["eventgroups"][0].erase("eventgroup"); },
                    g + ".eventgroup", "required");
  expect_edit_error([](json& j) { j["services"][0]["eventgroups"][1]["eventgroup"] = "0x4455"; },
                    s + ".eventgroups[1].eventgroup", "listed twice");
  expect_edit_error(eg("events", json::array({"0x8777", "0x8777"})), g + ".events[1]",
                    "listed twice in this eventgroup");
  expect_edit_error(eg("events", json::array({"0x0001"})), g + ".events[0]", "event id 0x0001 out of range");
  expect_edit_error(eg("multicast", {{"address", "10.1.2.3"}, {"port", 1}}), g + ".multicast.address",
                    "not an IPv4 multicast address");
  expect_edit_error(eg("multicast", {{"port", 1}}), g + ".multicast.address", "required");
  expect_edit_error(eg("multicast", {{"address", "239.1.1.1"}}), g + ".multicast.port", "required");
  expect_edit_error(eg("multicast", {{"address", "239.1.1.1"}, {"port", 0}}), g + ".multicast.port",
                    "1..65535");
  expect_edit_error(eg("multicast", {{"address", "239.1.1.1"}, {"port", 1}, {"ttl", 1}}),
                    g + ".multicast.ttl", "unknown key");
  expect_edit_error(eg("threshold", "x"), g + ".threshold", "not a number");
  expect_edit_error([](json& j) { j["services"][0]["eventgroups"][1]["threshold"] = 1; },
                    s + ".eventgroups[1].threshold", "needs a \"multicast\"");
  expect_edit_error(eg("name", "x"), g + ".name", "unknown key");
  expect_edit_error([](json& j) { j["services"].push_back(j["services"][0]); }, "$.services[1]",
                    "offered twice");
}

TEST_F(NodeConfigTest, ExactErrorMessageNamesPathAndProblem) {
  json j = good();
  j["services"].push_back(j["services"][0]);
  j["services"][1]["instance"] = 2;
  j["services"][1]["eventgroups"][0]["multicast"]["address"] = "192.168.0.1";
  try {
    load(j);
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "$.services[1].eventgroups[0].multicast.address: not an IPv4 multicast address");
  }
}

TEST_F(NodeConfigTest, ClientErrors) {
  const std::string c = "$.clients[0]";
  auto edit = [](const char* key, json value) {
    return [key, value](json& j) { j["clients"][0][key] = value; };
  };
  expect_edit_error(edit("service", "0xFFFF"), c + ".service", "out of range");
  expect_edit_error([](json& j) { j["clients"][0].erase("service"); }, c + ".service", "required");
  expect_edit_error(edit("instance", 0), c + ".instance", "out of range");
  expect_edit_error(edit("major", 256), c + ".major", "<= 255");
  expect_edit_error(edit("unreliable", json::array({1, 2})), c + ".unreliable", "port ranges");
  expect_edit_error(edit("unreliable", 0), c + ".unreliable", "1..65535");
  expect_edit_error(edit("unreliable", "30490"), c + ".unreliable", "is the SD port");
  expect_edit_error(edit("eventgroups", json::array({1, "0x1"})), c + ".eventgroups[1]", "listed twice");
  expect_edit_error(edit("eventgroups", json::array({"0xFFFF"})), c + ".eventgroups[0]", "out of range");
  expect_edit_error(edit("reliable", 1), c + ".reliable", "unknown key");
  expect_edit_error([](json& j) { j["clients"].push_back({{"service", "0x4321"}}); }, "$.clients[1].service",
                    "required twice");
}

// SD allowlists: "subscribers" per offered eventgroup, "servers" per client.
// (The "secoc" section is left out: it has nothing to do with these keys.)
TEST_F(NodeConfigTest, SdAllowlists) {
  auto sd_only = [](json j) {
    j.erase("secoc");
    return j;
  };
  {
    const NodeConfig c = load(sd_only(good()));  // absent: any host
    EXPECT_TRUE(c.runtime.services[0].eventgroups[0].allowed_subscribers.empty());
    EXPECT_TRUE(c.runtime.clients[0].allowed_servers.empty());
  }
  json j = sd_only(good());
  j["services"][0]["eventgroups"][0]["subscribers"] = json::array({"10.77.0.2", "10.77.0.3"});
  j["clients"][0]["servers"] = json::array({"10.77.0.9"});
  const NodeConfig c = load(j);
  EXPECT_EQ(c.runtime.services[0].eventgroups[0].allowed_subscribers,
            (std::vector<IpAddress>{IpAddress::v4(10, 77, 0, 2), IpAddress::v4(10, 77, 0, 3)}));
  EXPECT_TRUE(c.runtime.services[0].eventgroups[1].allowed_subscribers.empty());
  EXPECT_EQ(c.runtime.clients[0].allowed_servers, std::vector<IpAddress>{IpAddress::v4(10, 77, 0, 9)});

  const std::string g = "$.services[0].eventgroups[0].subscribers";
  auto subs = [](json v) {
    return [v](json& x) {
      x.erase("secoc");
      x["services"][0]["eventgroups"][0]["subscribers"] = v;
    };
  };
  expect_edit_error(subs("10.77.0.2"), g, "must be an array");
  expect_edit_error(subs(json::array()), g, "must not be empty");
  expect_edit_error(subs(json::array({"10.77.0.2", 7})), g + "[1]", "must be a string");
  expect_edit_error(subs(json::array({"fd00::1"})), g + "[0]", "not an IPv4 address");
  expect_edit_error(subs(json::array({"10.77.0.300"})), g + "[0]", "not an IPv4 address");
  expect_edit_error(subs(json::array({"239.1.1.1"})), g + "[0]", "not a host address");
  expect_edit_error(subs(json::array({"0.0.0.0"})), g + "[0]", "not a host address");
  expect_edit_error(subs(json::array({"255.255.255.255"})), g + "[0]", "not a host address");
  expect_edit_error(subs(json::array({"10.77.0.2", "10.77.0.2"})), g + "[1]", "listed twice");
  const std::string s = "$.clients[0].servers";
  auto servers = [](json v) {
    return [v](json& x) {
      x.erase("secoc");
      x["clients"][0]["servers"] = v;
    };
  };
  expect_edit_error(servers(json::object()), s, "must be an array");
  expect_edit_error(servers(json::array()), s, "must not be empty");
  expect_edit_error(servers(json::array({"224.0.0.1"})), s + "[0]", "not a host address");
  expect_edit_error(servers(json::array({"10.77.0.9", "10.77.0.9"})), s + "[1]", "listed twice");
}

TEST_F(NodeConfigTest, SecocErrors) {
  const std::string s = "$.secoc";
  expect_edit_error([](json& j) { j["secoc"]["x"] = 1; }, s + ".x", "unknown key");
  expect_edit_error([](json& j) { j["secoc"].erase("engine"); }, s + ".engine", "required");
  // Engine errors keep the engine loader's message under our path.
  expect_edit_error([](json& j) { j["secoc"]["engine"]["txPdus"][1]["keyGroup"] = "nope"; },
                    s + ".engine.txPdus[1].keyGroup", "no key group named 'nope'");
  expect_edit_error([](json& j) { j["secoc"]["engine"]["rxPdus"][0]["window"] = 0; },
                    s + ".engine.rxPdus[0].window", "");
  expect_edit_error([](json& j) { j["secoc"].erase("stateFile"); }, s + ".stateFile", "required");
  expect_edit_error([](json& j) { j["secoc"]["stateFile"] = ""; }, s + ".stateFile", "must not be empty");
  // keys
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["keyGroup"] = "x"; }, s + ".keys[0].keyGroup",
                    "no key group named 'x'");
  expect_edit_error([](json& j) { j["secoc"]["keys"][1]["keyGroup"] = "body"; }, s + ".keys[1].keyGroup",
                    "already has a key file");
  expect_edit_error([](json& j) { j["secoc"]["keys"].erase(1); }, s + ".keys",
                    "no key file for key group 'sync'");
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["format"] = "pem"; }, s + ".keys[0].format",
                    "must be \"hex\"");
  expect_edit_error([](json& j) { j["secoc"]["keys"][0].erase("file"); }, s + ".keys[0].file", "required");
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["file"] = "missing.key"; }, s + ".keys[0].file",
                    "missing.key");
  // The 16-byte key is refused for the 256-bit group; its bytes never show.
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["file"] = "sync.key"; }, s + ".keys[0].file",
                    "needs 32 bytes");
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["keyId"] = -1; }, s + ".keys[0].keyId", "negative");
  expect_edit_error([](json& j) { j["secoc"]["keys"][0]["key"] = "00"; }, s + ".keys[0].key", "unknown key");
  // bindings
  const std::string b = s + ".bindings";
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["event"] = "0x8777"; }, b + "[0]",
                    "exactly one of \"method\" and \"event\"");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0].erase("method"); }, b + "[0]", "exactly one");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["service"] = "0x9999"; }, b + "[0].service",
                    "neither in $.services nor in $.clients");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["method"] = "0x0500"; }, b + "[0].method",
                    "method 0x0500 is not configured in service 0x1234");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][1]["event"] = "0x8abc"; }, b + "[1].event",
                    "event 0x8abc is not configured");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["txPdu"] = 9; }, b + "[0].txPdu",
                    "no txPdus entry with id 9");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["rxPdu"] = 9; }, b + "[0].rxPdu",
                    "no rxPdus entry with id 9");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][1]["txPdu"] = 0; }, b + "[1].txPdu",
                    "PDU 0 is already bound at $.secoc.bindings[0]");
  expect_edit_error(
      [](json& j) {
        j["secoc"]["bindings"][1].erase("txPdu");
      },
      b + "[1]", "give \"txPdu\", \"rxPdu\" or both");
  expect_edit_error([](json& j) { j["secoc"]["bindings"].push_back(j["secoc"]["bindings"][2]); }, b + "[3]",
                    "already bound");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["instance"] = 0; }, b + "[0].instance",
                    "out of range");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][0]["pdu"] = 0; }, b + "[0].pdu", "unknown key");
  // sd
  expect_edit_error([](json& j) { j["secoc"]["sd"].erase("rxPdu"); }, s + ".sd", "needs both");
  expect_edit_error([](json& j) { j["secoc"]["sd"]["txPdu"] = 1; }, s + ".sd.txPdu",
                    "must use \"freshness\": \"timestamp\"");
  expect_edit_error([](json& j) { j["secoc"]["bindings"][1]["txPdu"] = 2; }, b + "[1].txPdu",
                    "PDU 2 is already bound at $.secoc.sd");
  expect_edit_error([](json& j) { j["secoc"]["sd"]["x"] = 1; }, s + ".sd.x", "unknown key");
  // sync
  expect_edit_error([](json& j) { j["secoc"].erase("sync"); }, s + ".sync", "sends (syncTx)");
  expect_edit_error(
      [](json& j) {
        j["secoc"].erase("sync");
        j["secoc"]["engine"].erase("syncTx");
      },
      s + ".sync", "receives (syncRx)");
  expect_edit_error([](json& j) { j["secoc"]["sync"]["rxChannel"] = 4; }, s + ".sync.rxChannel",
                    "no syncRx entry with id 4");
  expect_edit_error(
      [](json& j) {
        j["secoc"]["engine"].erase("syncRx");
        for (auto& p : j["secoc"]["engine"]["rxPdus"]) {
          if (p.contains("freshness")) continue;  // the SD PDU
          p.erase("syncChannel");
          p["profile"] = "profile2";  // no freshness value: no sync channel needed
          p["keyGroup"] = "sync";
        }
      },
      s + ".sync.rxChannel", "has no syncRx channel");
  expect_edit_error([](json& j) { j["secoc"]["sync"]["service"] = "0x4321"; }, s + ".sync.service",
                    "sends sync messages (syncTx)");
  expect_edit_error([](json& j) { j["secoc"]["sync"]["event"] = "0x8abc"; }, s + ".sync.event",
                    "not an event of service 0x1234");
  expect_edit_error(
      [](json& j) {
        j["secoc"]["engine"].erase("syncTx");
        j["secoc"]["sync"]["service"] = "0x7777";
      },
      s + ".sync.service", "must be in $.clients or $.services");
  expect_edit_error([](json& j) { j["secoc"]["sync"]["event"] = "0x0001"; }, s + ".sync.event",
                    "out of range");
}

TEST_F(NodeConfigTest, KeyFileModeMustBe0600) {
  ASSERT_EQ(::chmod((dir_ + "/body.key").c_str(), 0644), 0);
  json j = good();
  try {
    load(j);
    ADD_FAILURE() << "a 0644 key file was accepted";
  } catch (const NodeConfigError& e) {
    EXPECT_EQ(e.path(), "$.secoc.keys[0].file");
    EXPECT_NE(e.problem().find(std::string(to_string(KeyFileError::kInsecureMode))), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("1111"), std::string::npos) << "key bytes in the message";
  }
  ASSERT_EQ(::chmod((dir_ + "/body.key").c_str(), 0400), 0);
  EXPECT_NO_THROW(load(j));
}

TEST_F(NodeConfigTest, AbsoluteKeyPathsAndRawKeys) {
  // A raw (binary) key file or "format": "raw" is refused: hex is the one
  // key file encoding (base/keyfile.h).
  ASSERT_TRUE(write_key_file(dir_ + "/raw.key", kKey32).ok());
  json r = good();
  r["secoc"]["keys"][0]["file"] = dir_ + "/raw.key";
  EXPECT_THROW(node_config_from_json(r, "/nonexistent"), NodeConfigError);
  r["secoc"]["keys"][0]["format"] = "raw";
  EXPECT_THROW(node_config_from_json(r, "/nonexistent"), NodeConfigError);
  ASSERT_TRUE(write_key_file_hex(dir_ + "/abs.key", kKey32).ok());
  json j = good();
  j["secoc"]["keys"][0]["file"] = dir_ + "/abs.key";
  j["secoc"]["keys"][1]["file"] = dir_ + "/sync.key";
  j["secoc"]["stateFile"] = "/var/tmp/x.state";
  const NodeConfig c = node_config_from_json(j, "/nonexistent");
  EXPECT_EQ(c.secoc->keys[0].path, dir_ + "/abs.key");
  EXPECT_EQ(c.secoc->keys[0].key.size(), 32u);
  EXPECT_EQ(c.secoc->state_file, "/var/tmp/x.state");
}

TEST_F(NodeConfigTest, TestSectionErrors) {
  const std::string t = "$.test";
  expect_edit_error([](json& j) { j["test"]["x"] = 1; }, t + ".x", "unknown key");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["service"] = "0x4321"; }, t + ".serve[0].service",
                    "not in $.services");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["instance"] = 1; }, t + ".serve[0].instance",
                    "not offered as instance 0x0001");
  expect_edit_error(
      [](json& j) {
        j["services"].push_back(j["services"][0]);
        j["services"][1]["instance"] = 2;
        j["services"][1]["unreliable"] = 30511;
      },
      t + ".serve[0].instance", "offered as several instances");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["method"] = "0x0500"; }, t + ".serve[0].method",
                    "not in the service's \"methods\"");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["method"] = "0x0001"; }, t + ".serve[0].method",
                    "field getter/setter");
  expect_edit_error([](json& j) { j["test"]["serve"][1]["method"] = "0x0421"; }, t + ".serve[1]",
                    "already served");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["reply"] = "random"; }, t + ".serve[0].reply",
                    "\"echo\", \"fixed\" or \"error\"");
  expect_edit_error([](json& j) { j["test"]["serve"][1].erase("payload"); }, t + ".serve[1].payload",
                    "required for reply \"fixed\"");
  expect_edit_error([](json& j) { j["test"]["serve"][1]["payload"] = "abc"; }, t + ".serve[1].payload",
                    "not valid hex");
  expect_edit_error([](json& j) { j["test"]["serve"][1]["payload"] = 12; }, t + ".serve[1].payload",
                    "hex string");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["payload"] = "00"; }, t + ".serve[0].payload",
                    "only a \"fixed\" reply");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["code"] = 1; }, t + ".serve[0].code",
                    "only an \"error\" reply");
  expect_edit_error([](json& j) { j["test"]["serve"][0]["reply"] = "error"; }, t + ".serve[0].code",
                    "required for reply \"error\"");
  expect_edit_error(
      [](json& j) {
        j["test"]["serve"][0]["reply"] = "error";
        j["test"]["serve"][0]["code"] = "E_BROKEN";
      },
      t + ".serve[0].code", "unknown return code 'E_BROKEN'");
  expect_edit_error(
      [](json& j) {
        j["test"]["serve"][0]["reply"] = "error";
        j["test"]["serve"][0]["code"] = 0;
      },
      t + ".serve[0].code", "other than E_OK");
  expect_edit_error(
      [](json& j) {
        j["test"]["serve"][0]["reply"] = "error";
        j["test"]["serve"][0]["code"] = "0x40";
      },
      t + ".serve[0].code", "<= 63");
  expect_edit_error(
      [](json& j) {
        j["max_message_size"] = 16;
        j["test"]["serve"][1]["payload"] = std::string(34, 'a');
      },
      t + ".serve[1].payload", "longer than max_message_size");
  // publish
  const std::string p = t + ".publish[0]";
  expect_edit_error([](json& j) { j["test"]["publish"][0]["event"] = "0x8abc"; }, p + ".event",
                    "not an event of service 0x1234");
  expect_edit_error([](json& j) { j["test"]["publish"][0]["interval_ms"] = 0; }, p + ".interval_ms", ">= 1 ms");
  expect_edit_error([](json& j) { j["test"]["publish"][0]["payload_size"] = 70000; }, p + ".payload_size",
                    "<= 65536");
  expect_edit_error([](json& j) { j["test"]["publish"][0]["count"] = "many"; }, p + ".count", "not a number");
  expect_edit_error([](json& j) { j["test"]["publish"].push_back(j["test"]["publish"][0]); },
                    t + ".publish[1]", "already published");
  expect_edit_error([](json& j) { j["test"]["publish"][0]["rate"] = 1; }, p + ".rate", "unknown key");
  // requests
  const std::string r = t + ".requests[0]";
  expect_edit_error([](json& j) { j["test"]["requests"][0]["service"] = "0x1234"; }, r + ".service",
                    "not in $.clients");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["instance"] = 2; }, r + ".instance",
                    "requires instance 0x0001");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["method"] = "0x8000"; }, r + ".method",
                    "out of range");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["payload_size"] = 4; }, r + ".payload_size",
                    "not both");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["payload"] = "0"; }, r + ".payload", "not valid hex");
  expect_edit_error([](json& j) { j["test"]["requests"][1]["timeout_ms"] = 10; }, t + ".requests[1].timeout_ms",
                    "fire-and-forget");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["timeout_ms"] = 0; }, r + ".timeout_ms", ">= 1 ms");
  expect_edit_error([](json& j) { j["test"]["requests"][0]["interval_ms"] = "0x0"; }, r + ".interval_ms",
                    ">= 1 ms");
  expect_edit_error(
      [](json& j) {
        j["max_message_size"] = 16;
        j["test"]["requests"][0]["payload"] = std::string(34, '0');
      },
      r + ".payload", "longer than max_message_size");
}

TEST_F(NodeConfigTest, RequestInstanceForAnyInstanceClient) {
  json j = good();
  j["clients"][0].erase("instance");
  j["test"]["requests"][0]["instance"] = 9;
  const NodeConfig c = load(j);
  EXPECT_EQ(c.test.requests[0].instance, 9);
  EXPECT_EQ(c.test.requests[1].instance, 0xFFFF);
}

TEST_F(NodeConfigTest, LoadFileResolvesPathsAndReportsSyntax) {
  const std::string path = dir_ + "/node.json";
  {
    std::ofstream out(path);
    out << good().dump(2);
  }
  const NodeConfig c = load_node_config(path);
  EXPECT_EQ(c.secoc->state_file, dir_ + "/server.state");
  EXPECT_EQ(c.secoc->keys[0].path, dir_ + "/body.key");
  {
    std::ofstream out(path);
    out << "{\"unicast\": \"10.0.0.1\",\n \"services\": [}";
  }
  try {
    load_node_config(path);
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_NE(e.problem().find("JSON syntax"), std::string::npos);
    EXPECT_NE(e.problem().find("line 2"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << "{\"unicast\": \"10.0.0.1\", \"services\": 1E99999}";
  }
  try {  // a number beyond a double: nlohmann's out_of_range, refused the same way
    load_node_config(path);
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_NE(e.problem().find("JSON syntax"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("number overflow"), std::string::npos) << e.what();
  }
  try {
    load_node_config(dir_ + "/absent.json");
    ADD_FAILURE();
  } catch (const NodeConfigError& e) {
    EXPECT_NE(e.problem().find("No such file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layersec::node

namespace layersec::node {
namespace {

using namespace someip;

// Protected SD by default, header authentication, deliberately unprotected
// ids (issue 13, items 1, 2 and 6).
TEST_F(NodeConfigTest, SdIsProtectedByDefaultAndOffNeedsAnExplicitSetting) {
  // Two MAC key groups and no "sd": the node cannot guess which protects SD.
  expect_edit_error([](json& j) { j["secoc"].erase("sd"); }, "$.secoc.sd",
                      "SD is protected by default");
  // Naming the key group adds timestamp-freshness SD PDUs to the engine.
  {
    json j = good();
    j["secoc"]["sd"] = {{"keyGroup", "body"}, {"maxSources", 32}};
    const NodeConfig c = load(j);
    const NodeSecoc& s = *c.secoc;
    ASSERT_EQ(s.bindings.sd_tx_pdu, 3u);
    ASSERT_EQ(s.bindings.sd_rx_pdu, 3u);
    EXPECT_TRUE(s.engine.tx_pdus.back().profile.freshness.timestamp);
    EXPECT_EQ(s.engine.tx_pdus.back().data_id, kDefaultSdDataId);
    EXPECT_TRUE(s.engine.rx_pdus.back().profile.freshness.timestamp);
    EXPECT_EQ(s.engine.rx_pdus.back().max_sources, 32u);
    EXPECT_FALSE(s.bindings.sd_unprotected);
  }
  // One MAC key group: used without being named.
  {
    json j = good();
    j["secoc"].erase("sd");
    j["secoc"]["engine"]["keyGroups"][1]["algorithm"] = "aes128-gcm";
    j["secoc"]["engine"]["syncTx"]["keyGroup"] = "body";
    j["secoc"]["engine"]["syncRx"][0]["keyGroup"] = "body";
    j["secoc"]["engine"]["rxPdus"].erase(2);
    j["secoc"]["engine"]["txPdus"].erase(2);
    const NodeConfig c = load(j);
    EXPECT_TRUE(c.secoc->bindings.sd_tx_pdu.has_value());
    EXPECT_EQ(c.secoc->engine.key_groups[c.secoc->engine.tx_pdus.back().key_group].name, "body");
  }
  // Off, explicitly.
  {
    json j = good();
    j["secoc"]["sd"] = {{"protect", false}};
    const NodeConfig c = load(j);
    EXPECT_TRUE(c.secoc->bindings.sd_unprotected);
    EXPECT_FALSE(c.secoc->bindings.sd_tx_pdu.has_value());
  }
  expect_edit_error([](json& j) { j["secoc"]["sd"]["protect"] = false; }, "$.secoc.sd", "takes no other keys");
  expect_edit_error([](json& j) { j["secoc"]["sd"] = {{"keyGroup", "nope"}}; }, "$.secoc.sd.keyGroup",
                      "no key group named 'nope'");
  expect_edit_error([](json& j) { j["secoc"]["sd"]["keyGroup"] = "body"; }, "$.secoc.sd.keyGroup",
                      "not with \"txPdu\"");
  expect_edit_error([](json& j) { j["secoc"]["sd"]["rxPdu"] = 1; }, "$.secoc.sd.rxPdu",
                      "must use \"freshness\": \"timestamp\"");
}

TEST_F(NodeConfigTest, HeaderAuthenticationAndUnprotectedIds) {
  {
    const NodeConfig c = load(good());
    EXPECT_EQ(c.secoc->bindings.header, HeaderAuth::kSomeipHeader);  // the default
    EXPECT_TRUE(c.secoc->bindings.payload_only.empty());
    EXPECT_TRUE(c.secoc->bindings.unprotected.empty());
  }
  {
    json j = good();
    j["secoc"]["bindings"][2]["dataToAuthenticator"] = "payload-only";
    j["secoc"]["unprotected"] = json::array({{{"service", "0x1234"}, {"event", "0x8779"}}});
    const NodeConfig c = load(j);
    ASSERT_EQ(c.secoc->bindings.payload_only.size(), 1u);
    EXPECT_EQ(c.secoc->bindings.payload_only[0].service_id, 0x4321);
    EXPECT_EQ(c.secoc->bindings.payload_only[0].method_or_event, 0x8001);
    ASSERT_EQ(c.secoc->bindings.unprotected.size(), 1u);
    EXPECT_EQ(c.secoc->bindings.unprotected[0].method_or_event, 0x8779);
    EXPECT_EQ(c.secoc->bindings.unprotected[0].instance_id, 0xFFFF);
  }
  {
    json j = good();
    j["secoc"]["dataToAuthenticator"] = "payload-only";
    EXPECT_EQ(load(j).secoc->bindings.header, HeaderAuth::kPayloadOnly);
  }
  expect_edit_error([](json& j) { j["secoc"]["dataToAuthenticator"] = "header"; }, "$.secoc.dataToAuthenticator",
                      "must be \"someip-header\"");
  expect_edit_error(
      [](json& j) {
        j["secoc"]["dataToAuthenticator"] = "payload-only";
        j["secoc"]["bindings"][0]["dataToAuthenticator"] = "someip-header";
      },
      "$.secoc.bindings[0].dataToAuthenticator", "make someip-header the default");
  expect_edit_error(
      [](json& j) {
        j["secoc"]["unprotected"] = json::array({{{"service", "0x1234"}, {"event", "0x8777"}}});
      },
      "$.secoc.unprotected[0]", "cannot also be unprotected");
  expect_edit_error([](json& j) { j["secoc"]["unprotected"] = json::array({{{"service", "0x1234"}}}); },
                      "$.secoc.unprotected[0]", "exactly one of");
  // aead-gcm rx PDUs must name the sender (before: every PDU mac-mismatch).
  expect_edit_error(
      [](json& j) {
        j["secoc"]["engine"]["keyGroups"].push_back({{"name", "priv"}, {"algorithm", "aes256-gcm"}});
        j["secoc"]["engine"]["rxPdus"].push_back(
            {{"id", 9}, {"dataId", 9}, {"keyGroup", "priv"}, {"profile", "aead-gcm"}, {"syncChannel", 3}});
      },
      "$.secoc.engine.rxPdus[3].senderId", "required for an aead-gcm rx PDU");
}

}  // namespace
}  // namespace layersec::node
