// One node of the netns scenarios (netns_node.h): interface preparation,
// the SOME/IP + SecOC configuration of the testbed (testbed.cc) on real
// sockets, the closed loop and the rate phase, and the report.
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
// Readiness: the publisher waits for N subscriptions (and, rsa, every member
// on the current key), 50 ms more for the SubscribeAcks and ConfirmAcks to
// land, then sends
// probe iterations (flag kProbe) until one completes within `timeout`, all
// within ready_timeout of its start.
//
// security_rejections = SecOC rejections of the runtime + MACsec frames that
// claimed protection and failed (rx_dropped + rx_unverified). Frames without
// a SecTAG on the uncontrolled port (rx_not_macsec: host noise such as IPv6
// from a peer not yet configured) are reported in transport.macsec only.
//
// Measured-phase costs (cpu_ns, wall_ns, secoc_*): publisher from the first
// measured (or rate-phase) event to the end of its phase; subscriber from the
// last event it handled before the measured events to the last measured
// event it handled. cpu_ns is process CPU time (CLOCK_PROCESS_CPUTIME_ID): in
// a test that runs several nodes as threads of one process it covers them all.
#include "layersec/harness/netns_node.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "layersec/base/bytes.h"
#include "layersec/base/keyfile.h"
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
constexpr int kMaxSubscribers = 200;
constexpr std::size_t kMinPayload = 16;
constexpr std::size_t kMaxPayload = 60000;
constexpr std::size_t kSecocKeySize = 32;
constexpr std::size_t kSakSize = 16;
constexpr const char* kTapName = "lsec0";
constexpr Duration kSyncPeriod = Duration::seconds(1);
// From "every subscriber subscribed (and keyed)" to the first probe: time for
// the SubscribeAcks (multicast joins happen on them) and, rsa-mode-b, the last
// ConfirmAck (the client installs the key on it) to arrive, as the testbed
// waits after service discovery.
constexpr Duration kGroupSettle = Duration::milliseconds(50);
// Longest the loop sleeps before looking at `stop` again.
constexpr Duration kStopPoll = Duration::milliseconds(20);
constexpr Duration kKeyClientRetry = Duration::milliseconds(250);

// Payload flags (byte 12).
constexpr std::uint8_t kFlagProbe = 0x01;
constexpr std::uint8_t kFlagWarmup = 0x02;
constexpr std::uint8_t kFlagMeasured = 0x04;  // closed loop, measured iteration
constexpr std::uint8_t kFlagRate = 0x08;      // rate phase
constexpr std::size_t kPayloadHeader = 13;    // u32 sequence, u64 time, u8 flags


std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}
std::int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
std::int64_t cpu_ns_now() { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

// Unix-epoch time, as Mode B timestamps and certificate validity need.
class WallClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const override { return TimePoint::from_ns(clock_ns(CLOCK_REALTIME)); }
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// --- payload ------------------------------------------------------------------

struct PayloadHeader {
  std::uint32_t sequence = 0;
  std::int64_t time_ns = 0;  // event: send time; answer: the subscriber's receive time
  std::uint8_t flags = 0;
};

void write_payload_header(std::vector<std::uint8_t>& p, const PayloadHeader& h) {
  ByteWriter w(MutableByteSpan(p.data(), kPayloadHeader));
  const bool ok = w.u32(h.sequence) && w.u64(static_cast<std::uint64_t>(h.time_ns)) && w.u8(h.flags);
  (void)ok;  // p.size() >= kMinPayload > kPayloadHeader: cannot fail
}

std::optional<PayloadHeader> read_payload_header(ByteSpan p) {
  if (p.size() < kPayloadHeader) return std::nullopt;
  ByteReader r(p.first(kPayloadHeader));
  PayloadHeader h;
  h.sequence = r.u32();
  h.time_ns = static_cast<std::int64_t>(r.u64());
  h.flags = r.u8();
  if (!r.ok()) return std::nullopt;
  return h;
}

// --- JSON reading with named fields ---------------------------------------------

// Reads optional fields of one object; the first error (naming the field) is
// sticky, so a long list of reads is checked once at the end.
class FieldReader {
 public:
  FieldReader(const json& j, std::string prefix) : j_(j), prefix_(std::move(prefix)) {
    if (!j_.is_object()) error_ = (prefix_.empty() ? std::string("spec") : prefix_) + ": expected a JSON object";
  }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] bool ok() const { return error_.empty(); }

  const json* field(const char* name, bool required) {
    if (!ok()) return nullptr;
    auto it = j_.find(name);
    if (it == j_.end() || it->is_null()) {
      if (required) set(name, "missing");
      return nullptr;
    }
    return &*it;
  }
  void string(const char* name, std::string& out, bool required = false) {
    if (const json* v = field(name, required)) {
      if (!v->is_string()) return set(name, "expected a string");
      out = v->get<std::string>();
    }
  }
  void boolean(const char* name, bool& out) {
    if (const json* v = field(name, false)) {
      if (!v->is_boolean()) return set(name, "expected true or false");
      out = v->get<bool>();
    }
  }
  template <class T>
  void integer(const char* name, T& out, std::int64_t lo, std::int64_t hi, bool required = false) {
    if (const json* v = field(name, required)) {
      if (!v->is_number_integer()) return set(name, "expected an integer");
      if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
        return set(name, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      const auto x = v->get<std::int64_t>();
      if (x < lo || x > hi) return set(name, "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      out = static_cast<T>(x);
    }
  }
  void unsigned64(const char* name, std::uint64_t& out) {
    if (const json* v = field(name, false)) {
      if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0))
        return set(name, "expected a non-negative integer");
      out = v->get<std::uint64_t>();
    }
  }
  void number(const char* name, double& out, double lo, double hi) {
    if (const json* v = field(name, false)) {
      if (!v->is_number()) return set(name, "expected a number");
      const double x = v->get<double>();
      if (!std::isfinite(x) || x < lo || x > hi) return set(name, "out of range");
      out = x;
    }
  }
  void duration_ns(const char* name, Duration& out, Duration lo) {
    std::int64_t ns = out.ns();
    integer(name, ns, lo.ns(), std::numeric_limits<std::int64_t>::max());
    out = Duration::nanoseconds(ns);
  }
  void ipv4(const char* name, net::Ipv4Address& out, bool required) {
    if (const json* v = field(name, required)) {
      auto a = v->is_string() ? net::Ipv4Address::parse(v->get<std::string>()) : std::nullopt;
      if (!a) return set(name, "expected a dotted-quad IPv4 address");
      out = *a;
    }
  }
  void mac(const char* name, net::MacAddress& out, bool required) {
    if (const json* v = field(name, required)) {
      auto m = v->is_string() ? net::MacAddress::parse(v->get<std::string>()) : std::nullopt;
      if (!m) return set(name, "expected a MAC address aa:bb:cc:dd:ee:ff");
      out = *m;
    }
  }
  void set(const std::string& name, const std::string& what) {
    if (ok()) error_ = prefix_ + name + ": " + what;
  }

 private:
  const json& j_;
  std::string prefix_;
  std::string error_;
};

