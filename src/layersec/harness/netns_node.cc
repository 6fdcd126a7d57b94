// One node of the netns scenarios (netns_node.h): interface preparation, the
// SOME/IP + SecOC configuration of the testbed (testbed.cc) built through the
// node builder (node/stack.h) on real sockets, key management, the traffic
// driver (netns_traffic.h) and the report.
//
// Interfaces (the node runs as root in its own namespace):
//   kernel, no MACsec  the veth keeps the address the orchestrator gave it.
//   kernel, hybrid     a TAP "lsec0" with the MAC given in the spec (so the
//                      SCIs every peer derives from the spec are the SCIs on
//                      the wire) is created over the veth by macsec::TapLink
//                      (MTU 1468); the node's /24 moves from the veth to the
//                      TAP (`ip -4 addr flush dev IF`, `ip addr add IP/24 dev
//                      lsec0`); the TapLink runs on the SocketTransport's
//                      EventLoop.
//   raw                the veth's IPv4 address is flushed (the kernel must
//                      not answer the datagrams the node frames itself);
//                      someip::RawTransport with the spec's peers as static
//                      neighbours, through macsec::MacsecFilter when hybrid.
// IPv6 is disabled on the veth (and, before the TAP exists, as the default
// for new interfaces) so router solicitations and MLD reports do not appear
// as non-MACsec noise. When the node ends, an address it moved or flushed
// is put back on the veth, so the namespace can host the next scenario.
//
// MACsec: GCM-AES-128, confidentiality on, validateFrames strict, replay
// protection on; one SAK (spec.macsec_key_file) for every SC: the Tx SC's
// SCI is the spec MAC + port 1, one Rx SC per peer with the peer's spec MAC +
// port 1, every SA at AN 0 starting at PN 1.
//
// SOME/IP and SecOC exactly as the testbed: service 0x1234 instance 1 on UDP
// 30509, event 0x8001 in eventgroup 1 (optionally multicast 239.0.0.1:30510,
// threshold 1), subscriber i answers with fire-and-forget method 0x0010+i;
// vendor profile (CMAC-AES-256, 64-bit MAC, 16 of 64 FV bits); DataId 0x0100
// for the event, 0x0200+i for answer i; one key group for all of them.
//
// Freshness across processes (the nodes share no memory):
//   publisher -> subscribers  with psk the publisher's engine sends SecOC
//     sync messages (syncTx, DataId 0xFF00, period 1 s) as notifications of
//     event 0x8002 in eventgroup 1; the runtime also sends the latest one to
//     every new subscriber. Subscribers receive them on sync channel 0. As
//     the first sync can race the SubscribeAck (it may arrive before the
//     subscriber considers itself subscribed), every subscriber is also
//     provisioned with the start epoch of a fresh sender engine (below);
//     the start-up sync announces that same epoch, so both agree.
//     With rsa-mode-b no sync is sent: the group key changes on every join
//     and a sync under a key the subscriber does not hold yet would be a
//     rejection; the publisher's engine also gets its keys with wall-clock
//     time (Mode B), which would make the runtime's engine poll deadlines
//     meaningless. Freshness is the start epoch only.
//   subscribers -> publisher  clients cannot notify, so there is no sync
//     channel. The publisher provisions each answer PDU's receive state with
//     the start epoch of a fresh sender engine: the node starts a throw-away
//     secoc::Engine with the subscriber's Tx configuration on an empty
//     MemoryStateStore (what every subscriber does at start), reads
//     next_tx_freshness() and sets the receive state one message before it
//     ((trip 1, reset 1, msg 0) today). Subscribers never start a new reset
//     cycle (no syncTx), so MsgCnt just counts up within that epoch (32 bits).
//
// Keys: psk loads the 32-byte key through base/keyfile (0600 enforced) and
// installs it as key id 1. rsa-mode-b runs keymgmt::KeyServer on the
// publisher (RSA-2048 KEM, group binding (0x1234, eventgroup 1) -> key group
// 0, which protects the event and the answers) and keymgmt::KeyClient on each
// subscriber (started once the key service is available, restarted after a
// failure). establishment_ns runs from KeyServer::create to the first moment
// the publisher sees every member holding the current key
// (KeyServer::members_on_current_key() == member_count() == N); joins rekey
// the group, so earlier members fetch the key again after later joins.
//
// Readiness, the closed loop, the rate phase and the measured-phase costs:
// the traffic driver (netns_traffic.h).
//
// security_rejections = SecOC rejections of the runtime + MACsec frames that
// claimed protection and failed (rx_dropped + rx_unverified). Frames without
// a SecTAG on the uncontrolled port (rx_not_macsec: host noise such as IPv6
// from a peer not yet configured) are reported in transport.macsec only.
#include "layersec/harness/netns_node.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "layersec/base/keyfile.h"
#include "layersec/harness/netns_traffic.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/keymgmt/key_client.h"
#include "layersec/keymgmt/key_server.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/pki.h"
#include "layersec/macsec/link.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/io.h"
#include "layersec/net/netns.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/counters_json.h"
#include "layersec/someip/raw_transport.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/socket_transport.h"

