#include "layersec/attack/sd_attacks_bed.h"

#include <algorithm>
#include <stdexcept>

#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/net/sim_attack.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/secoc_filter.h"
#include "layersec/someip/sd_types.h"

namespace layersec::attack::sd_bed {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("sd attack set-up: " + what);
}

namespace {

constexpr std::uint16_t kEventDataId = 0x0100;
constexpr std::uint16_t kSdDataId = 0xFFF0;
constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;

SecretBytes seeded_key(std::uint64_t seed, std::size_t n) {
  net::SimRng rng(seed);
  SecretBytes k(n);
  for (auto& b : k.mutable_span()) b = static_cast<std::uint8_t>(rng.next_u64());
  return k;
}

// --- SecOC: protected SD as `layersec node` configures it ------------------

secoc::PduProfile sd_profile() {
  secoc::PduProfile p = secoc::PduProfile::vendor();
  p.kind = secoc::ProfileKind::kCustom;
  p.algorithm = secoc::AuthAlgorithm::kCmacAes128;
  p.auth_info_tx_length = 64;
  p.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  return p;
}
secoc::RxPduConfig sd_rx(std::uint32_t id) {
  secoc::RxPduConfig r;
  r.id = id;
  r.data_id = kSdDataId;
  r.profile = sd_profile();
  r.key_group = 1;
  r.mode = secoc::FreshnessMode::kReorderTolerant;
  r.window = secoc::kDefaultWindow;
  r.max_sources = 64;
  return r;
}
secoc::PduProfile event_profile() {
  secoc::PduProfile p = secoc::PduProfile::vendor();
  p.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
  return p;
}
std::vector<secoc::KeyGroupConfig> key_groups() {
  return {{"event", secoc::AuthAlgorithm::kCmacAes256}, {"sd", secoc::AuthAlgorithm::kCmacAes128}};
}
secoc::EngineConfig server_engine() {
  secoc::EngineConfig e;
  e.sender_id = 0x0001;
  e.key_groups = key_groups();
  e.tx_pdus = {{0, kEventDataId, event_profile(), 0}, {1, kSdDataId, sd_profile(), 1}};
  e.rx_pdus = {sd_rx(0)};
  return e;
}
secoc::EngineConfig client_engine() {
  secoc::EngineConfig e;
  e.sender_id = 0x0100;
  e.key_groups = key_groups();
  e.tx_pdus = {{0, kSdDataId, sd_profile(), 1}};
  secoc::RxPduConfig ev;
  ev.id = 0;
  ev.data_id = kEventDataId;
  ev.profile = event_profile();
  ev.key_group = 0;
  ev.sender_id = 0x0001;
  ev.max_age = Duration::seconds(1);
  e.rx_pdus = {ev, sd_rx(1)};
  return e;
}

std::size_t ttl_of(const std::vector<std::uint8_t>& f, std::size_t e) {
  return (static_cast<std::size_t>(f[e + 9]) << 16) | (static_cast<std::size_t>(f[e + 10]) << 8) | f[e + 11];
}

// One SD message with one entry naming `named` (if any).
std::vector<std::uint8_t> sd_message(const someip::SdEntry& e, const std::optional<someip::Endpoint>& named,
                                     std::uint16_t session) {
  someip::SdMessageBuilder b;
  std::vector<someip::SdOption> run;
  if (named) run.push_back(someip::endpoint_option(*named));
  require(b.add(e, run), "sd entry");
  std::vector<std::uint8_t> bytes(someip::kHeaderSize + b.payload_size());
  ByteWriter w(bytes);
  require(b.write_message(w, session, someip::kSdFlagReboot | someip::kSdFlagUnicast), "sd message");
  return bytes;
}

}  // namespace

