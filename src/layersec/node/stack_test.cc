#include "layersec/node/stack.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "layersec/macsec/link.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/sim_transport.h"

namespace layersec::node {
namespace {

constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kEvent = 0x8001;

// A node offering one event on a simulated host; SecOC protects the event
// (vendor profile, one CMAC-AES-256 key group), SD in clear.
class StackTest : public ::testing::Test {
 protected:
  StackTest() : sim_(1), segment_(sim_) {
    net::SimHostConfig hc;
    hc.mac = net::MacAddress::local(0x10);
    hc.ip = net::Ipv4Address::from_octets(10, 0, 0, 1);
    host_ = std::make_unique<net::SimHost>(sim_, hc);
    (void)host_->attach(segment_, net::LinkConfig{});
  }

  StackSpec spec(bool secured, bool macsec) {
    StackSpec s;
    s.runtime.name = "stack-test";
    someip::ServiceConfig svc;
    svc.service_id = kService;
    svc.instance_id = 1;
    svc.udp_port = 30509;
    someip::EventConfig ev;
    ev.event_id = kEvent;
    ev.eventgroups = {1};
    svc.events = {ev};
    someip::EventgroupConfig eg;
    eg.eventgroup_id = 1;
    svc.eventgroups = {eg};
    s.runtime.services = {svc};
    s.seed = 7;
    s.transport = SimTransportSpec{&sim_, host_.get()};
    if (macsec) {
      MacsecSpec m;
      m.sci = macsec::Sci::from_parts(host_->config().mac.bytes.data(), 1);
      m.tx_key = SecretBytes(std::vector<std::uint8_t>(16, 0x11));
      const auto peer = net::MacAddress::local(0x20);
      m.peers.push_back({macsec::Sci::from_parts(peer.bytes.data(), 1), SecretBytes(std::vector<std::uint8_t>(16, 0x22)),
                         "peer"});
      s.macsec = std::move(m);
    }
    if (secured) {
      SecocSpec sc;
      sc.engine.sender_id = 1;
      sc.engine.key_groups = {{"session", secoc::AuthAlgorithm::kCmacAes256}};
      sc.engine.tx_pdus = {{0, 0x0100, secoc::PduProfile::vendor(), 0}};
      sc.bindings.sd_unprotected = true;
      sc.bindings.messages.push_back({kService, 1, kEvent, 0u, std::nullopt});
      sc.keys.push_back({0, 1, SecretBytes(std::vector<std::uint8_t>(32, 0x33))});
      s.secoc = std::move(sc);
    }
    return s;
  }

