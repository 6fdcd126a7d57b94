// validate_config and the shared lookups (client_port, method_kind,
// find_eventgroup) on their own: every rule names the item it refuses.
#include "layersec/someip/runtime_config.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "layersec/someip/runtime_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

void expect_refused(const std::function<void(RuntimeConfig&)>& edit, const std::string& needle,
                    RuntimeConfig base = server_config()) {
  edit(base);
  try {
    validate_config(base);
    ADD_FAILURE() << "accepted; expected: " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("someip runtime configuration: ", 0), 0u) << e.what();
  }
}

TEST(RuntimeConfigTest, SharedConfigurationsAreValid) {
  EXPECT_NO_THROW(validate_config(server_config()));
  EXPECT_NO_THROW(validate_config(client_config(2)));
}

TEST(RuntimeConfigTest, LimitsOutOfRange) {
  expect_refused([](RuntimeConfig& c) { c.tp_segment_size = 8; }, "tp_segment_size");
  expect_refused([](RuntimeConfig& c) { c.tp_segment_size = 1400; }, "tp_segment_size");
  expect_refused([](RuntimeConfig& c) { c.max_pending_requests = 0; }, "max_pending_requests");
  expect_refused([](RuntimeConfig& c) { c.max_pending_requests = 0x8001; }, "max_pending_requests");
  expect_refused([](RuntimeConfig& c) { c.max_message_size = 0; }, "max_message_size");
}

TEST(RuntimeConfigTest, ServiceRulesNameTheService) {
  expect_refused([](RuntimeConfig& c) { c.services[0].instance_id = 0xFFFF; }, "service 0x1234/0xffff: reserved");
  expect_refused([](RuntimeConfig& c) { c.services[0].udp_port = kSdPort; }, "udp_port is the SD port");
  expect_refused([](RuntimeConfig& c) { c.services[0].methods.push_back({0x8001, false}); },
                 "method 0x8001 is not a method id");
  expect_refused([](RuntimeConfig& c) { c.services[0].methods.push_back({kMethod, true}); },
                 "method 0x0001 twice");
  expect_refused([](RuntimeConfig& c) { c.services[0].eventgroups.push_back(c.services[0].eventgroups[0]); },
                 "eventgroup 0x0010 twice");
  expect_refused(
      [](RuntimeConfig& c) {
        c.services[0].eventgroups[0].multicast = Endpoint{IpAddress::v4(10, 0, 0, 9), 30600, L4Proto::kUdp};
      },
      "multicast address is not a group");
  expect_refused([](RuntimeConfig& c) { c.services[0].events.push_back(c.services[0].events[0]); },
                 "event 0x8001 twice");
  expect_refused([](RuntimeConfig& c) { c.services[0].events[0].eventgroups.clear(); }, "belongs to no eventgroup");
  expect_refused([](RuntimeConfig& c) { c.services[0].events[0].getter_method = 0x0020; },
                 "getter/setter on a non-field");
  expect_refused([](RuntimeConfig& c) { c.services[0].events[1].getter_method = kFireAndForget; },
                 "getter/setter 0x0002 is fire-and-forget");
  // Without SD the SD port is free for a service.
  RuntimeConfig no_sd = server_config();
  no_sd.sd_enabled = false;
  no_sd.services[0].udp_port = kSdPort;
  EXPECT_NO_THROW(validate_config(no_sd));
}

TEST(RuntimeConfigTest, ClientRules) {
  expect_refused([](RuntimeConfig& c) { c.clients[0].service_id = 0xFFFF; }, "client 0xffff/0x0001: reserved",
                 client_config(2));
  expect_refused([](RuntimeConfig& c) { c.client_port = kSdPort; }, "port is the SD port", client_config(2));
  RuntimeConfig own_port = client_config(2);
  own_port.client_port = kSdPort;
  own_port.clients[0].udp_port = 30777;  // its own port: the node's default is not used
  EXPECT_NO_THROW(validate_config(own_port));
  EXPECT_EQ(client_port(own_port, own_port.clients[0]), 30777);
  EXPECT_EQ(client_port(client_config(2), client_config(2).clients[0]), kClientPort);
}

TEST(RuntimeConfigTest, MethodKindsAndEventgroups) {
  const ServiceConfig s = server_config().services[0];
  EXPECT_EQ(method_kind(s, kMethod), MethodKind::kRequestResponse);
  EXPECT_EQ(method_kind(s, kFireAndForget), MethodKind::kFireAndForget);
  EXPECT_EQ(method_kind(s, kFieldGetter), MethodKind::kRequestResponse);
  EXPECT_EQ(method_kind(s, kFieldSetter), MethodKind::kRequestResponse);
  EXPECT_EQ(method_kind(s, 0x0077), MethodKind::kNone);
  ASSERT_NE(find_eventgroup(s, kEventgroup), nullptr);
  EXPECT_EQ(find_eventgroup(s, kEventgroup)->eventgroup_id, kEventgroup);
  EXPECT_EQ(find_eventgroup(s, 0x0099), nullptr);
  EXPECT_EQ(to_string(HeaderAuth::kPayloadOnly), "payload-only");
}

}  // namespace
}  // namespace layersec::someip