std::size_t entries_len(const std::vector<std::uint8_t>& f) {
  if (f.size() < kEntries) return 0;
  return std::min<std::size_t>(load_be32(&f[kEntriesLen]), f.size() - kEntries) / kEntrySize * kEntrySize;
}
// The offset of the first entry of `type` with a non-zero TTL, or 0.
std::size_t find_entry(const std::vector<std::uint8_t>& f, std::uint8_t type) {
  const std::size_t n = entries_len(f);
  for (std::size_t e = kEntries; e + kEntrySize <= kEntries + n; e += kEntrySize)
    if (f[e] == type && ttl_of(f, e) != 0) return e;
  return 0;
}
// The options array [from, from + len) of an SD frame, when it is in the frame.
std::pair<std::size_t, std::size_t> options_of(const std::vector<std::uint8_t>& f) {
  const std::size_t at = kEntries + entries_len(f);
  if (f.size() < at + 4) return {at, 0};
  return {at + 4, std::min<std::size_t>(load_be32(&f[at]), f.size() - at - 4)};
}
// Sets IPv4, UDP and SOME/IP lengths after the frame was resized, then the checksums.
void fix_lengths(std::vector<std::uint8_t>& f) {
  store_be16(&f[16], static_cast<std::uint16_t>(f.size() - 14));
  store_be16(&f[38], static_cast<std::uint16_t>(f.size() - 34));
  store_be32(&f[kSomeip + 4], static_cast<std::uint32_t>(f.size() - kSomeip - 8));
  net::refresh_checksums(f);
}

net::HookVerdict SdHook::on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                                  net::SwitchControl&) {
  // Cheap look first (IPv4 without options, UDP, 30490 -> 30490): most frames are events.
  if (frame.size() < kEntries || load_be16(&frame[12]) != 0x0800 || frame[14] != 0x45 || frame[23] != 17 ||
      load_be16(&frame[34]) != kSd || load_be16(&frame[36]) != kSd)
    return net::HookVerdict::forward();
  net::Ipv4Address src;
  {
    auto v = net::parse_udp_frame(frame);
    if (!v || v->udp.header.src_port != kSd || v->udp.header.dst_port != kSd) return net::HookVerdict::forward();
    src = v->ip.header.src;
  }
  if (recording) history.push_back({ctx.ingress, frame});
  if (!armed || !match || !match(frame, src)) return net::HookVerdict::forward();
  armed = false;
  ++fired;
  fired_at = ctx.now;
  if (alter) {
    alter(frame);
    net::refresh_checksums(frame);
    if (parse_check) check(frame);
  } else {
    captured = {ctx.ingress, frame};
  }
  return net::HookVerdict::forward();
}

void SdHook::check(const std::vector<std::uint8_t>& f) {
  auto v = net::parse_udp_frame(f);
  if (!v) {
    ++invalid["sd_invalid_udp"];
    return;
  }
  auto m = someip::parse_message(v->payload());
  if (!m) {
    ++invalid["sd_invalid_someip"];
    return;
  }
  auto sd = someip::parse_sd_message(*m);
  if (!sd) ++invalid["sd_invalid_" + std::string(someip::to_string(sd.error()))];
}