  net::Simulator sim_;
  net::Segment segment_;
  std::unique_ptr<net::SimHost> host_;
};

TEST_F(StackTest, BuildsEveryPartOfTheSpec) {
  int started_calls = 0;
  StackSpec s = spec(true, true);
  s.secoc->on_started = [&](const secoc::Engine& e) {
    ++started_calls;
    EXPECT_GE(e.trip(), 1u);  // persisted before any key or binding
  };
  auto stack = build_stack(std::move(s));
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(started_calls, 1);
  EXPECT_NE(stack->sim_transport(), nullptr);
  EXPECT_EQ(stack->socket_transport(), nullptr);
  EXPECT_EQ(stack->raw_transport(), nullptr);
  EXPECT_EQ(&stack->transport(), stack->sim_transport());
  ASSERT_NE(stack->macsec_link(), nullptr);
  ASSERT_NE(stack->engine(), nullptr);
  // The key is live: the next one with the same id is a duplicate.
  EXPECT_FALSE(stack->install_key(0, 1, SecretBytes(std::vector<std::uint8_t>(32, 0x44))).ok());
  EXPECT_TRUE(stack->install_key(0, 2, SecretBytes(std::vector<std::uint8_t>(32, 0x44))).ok());
  EXPECT_TRUE(stack->runtime().start().ok());
  sim_.run_for(Duration::milliseconds(100));
}

TEST_F(StackTest, UnsecuredStackHasNoEngineNorSecy) {
  auto stack = build_stack(spec(false, false));
  EXPECT_EQ(stack->engine(), nullptr);
  EXPECT_EQ(stack->macsec_link(), nullptr);
  EXPECT_THROW((void)stack->install_key(0, 1, SecretBytes(std::vector<std::uint8_t>(32, 1))), std::logic_error);
}

BuildFailure failure_of(StackSpec s) {
  try {
    (void)build_stack(std::move(s));
  } catch (const BuildError& e) {
    return e.failure();
  }
  ADD_FAILURE() << "build_stack did not fail";
  return {};
}

TEST_F(StackTest, RuntimeConfigurationErrorsNameTheRuntimeStage) {
  StackSpec s = spec(false, false);
  s.runtime.tp_segment_size = 7;
  try {
    (void)build_stack(std::move(s));
    FAIL() << "accepted";
  } catch (const BuildError& e) {
    EXPECT_EQ(e.stage(), BuildStage::kRuntime);
    EXPECT_NE(std::string(e.what()).find("tp_segment_size"), std::string::npos) << e.what();
  }
}

TEST_F(StackTest, MacsecKeyOfTheWrongSizeIsAMacsecFailure) {
  StackSpec s = spec(false, true);
  s.macsec->tx_key = SecretBytes(std::vector<std::uint8_t>(5, 1));
  const BuildFailure f = failure_of(std::move(s));
  EXPECT_EQ(f.stage, BuildStage::kMacsec);
  ASSERT_TRUE(f.macsec_error.has_value());
  EXPECT_EQ(*f.macsec_error, macsec::SaError::kBadKey);
}

TEST_F(StackTest, MissingStateFileIsRefusedUnlessFirstStart) {
  char tmpl[] = "/tmp/layersec-stack-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  StackSpec s = spec(true, false);
  s.secoc->state_file = dir + "/state";
  const BuildFailure f = failure_of(std::move(s));
  EXPECT_EQ(f.stage, BuildStage::kSecocStart);
  ASSERT_TRUE(f.start_error.has_value());
  EXPECT_EQ(*f.start_error, secoc::StartError::kStateMissing);

  StackSpec first = spec(true, false);
  first.secoc->state_file = dir + "/state";
  first.secoc->first_start = true;
  EXPECT_NE(build_stack(std::move(first))->engine(), nullptr);
  EXPECT_TRUE(std::filesystem::exists(dir + "/state"));
  std::filesystem::remove_all(dir);
}

TEST_F(StackTest, KeyRefusedByTheEngineNamesItsIndex) {
  StackSpec s = spec(true, false);
  s.secoc->keys.push_back({0, 2, SecretBytes(std::vector<std::uint8_t>(16, 0x55))});  // AES-256 needs 32
  const BuildFailure f = failure_of(std::move(s));
  EXPECT_EQ(f.stage, BuildStage::kSecocKey);
  EXPECT_EQ(f.key_index, 1u);
  ASSERT_TRUE(f.key_error.has_value());
  EXPECT_EQ(*f.key_error, secoc::KeyError::kBadLength);
}

TEST_F(StackTest, BindingToAnUnknownPduIsABindingsFailure) {
  StackSpec s = spec(true, false);
  s.secoc->bindings.messages[0].tx_pdu = 9;
  const BuildFailure f = failure_of(std::move(s));
  EXPECT_EQ(f.stage, BuildStage::kSecocBindings);
}

TEST_F(StackTest, MakeSecyInstallsOneRxScPerPeer) {
  StackSpec s = spec(false, true);
  macsec::SecY secy = make_secy(*s.macsec);
  EXPECT_EQ(secy.rx_sc_count(), 1u);
  EXPECT_EQ(secy.encoding_an(), 0);
}

}  // namespace
}  // namespace layersec::node