std::optional<Security> security_from(const std::string& s) {
  if (s == "none") return Security::kNone;
  if (s == "secoc") return Security::kSecoc;
  if (s == "hybrid") return Security::kHybrid;
  return std::nullopt;
}

std::optional<KeyDistribution> keys_from(const std::string& s) {
  if (s == "none") return KeyDistribution::kNone;
  if (s == "psk") return KeyDistribution::kPsk;
  if (s == "rsa-mode-b") return KeyDistribution::kRsaModeB;
  return std::nullopt;  // group-mode-b is a simulated-testbed scenario only
}

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

// What the measured-phase figures are differences of.
struct CostSnapshot {
  std::int64_t cpu_ns = 0;
  std::int64_t wall_ns = 0;
  std::uint64_t protect_ns = 0;
  std::uint64_t verify_ns = 0;
  std::uint64_t protected_ = 0;
  std::uint64_t verified = 0;
};

CostSnapshot snapshot(const someip::Runtime& rt) {
  const auto& c = rt.counters();
  return {cpu_ns_now(), mono_ns(), c.secoc_protect_ns, c.secoc_verify_ns, c.secoc_protected, c.secoc_verified};
}

void apply_costs(NetnsNodeReport& r, const CostSnapshot& a, const CostSnapshot& b) {
  r.cpu_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.cpu_ns - a.cpu_ns));
  r.wall_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.wall_ns - a.wall_ns));
  r.secoc_protect_ns = b.protect_ns - a.protect_ns;
  r.secoc_verify_ns = b.verify_ns - a.verify_ns;
  r.secoc_protected = b.protected_ - a.protected_;
  r.secoc_verified = b.verified - a.verified;
}

