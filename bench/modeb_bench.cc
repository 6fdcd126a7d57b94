// Mode B group-key establishment for N subscribers, behind `layersec bench modeb`
// (apps/layersec/cmd_bench_modeb.cc). Issue 6: "session establishment for Mode B
// with N = 1, 2, 4, ..., 64 subscribers"; the seed paper (§4.1.1, Table 17)
// reports 25.2 ms (N = 1) and 31.3 ms (N = 2) for RSA-2048 inside vsomeip.
//
// Per KEM and N, one round is: N subscribers build a KeyRequest
// (kex::ModeBSubscriber::start); the publisher (kex::ModeBPublisher) validates
// each (certificate chain, validity, service authorisation, signature for
// non-RSA KEMs), encapsulates the CURRENT GROUP KEY of a kex::GroupKeyManager
// to each subscriber (deliver(): one KEM encapsulation, key wrap, signature per
// subscriber); every subscriber verifies the delivery, decapsulates, unwraps,
// installs the key in its kex::GroupMember ring and returns a KeyConfirm; the
// publisher verifies the N confirmations and activates the key for each.
// Everything runs in this thread, no transmission; every protocol call is timed
// on its own (thread CPU time and monotonic wall time).
//
// Figures per (KEM, N), medians over the rounds:
//   publisher_cpu_us       sum of the publisher's calls (N x on_request +
//                          deliver + on_confirm): its cost to key the group
//   subscriber_cpu_us      one subscriber's calls (start + on_delivery +
//                          install), mean over the N subscribers
//   serial_wall_us         wall time of the whole round on one core (publisher
//                          and all N subscribers sequentially): an upper bound
//   keyed_group_model_us   time to a fully keyed group when every subscriber
//                          runs on its own ECU and the publisher is
//                          single-threaded, with zero network latency: a
//                          replay of this round's measured per-call CPU times
//                          through a FIFO publisher queue (derived, not a
//                          separate measurement; see keyed_group_model())
//   baseline_kem_cpu_us    the bare KEM operations the round contains, timed
//                          in the same round: N x (fresh key pair for non-RSA
//                          KEMs + encapsulate + decapsulate)
//   ratio_vs_kem           (publisher + all subscribers) / baseline_kem
//   baseline_psk_cpu_us    Mode A style distribution of the same group key to
//                          N members under pre-shared pairwise keys
//                          (GroupKeyManager::rekey + distribute + N x
//                          GroupMember::on_distribution), same round
//   ratio_vs_psk           publisher_cpu_us / (the PSK rekey + distribute part)
//
// With --someip (Options::someip) each case also keys the same group through the
// SOME/IP key-management service (keymgmt::KeyServer / KeyClient) on the simulated
// segment, all N clients starting at once: someip_round() below.
//
// Subscriber certificates: for rsa-* the certificate key is the KEM key; one
// RSA key is generated per size and certified N times (64 distinct RSA-3072
// keys would take minutes to generate and change no per-handshake cost). For
// the other KEMs each subscriber has its own P-256 certificate key and a fresh
// KEM key pair per handshake. The publisher has a P-256 certificate.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <iomanip>
#include <map>
#include <memory>
#include <ostream>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/crypto/kdf.h"
#include "layersec/kex/group_keys.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"
#include "layersec/keymgmt/key_client.h"
#include "layersec/keymgmt/key_server.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/sim_transport.h"
#include "modeb_bench.h"

namespace layersec::modebbench {

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr std::uint16_t kService = 0x1234;  // the protected service (the key service is 0x4B45)
constexpr std::uint16_t kEventgroup = 1;

const kex::KemScheme kDefaultSchemes[] = {
    kex::KemScheme::kRsa2048,  kex::KemScheme::kRsa3072,      kex::KemScheme::kX25519,
    kex::KemScheme::kEcdhP256, kex::KemScheme::kMlKem768,     kex::KemScheme::kHybridX25519MlKem768,
    kex::KemScheme::kNtruEes613ep1,
};
const std::size_t kDefaultSizes[] = {1, 2, 4, 8, 16, 32, 64};

double thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// One timed call: CPU and wall microseconds.
struct Cost {
  double cpu = 0;
  double wall = 0;
  Cost& operator+=(const Cost& o) {
    cpu += o.cpu;
    wall += o.wall;
    return *this;
  }
};

class Stopwatch {
 public:
  Stopwatch() : c0_(thread_cpu_us()), t0_(SteadyClock::now()) {}
  [[nodiscard]] Cost elapsed() const {
    const auto t1 = SteadyClock::now();
    return {thread_cpu_us() - c0_, std::chrono::duration<double, std::micro>(t1 - t0_).count()};
  }