namespace layersec::harness {

using nlohmann::json;

namespace {

// --- the scenario's ids (scenario_layout.h, as the testbed) -------------------
using layout::answer_method;
using layout::kClientPort;
using layout::kEvent;
using layout::kEventgroup;
using layout::kInstance;
using layout::kMulticastPort;
using layout::kService;
using layout::kServicePort;
using layout::kSubscriberPort;
using layout::kSyncDataIdBase;
using layout::subscriber_client_id;
constexpr std::uint16_t kSyncEvent = 0x8002;  // SecOC sync messages (psk)
constexpr std::size_t kSecocKeySize = 32;
constexpr std::size_t kSakSize = 16;
constexpr const char* kTapName = "lsec0";
constexpr Duration kSyncPeriod = Duration::seconds(1);
constexpr Duration kKeyClientRetry = Duration::milliseconds(250);

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// --- small OS helpers -------------------------------------------------------------

// Best effort: a missing IPv6 stack is not an error.
void write_sysctl(const std::string& path, const char* value) {
  std::ofstream f(path);
  if (f) f << value;
}

void must_run(const std::vector<std::string>& argv) {
  std::string out;
  const int rc = net::run_command(argv, &out);
  if (rc != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    fail("`" + cmd + "` failed (status " + std::to_string(rc) + (out.empty() ? "" : ": " + out) + ")");
  }
}

// True when the calling thread's network namespace is a named one (`ip netns
// add`, a bind mount under /run/netns), as every namespace the orchestrator
// and the tests build is. The node flushes addresses and disables IPv6 on its
// interface, which must never happen in the host's namespace; PID 1's
// namespace cannot always be inspected (containers, hidepid), a positive
// check can.
bool in_named_netns() {
  struct stat self {};
  if (::stat("/proc/thread-self/ns/net", &self) != 0) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
    struct stat ns {};
    if (::stat(entry.path().c_str(), &ns) == 0 && ns.st_ino == self.st_ino && ns.st_dev == self.st_dev) return true;
  }
  return false;
}

std::uint64_t rss_kib() {
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<std::uint64_t>(ru.ru_maxrss);  // KiB on Linux
}

SecretBytes load_key(const std::string& path, std::size_t size, const char* what) {
  if (path.empty()) fail(std::string(what) + ": no key file in the spec");
  auto k = load_key_file(path, KeyFileOptions{KeyFileFormat::kHex, size});
  if (!k.ok()) fail(std::string(what) + " " + path + ": " + std::string(to_string(k.error())));
  return std::move(k).value();
}

// Start epoch of a fresh sender engine with `tx` (empty state store): the
// receive state that accepts its first PDU.
secoc::FreshnessCounters fresh_sender_epoch(const secoc::EngineConfig& tx) {
  secoc::MemoryStateStore store;
  auto e = secoc::Engine::start(tx, store);
  if (!e.ok()) fail("SecOC: reference engine for freshness provisioning did not start");
  auto c = (*e)->next_tx_freshness(0);
  c.msg -= 1;
  return c;
}

// --- the node ---------------------------------------------------------------------

// The message of a part the node builder refused, in the node's own wording.
std::string build_failure_text(const node::BuildError& e, const NetnsNodeSpec& spec) {
  const node::BuildFailure& f = e.failure();
  switch (f.stage) {
    case node::BuildStage::kMacsec:
      return e.what();
    case node::BuildStage::kTransport:
      return "raw transport on " + spec.interface + ": " +
             (f.transport_error ? std::string(someip::to_string(*f.transport_error)) : std::string("refused")) + ": " +
             net::errno_text(f.os_errno);
    case node::BuildStage::kRuntime:
      return std::string("SOME/IP configuration: ") + e.what();
    case node::BuildStage::kSecocStart:
      return "SecOC engine did not start";
    case node::BuildStage::kSecocKey:
      return "SecOC key installation refused";
    case node::BuildStage::kSecocBindings:
      return std::string("SecOC configuration: ") + e.what();
  }
  return e.what();
}

// One node: its interfaces, its stack (node::build_stack), its keys and its
// traffic driver; restores the interfaces when destroyed.
class Node {
 public:
  Node(const NetnsNodeSpec& spec, const std::atomic<bool>& stop) : spec_(spec), stop_(stop), loop_(mono_) {
    report_.role = spec.role;
    report_.index = spec.index;
  }
  ~Node() { shutdown(); }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NetnsNodeReport& report() { return report_; }

