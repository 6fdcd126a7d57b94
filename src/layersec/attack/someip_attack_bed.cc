#include "layersec/attack/someip_attack_bed.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "layersec/harness/scenario_layout.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/secoc_filter.h"

namespace layersec::attack::someip_bed {

namespace {

namespace L = harness::layout;

// The receiver's window capped to what the transmitted message-counter bits
// can disambiguate (strict mode: 2^bits; profile 3 sends 2).
void fit_window(secoc::RxPduConfig& r) {
  const unsigned lsb = r.profile.freshness.msg_lower_bits();
  if (r.profile.freshness.has_freshness() && !r.profile.freshness.timestamp && lsb < 32)
    r.window = std::min<std::uint32_t>(r.window, std::uint32_t{1} << lsb);
}

}  // namespace

secoc::EngineConfig publisher_engine(Config c, int subscribers) {
  const secoc::PduProfile p = event_profile(c);
  secoc::EngineConfig e = L::publisher_engine_config(subscribers);
  e.key_groups[0].algorithm = p.algorithm;
  for (auto& t : e.tx_pdus) t.profile = p;
  for (auto& r : e.rx_pdus) {
    r.profile = p;
    r.has_sender_id = is_aead(c);
    if (!counter_sync(c)) r.has_sync_channel = false;
    fit_window(r);
  }
  e.has_sender_id = is_aead(c);
  if (counter_sync(c)) {
    e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
    e.sync_tx = {true, L::kSyncDataIdBase, 1, 64, Duration::seconds(1)};
    // Sync messages are MACed: under aead-gcm the session group cannot.
    if (is_aead(c))
      for (auto& s : e.sync_rx) s.key_group = 1;
  }
  if (has_rr(c)) {
    secoc::RxPduConfig req = e.rx_pdus[0];
    req.id = 1;
    req.data_id = kRrRequestDataId;
    e.rx_pdus.push_back(req);
    e.tx_pdus.push_back({1, kRrResponseDataId, p, 0});
  }
  return e;
}

// Counter freshness with a time bound: the publisher sends a sync message
// (a new reset cycle) every second as a notification of its own service, and
// the subscriber accepts a reset cycle only within maxAge (1 s) of its start
// plus one period, as `layersec node` does by default. (The scenario layout
// itself runs without sync messages and without a time bound.)
secoc::EngineConfig subscriber_engine(Config c, int index) {
  const secoc::PduProfile p = event_profile(c);
  secoc::EngineConfig e = L::subscriber_engine_config(index);
  e.key_groups[0].algorithm = p.algorithm;
  for (auto& t : e.tx_pdus) t.profile = p;
  e.has_sender_id = is_aead(c);
  auto& r = e.rx_pdus[0];
  r.profile = p;
  r.has_sender_id = is_aead(c);
  if (!counter_sync(c)) r.has_sync_channel = false;
  fit_window(r);
  if (c == Config::kTimestamp) r.max_age = Duration::seconds(1);
  if (counter_sync(c)) {
    e.key_groups.push_back({"sync", secoc::AuthAlgorithm::kCmacAes128});
    e.sync_rx[0] = {0, L::kSyncDataIdBase, 1, 64, Duration::seconds(1), secoc::kDefaultMaxAge};
  }
  if (has_rr(c)) {
    secoc::RxPduConfig resp = r;
    resp.id = 1;
    resp.data_id = kRrResponseDataId;
    e.rx_pdus.push_back(resp);
    e.tx_pdus.push_back({1, kRrRequestDataId, p, 0});
  }
  return e;
}

SecretBytes seeded_key(std::uint64_t seed, std::size_t n) {
  net::SimRng rng(seed);
  SecretBytes k(n);
  for (auto& b : k.mutable_span()) b = static_cast<std::uint8_t>(rng.next_u64());
  return k;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("someip attack set-up: " + what);
}

secoc::PduProfile event_profile(Config c) {
  switch (c) {
    case Config::kTimestamp: {
      secoc::PduProfile p = secoc::PduProfile::vendor();
      p.freshness = secoc::FreshnessLayout::timestamp_us(64, 64);
      return p;
    }
    case Config::kProfile1: return secoc::PduProfile::profile1();
    case Config::kProfile2: return secoc::PduProfile::profile2();
    case Config::kProfile3: return secoc::PduProfile::profile3();
    case Config::kAead:
    case Config::kHybridAead: return secoc::PduProfile::aead_gcm();
    case Config::kUnsecured:
    case Config::kCounter:
    case Config::kHybrid: break;
  }
  return secoc::PduProfile::vendor();
}

AttackRow make_row(const ConfigInfo& info, const char* cls, std::string note) {
  AttackRow r;
  r.layer = info.layer;
  r.configuration = info.name;
  r.attack_class = cls;
  r.acceptance_expected = !is_secured(info.config);
  const std::string_view c(cls);
  // Hop-by-hop MACsec: the switch validates and re-protects each hop, so the
  // attacker at the switch works on the plaintext (a switch holding the
  // link keys); only SecOC can refuse what it does.
  if (is_hybrid(info.config) && c != "A1.passive" && !c.starts_with("A3.")) note += " (inside the switch, past MACsec)";
  // A short truncated MAC: every altered or forged PDU is an online
  // forgery attempt that succeeds with probability 2^-N.
  const secoc::PduProfile p = event_profile(info.config);
  if (is_secured(info.config) && p.auth_info_tx_length < 64 && !c.starts_with("A1.") && !c.starts_with("A2.sync."))
    note += " [brute force: forgery 2^-" + std::to_string(p.forgery_exponent()) + " per attempt]";
  r.note = std::move(note);
  return r;
}

bool payload_readable(ByteSpan f, std::uint32_t first, std::uint32_t count) {
  for (std::size_t p = 0; p + kPayloadBytes <= f.size(); ++p) {
    const std::uint32_t seq = load_be32(&f[p]);
    if (seq - first < count && load_be32(&f[p + 4]) == ~seq) return true;
  }
  return false;
}

namespace {
bool is_udp_to_subscriber(const std::vector<std::uint8_t>& f) {
  return f.size() >= kPayload && load_be16(&f[12]) == 0x0800 && f[23] == 17 && f[33] == 2 && f[32] == 0;
}
}  // namespace

bool is_event_frame(const std::vector<std::uint8_t>& f) {
  return f.size() >= kPayload + kPayloadBytes && is_udp_to_subscriber(f) && load_be16(&f[36]) == L::kSubscriberPort &&
         load_be16(&f[kSomeip]) == L::kService && f[kSomeip + 14] == 0x02;
}

bool is_request_frame(const std::vector<std::uint8_t>& f) {
  return f.size() >= kPayload && load_be16(&f[12]) == 0x0800 && f[23] == 17 && f[33] == 1 &&
         load_be16(&f[36]) == L::kServicePort && load_be16(&f[kSomeip]) == L::kService &&
         load_be16(&f[kSomeip + 2]) == kRrMethod && f[kSomeip + 14] == 0x00;
}

bool is_response_frame(const std::vector<std::uint8_t>& f) {
  return is_udp_to_subscriber(f) && load_be16(&f[34]) == L::kServicePort && load_be16(&f[kSomeip]) == L::kService &&
         load_be16(&f[kSomeip + 2]) == kRrMethod && f[kSomeip + 14] == 0x80;
}

bool is_sync_frame(const std::vector<std::uint8_t>& f) {
  return is_udp_to_subscriber(f) && load_be16(&f[kSomeip]) == kSyncService && load_be16(&f[kSomeip + 2]) == kSyncEvent;
}

void fix_lengths(std::vector<std::uint8_t>& f) {
  store_be16(&f[16], static_cast<std::uint16_t>(f.size() - 14));
  store_be16(&f[38], static_cast<std::uint16_t>(f.size() - 34));
  store_be32(&f[kSomeip + 4], static_cast<std::uint32_t>(f.size() - kSomeip - 8));
  net::refresh_checksums(f);
}

void flip_in(std::vector<std::uint8_t>& f, std::size_t from, std::size_t len, net::SimRng& rng) {
  const std::uint64_t bit = rng.uniform(len * 8);
  f[from + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

void flip_bits(std::vector<std::uint8_t>& f, std::size_t base, std::size_t from_bit, std::size_t bits,
               net::SimRng& rng) {
  const std::size_t bit = from_bit + static_cast<std::size_t>(rng.uniform(bits));
  f[base + bit / 8] ^= static_cast<std::uint8_t>(0x80u >> (bit % 8));
}

net::HookVerdict Attacker::on_frame(const net::HookContext&, std::vector<std::uint8_t>& frame, net::SwitchControl&) {
  if (is_sync_frame(frame)) {
    last_sync = frame;
    return sync ? sync(frame) : net::HookVerdict::forward();
  }
  if (is_request_frame(frame)) {
    last_request = frame;
    return net::HookVerdict::forward();
  }
  if (is_response_frame(frame)) {
    bool target = false;
    if (!rr_schedule.empty()) {
      target = rr_schedule.front();
      rr_schedule.pop_front();
    }
    if (target && rr_drop) return net::HookVerdict::dropped();
    if (target && rr_alter) {
      rr_alter(frame);
      net::refresh_checksums(frame);
      ++altered;
    } else {
      last_response = frame;
    }
    return net::HookVerdict::forward();
  }
  if (!is_event_frame(frame)) return net::HookVerdict::forward();
  if (reading) {
    ++read_frames;
    if (payload_readable(frame, read_first, read_count)) ++read_plain;
  }
  bool target = false;
  if (!schedule.empty()) {
    target = schedule.front();
    schedule.pop_front();
  }
  if (target && hold > Duration::zero()) {
    ++altered;
    return net::HookVerdict::delayed(hold);
  }
  if (target && alter) {
    alter(frame);
    net::refresh_checksums(frame);
    ++altered;
  } else {
    last = frame;
  }
  return net::HookVerdict::forward();
}

Bed::Bed(Config config, std::uint64_t seed) : config_(config), sim_(seed, TimePoint::from_ns(kEpochNs)), seg_(sim_) {
  const bool secured = is_secured(config);
  for (int i = 0; i < 2; ++i) {
    net::SimHostConfig hc;
    hc.mac = net::MacAddress::local(static_cast<std::uint32_t>(0x1000 + i));
    hc.ip = net::Ipv4Address::from_octets(10, 0, 0, static_cast<std::uint8_t>(i + 1));
    hc.prefix_length = 16;
    hc.dynamic_arp = false;
    hosts_[i] = std::make_unique<net::SimHost>(sim_, hc);
    if (is_hybrid(config)) {
      const auto host_sci = macsec::Sci::from_parts(hc.mac.bytes.data(), 1);
      const auto sw_mac = net::MacAddress::local(static_cast<std::uint32_t>(0xF000 + i));
      const auto sw_sci = macsec::Sci::from_parts(sw_mac.bytes.data(), 1);
      const SecretBytes up = seeded_key(seed * 31 + static_cast<std::uint64_t>(i) * 2 + 1, 16);
      const SecretBytes down = seeded_key(seed * 31 + static_cast<std::uint64_t>(i) * 2 + 2, 16);
      host_macsec_[i] = node::hop_macsec_spec(host_sci, sw_sci, up, down, "switch");
      switch_secy_[i] = std::make_unique<macsec::MacsecLink>(
          node::make_secy(node::hop_macsec_spec(sw_sci, host_sci, down, up, "host")));
    }
  }
  someip::SdTiming timing;
  timing.initial_delay_min = Duration::milliseconds(0);
  timing.initial_delay_max = Duration::milliseconds(10);

  someip::RuntimeConfig pc;
  pc.name = "publisher";
  pc.client_id = 0x0001;
  pc.client_port = L::kClientPort;
  pc.sd_timing = timing;
  someip::ServiceConfig svc;
  svc.service_id = L::kService;
  svc.instance_id = L::kInstance;
  svc.udp_port = L::kServicePort;
  svc.methods.push_back({L::answer_method(0), true});
  if (has_rr(config)) svc.methods.push_back({kRrMethod, false});
  someip::EventConfig ev;
  ev.event_id = L::kEvent;
  ev.eventgroups = {L::kEventgroup};
  svc.events = {ev};
  someip::EventgroupConfig eg;
  eg.eventgroup_id = L::kEventgroup;
  svc.eventgroups = {eg};
  pc.services = {svc};

  someip::RuntimeConfig sc;
  sc.name = "subscriber";
  sc.client_id = L::subscriber_client_id(0);
  sc.client_port = L::kClientPort;
  sc.sd_timing = timing;
  someip::ClientConfig cl;
  cl.service_id = L::kService;
  cl.instance_id = L::kInstance;
  cl.udp_port = L::kSubscriberPort;
  cl.eventgroups = {L::kEventgroup};
  sc.clients = {cl};
  someip::SecocBindings pb = L::publisher_bindings(1);
  someip::SecocBindings sb = L::subscriber_bindings(0);
  if (has_rr(config)) {
    pb.messages.push_back({L::kService, L::kInstance, kRrMethod, 1u, 1u});
    sb.messages.push_back({L::kService, L::kInstance, kRrMethod, 1u, 1u});
  }
  if (counter_sync(config)) {
    someip::ServiceConfig sync;
    sync.service_id = kSyncService;
    sync.instance_id = 1;
    sync.udp_port = kSyncPort;
    sync.events = {someip::EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
    sync.eventgroups = {someip::EventgroupConfig{kSyncGroup, std::nullopt, 1}};
    pc.services.push_back(sync);
    sc.clients.push_back(someip::ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}});
    for (auto* b : {&pb, &sb}) {
      b->sync_service = kSyncService;
      b->sync_instance = 1;
      b->sync_event = kSyncEvent;
      b->sync_rx_channel = 0;
    }
  }

  auto build = [&](int i, someip::RuntimeConfig rc, secoc::EngineConfig ec, someip::SecocBindings b) {
    node::StackSpec spec;
    spec.runtime = std::move(rc);
    spec.seed = seed * 7919 + static_cast<std::uint64_t>(i) + 1;
    spec.transport = node::SimTransportSpec{&sim_, hosts_[i].get()};
    spec.macsec = std::move(host_macsec_[i]);
    if (secured) {
      node::SecocSpec s;
      s.engine = std::move(ec);
      s.bindings = std::move(b);
      spec.secoc = std::move(s);
    }
    return node::build_stack(std::move(spec));
  };
  pub_ = build(0, pc, publisher_engine(config, 1), std::move(pb));
  sub_ = build(1, sc, subscriber_engine(config, 0), std::move(sb));
  for (int i = 0; i < 2; ++i) {
    node::Stack& st = i == 0 ? *pub_ : *sub_;
    if (is_hybrid(config)) {
      shims_[i] = std::make_unique<net::FrameShim>(macsec::make_sim_shim(*st.macsec_link()));
      ports_[i] = seg_.add_port({}, shims_[i].get());
      shims_[i]->connect(&seg_.sender(ports_[i]), hosts_[i].get());
      hosts_[i]->connect(shims_[i].get());
      switch_ports_.bind(ports_[i], switch_secy_[i].get());
      seg_.set_port_processor(ports_[i], &switch_ports_);
    } else {
      ports_[i] = hosts_[i]->attach(seg_);
    }
  }
  seg_.add_tap(&tap_, net::TapPoint::kIngress);
  hosts_[0]->add_static_arp(hosts_[1]->config().ip, hosts_[1]->config().mac);
  hosts_[1]->add_static_arp(hosts_[0]->config().ip, hosts_[0]->config().mac);

  sub_->runtime().on_event(L::kService, someip::Runtime::kAnyEvent,
                           [this](const someip::Notification& n) { classify(n); });
  sub_->runtime().on_rejection([this](const someip::SecurityRejection& r) {
    // Sync messages are refused under names of their own.
    const std::string prefix = r.method_or_event == kSyncEvent ? "secoc_sync_rejected_" : "secoc_rejected_";
    std::string reason = r.unbound       ? "secoc_unbound_rejected"
                         : r.unprotected ? prefix + "unprotected"
                                         : prefix + std::string(secoc::to_string(r.reason));
    ++security_[reason];
  });

  // The server's own refusals (requests), under names of their own.
  pub_->runtime().on_rejection([this](const someip::SecurityRejection& r) {
    ++security_[r.unbound ? std::string("server_secoc_unbound_rejected")
                          : "server_secoc_rejected_" + std::string(secoc::to_string(r.reason))];
  });
  if (has_rr(config)) {
    require(pub_->runtime()
                .set_method_handler(L::kService, L::kInstance, kRrMethod,
                                    [this](const someip::Request& q, someip::Reply& reply) {
                                      ++executions_;
                                      reply.payload.assign(q.payload.begin(), q.payload.end());
                                    })
                .ok(),
            "method handler");
  }
  require(pub_->runtime().start().ok(), "publisher start");
  require(sub_->runtime().start().ok(), "subscriber start");
  const TimePoint deadline = sim_.now() + Duration::seconds(10);
  auto subscribed = [&] {
    return sub_->runtime().available(L::kService, L::kInstance) &&
           pub_->runtime().subscriber_count(L::kService, L::kInstance, L::kEventgroup) == 1 &&
           (!counter_sync(config) || pub_->runtime().subscriber_count(kSyncService, 1, kSyncGroup) == 1);
  };
  while (sim_.now() < deadline && !subscribed()) {
    sim_.run_for(Duration::milliseconds(5));
  }
  require(subscribed(), "service discovery");
  sim_.run_for(Duration::milliseconds(50));

  if (secured) {
    const SecretBytes key = seeded_key(seed ^ 0x5EC0C0DEULL, secoc::key_size(event_profile(config).algorithm));
    require(pub_->install_key(0, 1, key).ok(), "publisher key");
    require(sub_->install_key(0, 1, key).ok(), "subscriber key");
    if (counter_sync(config)) {
      const SecretBytes sync_key = seeded_key(seed ^ 0x5F1C0DEULL, 16);
      require(pub_->install_key(1, 1, sync_key).ok(), "publisher sync key");
      require(sub_->install_key(1, 1, sync_key).ok(), "subscriber sync key");
      // The next periodic sync message synchronises the subscriber.
      sim_.run_for(Duration::milliseconds(1200));
      require(sub_->runtime().counters().secoc_syncs_accepted > 0, "freshness sync");
    }
    // The forger: the publisher's configuration under a key of its own.
    auto forger = secoc::Engine::start(publisher_engine(config, 1), forger_store_, secoc::StartOptions{true, sim_.now()});
    require(forger.ok(), "forger engine");
    forger_ = std::move(forger).value();
    require(forger_->install_key(0, 1, seeded_key(seed ^ 0xBADC0FFEEULL, secoc::key_size(event_profile(config).algorithm)), sim_.now()).ok(), "forger key");
    if (counter_sync(config))
      require(forger_->install_key(1, 1, seeded_key(seed ^ 0xBADC0FFEFULL, 16), sim_.now()).ok(), "forger key");
  }
  seg_.add_hook(&attacker_);
}

std::vector<std::uint8_t> Bed::forge(std::uint64_t i) {
  std::vector<std::uint8_t> f = attacker_.last;
  auto h = someip::read_raw_header(ByteSpan(f).subspan(kSomeip, 16));
  require(h.ok(), "forge header");
  std::vector<std::uint8_t> payload(kPayloadBytes, 0xF0);
  store_be32(payload.data(), 0xF0000000u | static_cast<std::uint32_t>(i));
  std::vector<std::uint8_t> body = payload;
  if (forger_) {
    std::uint8_t aad[someip::kHeaderAadSize];
    const std::size_t n = someip::header_aad(*h, aad);
    body.assign(payload.size() + someip::kSecocOverhead, 0);
    auto w = forger_->protect(0, payload, body, secoc::TxInput{ByteSpan(aad, n), sim_.now()});
    require(w.ok(), "forger protect");
    body.resize(*w);
  }
  f.resize(kPayload);
  f.insert(f.end(), body.begin(), body.end());
  fix_lengths(f);
  return f;
}
// Counter freshness: keeps the forger's MsgCnt level with the publisher's
// next one (starting a new reset cycle of its own when the publisher did),
// so the forgery's truncated FV is fresh and it is judged on its MAC.
void Bed::align_forger() {
  if (!counter_sync(config_) || !forger_) return;
  const std::uint64_t want = pub_->engine()->next_tx_freshness(0).msg;
  if (forger_->next_tx_freshness(0).msg > want) {
    forger_->request_sync();
    std::vector<std::uint8_t> sync(forger_->sync_message_size());
    require(forger_->poll(sim_.now(), sync).ok(), "forger reset cycle");
  }
  std::vector<std::uint8_t> out(kPayloadBytes + someip::kSecocOverhead);
  const std::vector<std::uint8_t> dummy(kPayloadBytes, 0);
  while (forger_->next_tx_freshness(0).msg < want) {
    require(forger_->protect(0, dummy, out, secoc::TxInput{{}, sim_.now()}).ok(), "forger align");
  }
}

Snapshot Bed::snapshot() const {
  Snapshot s;
  const auto& c = sub_->runtime().counters();
  s.rx = c.rx;
  s.host = hosts_[1]->stats();
  s.unsubscribed = c.notifications_unsubscribed;
  s.tp_rejected = c.tp_rejected;
  s.syncs_accepted = c.secoc_syncs_accepted;
  s.syncs_duplicate = c.secoc_syncs_duplicate;
  s.late_responses = c.late_responses;
  if (sub_->macsec_link() != nullptr) s.link = sub_->macsec_link()->stats();
  s.security = security_;
  return s;
}

// Starts a class: zeroes its figures.
void Bed::begin() {
  accepted_ = 0;
  legit_delivered_ = 0;
  legit_sent_ = 0;
  pending_.clear();
  attacker_.schedule.clear();
  attacker_.rr_schedule.clear();
  attacker_.rr_alter = nullptr;
  attacker_.rr_drop = false;
  executions_ = 0;
  rr_sent_ = 0;
  attacker_.sync = nullptr;
  attacker_.reading = false;
  attacker_.alter = nullptr;
  attacker_.hold = Duration::zero();
  attacker_.altered = 0;
  before_ = snapshot();
}
// Ends a class: lets the last frames arrive and fills `row`.
void Bed::end(AttackRow& row) {
  sim_.run_for(Duration::milliseconds(20));
  const Snapshot now = snapshot();
  for (const auto& [reason, n] : now.security) {
    auto it = before_.security.find(reason);
    const std::uint64_t d = n - (it == before_.security.end() ? 0 : it->second);
    if (d > 0) row.rejected[reason] += d;
  }
  for (std::size_t r = 1; r < static_cast<std::size_t>(someip::DropReason::kCount); ++r) {
    const std::uint64_t d = now.rx.dropped[r] - before_.rx.dropped[r];
    if (d > 0)
      row.rejected["someip_dropped_" + std::string(someip::to_string(static_cast<someip::DropReason>(r)))] += d;
  }
  auto add = [&row](const char* name, std::uint64_t d) {
    if (d > 0) row.rejected[name] += d;
  };
  add("udp_malformed", now.host.rx_malformed - before_.host.rx_malformed);
  add("udp_not_for_us", now.host.rx_not_for_us - before_.host.rx_not_for_us);
  add("udp_no_listener", now.host.rx_no_listener - before_.host.rx_no_listener);
  add("someip_notifications_unsubscribed", now.unsubscribed - before_.unsubscribed);
  add("someip_tp_rejected", now.tp_rejected - before_.tp_rejected);
  add("secoc_syncs_duplicate", now.syncs_duplicate - before_.syncs_duplicate);
  add("someip_late_responses", now.late_responses - before_.late_responses);
  add("macsec_rx_dropped", now.link.rx_dropped - before_.link.rx_dropped);
  add("macsec_rx_not_macsec", now.link.rx_not_macsec - before_.link.rx_not_macsec);
  add("macsec_rx_unverified", now.link.rx_unverified - before_.link.rx_unverified);
  row.accepted = accepted_;
  row.legit_delivered = legit_delivered_;
  row.legit_lost = legit_sent_ - legit_delivered_;
  const std::uint64_t judged = row.accepted + total_rejected(row);
  // Attacker frames the subscriber neither delivered nor counted anywhere
  // (should be 0; shown, never hidden).
  if (row.attempts > judged) row.rejected["uncounted"] = row.attempts - judged;
}

void Bed::notify(std::uint32_t seq) {
  std::vector<std::uint8_t> p(kPayloadBytes);
  store_be32(p.data(), seq);
  store_be32(p.data() + 4, ~seq);
  require(pub_->runtime().notify(L::kService, L::kInstance, L::kEvent, p).ok(), "notify");
}
// A delivery is legitimate when it is a pending notification of the
// publisher, exactly as sent; anything else is the attacker's.
void Bed::classify(const someip::Notification& n) {
  if (n.event_id == L::kEvent && n.payload.size() == kPayloadBytes) {
    const std::uint32_t seq = load_be32(n.payload.data());
    if (load_be32(n.payload.data() + 4) == ~seq && pending_.erase(seq) == 1) {
      ++legit_delivered_;
      return;
    }
  }
  ++accepted_;
}
Bed::~Bed() {
  seg_.remove_hook(&attacker_);
  seg_.remove_tap(&tap_);
  pub_.reset();
  sub_.reset();
}

void Bed::send_legit() {
  const std::uint32_t seq = next_seq_++;
  pending_.insert(seq);
  ++legit_sent_;
  attacker_.schedule.push_back(false);
  notify(seq);
}

void Bed::send_target() {
  ++next_seq_;
  attacker_.schedule.push_back(true);
  notify(next_seq_ - 1);
}

std::vector<std::uint8_t> Bed::forge_sync() {
  require(forger_ != nullptr && !attacker_.last_sync.empty(), "forge sync");
  // A reset cycle ahead of the publisher's, so the forgery is judged on its MAC.
  std::vector<std::uint8_t> sync(forger_->sync_message_size());
  std::size_t bytes = 0;
  const std::uint64_t want = pub_->engine()->next_tx_freshness(0).reset + 1;
  do {
    forger_->request_sync();
    auto r = forger_->poll(sim_.now(), sync);
    require(r.ok() && r->sync_bytes > 0, "forger sync");
    bytes = r->sync_bytes;
  } while (forger_->next_tx_freshness(0).reset < want);
  std::vector<std::uint8_t> f = attacker_.last_sync;
  f.resize(kSomeip + 16);
  f.insert(f.end(), sync.begin(), sync.begin() + static_cast<std::ptrdiff_t>(bytes));
  fix_lengths(f);
  return f;
}

std::uint16_t Bed::rr_request(bool target) {
  const std::uint32_t seq = next_seq_++;
  std::vector<std::uint8_t> p(kPayloadBytes);
  store_be32(p.data(), seq);
  store_be32(p.data() + 4, ~seq);
  ++rr_sent_;
  if (!target) ++legit_sent_;
  attacker_.rr_schedule.push_back(target);
  auto s = sub_->runtime().request(
      L::kService, L::kInstance, kRrMethod, p,
      [this, seq, target](const someip::ResponseResult& r) {
        if (r.code != someip::ReturnCode::kOk) return;  // a timeout or an error: nothing delivered
        const bool own = r.payload.size() == kPayloadBytes && load_be32(r.payload.data()) == seq &&
                         load_be32(r.payload.data() + 4) == ~seq;
        if (!target && own) {
          ++legit_delivered_;
        } else {
          ++accepted_;
        }
      },
      kRrTimeout);
  require(s.ok(), "request");
  return *s;
}

std::uint64_t Bed::syncs_applied() const {
  return sub_->runtime().counters().secoc_syncs_accepted - before_.syncs_accepted;
}

void run_in_flight(Bed& bed, AttackRow& row, std::uint64_t attempts, Attacker::Alter alter) {
  bed.begin();
  bed.attacker().alter = std::move(alter);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    bed.send_target();
    bed.sim().run_for(kGap);
    bed.send_legit();
    bed.sim().run_for(kGap);
  }
  // Each target was altered at the switch before it reached the subscriber.
  row.attempts = bed.attacker().altered;
  bed.end(row);
}

void run_injected(Bed& bed, AttackRow& row, std::uint64_t attempts,
                  const std::function<std::vector<std::uint8_t>(std::uint64_t)>& make) {
  bed.begin();
  for (std::uint64_t i = 0; i < attempts; ++i) {
    bed.send_legit();
    bed.sim().run_for(kGap);
    bed.inject(make(i));
    bed.sim().run_for(kGap);
  }
  row.attempts = attempts;
  bed.end(row);
}

}  // namespace layersec::attack::someip_bed