Bed::Bed(bool protected_sd, std::uint64_t seed, bool start_server)
    : protected_(protected_sd), sim_(seed, TimePoint::from_ns(kEpochNs)), seg_(sim_) {
  for (std::uint32_t h = 0; h < kHosts; ++h) {
    net::SimHostConfig hc;
    hc.mac = net::MacAddress::local(0x2000 + h);
    hc.ip = ip4(h);
    hc.prefix_length = 16;
    hc.dynamic_arp = false;
    hosts_[h] = std::make_unique<net::SimHost>(sim_, hc);
  }
  someip::SdTiming timing;
  timing.initial_delay_min = Duration::milliseconds(0);
  timing.initial_delay_max = Duration::milliseconds(10);
  timing.cyclic_offer_delay = Duration::milliseconds(100);

  someip::RuntimeConfig sc;
  sc.name = "server";
  sc.client_id = 0x0001;
  sc.client_port = kClientPort;
  sc.sd_timing = timing;
  someip::ServiceConfig svc;
  svc.service_id = kService;
  svc.instance_id = kInstance;
  svc.udp_port = kServicePort;
  someip::EventConfig ev;
  ev.event_id = kEvent;
  ev.eventgroups = {kEventgroup};
  ev.is_field = true;  // a new subscription gets the value again: a server-side reset is visible
  svc.events = {ev};
  someip::EventgroupConfig eg;
  eg.eventgroup_id = kEventgroup;
  eg.allowed_subscribers = {ipa(kClient)};
  svc.eventgroups = {eg};
  sc.services = {svc};

  someip::RuntimeConfig cc;
  cc.name = "client";
  cc.client_id = 0x0100;
  cc.client_port = kClientPort;
  cc.sd_timing = timing;
  someip::ClientConfig cl;
  cl.service_id = kService;
  cl.instance_id = kInstance;
  cl.udp_port = kSubscriberPort;
  cl.eventgroups = {kEventgroup};
  cc.clients = {cl};

  auto build = [&](std::uint32_t h, someip::RuntimeConfig rc, secoc::EngineConfig ec, someip::SecocBindings b) {
    node::StackSpec spec;
    spec.runtime = std::move(rc);
    spec.seed = seed * 7919 + h + 1;
    spec.transport = node::SimTransportSpec{&sim_, hosts_[h].get()};
    if (protected_) {
      node::SecocSpec s;
      s.engine = std::move(ec);
      s.bindings = std::move(b);
      s.keys.push_back({0, 1, seeded_key(seed ^ 0x5EC0C0DEULL, 32)});
      s.keys.push_back({1, 1, seeded_key(seed ^ 0x5D5D5D5DULL, 16)});
      spec.secoc = std::move(s);
    }
    return node::build_stack(std::move(spec));
  };
  someip::SecocBindings sb;
  sb.messages = {{kService, kInstance, kEvent, 0u, std::nullopt}};
  sb.sd_tx_pdu = 1;
  sb.sd_rx_pdu = 0;
  someip::SecocBindings cb;
  cb.messages = {{kService, kInstance, kEvent, std::nullopt, 0u}};
  cb.sd_tx_pdu = 0;
  cb.sd_rx_pdu = 1;
  server_ = build(kServer, sc, server_engine(), sb);
  client_ = build(kClient, cc, client_engine(), cb);

  for (std::uint32_t h = 0; h < kHosts; ++h) ports_[h] = hosts_[h]->attach(seg_);
  for (std::uint32_t a = 0; a < kHosts; ++a)
    for (std::uint32_t b = 0; b < kHosts; ++b)
      if (a != b) hosts_[a]->add_static_arp(ip4(b), hosts_[b]->config().mac);

  net::SimHost& att = *hosts_[kAttackerHost];
  require(att.bind(kSd, [this](const net::UdpDatagram& d) { on_attacker_sd(d); }).ok(), "attacker sd port");
  require(att.bind(kServicePort, [this](const net::UdpDatagram&) { ++probe_.attacker_requests; }).ok(),
          "attacker service port");
  require(att.bind(kAttackerEventPort, [this](const net::UdpDatagram&) { ++probe_.attacker_events; }).ok(),
          "attacker event port");
  require(hosts_[kVictim]->bind(kAttackerEventPort, [this](const net::UdpDatagram&) { ++probe_.victim_events; })
              .ok(),
          "victim port");

  client_->runtime().on_event(kService, someip::Runtime::kAnyEvent, [this](const someip::Notification& n) {
    if (n.payload.size() == 8 && load_be32(n.payload.data() + 4) == ~load_be32(n.payload.data()) &&
        pending_.erase(load_be32(n.payload.data())) == 1)
      ++delivered_;
    else
      ++probe_.extra;  // a value again (a new subscription at the server), or not the server's
  });
  client_->runtime().on_availability([this](std::uint16_t, std::uint16_t, bool up) {
    if (!up) ++probe_.downs;
  });
  for (node::Stack* st : {server_.get(), client_.get()})
    st->runtime().on_rejection([this](const someip::SecurityRejection& r) {
      const std::string what = r.unprotected ? "unprotected" : std::string(secoc::to_string(r.reason));
      ++security_[(r.sd ? "secoc_sd_rejected_" : "secoc_rejected_") + what];
    });
  if (protected_) {
    auto forger = secoc::Engine::start(client_engine(), forger_store_, secoc::StartOptions{true, sim_.now()});
    require(forger.ok(), "attacker engine");
    forger_ = std::move(forger).value();
    require(forger_->install_key(0, 1, seeded_key(seed ^ 0xBADC0FFEEULL, 32), sim_.now()).ok(), "attacker key");
    require(forger_->install_key(1, 1, seeded_key(seed ^ 0xBADC0FFEFULL, 16), sim_.now()).ok(), "attacker key");
  }
  hook_.parse_check = !protected_;
  seg_.add_hook(&hook_);

  require(client_->runtime().start().ok(), "client start");
  if (start_server) this->start_server();
}

Bed::~Bed() {
  seg_.remove_hook(&hook_);
  server_.reset();
  client_.reset();
}