  // Throws std::runtime_error with the reason on any set-up failure.
  void run() {
    publisher_ = spec_.role == "publisher";
    secured_ = spec_.security != Security::kNone;
    macsec_ = spec_.security == Security::kHybrid;
    sync_ = secured_ && spec_.keys == KeyDistribution::kPsk;
    write_sysctl("/proc/sys/net/ipv6/conf/" + spec_.interface + "/disable_ipv6", "1");
    if (macsec_) write_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
    if (spec_.path == LinkPath::kRaw) {
      restore_address_ = true;
      must_run({"ip", "-4", "addr", "flush", "dev", spec_.interface});
    }
    build();
    if (spec_.path == LinkPath::kKernel && macsec_) open_tap();
    if (secured_) provision_secoc();
    traffic_ = std::make_unique<NetnsTraffic>(spec_, stack_->runtime(), loop_, stop_, report_, traffic_hooks());
    traffic_->install_handlers();
    if (auto st = stack_->runtime().start(); !st.ok()) {
      someip::SocketTransport* socket = stack_->socket_transport();
      fail("SOME/IP runtime did not start: " + std::string(someip::to_string(st.error())) +
           (socket ? " (errno " + std::to_string(socket->last_errno()) + ")" : std::string()));
    }
    const std::int64_t started_ns = monotonic_now_ns();
    if (publisher_) {
      traffic_->run_publisher(started_ns);
    } else {
      traffic_->run_subscriber();
    }
  }

  // Counters of the whole run into the report (also after a failure).
  void finish_report() {
    report_.rss_kib = rss_kib();
    json t = json::object();
    t["path"] = to_string(spec_.path);
    someip::SocketTransport* socket = stack_ ? stack_->socket_transport() : nullptr;
    someip::RawTransport* raw = stack_ ? stack_->raw_transport() : nullptr;
    const macsec::MacsecLink* mlink = stack_ ? stack_->macsec_link() : nullptr;
    if (socket) {
      const auto& s = socket->stats();
      t["socket"] = {{"rx_datagrams", s.rx_datagrams}, {"rx_truncated", s.rx_truncated},
                     {"rx_not_joined", s.rx_not_joined}, {"rx_errors", s.rx_errors}, {"tx_errors", s.tx_errors}};
    }
    if (raw) {
      const auto& s = raw->stats();
      t["raw"] = {{"tx_frames", s.tx_frames},         {"tx_filter_refused", s.tx_filter_refused},
                  {"tx_errors", s.tx_errors},         {"tx_unreachable", s.tx_unreachable},
                  {"tx_too_large", s.tx_too_large},   {"rx_frames", s.rx_frames},
                  {"rx_filter_dropped", s.rx_filter_dropped}, {"rx_not_udp", s.rx_not_udp},
                  {"rx_malformed", s.rx_malformed},   {"rx_not_for_us", s.rx_not_for_us},
                  {"rx_datagrams", s.rx_datagrams},   {"rx_errors", s.rx_errors}};
    }
    std::uint64_t rejections = 0;
    if (mlink) {
      t["macsec"] = mlink->stats_json();
      rejections += mlink->stats().rx_dropped + mlink->stats().rx_unverified;
    }
    if (stack_) {
      t["runtime"] = someip::to_json(stack_->runtime().counters());
      rejections += stack_->runtime().counters().secoc_rejected;
    }
    if (traffic_ && !traffic_->rejection_reasons().empty()) t["secoc_rejections"] = traffic_->rejection_reasons();
    if (server_) {
      const auto& c = server_->counters();
      t["key_server"] = {{"requests_accepted", c.requests_accepted}, {"confirms_accepted", c.confirms_accepted},
                         {"joins", c.joins}, {"rekeys", c.rekeys}, {"notices_sent", c.notices_sent},
                         {"refused", c.refused_total()},
                         {"members", server_->member_count(kService, kEventgroup)},
                         {"members_on_current_key", server_->members_on_current_key(kService, kEventgroup)}};
    }
    if (client_) {
      const auto& c = client_->counters();
      std::uint64_t failures = 0;
      for (auto f : c.failures) failures += f;
      t["key_client"] = {{"handshakes_started", c.handshakes_started}, {"keys_installed", c.keys_installed},
                         {"notices_accepted", c.notices_accepted}, {"notices_ignored", c.notices_ignored},
                         {"failures", failures}, {"key_id", client_->key_id(kService, kEventgroup)}};
    }
    t["notify_failures"] = traffic_ ? traffic_->notify_failures() : 0;
    report_.transport = std::move(t);
    report_.security_rejections = rejections;
  }