 private:
  double c0_;
  SteadyClock::time_point t0_;
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("bench modeb: " + what); }

// The reason's name when its module has a to_string (found by ADL).
template <class E>
std::string reason(E e) {
  if constexpr (requires { to_string(e); }) {
    return std::string(to_string(e));
  } else {
    return "code " + std::to_string(static_cast<int>(e));
  }
}

template <class T, class E>
T must(Result<T, E> r, const std::string& what) {
  if (!r.ok()) fail(what + " failed: " + reason(r.error()));
  return std::move(r).value();
}

bool is_rsa(kex::KemScheme s) {
  return s == kex::KemScheme::kRsa2048 || s == kex::KemScheme::kRsa3072 || s == kex::KemScheme::kRsa15360;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The PKI of one benchmark run: a CA, the publisher and up to 64 subscribers
// per certificate-key kind (P-256, RSA-2048, RSA-3072).
class Pki {
 public:
  explicit Pki(std::int64_t now_s) : now_s_(now_s) {
    ca_ = must(kex::create_ca({"bench-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                               kex::Validity::days_from(now_s, 2)}),
               "CA creation");
    publisher_ = must(kex::issue_certificate(ca_, {"publisher", {kService}, kex::KeyAlgorithm::kEcdsaP256,
                                                   kex::Validity::days_from(now_s, 2)}),
                      "publisher certificate");
    trust_ = must(kex::TrustStore::create(std::span<const kex::Certificate>(&ca_.certificate, 1)), "trust store");
  }
  [[nodiscard]] const kex::Identity& publisher() const { return publisher_; }
  [[nodiscard]] const kex::TrustStore& trust() const { return trust_; }

  // The first `n` subscriber identities whose certificate key suits `kem`.
  const std::vector<std::unique_ptr<kex::Identity>>& subscribers(kex::KemScheme kem, std::size_t n) {
    const kex::KeyAlgorithm alg = kem == kex::KemScheme::kRsa2048   ? kex::KeyAlgorithm::kRsa2048
                                  : kem == kex::KemScheme::kRsa3072 ? kex::KeyAlgorithm::kRsa3072
                                                                    : kex::KeyAlgorithm::kEcdsaP256;
    auto& list = subscribers_[alg];
    while (list.size() < n) {
      const std::string name = "ecu-" + std::to_string(list.size() + 1);
      kex::IssueOptions o{name, {kService}, alg, kex::Validity::days_from(now_s_, 2)};
      if (!kex::is_rsa(alg)) {
        list.push_back(std::make_unique<kex::Identity>(must(kex::issue_certificate(ca_, o), "subscriber certificate")));
        continue;
      }
      // One RSA key per size, certified once per subscriber (see the header).
      auto& key = rsa_keys_[alg];
      if (!key.valid()) key = must(kex::PrivateKey::generate(alg), "RSA key generation");
      auto pem = must(key.to_pem(), "RSA key export");
      auto copy = must(kex::PrivateKey::from_pem(pem.span()), "RSA key import");
      auto cert = must(kex::issue_certificate_for_key(ca_, key.public_key(), o), "subscriber certificate");
      list.push_back(std::make_unique<kex::Identity>(kex::Identity{std::move(cert), std::move(copy)}));
    }
    return list;
  }

 private:
  std::int64_t now_s_;
  kex::Identity ca_;
  kex::Identity publisher_;
  kex::TrustStore trust_;
  std::map<kex::KeyAlgorithm, std::vector<std::unique_ptr<kex::Identity>>> subscribers_;
  std::map<kex::KeyAlgorithm, kex::PrivateKey> rsa_keys_;
};

// Per-subscriber costs of one round.
struct SubscriberCosts {
  Cost start, pub_request, pub_deliver, delivery, pub_confirm;
};

// Time to a fully keyed group if each subscriber runs on its own ECU and the
// single-threaded publisher serves requests and confirmations in order of
// arrival (zero network latency). Replays the round's measured CPU times.
double keyed_group_model(const std::vector<SubscriberCosts>& c) {
  struct Ev {
    double ready;
    int kind;  // 0 request, 1 confirmation
    std::size_t i;
    bool operator>(const Ev& o) const { return ready > o.ready || (ready == o.ready && kind > o.kind); }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  for (std::size_t i = 0; i < c.size(); ++i) q.push({c[i].start.cpu, 0, i});
  double publisher_free = 0, done = 0;
  while (!q.empty()) {
    const Ev e = q.top();
    q.pop();
    double t = std::max(publisher_free, e.ready);
    if (e.kind == 0) {
      t += c[e.i].pub_request.cpu + c[e.i].pub_deliver.cpu;
      q.push({t + c[e.i].delivery.cpu, 1, e.i});
    } else {
      t += c[e.i].pub_confirm.cpu;
      done = std::max(done, t);
    }
    publisher_free = t;
  }
  return done;
}

struct RoundResult {
  double publisher_cpu = 0, publisher_wall = 0;
  double subscriber_cpu_mean = 0, subscriber_cpu_max = 0;
  double serial_wall = 0;
  double model = 0;
  double kem_baseline_cpu = 0;
  double psk_publisher_cpu = 0, psk_total_cpu = 0;
  std::size_t request_bytes = 0, delivery_bytes = 0, confirm_bytes = 0;
};

class Case {
 public:
  Case(Pki& pki, kex::KemScheme kem, std::size_t n) : pki_(pki), kem_(kem), n_(n), bare_(kex::make_kem(kem)) {
    cfg_.kem = kem;
    cfg_.max_pending = n + 8;
    cfg_.replay_cache_size = 4 * n + 16;
    const auto& ids = pki.subscribers(kem, n);
    for (std::size_t i = 0; i < n; ++i)
      subscribers_.push_back(must(kex::ModeBSubscriber::create(cfg_, *ids[i], pki.trust()), "subscriber setup"));
    if (is_rsa(kem)) {
      // The bare-KEM baseline uses the same certificate key as the handshake.
      const auto der = must(ids[0]->key.to_der(), "RSA key export");
      rsa_sk_ = must(bare_->load_private_key(der.span()), "RSA KEM key");
      rsa_pk_ = ids[0]->certificate.public_key().der();
    }
    group_cfg_.service_id = kService;
    group_cfg_.eventgroup_id = kEventgroup;
  }

  RoundResult round(TimePoint now) {
    RoundResult r;
    auto publisher = must(kex::ModeBPublisher::create(cfg_, pki_.publisher(), pki_.trust()), "publisher setup");
    auto group = must(kex::GroupKeyManager::create(group_cfg_, now), "group key manager");
    std::vector<kex::GroupMember> members;
    members.reserve(n_);
    for (std::size_t i = 0; i < n_; ++i) members.emplace_back(group_cfg_, "ecu-" + std::to_string(i + 1), SecretBytes());

    std::vector<SubscriberCosts> c(n_);
    std::vector<std::vector<std::uint8_t>> req(n_), del(n_), conf(n_);
    const Stopwatch serial;
    for (std::size_t i = 0; i < n_; ++i) {
      const Stopwatch w;
      req[i] = must(subscribers_[i]->start(kService, kEventgroup, now), "KeyRequest");
      c[i].start = w.elapsed();
    }
    for (std::size_t i = 0; i < n_; ++i) {
      const Stopwatch w1;
      auto accepted = must(publisher->on_request(req[i], now), "publisher on_request");
      c[i].pub_request = w1.elapsed();
      const Stopwatch w2;
      del[i] = must(publisher->deliver(accepted.handle, group->current_key(), group->current_key_id(), now),
                    "publisher deliver");
      c[i].pub_deliver = w2.elapsed();
    }
    for (std::size_t i = 0; i < n_; ++i) {
      const Stopwatch w;
      conf[i] = must(subscribers_[i]->on_delivery(del[i], now), "subscriber on_delivery");
      (void)must(members[i].install(subscribers_[i]->key_id(), subscribers_[i]->key(), now), "member install");
      c[i].delivery = w.elapsed();
    }
    std::size_t activated = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const Stopwatch w;
      auto act = must(publisher->on_confirm(conf[i], now), "publisher on_confirm");
      c[i].pub_confirm = w.elapsed();
      if (act.key_id == group->current_key_id() && act.key.size() == group->current_key().size()) ++activated;
    }
    r.serial_wall = serial.elapsed().wall;
    if (activated != n_) fail("not every subscriber activated the group key");

    // Check: every member tags exactly as the publisher's ring does.
    const std::uint8_t probe_bytes[] = {1, 2, 3, 4};
    const ByteSpan parts[] = {ByteSpan(probe_bytes)};
    std::vector<std::uint8_t> tag(group->ring().tag_size());
    if (!group->ring().compute(parts, tag).ok()) fail("publisher tag");
    for (auto& m : members)
      if (!m.ring().verify(group->current_key_id(), parts, tag, now).ok()) fail("a member holds another key");

    Cost pub, subs;
    double sub_max = 0;
    for (const auto& x : c) {
      pub += x.pub_request;
      pub += x.pub_deliver;
      pub += x.pub_confirm;
      const double s = x.start.cpu + x.delivery.cpu;
      subs.cpu += s;
      sub_max = std::max(sub_max, s);
    }
    r.publisher_cpu = pub.cpu;
    r.publisher_wall = pub.wall;
    r.subscriber_cpu_mean = subs.cpu / static_cast<double>(n_);
    r.subscriber_cpu_max = sub_max;
    r.model = keyed_group_model(c);
    r.request_bytes = req[0].size();
    r.delivery_bytes = del[0].size();
    r.confirm_bytes = conf[0].size();
    r.kem_baseline_cpu = kem_baseline();
    psk_baseline(now, r);
    // Nothing of this round survives: the subscribers' copies of the key are
    // wiped before the next start().
    for (auto& s : subscribers_) s->reset();
    return r;
  }

 private:
  // N x the bare KEM operations of a handshake, CPU microseconds.
  double kem_baseline() {
    double total = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const Stopwatch w;
      bool ok = false;
      if (is_rsa(kem_)) {
        auto enc = bare_->encapsulate(rsa_pk_);
        ok = enc.ok() && bare_->decapsulate(*rsa_sk_, enc->ciphertext).ok();
      } else {
        auto kp = bare_->generate();
        if (kp.ok()) {
          auto sk = bare_->load_private_key(kp->private_key.span());
          auto enc = sk.ok() ? bare_->encapsulate(kp->public_key)
                             : Result<kex::Encapsulation, kex::KemError>(Err(sk.error()));
          ok = enc.ok() && bare_->decapsulate(**sk, enc->ciphertext).ok();
        }
      }
      total += w.elapsed().cpu;
      if (!ok) fail("bare KEM baseline failed");
    }
    return total;
  }

  // The same group distributed under pre-shared pairwise keys (Mode A).
  void psk_baseline(TimePoint now, RoundResult& r) {
    auto manager = must(kex::GroupKeyManager::create(group_cfg_, now), "PSK group");
    std::vector<kex::GroupMember> members;
    members.reserve(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      SecretBytes pairwise(32);
      if (!crypto::random_bytes(pairwise.mutable_span()).ok()) fail("RNG");
      const std::string id = "ecu-" + std::to_string(i + 1);
      members.emplace_back(group_cfg_, id, pairwise.clone());
      (void)must(manager->join(id, std::move(pairwise), now), "PSK join");
    }
    const Stopwatch w;
    (void)must(manager->rekey(now), "PSK rekey");
    auto messages = must(manager->distribute(), "PSK distribute");
    r.psk_publisher_cpu = w.elapsed().cpu;
    if (messages.size() != n_) fail("PSK distribution count");
    const Stopwatch m;
    for (std::size_t i = 0; i < n_; ++i) (void)must(members[i].on_distribution(messages[i].message, now), "PSK open");
    r.psk_total_cpu = r.psk_publisher_cpu + m.elapsed().cpu;
  }

  Pki& pki_;
  kex::KemScheme kem_;
  std::size_t n_;
  kex::ModeBConfig cfg_;
  kex::GroupKeyConfig group_cfg_;
  std::vector<std::unique_ptr<kex::ModeBSubscriber>> subscribers_;
  std::unique_ptr<kex::Kem> bare_;
  std::unique_ptr<kex::KemPrivateKey> rsa_sk_;
  std::vector<std::uint8_t> rsa_pk_;
};


// --- the same group keyed over SOME/IP (keymgmt::KeyServer / KeyClient) -----

// N subscribers and the publisher on one simulated segment, each a SimHost +
// SimTransport + Runtime + SecOC engine; all N clients start at once. Every
// node runs in this thread, so the CPU figure is the whole system's.
struct SomeipFigures {
  double cpu_us = 0;           // thread CPU from the N start() calls to a keyed group
  double sim_ms = 0;           // simulated time for the same (link delays only; processing takes no simulated time)
  std::uint64_t handshakes = 0;  // KeyRequests the server accepted
  std::uint64_t rekeys = 0;
  std::uint64_t notices = 0;
  bool keyed = false;
  std::string diagnosis;  // why not, when !keyed
};

constexpr std::uint16_t kAppEvent = 0x8001;
constexpr std::uint16_t kSyncEvent = 0x8002;

SomeipFigures someip_round(Pki& pki, kex::KemScheme kem, std::size_t n, std::int64_t now_s) {
  net::Simulator sim(11, TimePoint::from_ns(now_s * 1'000'000'000LL));
  net::Segment segment(sim);
  net::SimClock clock(sim);
  struct Node {
    std::unique_ptr<net::SimHost> host;
    std::unique_ptr<someip::SimTransport> transport;
    std::unique_ptr<someip::SeededRandom> random;
    secoc::MemoryStateStore store;
    std::unique_ptr<secoc::Engine> engine;
    std::unique_ptr<someip::Runtime> runtime;
    std::unique_ptr<keymgmt::KeyServer> server;
    std::unique_ptr<keymgmt::KeyClient> client;
  };
  std::vector<std::unique_ptr<Node>> nodes;
  someip::SdTiming timing;
  timing.initial_delay_min = Duration::zero();
  timing.initial_delay_max = Duration::milliseconds(20);
  keymgmt::ServiceIds ids;
  ids.rekey_multicast = someip::Endpoint{someip::IpAddress::v4(239, 0, 0, 1), 30601, someip::L4Proto::kUdp};
  const std::vector<keymgmt::GroupBinding> groups = {{kService, kEventgroup, 0}};
  secoc::PduProfile profile = secoc::PduProfile::vendor();
  auto add = [&](std::size_t index, someip::RuntimeConfig rc, secoc::EngineConfig ec, someip::SecocBindings b) -> Node& {
    auto node = std::make_unique<Node>();
    const auto id = static_cast<std::uint32_t>(index + 1);
    node->host = std::make_unique<net::SimHost>(
        sim, net::SimHostConfig{net::MacAddress::local(id),
                                net::Ipv4Address::from_octets(10, 0, static_cast<std::uint8_t>(id >> 8),
                                                              static_cast<std::uint8_t>(id & 0xFF))});
    node->host->attach(segment);
    node->transport = std::make_unique<someip::SimTransport>(sim, *node->host);
    node->random = std::make_unique<someip::SeededRandom>(id);
    node->engine = must(secoc::Engine::start(std::move(ec), node->store), "SecOC engine");
    rc.sd_timing = timing;
    node->runtime = std::make_unique<someip::Runtime>(std::move(rc), *node->transport, *node->random);
    node->runtime->attach_secoc(*node->engine, std::move(b));
    nodes.push_back(std::move(node));
    return *nodes.back();
  };
  // Publisher: the key service and the protected eventgroup (event + SecOC sync).
  {
    someip::RuntimeConfig rc;
    rc.client_id = 0x0100;
    rc.services.push_back(keymgmt::service_config(ids));
    someip::ServiceConfig app;
    app.service_id = kService;
    app.udp_port = 30509;
    app.events = {someip::EventConfig{kAppEvent, {kEventgroup}, false, std::nullopt, std::nullopt},
                  someip::EventConfig{kSyncEvent, {kEventgroup}, false, std::nullopt, std::nullopt}};
    someip::EventgroupConfig eg;
    eg.eventgroup_id = kEventgroup;
    app.eventgroups = {eg};
    rc.services.push_back(app);
    secoc::EngineConfig ec;
    ec.sender_id = 1;
    ec.key_groups = {{"group", secoc::AuthAlgorithm::kCmacAes256}};
    ec.sync_tx.enabled = true;
    ec.sync_tx.data_id = 0xFD00;
    ec.sync_tx.period = Duration::milliseconds(100);
    ec.tx_pdus = {secoc::TxPduConfig{0, 0x0100, profile, 0}};
    someip::SecocBindings b;
    b.sd_unprotected = true;  // the bench times key management, not SD (explicit)
    b.messages.push_back({kService, 0xFFFF, kAppEvent, 0u, std::nullopt});
    b.sync_service = kService;
    b.sync_event = kSyncEvent;
    Node& p = add(0, rc, ec, b);
    keymgmt::KeyServerConfig kc;
    kc.ids = ids;
    kc.mode_b.kem = kem;
    kc.mode_b.max_pending = 4 * n + 16;
    kc.mode_b.replay_cache_size = 64 * n + 64;
    kc.groups = groups;
    p.server = must(keymgmt::KeyServer::create(kc, *p.runtime, *p.engine, pki.publisher(), pki.trust(), clock),
                    "key server");
  }
  const auto& ids_s = pki.subscribers(kem, n);
  for (std::size_t i = 0; i < n; ++i) {
    someip::RuntimeConfig rc;
    rc.client_id = static_cast<std::uint16_t>(0x0200 + i);
    rc.clients.push_back(keymgmt::client_config(ids));
    someip::ClientConfig app;
    app.service_id = kService;
    app.instance_id = 1;
    app.eventgroups = {kEventgroup};
    rc.clients.push_back(app);
    secoc::EngineConfig ec;
    ec.sender_id = static_cast<std::uint16_t>(2 + i);
    ec.key_groups = {{"group", secoc::AuthAlgorithm::kCmacAes256}};
    ec.sync_rx = {{0, 0xFD00, 0, 64}};
    secoc::RxPduConfig r;
    r.data_id = 0x0100;
    r.profile = profile;
    r.has_sync_channel = true;
    r.sender_id = 1;
    ec.rx_pdus = {r};
    someip::SecocBindings b;
    b.sd_unprotected = true;  // the bench times key management, not SD (explicit)
    b.messages.push_back({kService, 0xFFFF, kAppEvent, std::nullopt, 0u});
    b.sync_service = kService;
    b.sync_event = kSyncEvent;
    Node& s = add(i + 1, rc, ec, b);
    keymgmt::KeyClientConfig kc;
    kc.ids = ids;
    kc.kems = {kem};
    kc.groups = groups;
    s.client = must(keymgmt::KeyClient::create(kc, *s.runtime, *s.engine, *ids_s[i], pki.trust(), clock), "key client");
  }
  for (auto& node : nodes)
    if (!node->runtime->start().ok()) fail("runtime start");
  sim.run_for(Duration::milliseconds(500));  // SD: offers and subscriptions
  SomeipFigures f;
  const TimePoint t0 = sim.now();
  const Stopwatch w;
  for (std::size_t i = 1; i < nodes.size(); ++i)
    if (!nodes[i]->client->start().ok()) fail("key client start (service not available)");
  auto keyed = [&] {
    const std::uint32_t want = nodes[0]->server->current_key_id(kService, kEventgroup);
    for (std::size_t i = 1; i < nodes.size(); ++i)
      if (nodes[i]->client->key_id(kService, kEventgroup) != want ||
          nodes[i]->client->state(kService, kEventgroup) != keymgmt::KeyClient::GroupState::kKeyed)
        return false;
    return nodes[0]->server->member_count(kService, kEventgroup) == n;
  };
  while (!keyed() && sim.now() - t0 < Duration::seconds(30)) sim.run_for(Duration::microseconds(100));
  f.cpu_us = w.elapsed().cpu;
  f.sim_ms = (sim.now() - t0).ms();
  f.keyed = keyed();
  if (!f.keyed) {
    std::size_t ok = 0, failed = 0;
    std::string first;
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      const auto st = nodes[i]->client->state(kService, kEventgroup);
      ok += st == keymgmt::KeyClient::GroupState::kKeyed;
      if (st == keymgmt::KeyClient::GroupState::kFailed) {
        ++failed;
        if (first.empty()) first = std::string(keymgmt::to_string(*nodes[i]->client->last_error(kService, kEventgroup)));
      }
    }
    f.diagnosis = std::to_string(ok) + " of " + std::to_string(n) + " keyed, " + std::to_string(failed) +
                  " failed" + (first.empty() ? "" : " (first: " + first + ")") + ", server refusals " +
                  std::to_string(nodes[0]->server->counters().refused_total()) + ", members " +
                  std::to_string(nodes[0]->server->member_count(kService, kEventgroup));
    for (std::size_t e = 0; e < keymgmt::kKeyMgmtErrorCount; ++e)
      if (const auto k = nodes[0]->server->counters().refused[e])
        f.diagnosis += ", " + std::string(keymgmt::to_string(static_cast<keymgmt::KeyMgmtError>(e))) + " x" +
                       std::to_string(k);
    f.diagnosis += ", transport errors " + std::to_string(nodes[0]->runtime->counters().transport_errors) +
                   ", notices not sent " + std::to_string(nodes[0]->server->counters().notices_failed);
  }
  const auto& c = nodes[0]->server->counters();
  f.handshakes = c.requests_accepted;
  f.rekeys = c.rekeys;
  f.notices = c.notices_sent;
  for (auto& node : nodes) {
    node->client.reset();
    node->server.reset();
  }
  for (auto& node : nodes) node->runtime.reset();
  for (auto& node : nodes) node->transport.reset();
  return f;
}

}  // namespace

// Runs every (KEM, N) case and returns one JSON row per case.
nlohmann::json run(const Options& o, std::ostream& log) {
  std::vector<kex::KemScheme> schemes = o.schemes;
  if (schemes.empty()) schemes.assign(std::begin(kDefaultSchemes), std::end(kDefaultSchemes));
  std::vector<std::size_t> sizes = o.group_sizes;
  if (sizes.empty()) sizes.assign(std::begin(kDefaultSizes), std::end(kDefaultSizes));
  for (auto s : schemes)
    if (s == kex::KemScheme::kRsa15360) fail("rsa-15360 is not offered (keys take minutes to generate)");
  for (auto n : sizes)
    if (n == 0 || n > 1024) fail("group sizes must be 1..1024");

  const std::int64_t now_s = static_cast<std::int64_t>(std::time(nullptr));
  Pki pki(now_s);
  // Protocol time is injected: each round runs one second after the last,
  // inside the certificates' validity.
  TimePoint now = TimePoint::from_ns(now_s * 1'000'000'000LL);
  nlohmann::json rows = nlohmann::json::array();
  for (kex::KemScheme kem : schemes) {
    for (std::size_t n : sizes) {
      Case c(pki, kem, n);
      (void)c.round(now);  // warm-up (KEM contexts, certificate caches of OpenSSL)
      now = now + Duration::seconds(1);
      std::vector<double> pub, pub_wall, sub, sub_max, serial, model, kem_base, psk_pub, psk_total, r_kem, r_psk;
      RoundResult last;
      const auto t0 = SteadyClock::now();
      const int min_rounds = o.smoke ? 1 : o.min_rounds;
      const int max_rounds = o.smoke ? 1 : o.max_rounds;
      for (int k = 0; k < max_rounds; ++k) {
        last = c.round(now);
        now = now + Duration::seconds(1);
        pub.push_back(last.publisher_cpu);
        pub_wall.push_back(last.publisher_wall);
        sub.push_back(last.subscriber_cpu_mean);
        sub_max.push_back(last.subscriber_cpu_max);
        serial.push_back(last.serial_wall);
        model.push_back(last.model);
        kem_base.push_back(last.kem_baseline_cpu);
        psk_pub.push_back(last.psk_publisher_cpu);
        psk_total.push_back(last.psk_total_cpu);
        const double all = last.publisher_cpu + last.subscriber_cpu_mean * static_cast<double>(n);
        r_kem.push_back(last.kem_baseline_cpu > 0 ? all / last.kem_baseline_cpu : 0);
        r_psk.push_back(last.psk_publisher_cpu > 0 ? last.publisher_cpu / last.psk_publisher_cpu : 0);
        if (k + 1 >= min_rounds &&
            std::chrono::duration<double>(SteadyClock::now() - t0).count() > o.seconds_per_case)
          break;
      }
      nlohmann::json row;
      row["scheme"] = std::string(kex::scheme_name(kem));
      if (kem == kex::KemScheme::kNtruEes613ep1) row["set"] = "EES613EP1";
      row["n"] = n;
      row["rounds"] = pub.size();
      row["subscriber_cert"] = is_rsa(kem) ? std::string(kex::scheme_name(kem)) + " (certificate key = KEM key)"
                                           : std::string("p256 + fresh KEM key pair per handshake");
      row["publisher_cpu_us"] = median_of(pub);
      row["publisher_wall_us"] = median_of(pub_wall);
      row["publisher_per_subscriber_cpu_us"] = median_of(pub) / static_cast<double>(n);
      row["subscriber_cpu_us"] = median_of(sub);
      row["subscriber_max_cpu_us"] = median_of(sub_max);
      row["serial_wall_us"] = median_of(serial);
      row["keyed_group_model_us"] = median_of(model);
      row["baseline_kem_cpu_us"] = median_of(kem_base);
      row["ratio_vs_kem"] = median_of(r_kem);
      row["baseline_psk_publisher_cpu_us"] = median_of(psk_pub);
      row["baseline_psk_total_cpu_us"] = median_of(psk_total);
      row["ratio_vs_psk"] = median_of(r_psk);
      row["request_bytes"] = last.request_bytes;
      row["delivery_bytes"] = last.delivery_bytes;
      row["confirm_bytes"] = last.confirm_bytes;
      row["bytes_on_wire"] = (last.request_bytes + last.delivery_bytes + last.confirm_bytes) * n;
      if (o.someip) {
        const SomeipFigures f = someip_round(pki, kem, n, now_s);
        if (!f.keyed)
          fail(std::string(kex::scheme_name(kem)) + " N=" + std::to_string(n) +
               ": the group did not key over SOME/IP: " + f.diagnosis);
        row["someip_cpu_us"] = f.cpu_us;
        row["someip_sim_ms"] = f.sim_ms;
        row["someip_handshakes"] = f.handshakes;
        row["someip_rekeys"] = f.rekeys;
        row["someip_notices"] = f.notices;
        const double in_process = median_of(pub) + median_of(sub) * static_cast<double>(n);
        row["someip_ratio_vs_in_process"] = in_process > 0 ? f.cpu_us / in_process : 0;
      }
      rows.push_back(row);
    }
    log << "  " << std::left << std::setw(18) << kex::scheme_name(kem) << " done\n";
  }
  return rows;
}

// Prints one table per KEM and the per-subscriber slope between the smallest
// and the largest N of the run.
void print(const nlohmann::json& rows, std::ostream& out) {
  out << std::fixed << std::setprecision(1);
  std::string current;
  std::map<std::string, std::vector<const nlohmann::json*>> by_scheme;
  for (const auto& r : rows) by_scheme[r["scheme"].get<std::string>()].push_back(&r);
  for (const auto& r : rows) {
    const std::string s = r["scheme"];
    if (s != current) {
      current = s;
      out << "\n" << s << " (" << r["subscriber_cert"].get<std::string>() << ")\n"
          << std::right << std::setw(5) << "N" << std::setw(13) << "pub_cpu_us" << std::setw(12) << "pub/sub_us"
          << std::setw(12) << "sub_cpu_us" << std::setw(14) << "serial_wall" << std::setw(14) << "keyed_model"
          << std::setw(13) << "kem_base_us" << std::setw(9) << "x_kem" << std::setw(13) << "psk_pub_us"
          << std::setw(9) << "x_psk" << std::setw(10) << "wire_B" << "\n";
    }
    out << std::setw(5) << r["n"].get<std::size_t>() << std::setw(13) << r["publisher_cpu_us"].get<double>()
        << std::setw(12) << r["publisher_per_subscriber_cpu_us"].get<double>() << std::setw(12)
        << r["subscriber_cpu_us"].get<double>() << std::setw(14) << r["serial_wall_us"].get<double>()
        << std::setw(14) << r["keyed_group_model_us"].get<double>() << std::setw(13)
        << r["baseline_kem_cpu_us"].get<double>() << std::setw(9) << std::setprecision(2)
        << r["ratio_vs_kem"].get<double>() << std::setprecision(1) << std::setw(13)
        << r["baseline_psk_publisher_cpu_us"].get<double>() << std::setw(9) << std::setprecision(0)
        << r["ratio_vs_psk"].get<double>() << std::setprecision(1) << std::setw(10)
        << r["bytes_on_wire"].get<std::size_t>() << "\n";
  }
  bool any_someip = false;
  for (const auto& r : rows) any_someip = any_someip || r.contains("someip_cpu_us");
  if (any_someip) {
    out << "\nover SOME/IP (keymgmt service on the simulated segment, every client starting at once):\n"
        << std::left << std::setw(20) << "scheme" << std::right << std::setw(5) << "N" << std::setw(14) << "cpu_us"
        << std::setw(11) << "sim_ms" << std::setw(12) << "handshakes" << std::setw(8) << "rekeys" << std::setw(11)
        << "x_inproc" << "\n";
    for (const auto& r : rows) {
      if (!r.contains("someip_cpu_us")) continue;
      out << std::left << std::setw(20) << r["scheme"].get<std::string>() << std::right << std::setw(5)
          << r["n"].get<std::size_t>() << std::setprecision(1) << std::setw(14) << r["someip_cpu_us"].get<double>()
          << std::setw(11) << r["someip_sim_ms"].get<double>() << std::setw(12)
          << r["someip_handshakes"].get<std::uint64_t>() << std::setw(8) << r["someip_rekeys"].get<std::uint64_t>()
          << std::setprecision(2) << std::setw(11) << r["someip_ratio_vs_in_process"].get<double>() << "\n";
    }
    out << std::setprecision(1);
  }
  out << "\nper-subscriber slope of the publisher's cost (CPU us per added subscriber, smallest to largest N):\n";
  for (const auto& [s, list] : by_scheme) {
    if (list.size() < 2) continue;
    const auto& a = *list.front();
    const auto& b = *list.back();
    const double dn = static_cast<double>(b["n"].get<std::size_t>()) - static_cast<double>(a["n"].get<std::size_t>());
    if (dn <= 0) continue;
    out << "  " << std::left << std::setw(20) << s << std::right << std::setprecision(1)
        << (b["publisher_cpu_us"].get<double>() - a["publisher_cpu_us"].get<double>()) / dn << "\n";
  }
  out << "pub_cpu_us: publisher's thread CPU time for N x (validate request + encapsulate/wrap/sign + verify "
         "confirmation);\nsub_cpu_us: one subscriber (request + verify/decapsulate/unwrap/install), mean over N;\n"
         "serial_wall: the whole round on one core; keyed_model: time to a fully keyed group with one ECU per "
         "subscriber\nand a single-threaded publisher, zero network latency (replay of the measured CPU times);\n"
         "x_kem: (publisher + subscribers) / bare KEM operations of the round; x_psk: publisher / PSK-wrapped "
         "distribution\nof the same group key (Mode A), both measured in the same round. No transmission.\n";
}

}  // namespace layersec::modebbench