// --- the node ---------------------------------------------------------------------

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
    prepare_interfaces();
    open_transport();
    build_runtime();
    if (secured_) setup_secoc();
    install_handlers();
    if (auto st = runtime_->start(); !st.ok()) {
      fail("SOME/IP runtime did not start: " + std::string(someip::to_string(st.error())) +
           (socket_ ? " (errno " + std::to_string(socket_->last_errno()) + ")" : std::string()));
    }
    started_ns_ = mono_ns();
    if (publisher_) {
      run_publisher();
    } else {
      run_subscriber();
    }
  }

  // Counters of the whole run into the report (also after a failure).
  void finish_report() {
    report_.rss_kib = rss_kib();
    json t = json::object();
    t["path"] = to_string(spec_.path);
    if (socket_) {
      const auto& s = socket_->stats();
      t["socket"] = {{"rx_datagrams", s.rx_datagrams}, {"rx_truncated", s.rx_truncated},
                     {"rx_not_joined", s.rx_not_joined}, {"rx_errors", s.rx_errors}, {"tx_errors", s.tx_errors}};
    }
    if (raw_) {
      const auto& s = raw_->stats();
      t["raw"] = {{"tx_frames", s.tx_frames},         {"tx_filter_refused", s.tx_filter_refused},
                  {"tx_errors", s.tx_errors},         {"tx_unreachable", s.tx_unreachable},
                  {"tx_too_large", s.tx_too_large},   {"rx_frames", s.rx_frames},
                  {"rx_filter_dropped", s.rx_filter_dropped}, {"rx_not_udp", s.rx_not_udp},
                  {"rx_malformed", s.rx_malformed},   {"rx_not_for_us", s.rx_not_for_us},
                  {"rx_datagrams", s.rx_datagrams},   {"rx_errors", s.rx_errors}};
    }
    std::uint64_t rejections = 0;
    if (mlink_) {
      t["macsec"] = mlink_->stats_json();
      rejections += mlink_->stats().rx_dropped + mlink_->stats().rx_unverified;
    }
    if (runtime_) {
      t["runtime"] = someip::to_json(runtime_->counters());
      rejections += runtime_->counters().secoc_rejected;
    }
    if (!rejection_reasons_.empty()) t["secoc_rejections"] = rejection_reasons_;
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
    t["notify_failures"] = notify_failures_;
    report_.transport = std::move(t);
    report_.security_rejections = rejections;
  }

 private:
  // --- set-up ---------------------------------------------------------------------

  void prepare_interfaces() {
    const std::string& ifname = spec_.interface;
    write_sysctl("/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6", "1");
    const bool tap = spec_.path == LinkPath::kKernel && macsec_;
    const bool raw = spec_.path == LinkPath::kRaw;
    if (macsec_) {
      write_sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
      const SecretBytes sak = load_key(spec_.macsec_key_file, kSakSize, "MACsec SAK");
      macsec::SecYConfig c;
      c.sci = macsec::Sci::from_parts(spec_.mac.bytes.data(), 1);
      c.suite = macsec::CipherSuite::kGcmAes128;
      c.validate_frames = macsec::ValidateFrames::kStrict;
      c.confidentiality = true;
      c.replay_protect = true;
      macsec::SecY secy(c);
      const macsec::SaKeys keys{ByteSpan(sak.span())};
      auto check = [](Status<macsec::SaError> st, const std::string& what) {
        if (!st.ok()) fail("MACsec " + what + ": " + std::string(macsec::to_string(st.error())));
      };
      check(secy.install_tx_sa(0, keys, 1), "Tx SA");
      check(secy.set_encoding_sa(0), "encoding SA");
      for (const auto& p : spec_.peers) {
        const auto sci = macsec::Sci::from_parts(p.mac.bytes.data(), 1);
        check(secy.add_rx_sc(sci), "Rx SC of " + p.name);
        check(secy.install_rx_sa(sci, 0, keys, 1), "Rx SA of " + p.name);
      }
      mlink_ = std::make_unique<macsec::MacsecLink>(std::move(secy));
    }
    if (tap) {
      macsec::TapLinkOptions o;
      o.lower = ifname;
      o.name = kTapName;
      o.mac = spec_.mac;  // SCIs derive from the spec's MAC: the TAP sends with it
      o.bring_up = true;
      tap_ = std::make_unique<macsec::TapLink>(macsec::TapLink::open(*mlink_, o));
      write_sysctl("/proc/sys/net/ipv6/conf/" + tap_->name() + "/disable_ipv6", "1");
      restore_address_ = true;
      must_run({"ip", "-4", "addr", "flush", "dev", ifname});
      must_run({"ip", "addr", "add", spec_.ip.to_string() + "/24", "dev", tap_->name()});
      must_run({"ip", "link", "set", tap_->name(), "mtu", std::to_string(tap_->mtu()), "up"});
      tap_->attach(loop_);
    } else if (raw) {
      restore_address_ = true;
      must_run({"ip", "-4", "addr", "flush", "dev", ifname});
    }
  }

  void open_transport() {
    if (spec_.path == LinkPath::kKernel) {
      socket_ = std::make_unique<someip::SocketTransport>(loop_, spec_.ip);
      transport_ = socket_.get();
      return;
    }
    if (macsec_) filter_ = std::make_unique<macsec::MacsecFilter>(*mlink_);
    someip::RawTransportConfig rc;
    rc.interface = spec_.interface;
    rc.address = spec_.ip;
    for (const auto& p : spec_.peers) rc.neighbours[p.ip] = p.mac;
    if (auto mtu = net::interface_mtu(spec_.interface); mtu.ok()) {
      rc.mtu = static_cast<std::size_t>(*mtu);
    } else {
      fail("interface " + spec_.interface + ": cannot read its MTU: " + net::errno_text(errno));
    }
    int err = 0;
    auto t = someip::RawTransport::open(loop_, rc, filter_.get(), &err);
    if (!t.ok())
      fail("raw transport on " + spec_.interface + ": " + std::string(someip::to_string(t.error())) + ": " +
           net::errno_text(err));
    raw_ = std::move(t).value();
    transport_ = raw_.get();
  }

  void build_runtime() {
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
    random_ = std::make_unique<someip::SeededRandom>(static_cast<std::uint64_t>(mono_ns()) ^
                                                     (static_cast<std::uint64_t>(::getpid()) << 20) ^
                                                     static_cast<std::uint64_t>(spec_.index + 1));
    try {
      runtime_ = std::make_unique<someip::Runtime>(std::move(rc), *transport_, *random_);
    } catch (const std::invalid_argument& e) {
      fail(std::string("SOME/IP configuration: ") + e.what());
    }
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

  void setup_secoc() {
    const int n = spec_.subscribers;
    someip::SecocBindings b;
    secoc::EngineConfig cfg;
    if (publisher_) {
      cfg = publisher_engine_config();
      b = layout::publisher_bindings(n);
    } else {
      cfg = layout::subscriber_engine_config(spec_.index);
      b = layout::subscriber_bindings(spec_.index);
    }
    if (sync_) {
      b.sync_service = kService;
      b.sync_instance = kInstance;
      b.sync_event = kSyncEvent;
      b.sync_rx_channel = 0;
    }
    try {
      auto e = secoc::Engine::start(cfg, store_);
      if (!e.ok()) fail("SecOC engine did not start");
      engine_ = std::move(e).value();
      runtime_->attach_secoc(*engine_, b);
    } catch (const std::invalid_argument& e) {
      fail(std::string("SecOC configuration: ") + e.what());
    }

    // Receive freshness: the start epoch of the peers' fresh engines.
    if (publisher_) {
      for (int i = 0; i < n; ++i) {
        if (!engine_->set_rx_freshness(static_cast<std::uint32_t>(i), fresh_sender_epoch(layout::subscriber_engine_config(i))))
          fail("SecOC: answer freshness provisioning refused");
      }
    } else {
      if (!engine_->set_rx_freshness(0, fresh_sender_epoch(publisher_engine_config())))
        fail("SecOC: event freshness provisioning refused");
    }

    if (spec_.keys == KeyDistribution::kPsk) {
      const SecretBytes key = load_key(spec_.secoc_key_file, kSecocKeySize, "SecOC key");
      if (auto st = engine_->install_key(0, 1, key, loop_.now()); !st.ok()) fail("SecOC key installation refused");
    } else if (spec_.keys == KeyDistribution::kRsaModeB) {
      setup_mode_b();
    } else {
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
      key_server_start_ns_ = mono_ns();
      auto s = keymgmt::KeyServer::create(kc, *runtime_, *engine_, *identity_, trust_, wall_);
      if (!s.ok()) fail("key server: " + std::string(keymgmt::to_string(s.error())));
      server_ = std::move(s).value();
    } else {
      keymgmt::KeyClientConfig kc;
      kc.ids = key_ids_;
      kc.kems = {kex::KemScheme::kRsa2048};
      kc.mode_b.kem = kex::KemScheme::kRsa2048;
      kc.groups = groups;
      auto c = keymgmt::KeyClient::create(kc, *runtime_, *engine_, *identity_, trust_, wall_);
      if (!c.ok()) fail("key client: " + std::string(keymgmt::to_string(c.error())));
      client_ = std::move(c).value();
    }
  }

  void install_handlers() {
    runtime_->on_rejection([this](const someip::SecurityRejection& r) {
      const std::string key = std::string(secoc::to_string(r.reason)) + (r.sd ? "/sd" : "");
      rejection_reasons_[key] = rejection_reasons_.value(key, 0) + 1;
    });
    payload_.assign(spec_.payload_bytes, 0);
    if (publisher_) {
      answered_.assign(static_cast<std::size_t>(spec_.subscribers), false);
      for (int i = 0; i < spec_.subscribers; ++i) {
        auto st = runtime_->set_method_handler(kService, kInstance, answer_method(i),
                                               [this, i](const someip::Request& req, someip::Reply&) {
                                                 on_answer(i, req.payload);
                                               });
        if (!st.ok()) fail("answer handler: " + std::string(someip::to_string(st.error())));
      }
    } else {
      runtime_->on_event(kService, kEvent, [this](const someip::Notification& n) { on_event(n.payload); });
    }
  }

  // Runs the loop once, waking no later than `deadline` nor kStopPoll from now.
  void turn(TimePoint deadline) {
    const TimePoint cap = loop_.now() + kStopPoll;
    loop_.run_once(std::min(deadline, cap));
  }
  [[nodiscard]] bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  // --- publisher ------------------------------------------------------------------

  enum class Phase : std::uint8_t {
    kWaitingForGroup,  // subscriptions (and keys) not complete yet
    kProbing,          // a readiness probe is in flight
    kWarmup,           // closed loop, not recorded
    kMeasuring,        // closed loop, recorded
    kRate,             // rate phase (timer driven)
    kDone,
  };

  bool group_ready() {
    const auto n = static_cast<std::size_t>(spec_.subscribers);
    if (runtime_->subscriber_count(kService, kInstance, kEventgroup) != n) return false;
    if (!server_) return true;
    if (server_->member_count(kService, kEventgroup) != n || server_->members_on_current_key(kService, kEventgroup) != n)
      return false;
    if (!report_.establishment_ns) report_.establishment_ns = mono_ns() - key_server_start_ns_;
    return true;
  }

  // Sends one closed-loop event; false when the runtime refused it.
  bool send_iteration(std::uint8_t flags) {
    ++sequence_;
    std::fill(answered_.begin(), answered_.end(), false);
    answers_ = 0;
    last_one_way_ = 0;
    in_flight_ = true;
    const std::int64_t t = mono_ns();
    t_send_ = t;
    write_payload_header(payload_, {sequence_, t, flags});
    iteration_deadline_ = loop_.now() + spec_.timeout;
    if (!runtime_->notify(kService, kInstance, kEvent, payload_).ok()) {
      ++notify_failures_;
      return false;
    }
    return true;
  }

  void on_answer(int i, ByteSpan payload) {
    auto h = read_payload_header(payload);
    if (!h || !in_flight_ || h->sequence != sequence_) return;
    auto idx = static_cast<std::size_t>(i);
    if (answered_[idx]) return;
    answered_[idx] = true;
    last_one_way_ = std::max(last_one_way_, h->time_ns - t_send_);
    if (++answers_ == spec_.subscribers) {
      t_done_ = mono_ns();
      in_flight_ = false;
      iteration_complete_ = true;
    }
  }

  void run_publisher() {
    const TimePoint ready_deadline = loop_.now() + spec_.ready_timeout;
    Phase phase = Phase::kWaitingForGroup;
    TimePoint group_ready_at = TimePoint::max();  // max: not all subscribed (and keyed) yet
    TimePoint next_start = loop_.now();
    bool pacing = false;     // closed loop: waiting for next_start
    bool measuring = false;  // the measured phase has begun (costs snapshot taken)
    int warmup_left = spec_.warmup;
    int measured_left = spec_.iterations;
    CostSnapshot cost_start;

    while (phase != Phase::kDone) {
      if (stopping()) fail("stopped before the publisher's phase ended");
      switch (phase) {
        case Phase::kWaitingForGroup: {
          const TimePoint now = loop_.now();
          if (now >= ready_deadline) fail(not_ready_reason());
          if (!group_ready()) {
            group_ready_at = TimePoint::max();
            turn(now + Duration::milliseconds(2));
            break;
          }
          if (group_ready_at == TimePoint::max()) group_ready_at = now;
          if (now - group_ready_at < kGroupSettle) {
            turn(group_ready_at + kGroupSettle);
            break;
          }
          ++report_.ready_probes;
          (void)send_iteration(kFlagProbe);
          phase = Phase::kProbing;
          break;
        }
        case Phase::kProbing: {
          if (iteration_complete_) {
            iteration_complete_ = false;
            report_.ready_ns = mono_ns() - started_ns_;
            if (spec_.mode == "rate") {
              start_rate_phase();
              phase = Phase::kRate;
            } else if (warmup_left == 0 && measured_left == 0) {
              phase = Phase::kDone;
            } else {
              phase = warmup_left > 0 ? Phase::kWarmup : Phase::kMeasuring;
              pacing = true;
              next_start = loop_.now() + spec_.pacing;
            }
            break;
          }
          const TimePoint now = loop_.now();
          if (now >= iteration_deadline_) {
            in_flight_ = false;
            if (now >= ready_deadline) fail(not_ready_reason());
            phase = Phase::kWaitingForGroup;
            break;
          }
          turn(iteration_deadline_);
          break;
        }
        case Phase::kWarmup:
        case Phase::kMeasuring: {
          const bool measured = phase == Phase::kMeasuring;
          if (pacing) {
            if (loop_.now() < next_start) {
              turn(next_start);
              break;
            }
            pacing = false;
            if (measured && !measuring) {
              measuring = true;
              cost_start = snapshot(*runtime_);
            }
            // A refused notify is not retried: the iteration times out.
            (void)send_iteration(measured ? kFlagMeasured : kFlagWarmup);
            break;
          }
          if (iteration_complete_) {
            iteration_complete_ = false;
            if (measured) {
              report_.half_rtt_ns.push_back((t_done_ - t_send_) / 2);
              report_.one_way_ns.push_back(last_one_way_);
              ++report_.iterations_completed;
            }
          } else if (loop_.now() >= iteration_deadline_) {
            in_flight_ = false;
            if (measured) ++report_.timeouts;
          } else {
            turn(iteration_deadline_);
            break;
          }
          if (!measured) {
            if (--warmup_left == 0) phase = Phase::kMeasuring;
          } else if (--measured_left == 0) {
            apply_costs(report_, cost_start, snapshot(*runtime_));
            phase = Phase::kDone;
            break;
          }
          if (phase == Phase::kMeasuring && measured_left == 0) {
            phase = Phase::kDone;  // warm-up only
            break;
          }
          pacing = true;
          next_start = loop_.now() + spec_.pacing;
          break;
        }
        case Phase::kRate:
          if (rate_done_) {
            phase = Phase::kDone;
            break;
          }
          turn(TimePoint::max());
          break;
        case Phase::kDone:
          break;
      }
    }
    // Let the last datagrams leave before the runtime stops.
    const TimePoint linger = loop_.now() + Duration::milliseconds(20);
    while (loop_.now() < linger) loop_.run_once(linger);
  }

  std::string not_ready_reason() {
    const auto n = static_cast<std::size_t>(spec_.subscribers);
    std::string why = "not ready within ready_timeout (" + std::to_string(spec_.ready_timeout.ms()) + " ms): " +
                      std::to_string(runtime_->subscriber_count(kService, kInstance, kEventgroup)) + " of " +
                      std::to_string(n) + " subscribed";
    if (server_) {
      why += ", " + std::to_string(server_->members_on_current_key(kService, kEventgroup)) + " of " +
             std::to_string(n) + " keyed (" + std::to_string(server_->member_count(kService, kEventgroup)) +
             " members)";
    }
    why += ", " + std::to_string(report_.ready_probes) + " probes, none answered by every subscriber";
    if (report_.ready_probes > 0) {
      std::string missing;
      for (std::size_t i = 0; i < answered_.size(); ++i)
        if (!answered_[i]) missing += (missing.empty() ? "" : ",") + std::to_string(i);
      why += " (last probe unanswered by subscriber " + missing + ")";
    }
    return why;
  }

  void start_rate_phase() {
    rate_t0_ = loop_.now();
    rate_index_ = 0;
    rate_cost_start_ = snapshot(*runtime_);
    schedule_rate();
  }

  TimePoint rate_deadline(std::uint64_t k) const {
    return rate_t0_ + Duration::nanoseconds(std::llround(static_cast<double>(k) * 1e9 / spec_.rate_hz));
  }

  // Absolute deadlines: event k is due at t0 + k / rate; a late loop sends
  // every event already due before it sleeps again.
  void schedule_rate() {
    loop_.add_timer(rate_deadline(rate_index_), [this] {
      const TimePoint end = rate_t0_ + spec_.rate_duration;
      TimePoint now = loop_.now();
      while (rate_deadline(rate_index_) < end && rate_deadline(rate_index_) <= now) {
        write_payload_header(payload_, {static_cast<std::uint32_t>(rate_index_), mono_ns(), kFlagRate});
        if (runtime_->notify(kService, kInstance, kEvent, payload_).ok()) {
          ++report_.sent;
        } else {
          ++notify_failures_;
        }
        ++rate_index_;
        now = loop_.now();
      }
      if (rate_deadline(rate_index_) < end) {
        schedule_rate();
        return;
      }
      const TimePoint finished = loop_.now();
      apply_costs(report_, rate_cost_start_, snapshot(*runtime_));
      const double wall_s = std::max((finished - rate_t0_).s(), spec_.rate_duration.s());
      report_.achieved_rate_hz = wall_s > 0 ? static_cast<double>(report_.sent) / wall_s : 0;
      rate_done_ = true;
    });
  }

  // --- subscriber -----------------------------------------------------------------

  void on_event(ByteSpan payload) {
    auto h = read_payload_header(payload);
    if (!h) return;
    const std::int64_t t_rx = mono_ns();
    if (h->flags & kFlagRate) {
      ++report_.received;
      max_rate_sequence_ = std::max<std::int64_t>(max_rate_sequence_, h->sequence);
      report_.one_way_ns.push_back(t_rx - h->time_ns);
      if (!measured_seen_) {
        measured_seen_ = true;
        cost_start_ = cost_base_;
      }
      cost_end_ = snapshot(*runtime_);
      return;
    }
    // Closed loop: answer with our receive time (same size as the event).
    answer_.assign(payload.begin(), payload.end());
    write_payload_header(answer_, {h->sequence, t_rx, h->flags});
    if (!runtime_->fire_and_forget(kService, kInstance, answer_method(spec_.index), answer_).ok()) ++notify_failures_;
    if (h->flags & kFlagMeasured) {
      report_.one_way_ns.push_back(t_rx - h->time_ns);
      if (!measured_seen_) {
        measured_seen_ = true;
        cost_start_ = cost_base_;
      }
      cost_end_ = snapshot(*runtime_);
    } else {
      cost_base_ = snapshot(*runtime_);
    }
  }

  void run_subscriber() {
    cost_base_ = snapshot(*runtime_);
    TimePoint next_key_try = loop_.now();
    while (!stopping()) {
      if (client_) {
        using S = keymgmt::KeyClient::GroupState;
        const S st = client_->state(kService, kEventgroup);
        if ((st == S::kIdle || st == S::kFailed) && loop_.now() >= next_key_try &&
            runtime_->available(key_ids_.service_id, key_ids_.instance_id)) {
          client_->start().ignore();  // a refusal is retried below
          next_key_try = loop_.now() + kKeyClientRetry;
        }
      }
      turn(loop_.now() + kStopPoll);
    }
    if (measured_seen_) apply_costs(report_, cost_start_, cost_end_);
    if (report_.received > 0) {
      const auto expected = static_cast<std::uint64_t>(max_rate_sequence_ + 1);
      report_.lost = expected > report_.received ? expected - report_.received : 0;
    }
  }

  // --- tear-down ------------------------------------------------------------------

  void shutdown() noexcept {
    try {
      server_.reset();
      client_.reset();
      if (runtime_) {
        runtime_->stop();
        const TimePoint until = loop_.now() + Duration::milliseconds(5);
        loop_.run_once(until);
      }
      runtime_.reset();
      raw_.reset();
      socket_.reset();
      filter_.reset();
      if (tap_) tap_->detach(loop_);
      tap_.reset();
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
  WallClock wall_;
  net::EventLoop loop_;
  keymgmt::ServiceIds key_ids_;
  std::unique_ptr<macsec::MacsecLink> mlink_;
  std::unique_ptr<macsec::TapLink> tap_;
  std::unique_ptr<macsec::MacsecFilter> filter_;
  std::unique_ptr<someip::SocketTransport> socket_;
  std::unique_ptr<someip::RawTransport> raw_;
  someip::Transport* transport_ = nullptr;
  std::unique_ptr<someip::SeededRandom> random_;
  secoc::MemoryStateStore store_;
  std::unique_ptr<secoc::Engine> engine_;
  std::unique_ptr<someip::Runtime> runtime_;
  kex::TrustStore trust_;
  std::unique_ptr<kex::Identity> identity_;
  std::unique_ptr<keymgmt::KeyServer> server_;
  std::unique_ptr<keymgmt::KeyClient> client_;

  std::int64_t started_ns_ = 0;
  std::int64_t key_server_start_ns_ = 0;
  json rejection_reasons_ = json::object();
  std::uint64_t notify_failures_ = 0;
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint8_t> answer_;

  // Publisher loop state.
  std::uint32_t sequence_ = 0;
  std::vector<bool> answered_;
  int answers_ = 0;
  bool in_flight_ = false;
  bool iteration_complete_ = false;
  std::int64_t t_send_ = 0;
  std::int64_t t_done_ = 0;
  std::int64_t last_one_way_ = 0;
  TimePoint iteration_deadline_;
  TimePoint rate_t0_;
  std::uint64_t rate_index_ = 0;
  bool rate_done_ = false;
  CostSnapshot rate_cost_start_;

  // Subscriber state.
  std::int64_t max_rate_sequence_ = -1;
  bool measured_seen_ = false;
  CostSnapshot cost_base_, cost_start_, cost_end_;
};

void write_report_file(const std::string& path, const NetnsNodeReport& r) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(mono_ns());
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

std::string validate(const NetnsNodeSpec& s) {
  if (s.role != "publisher" && s.role != "subscriber") return "role: expected \"publisher\" or \"subscriber\"";
  if (s.subscribers < 1 || s.subscribers > kMaxSubscribers) return "subscribers: out of range [1, 200]";
  if (s.role == "subscriber" && (s.index < 0 || s.index >= s.subscribers))
    return "index: must be in [0, subscribers)";
  if (s.payload_bytes < kMinPayload || s.payload_bytes > kMaxPayload) return "payload_bytes: out of range [16, 60000]";
  if (s.mode != "closed-loop" && s.mode != "rate") return "mode: expected \"closed-loop\" or \"rate\"";
  if (s.mode == "rate" && s.rate_hz <= 0) return "rate_hz: must be > 0 in rate mode";
  const bool secured = s.security != Security::kNone;
  if (secured && s.keys == KeyDistribution::kNone) return "keys: security " + to_string(s.security) + " needs keys";
  if (!secured && s.keys != KeyDistribution::kNone) return "keys: must be \"none\" without security";
  if (s.keys == KeyDistribution::kPsk && s.secoc_key_file.empty()) return "secoc_key_file: missing (keys psk)";
  if (s.security == Security::kHybrid && s.macsec_key_file.empty()) return "macsec_key_file: missing (hybrid)";
  if (s.keys == KeyDistribution::kRsaModeB) {
    if (s.ca_cert_file.empty()) return "ca_cert_file: missing (keys rsa-mode-b)";
    if (s.cert_file.empty()) return "cert_file: missing (keys rsa-mode-b)";
    if (s.key_file.empty()) return "key_file: missing (keys rsa-mode-b)";
  }
  if (s.interface.empty()) return "interface: must not be empty";
  return {};
}

}  // namespace

std::string to_string(LinkPath p) { return p == LinkPath::kRaw ? "raw" : "kernel"; }

// --- JSON -------------------------------------------------------------------------

json to_json(const NetnsNodeSpec& s) {
  json peers = json::array();
  for (const auto& p : s.peers) peers.push_back({{"name", p.name}, {"ip", p.ip.to_string()}, {"mac", p.mac.to_string()}});
  return {{"role", s.role},
          {"index", s.index},
          {"subscribers", s.subscribers},
          {"path", to_string(s.path)},
          {"security", to_string(s.security)},
          {"keys", to_string(s.keys)},
          {"multicast", s.multicast},
          {"payload_bytes", s.payload_bytes},
          {"interface", s.interface},
          {"ip", s.ip.to_string()},
          {"mac", s.mac.to_string()},
          {"peers", peers},
          {"publisher_ip", s.publisher_ip.to_string()},
          {"secoc_key_file", s.secoc_key_file},
          {"macsec_key_file", s.macsec_key_file},
          {"ca_cert_file", s.ca_cert_file},
          {"cert_file", s.cert_file},
          {"key_file", s.key_file},
          {"mode", s.mode},
          {"iterations", s.iterations},
          {"warmup", s.warmup},
          {"pacing_ns", s.pacing.ns()},
          {"timeout_ns", s.timeout.ns()},
          {"rate_hz", s.rate_hz},
          {"rate_duration_ns", s.rate_duration.ns()},
          {"ready_timeout_ns", s.ready_timeout.ns()},
          {"report_file", s.report_file}};
}

NetnsNodeSpec node_spec_from_json(const json& j) {
  NetnsNodeSpec s;
  FieldReader r(j, "");
  r.string("role", s.role, true);
  r.integer("index", s.index, 0, kMaxSubscribers - 1);
  r.integer("subscribers", s.subscribers, 1, kMaxSubscribers);
  std::string path = to_string(s.path), security = to_string(s.security), keys = to_string(s.keys);
  r.string("path", path);
  if (r.ok() && path != "kernel" && path != "raw") r.set("path", "expected \"kernel\" or \"raw\"");
  s.path = path == "raw" ? LinkPath::kRaw : LinkPath::kKernel;
  r.string("security", security);
  if (auto v = security_from(security)) {
    s.security = *v;
  } else {
    r.set("security", "expected \"none\", \"secoc\" or \"hybrid\"");
  }
  r.string("keys", keys);
  if (auto v = keys_from(keys)) {
    s.keys = *v;
  } else {
    r.set("keys", "expected \"none\", \"psk\" or \"rsa-mode-b\"");
  }
  r.boolean("multicast", s.multicast);
  r.integer("payload_bytes", s.payload_bytes, kMinPayload, kMaxPayload);
  r.string("interface", s.interface);
  r.ipv4("ip", s.ip, true);
  r.mac("mac", s.mac, true);
  if (const json* peers = r.field("peers", false)) {
    if (!peers->is_array()) {
      r.set("peers", "expected an array");
    } else {
      for (std::size_t i = 0; i < peers->size() && r.ok(); ++i) {
        NetnsPeer p;
        FieldReader pr((*peers)[i], "peers[" + std::to_string(i) + "].");
        pr.string("name", p.name, true);
        pr.ipv4("ip", p.ip, true);
        pr.mac("mac", p.mac, true);
        if (!pr.ok()) throw NetnsJsonError(pr.error());
        s.peers.push_back(std::move(p));
      }
    }
  }
  r.ipv4("publisher_ip", s.publisher_ip, true);
  r.string("secoc_key_file", s.secoc_key_file);
  r.string("macsec_key_file", s.macsec_key_file);
  r.string("ca_cert_file", s.ca_cert_file);
  r.string("cert_file", s.cert_file);
  r.string("key_file", s.key_file);
  r.string("mode", s.mode);
  r.integer("iterations", s.iterations, 0, 100'000'000);
  r.integer("warmup", s.warmup, 0, 100'000'000);
  r.duration_ns("pacing_ns", s.pacing, Duration::zero());
  r.duration_ns("timeout_ns", s.timeout, Duration::nanoseconds(1));
  r.number("rate_hz", s.rate_hz, 0, 1e9);
  r.duration_ns("rate_duration_ns", s.rate_duration, Duration::zero());
  r.duration_ns("ready_timeout_ns", s.ready_timeout, Duration::nanoseconds(1));
  r.string("report_file", s.report_file);
  if (!r.ok()) throw NetnsJsonError(r.error());
  if (auto why = validate(s); !why.empty()) throw NetnsJsonError(why);
  return s;
}

namespace {

// The report's counters, read and written by name.
struct CounterField {
  const char* name;
  std::uint64_t NetnsNodeReport::*member;
};
constexpr CounterField kReportCounters[] = {
    {"iterations_completed", &NetnsNodeReport::iterations_completed},
    {"timeouts", &NetnsNodeReport::timeouts},
    {"sent", &NetnsNodeReport::sent},
    {"received", &NetnsNodeReport::received},
    {"lost", &NetnsNodeReport::lost},
    {"secoc_protect_ns", &NetnsNodeReport::secoc_protect_ns},
    {"secoc_verify_ns", &NetnsNodeReport::secoc_verify_ns},
    {"secoc_protected", &NetnsNodeReport::secoc_protected},
    {"secoc_verified", &NetnsNodeReport::secoc_verified},
    {"cpu_ns", &NetnsNodeReport::cpu_ns},
    {"wall_ns", &NetnsNodeReport::wall_ns},
    {"rss_kib", &NetnsNodeReport::rss_kib},
    {"security_rejections", &NetnsNodeReport::security_rejections},
    {"ready_probes", &NetnsNodeReport::ready_probes},
};

json optional_ns(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }

void read_optional_ns(FieldReader& f, const char* name, std::optional<std::int64_t>& out) {
  if (const json* v = f.field(name, false)) {
    if (!v->is_number_integer()) return f.set(name, "expected an integer or null");
    out = v->get<std::int64_t>();
  }
}

void read_samples(FieldReader& f, const char* name, std::vector<std::int64_t>& out) {
  if (const json* v = f.field(name, false)) {
    if (!v->is_array()) return f.set(name, "expected an array of integers");
    out.reserve(v->size());
    for (const auto& x : *v) {
      if (!x.is_number_integer()) return f.set(name, "expected an array of integers");
      out.push_back(x.get<std::int64_t>());
    }
  }
}

}  // namespace

json to_json(const NetnsNodeReport& r) {
  json j{{"role", r.role},
         {"index", r.index},
         {"ok", r.ok},
         {"error", r.error},
         {"half_rtt_ns", r.half_rtt_ns},
         {"one_way_ns", r.one_way_ns},
         {"achieved_rate_hz", r.achieved_rate_hz},
         {"establishment_ns", optional_ns(r.establishment_ns)},
         {"ready_ns", optional_ns(r.ready_ns)},
         {"transport", r.transport.is_null() ? json::object() : r.transport}};
  for (const auto& c : kReportCounters) j[c.name] = r.*c.member;
  return j;
}

NetnsNodeReport node_report_from_json(const json& j) {
  NetnsNodeReport r;
  FieldReader f(j, "");
  f.string("role", r.role, true);
  if (f.ok() && r.role != "publisher" && r.role != "subscriber")
    f.set("role", "expected \"publisher\" or \"subscriber\"");
  f.integer("index", r.index, 0, kMaxSubscribers - 1);
  if (const json* v = f.field("ok", true)) {
    if (!v->is_boolean()) {
      f.set("ok", "expected true or false");
    } else {
      r.ok = v->get<bool>();
    }
  }
  f.string("error", r.error);
  read_samples(f, "half_rtt_ns", r.half_rtt_ns);
  read_samples(f, "one_way_ns", r.one_way_ns);
  for (const auto& c : kReportCounters) f.unsigned64(c.name, r.*c.member);
  f.number("achieved_rate_hz", r.achieved_rate_hz, 0, 1e12);
  read_optional_ns(f, "establishment_ns", r.establishment_ns);
  read_optional_ns(f, "ready_ns", r.ready_ns);
  if (const json* v = f.field("transport", false)) {
    if (!v->is_object()) {
      f.set("transport", "expected an object");
    } else {
      r.transport = *v;
    }
  }
  if (!f.ok()) throw NetnsJsonError(f.error());
  return r;
}

// --- run ------------------------------------------------------------------------

NetnsNodeReport run_netns_node(const NetnsNodeSpec& spec, const std::atomic<bool>& stop, std::ostream& err) {
  NetnsNodeReport out;
  out.role = spec.role;
  out.index = spec.index;
  const std::string who = spec.role == "publisher" ? "publisher" : "subscriber-" + std::to_string(spec.index + 1);
  try {
    if (auto why = validate(spec); !why.empty()) fail("invalid spec: " + why);
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