 private:
  // --- set-up ---------------------------------------------------------------------

  // Runtime, transport, MACsec SecY and SecOC engine, through the node builder.
  void build() {
    node::StackSpec ss;
    ss.runtime = runtime_config();
    ss.seed = static_cast<std::uint64_t>(monotonic_now_ns()) ^ (static_cast<std::uint64_t>(::getpid()) << 20) ^
              static_cast<std::uint64_t>(spec_.index + 1);
    if (macsec_) {
      const SecretBytes sak = load_key(spec_.macsec_key_file, kSakSize, "MACsec SAK");
      node::MacsecSpec m;
      m.sci = macsec::Sci::from_parts(spec_.mac.bytes.data(), 1);
      m.suite = macsec::CipherSuite::kGcmAes128;
      m.tx_key = sak.clone();
      for (const auto& p : spec_.peers)
        m.peers.push_back({macsec::Sci::from_parts(p.mac.bytes.data(), 1), sak.clone(), p.name});
      // The scenario writes a new random SAK for every run (netns_scenario_keys.cc) and never
      // restarts a node process within it: the key is fresh, no PN store is needed.
      m.fresh_key = true;
      ss.macsec = std::move(m);
    }
    if (spec_.path == LinkPath::kKernel) {
      ss.transport = node::SocketTransportSpec{&loop_, spec_.ip, {}};
    } else {
      someip::RawTransportConfig rc;
      rc.interface = spec_.interface;
      rc.address = spec_.ip;
      for (const auto& p : spec_.peers) rc.neighbours[p.ip] = p.mac;
      if (auto mtu = net::interface_mtu(spec_.interface); mtu.ok()) {
        rc.mtu = static_cast<std::size_t>(*mtu);
      } else {
        fail("interface " + spec_.interface + ": cannot read its MTU: " + net::errno_text(errno));
      }
      ss.transport = node::RawTransportSpec{&loop_, std::move(rc)};
    }
    if (secured_) ss.secoc = secoc_spec();
    try {
      stack_ = node::build_stack(std::move(ss));
    } catch (const node::BuildError& e) {
      fail(build_failure_text(e, spec_));
    }
  }

  // kernel + hybrid: the TAP over the veth, with the node's address.
  void open_tap() {
    const std::string& ifname = spec_.interface;
    macsec::TapLinkOptions o;
    o.lower = ifname;
    o.name = kTapName;
    o.mac = spec_.mac;  // SCIs derive from the spec's MAC: the TAP sends with it
    o.bring_up = true;
    tap_ = std::make_unique<macsec::TapLink>(macsec::TapLink::open(*stack_->macsec_link(), o));
    write_sysctl("/proc/sys/net/ipv6/conf/" + tap_->name() + "/disable_ipv6", "1");
    restore_address_ = true;
    must_run({"ip", "-4", "addr", "flush", "dev", ifname});
    must_run({"ip", "addr", "add", spec_.ip.to_string() + "/24", "dev", tap_->name()});
    must_run({"ip", "link", "set", tap_->name(), "mtu", std::to_string(tap_->mtu()), "up"});
    tap_->attach(loop_);
  }