void Bed::start_server() {
  require(server_->runtime().start().ok(), "server start");
  // Notifications start once the client subscribed (or after 1 s: a
  // captured client never does).
  const TimePoint deadline = sim_.now() + Duration::seconds(1);
  while (sim_.now() < deadline && !healthy()) advance(Duration::milliseconds(1));
  server_started_ = true;
}

void Bed::require_discovered() {
  advance_until([this] { return healthy(); }, Duration::seconds(10));
  require(healthy(), "service discovery");
  advance(Duration::milliseconds(50));
}

void Bed::send_own(const net::Ipv4Endpoint& to, const someip::SdEntry& e,
                   const std::optional<someip::Endpoint>& named) {
  std::vector<std::uint8_t> msg = sd_message(e, named, attacker_session_++);
  if (forger_) {
    auto h = someip::read_raw_header(ByteSpan(msg).subspan(0, someip::kHeaderSize));
    require(h.ok(), "attacker sd header");
    std::uint8_t aad[someip::kSdAadSize];
    const std::size_t n = someip::sd_aad(*h, ipa(kAttackerHost), aad);
    std::vector<std::uint8_t> secured(msg.size() - someip::kHeaderSize + someip::kSecocOverhead);
    auto w = forger_->protect(0, ByteSpan(msg).subspan(someip::kHeaderSize), secured,
                              secoc::TxInput{ByteSpan(aad, n), sim_.now()});
    require(w.ok(), "attacker sd protect");
    msg.resize(someip::kHeaderSize);
    msg.insert(msg.end(), secured.begin(), secured.begin() + static_cast<std::ptrdiff_t>(*w));
    store_be32(&msg[4], static_cast<std::uint32_t>(msg.size() - 8));
  }
  require(hosts_[kAttackerHost]->send_to(kSd, to, msg).ok(), "attacker send");
  if (attacker_session_ == 0) attacker_session_ = 1;
}

void Bed::advance(Duration d) {
  const TimePoint end = sim_.now() + d;
  while (sim_.now() < end) {
    if (server_started_ && sim_.now() >= next_event_) {
      notify();
      next_event_ = sim_.now() + Duration::milliseconds(10);
    }
    const TimePoint stop = server_started_ ? std::min(end, next_event_) : end;
    sim_.run_for(stop - sim_.now());
  }
}

bool Bed::advance_until(const std::function<bool()>& done, Duration limit, Duration step) {
  const TimePoint end = sim_.now() + limit;
  while (!done()) {
    if (sim_.now() >= end) return false;
    advance(step);
  }
  return true;
}

std::map<std::string, std::uint64_t> Bed::rejections() const {
  std::map<std::string, std::uint64_t> out = security_;
  for (const node::Stack* st : {server_.get(), client_.get()}) {
    const auto& d = st->runtime().counters().sd_dropped;
    for (std::size_t r = 0; r < static_cast<std::size_t>(someip::SdDropReason::kCount); ++r)
      if (d.by_reason[r] > 0)
        out["sd_dropped_" + std::string(someip::to_string(static_cast<someip::SdDropReason>(r)))] +=
            d.by_reason[r];
  }
  for (const auto& [k, n] : hook_.invalid) out[k] += n;
  return out;
}

std::uint64_t Bed::rejected_total() const {
  std::uint64_t n = 0;
  for (const auto& [k, v] : security_) n += v;
  for (const auto& [k, v] : hook_.invalid) n += v;
  return n + server_->runtime().counters().sd_dropped.total() + client_->runtime().counters().sd_dropped.total();
}

void Bed::notify() {
  const std::uint32_t seq = next_seq_++;
  std::uint8_t p[8];
  store_be32(p, seq);
  store_be32(p + 4, ~seq);
  pending_.insert(seq);
  ++legit_sent_;
  last_sent_ = sim_.now();
  require(server_->runtime().set_field(kService, kInstance, kEvent, p).ok(), "notify");
}

void Bed::on_attacker_sd(const net::UdpDatagram& d) {
  auto m = someip::parse_message(d.payload);
  if (!m) return;
  auto v = someip::parse_sd_message(*m);
  if (!v) return;
  for (std::size_t i = 0; i < v->entry_count(); ++i)
    if (v->entry(i).kind() == someip::EntryKind::kSubscribeEventgroup && d.src.address == ip4(kClient))
      ++probe_.attacker_subscribes;
}

}  // namespace layersec::attack::sd_bed
