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
      m.fresh_key = true;
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

// A SAK that is neither fresh nor backed by a PN store would start at PN 1
// after every restart (GCM nonce reuse): refused by name.
TEST_F(StackTest, StaticSakWithoutAPnStoreIsRefused) {
  StackSpec s = spec(false, true);
  s.macsec->fresh_key = false;
  try {
    (void)build_stack(std::move(s));
    FAIL() << "a static SAK without a PN store was accepted";
  } catch (const BuildError& e) {
    EXPECT_EQ(e.failure().stage, BuildStage::kMacsec);
    EXPECT_NE(std::string(e.what()).find("PN store"), std::string::npos) << e.what();
  }
}

// With a PN store a rebuilt SecY under the same SAK resumes after every PN
// its previous instance used, and a missing record is refused unless the
// spec says it is the key's first start.
TEST_F(StackTest, StaticSakWithAPnStoreResumesAfterARestart) {
  macsec::MemoryPnStore store;
  StackSpec first = spec(false, true);
  first.macsec->fresh_key = false;
  first.macsec->pn_store = &store;
  first.macsec->pn_reserve_block = 8;
  StackSpec again = spec(false, true);
  again.macsec->fresh_key = false;
  again.macsec->pn_store = &store;
  {
    StackSpec missing = spec(false, true);
    missing.macsec->fresh_key = false;
    missing.macsec->pn_store = &store;
    const BuildFailure f = failure_of(std::move(missing));
    EXPECT_EQ(f.stage, BuildStage::kMacsec);
    ASSERT_TRUE(f.macsec_error.has_value());
    EXPECT_EQ(*f.macsec_error, macsec::SaError::kPnStateMissing);
  }
  first.macsec->new_key = true;
  std::uint64_t used = 0;
  {
    macsec::SecY secy = make_secy(*first.macsec);
    std::vector<std::uint8_t> frame(60, 0xAB);
    std::vector<std::uint8_t> out(200);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(secy.protect(frame, out).ok());
    used = secy.tx_sa_status(0).next_pn - 1;
  }  // a crash: no persist_pn_state()
  macsec::SecY rebuilt = make_secy(*again.macsec);
  EXPECT_GT(rebuilt.tx_sa_status(0).next_pn, used);
}

// The simulated testbed's hybrid wiring: the stack's SecY is left to the
// caller, who puts it between the host and its port with make_sim_shim.
// Service discovery then crosses the segment as MACsec frames only.
TEST(StackSimMacsecTest, HostSecyCarriesTheNodeThroughASimShim) {
  net::Simulator sim(1);
  net::Segment segment(sim);
  const SecretBytes key_a(std::vector<std::uint8_t>(16, 0x11));
  const SecretBytes key_b(std::vector<std::uint8_t>(16, 0x22));
  std::vector<std::unique_ptr<net::SimHost>> hosts;
  std::vector<macsec::Sci> scis;
  for (std::uint8_t i = 0; i < 2; ++i) {
    net::SimHostConfig hc;
    hc.mac = net::MacAddress::local(0x10u + i);
    hc.ip = net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(1 + i));
    hc.dynamic_arp = false;
    hosts.push_back(std::make_unique<net::SimHost>(sim, hc));
    scis.push_back(macsec::Sci::from_parts(hc.mac.bytes.data(), 1));
  }
  hosts[0]->add_static_arp(hosts[1]->config().ip, hosts[1]->config().mac);
  hosts[1]->add_static_arp(hosts[0]->config().ip, hosts[0]->config().mac);
  auto macsec_of = [&](std::size_t self, const SecretBytes& tx, const SecretBytes& rx) {
    MacsecSpec m;
    m.sci = scis[self];
    m.tx_key = tx.clone();
    m.peers.push_back({scis[1 - self], rx.clone(), "peer"});
    m.fresh_key = true;
    return m;
  };
  StackSpec offer;
  offer.runtime.name = "offer";
  someip::ServiceConfig svc;
  svc.service_id = kService;
  svc.instance_id = 1;
  svc.udp_port = 30509;
  offer.runtime.services = {svc};
  offer.runtime.sd_timing.initial_delay_max = Duration::milliseconds(10);
  offer.transport = SimTransportSpec{&sim, hosts[0].get()};
  offer.macsec = macsec_of(0, key_a, key_b);
  StackSpec find;
  find.runtime.name = "find";
  find.runtime.client_id = 0x0002;
  someip::ClientConfig cl;
  cl.service_id = kService;
  cl.instance_id = 1;
  cl.udp_port = 30510;
  find.runtime.clients = {cl};
  find.runtime.sd_timing.initial_delay_max = Duration::milliseconds(10);
  find.transport = SimTransportSpec{&sim, hosts[1].get()};
  find.macsec = macsec_of(1, key_b, key_a);
  std::vector<std::unique_ptr<Stack>> stacks;
  stacks.push_back(build_stack(std::move(offer)));
  stacks.push_back(build_stack(std::move(find)));
  std::vector<std::unique_ptr<net::FrameShim>> shims;
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_NE(stacks[i]->macsec_link(), nullptr);
    shims.push_back(std::make_unique<net::FrameShim>(macsec::make_sim_shim(*stacks[i]->macsec_link())));
    const net::PortId port = segment.add_port(net::LinkConfig{}, shims[i].get());
    shims[i]->connect(&segment.sender(port), hosts[i].get());
    hosts[i]->connect(shims[i].get());
  }
  for (auto& s : stacks) ASSERT_TRUE(s->runtime().start().ok());
  sim.run_for(Duration::seconds(2));
  EXPECT_TRUE(stacks[1]->runtime().available(kService, 1));
  for (auto& s : stacks) {
    const auto& st = s->macsec_link()->stats();
    EXPECT_GT(st.tx_sent, 0u);
    EXPECT_GT(st.rx_delivered, 0u);
    EXPECT_EQ(st.rx_dropped + st.rx_unverified + st.rx_not_macsec, 0u);
  }
  stacks.clear();  // the runtimes' StopOffers still pass their shims
}

}  // namespace
}  // namespace layersec::node