  someip::RuntimeConfig runtime_config() const {
    const int n = spec_.subscribers;
    someip::SdTiming timing;
    timing.initial_delay_min = Duration::milliseconds(0);
    timing.initial_delay_max = Duration::milliseconds(10);
    someip::RuntimeConfig rc;
    rc.sd_timing = timing;
    rc.max_message_size = std::max<std::size_t>(spec_.payload_bytes + 64, 4096);
    rc.cost_clock = &mono_;  // SecOC call-site timing (RuntimeCounters::secoc_*_ns)
    rc.client_port = kClientPort;
    const bool mode_b = spec_.keys == KeyDistribution::kRsaModeB;
    if (publisher_) {
      rc.name = "publisher";
      rc.client_id = 0x0001;
      someip::ServiceConfig svc;
      svc.service_id = kService;
      svc.instance_id = kInstance;
      svc.udp_port = kServicePort;
      for (int i = 0; i < n; ++i) svc.methods.push_back({answer_method(i), true});
      someip::EventConfig ev;
      ev.event_id = kEvent;
      ev.eventgroups = {kEventgroup};
      svc.events = {ev};
      if (sync_) {
        someip::EventConfig se;
        se.event_id = kSyncEvent;
        se.eventgroups = {kEventgroup};
        svc.events.push_back(se);
      }
      someip::EventgroupConfig eg;
      eg.eventgroup_id = kEventgroup;
      if (spec_.multicast) {
        eg.multicast = someip::Endpoint{someip::IpAddress::v4(239, 0, 0, 1), kMulticastPort, someip::L4Proto::kUdp};
        eg.multicast_threshold = 1;
      }
      svc.eventgroups = {eg};
      rc.services = {svc};
      if (mode_b) rc.services.push_back(keymgmt::service_config(key_ids_));
    } else {
      rc.name = "subscriber-" + std::to_string(spec_.index + 1);
      rc.client_id = subscriber_client_id(spec_.index);
      someip::ClientConfig cl;
      cl.service_id = kService;
      cl.instance_id = kInstance;
      cl.udp_port = kSubscriberPort;
      cl.eventgroups = {kEventgroup};
      rc.clients = {cl};
      if (mode_b) rc.clients.push_back(keymgmt::client_config(key_ids_));
    }
    return rc;
  }

  secoc::EngineConfig publisher_engine_config() const {
    secoc::EngineConfig pe = layout::publisher_engine_config(spec_.subscribers);
    if (sync_) {
      pe.sync_tx.enabled = true;
      pe.sync_tx.data_id = kSyncDataIdBase;
      pe.sync_tx.key_group = 0;
      pe.sync_tx.auth_info_tx_length = 64;
      pe.sync_tx.period = kSyncPeriod;
    }
    // The answers have no sync (clients cannot notify); the engine still
    // wants a channel per receiver, as in the testbed.
    return pe;
  }

  // The engine, its bindings and (psk) its key, for the builder.
  node::SecocSpec secoc_spec() const {
    node::SecocSpec sc;
    if (publisher_) {
      sc.engine = publisher_engine_config();
      sc.bindings = layout::publisher_bindings(spec_.subscribers);
    } else {
      sc.engine = layout::subscriber_engine_config(spec_.index);
      sc.bindings = layout::subscriber_bindings(spec_.index);
    }
    if (sync_) {
      sc.bindings.sync_service = kService;
      sc.bindings.sync_instance = kInstance;
      sc.bindings.sync_event = kSyncEvent;
      sc.bindings.sync_rx_channel = 0;
    }
    if (spec_.keys == KeyDistribution::kPsk)
      sc.keys.push_back({0, 1, load_key(spec_.secoc_key_file, kSecocKeySize, "SecOC key")});
    return sc;
  }

  // Receive freshness (the start epoch of the peers' fresh engines), then
  // key management for rsa-mode-b.
  void provision_secoc() {
    secoc::Engine& engine = *stack_->engine();
    if (publisher_) {
      for (int i = 0; i < spec_.subscribers; ++i) {
        if (!engine.set_rx_freshness(static_cast<std::uint32_t>(i), fresh_sender_epoch(layout::subscriber_engine_config(i))))
          fail("SecOC: answer freshness provisioning refused");
      }
    } else {
      if (!engine.set_rx_freshness(0, fresh_sender_epoch(publisher_engine_config())))
        fail("SecOC: event freshness provisioning refused");
    }
    if (spec_.keys == KeyDistribution::kRsaModeB) {
      setup_mode_b();
    } else if (spec_.keys != KeyDistribution::kPsk) {
      fail("security " + to_string(spec_.security) + " needs keys psk or rsa-mode-b");
    }
  }

  void setup_mode_b() {
    auto ca = kex::Certificate::load(spec_.ca_cert_file);
    if (!ca.ok()) fail("CA certificate " + spec_.ca_cert_file + ": " + std::string(kex::to_string(ca.error())));
    auto trust = kex::TrustStore::create(std::span<const kex::Certificate>(&*ca, 1));
    if (!trust.ok()) fail("trust store: " + std::string(kex::to_string(trust.error())));
    trust_ = std::move(trust).value();
    auto cert = kex::Certificate::load(spec_.cert_file);
    if (!cert.ok()) fail("certificate " + spec_.cert_file + ": " + std::string(kex::to_string(cert.error())));
    KeyFileError detail = KeyFileError::kReadFailed;
    auto key = kex::PrivateKey::load(spec_.key_file, &detail);
    if (!key.ok())
      fail("private key " + spec_.key_file + ": " + std::string(kex::to_string(key.error())) + " (" +
           std::string(to_string(detail)) + ")");
    identity_ = std::make_unique<kex::Identity>(kex::Identity{std::move(cert).value(), std::move(key).value()});
    const std::vector<keymgmt::GroupBinding> groups = {{kService, kEventgroup, 0}};
    const std::size_t n = static_cast<std::size_t>(spec_.subscribers);
    if (publisher_) {
      keymgmt::KeyServerConfig kc;
      kc.ids = key_ids_;
      kc.mode_b.kem = kex::KemScheme::kRsa2048;
      kc.mode_b.max_pending = 4 * n + 16;
      kc.mode_b.replay_cache_size = 64 * n + 64;
      kc.groups = groups;
      key_server_start_ns_ = monotonic_now_ns();
      auto s = keymgmt::KeyServer::create(kc, stack_->runtime(), *stack_->engine(), *identity_, trust_, wall_);
      if (!s.ok()) fail("key server: " + std::string(keymgmt::to_string(s.error())));
      server_ = std::move(s).value();
    } else {
      keymgmt::KeyClientConfig kc;
      kc.ids = key_ids_;
      kc.kems = {kex::KemScheme::kRsa2048};
      kc.mode_b.kem = kex::KemScheme::kRsa2048;
      kc.groups = groups;
      auto c = keymgmt::KeyClient::create(kc, stack_->runtime(), *stack_->engine(), *identity_, trust_, wall_);
      if (!c.ok()) fail("key client: " + std::string(keymgmt::to_string(c.error())));
      client_ = std::move(c).value();
    }
  }

  // The traffic driver's view of key management (rsa-mode-b only).
  NetnsTrafficHooks traffic_hooks() {
    NetnsTrafficHooks h;
    const auto n = static_cast<std::size_t>(spec_.subscribers);
    if (server_) {
      h.group_keyed = [this, n] {
        if (server_->member_count(kService, kEventgroup) != n ||
            server_->members_on_current_key(kService, kEventgroup) != n)
          return false;
        if (!report_.establishment_ns) report_.establishment_ns = monotonic_now_ns() - key_server_start_ns_;
        return true;
      };
      h.keying_status = [this, n] {
        return ", " + std::to_string(server_->members_on_current_key(kService, kEventgroup)) + " of " +
               std::to_string(n) + " keyed (" + std::to_string(server_->member_count(kService, kEventgroup)) +
               " members)";
      };
    }
    if (client_) {
      h.before_turn = [this] {
        using S = keymgmt::KeyClient::GroupState;
        const S st = client_->state(kService, kEventgroup);
        if ((st == S::kIdle || st == S::kFailed) && loop_.now() >= next_key_try_ &&
            stack_->runtime().available(key_ids_.service_id, key_ids_.instance_id)) {
          client_->start().ignore();  // a refusal is retried below
          next_key_try_ = loop_.now() + kKeyClientRetry;
        }
      };
    }
    return h;
  }

  // --- tear-down ------------------------------------------------------------------

  void shutdown() noexcept {
    try {
      server_.reset();
      client_.reset();
      if (stack_) {
        stack_->runtime().stop();
        const TimePoint until = loop_.now() + Duration::milliseconds(5);
        loop_.run_once(until);
      }
      // The TapLink uses the stack's MACsec link: it goes first.
      if (tap_) tap_->detach(loop_);
      tap_.reset();
      stack_.reset();
      traffic_.reset();
      if (restore_address_) {
        // Put the node's address back on the veth for the next scenario.
        (void)net::run_command({"ip", "addr", "replace", spec_.ip.to_string() + "/24", "dev", spec_.interface});
        restore_address_ = false;
      }
    } catch (...) {
    }
  }

  const NetnsNodeSpec& spec_;
  const std::atomic<bool>& stop_;
  NetnsNodeReport report_;
  bool publisher_ = false;
  bool secured_ = false;
  bool macsec_ = false;
  bool sync_ = false;
  bool restore_address_ = false;

  MonotonicClock mono_;
  RealtimeClock wall_;  // Unix-epoch time, as Mode B timestamps and certificate validity need
  net::EventLoop loop_;
  keymgmt::ServiceIds key_ids_;
  std::unique_ptr<node::Stack> stack_;
  std::unique_ptr<macsec::TapLink> tap_;
  kex::TrustStore trust_;
  std::unique_ptr<kex::Identity> identity_;
  std::unique_ptr<keymgmt::KeyServer> server_;
  std::unique_ptr<keymgmt::KeyClient> client_;
  std::unique_ptr<NetnsTraffic> traffic_;

  std::int64_t key_server_start_ns_ = 0;
  TimePoint next_key_try_;  // subscriber, rsa-mode-b: earliest KeyClient restart
};

void write_report_file(const std::string& path, const NetnsNodeReport& r) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(monotonic_now_ns());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) fail("cannot write " + tmp + ": " + net::errno_text(errno));
    f << to_json(r).dump(1) << "\n";
    f.flush();
    if (!f) fail("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    fail("cannot rename the report to " + path + ": " + net::errno_text(e));
  }
}

}  // namespace

// --- run ------------------------------------------------------------------------

NetnsNodeReport run_netns_node(const NetnsNodeSpec& spec, const std::atomic<bool>& stop, std::ostream& err) {
  NetnsNodeReport out;
  out.role = spec.role;
  out.index = spec.index;
  const std::string who = spec.role == "publisher" ? "publisher" : "subscriber-" + std::to_string(spec.index + 1);
  try {
    if (auto why = validate_node_spec(spec); !why.empty()) fail("invalid spec: " + why);
    if (!in_named_netns())
      fail("refusing to run outside a named network namespace (ip netns): the node reconfigures " +
           spec.interface + " (moves or flushes its IPv4 address, disables IPv6); run it inside its own namespace");
    {
      Node node(spec, stop);
      try {
        node.run();
        node.report().ok = true;
      } catch (const std::exception& e) {
        node.report().ok = false;
        node.report().error = e.what();
      }
      node.finish_report();
      out = std::move(node.report());
    }  // the node's interfaces are restored here
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = e.what();
  } catch (...) {
    out.ok = false;
    out.error = "unknown exception";
  }
  if (!out.ok) err << "layersec scenario-node " << who << ": " << out.error << "\n";
  if (!spec.report_file.empty()) {
    try {
      write_report_file(spec.report_file, out);
    } catch (const std::exception& e) {
      err << "layersec scenario-node " << who << ": " << e.what() << "\n";
      if (out.ok) {
        out.ok = false;
        out.error = e.what();
      }
    }
  }
  return out;
}

}  // namespace layersec::harness
