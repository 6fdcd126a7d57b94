#include "layersec/harness/zonal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "layersec/base/hex.h"
#include "layersec/base/secret.h"
#include "layersec/harness/zonal_schedule.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/frame.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_bridge.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/message.h"
#include "layersec/someip/secoc_filter.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::harness {

const char* to_string(ZonalShaper s) {
  switch (s) {
    case ZonalShaper::kOn: return "on";
    case ZonalShaper::kStrict: return "strict";
    case ZonalShaper::kFifo: return "fifo";
  }
  return "?";
}

namespace {

void check_range(const char* field, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    throw std::invalid_argument(std::string("zonal: ") + field + " must be a finite number in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  }
}

}  // namespace

void validate(const ZonalOptions& o) {
  check_range("hops", o.hops, 1, 4);
  check_range("be_load_pct", o.be_load_pct, 0, 95);
  if (o.port_bps != 100'000'000 && o.port_bps != 1'000'000'000)
    throw std::invalid_argument("zonal: port_bps must be 100 or 1000 Mbit/s, got " + std::to_string(o.port_bps));
  if (o.ecu_bps != 100'000'000 && o.ecu_bps != 1'000'000'000)
    throw std::invalid_argument("zonal: ecu_bps must be 100 or 1000 Mbit/s, got " + std::to_string(o.ecu_bps));
  check_range("cycles", o.cycles, 1, 1'000'000);
  check_range("cycle_ns", static_cast<double>(o.cycle_ns), 100'000, 100'000'000);
  check_range("switching_delay_ns", static_cast<double>(o.switching_delay_ns), 0, 1'000'000);
  check_range("cable_ns", static_cast<double>(o.cable_ns), 0, 100'000);
  validate(o.clock);
}

namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint16_t kStPort = 30501;
constexpr std::uint16_t kBePort = 40000;
constexpr std::uint8_t kStPcp = 6;
constexpr std::uint8_t kBePcp = 0;
constexpr std::size_t kBePayload = 1400;       // camera datagram: 1,478-byte frame once MACsec is added
constexpr std::size_t kStAppPayload = 8;       // control event: sequence number, setpoint
constexpr int kBurstFrames = 8;                // a camera sends a slice of a picture back to back
constexpr std::uint16_t kServiceId = 0x4010;
constexpr std::uint16_t kEventId = 0x8001;
constexpr std::size_t kSecyOverhead = 32;      // SecTAG with SCI + 16-byte ICV
constexpr std::int64_t kWindowMarginNs = 1'000;
constexpr std::uint32_t kQueueLimit = 4096;  // frames per link queue and per shaper class queue
const net::MacAddress kCentralMac = net::MacAddress::local(0x0C0000);
const net::Ipv4Address kCentralIp = net::Ipv4Address::from_octets(10, 16, 0, 1);

std::uint32_t setpoint(int zone, std::uint32_t seq) { return seq * 7u + static_cast<std::uint32_t>(zone); }

// ---------------------------------------------------------------- MACsec

// Link keys of the simulation (not secrets of any deployment): distinct per
// link and direction, wiped when the SA contexts are built.
SecretBytes link_key(int link, int direction) {
  SecretBytes k(16);
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = static_cast<std::uint8_t>(0x5A ^ (link * 29 + direction * 101 + static_cast<int>(i) * 7));
  return k;
}

std::unique_ptr<macsec::SecY> make_secy(std::uint64_t station) {
  macsec::SecYConfig c;
  c.sci = macsec::Sci{((0x020000000000ull + station) << 16) | 1};
  c.suite = macsec::CipherSuite::kGcmAes128;
  c.include_sci = true;
  c.validate_frames = macsec::ValidateFrames::kStrict;
  c.replay_protect = true;
  // The SecY sits above the port's class queues, so an ST frame protected
  // after queued BE frames leaves before them: the receiver sees PNs out of
  // order by up to the BE queue (802.1AE-2018 10.7.8 replayWindow for
  // reordering by priority). The window covers the whole queue limit; the
  // replay bitmap (replay_window.h) still refuses any PN seen twice.
  c.replay_window = kQueueLimit;
  c.vlan_mode = macsec::VlanMode::kClearTag;
  c.clear_tags_in_icv = true;  // the PCP the shapers read is authenticated hop by hop
  return std::make_unique<macsec::SecY>(c);
}

// Keys both ends of one link: each end transmits with its own SA and has the
// peer's as its one receive SC.
void key_link(macsec::SecY& a, macsec::SecY& b, int link) {
  const SecretBytes ab = link_key(link, 0);
  const SecretBytes ba = link_key(link, 1);
  const macsec::SaKeys kab{ab.span(), 0, {}};
  const macsec::SaKeys kba{ba.span(), 0, {}};
  bool ok = a.install_tx_sa(0, kab).ok() && b.install_tx_sa(0, kba).ok() && a.add_rx_sc(b.config().sci).ok() &&
            b.add_rx_sc(a.config().sci).ok() && a.install_rx_sa(b.config().sci, 0, kba).ok() &&
            b.install_rx_sa(a.config().sci, 0, kab).ok();
  if (!ok) throw std::runtime_error("zonal: installing the MACsec SAs of link " + std::to_string(link) + " failed");
}

bool protect_into(macsec::SecY& s, ByteSpan plain, Bytes& out) {
  out.resize(plain.size() + kSecyOverhead);
  auto n = s.protect(plain, MutableByteSpan(out.data(), out.size()));
  if (!n.ok()) return false;
  out.resize(*n);
  return true;
}

bool validate_in_place(macsec::SecY& s, Bytes& frame) {
  auto r = s.validate(MutableByteSpan(frame.data(), frame.size()));
  if (!r.ok() || !r->verified()) return false;
  const std::size_t offset = static_cast<std::size_t>(r->frame.data() - frame.data());
  const std::size_t size = r->frame.size();
  if (offset != 0) std::memmove(frame.data(), frame.data() + offset, size);
  frame.resize(size);
  return true;
}

// The switch side of every link of one zonal switch: a SecY per port.
// Fail closed: a port without a SecY passes nothing.
class SwitchPorts final : public net::PortProcessor {
 public:
  void bind(net::PortId port, macsec::SecY* secy) { secys_[port] = secy; }
  bool on_ingress(net::PortId port, Bytes& frame) override {
    auto it = secys_.find(port);
    if (it != secys_.end() && validate_in_place(*it->second, frame)) return true;
    ++drops;
    return false;
  }
  bool on_egress(net::PortId port, Bytes& frame) override {
    auto it = secys_.find(port);
    if (it == secys_.end() || !protect_into(*it->second, frame, buf_)) {
      ++drops;
      return false;
    }
    frame.swap(buf_);
    return true;
  }
  std::uint64_t drops = 0;

 private:
  std::map<net::PortId, macsec::SecY*> secys_;
  Bytes buf_;
};

// --------------------------------------------------------------- SecOC

// One ECU's event PDU: its sender engine (at the ECU) and receiver engine
// (at the central node), memory state, the stream's own key.
struct SecocStream {
  secoc::MemoryStateStore tx_store, rx_store;
  std::unique_ptr<secoc::Engine> tx, rx;
};

std::unique_ptr<SecocStream> make_stream(int zone) {
  secoc::LinkOptions lo;
  lo.profile = secoc::PduProfile::vendor();
  lo.sync_period = Duration::seconds(3600);  // the start-up sync only: runs are far shorter
  lo.pdu_data_id = static_cast<std::uint16_t>(0x0100 + zone);
  auto s = std::make_unique<SecocStream>();
  auto tx = secoc::Engine::start(secoc::link_sender_config(lo), s->tx_store);
  auto rx = secoc::Engine::start(secoc::link_receiver_config(lo), s->rx_store);
  if (!tx.ok() || !rx.ok()) throw std::runtime_error("zonal: SecOC engine start failed");
  s->tx = std::move(tx).value();
  s->rx = std::move(rx).value();
  const TimePoint t0 = TimePoint::from_ns(0);
  const auto key_id = static_cast<std::uint32_t>(100 + zone);
  for (secoc::Engine* e : {s->tx.get(), s->rx.get()}) {
    if (!e->install_key(0, key_id, secoc::test_key(lo.profile.algorithm, key_id), t0).ok() ||
        !e->install_key(1, 1, secoc::test_key(secoc::AuthAlgorithm::kCmacAes128, 1), t0).ok())
      throw std::runtime_error("zonal: SecOC key installation failed");
  }
  Bytes sync(s->tx->sync_message_size());
  auto p = s->tx->poll(t0, sync);
  if (!p.ok() || p->sync_bytes == 0 || !s->rx->handle_sync(0, ByteSpan(sync.data(), p->sync_bytes), t0).ok())
    throw std::runtime_error("zonal: SecOC start-up sync failed");
  return s;
}

// ------------------------------------------------------------ endpoints

// An endpoint that only sends (ECU, camera): what reaches it (the central
// node's hello, floods) is ignored.
class Station : public net::FrameReceiver {
 public:
  void on_frame(ByteSpan) override { ++ignored; }
  net::FrameSender* tx = nullptr;
  macsec::SecY* secy = nullptr;
  std::uint64_t ignored = 0;
  std::uint64_t send_failures = 0;

 protected:
  bool send_protected(ByteSpan plain) {
    if (protect_into(*secy, plain, wire_) && tx->send_frame(wire_)) return true;
    ++send_failures;
    return false;
  }

 private:
  Bytes wire_;
};

struct StRecord {
  std::int64_t sent_ns = -1;
  std::int64_t latency_ns = -1;
};

class Ecu final : public Station {
 public:
  Ecu(net::Simulator& sim, int zone, SecocStream& secoc) : sim_(sim), zone_(zone), secoc_(secoc) {
    spec_.dst_mac = kCentralMac;
    spec_.src_mac = net::MacAddress::local(0x0E0000 + static_cast<std::uint32_t>(zone));
    spec_.tags[0] = net::VlanTag{net::kEtherTypeCTag, kStPcp, false, 10};
    spec_.tag_count = 1;
    spec_.src = {net::Ipv4Address::from_octets(10, 16, static_cast<std::uint8_t>(zone), 10), kStPort};
    spec_.dst = {kCentralIp, kStPort};
  }
  // Sends event `seq` now: SOME/IP notification, SecOC over the payload with
  // the header authenticated, UDP/IPv4/Ethernet with the ST tag, MACsec.
  void send(std::uint32_t seq) {
    std::uint8_t app[kStAppPayload];
    store_be32(app, seq);
    store_be32(app + 4, setpoint(zone_, seq));
    someip::Header h;
    h.service_id = kServiceId;
    h.method_id = kEventId;
    h.client_id = static_cast<std::uint16_t>(zone_);
    h.session_id = static_cast<std::uint16_t>(seq % 0xFFFF + 1);
    h.interface_version = 1;
    h.message_type = someip::MessageType::kNotification;
    std::uint8_t aad[someip::kHeaderAadSize];
    someip::header_aad(h, aad);
    std::uint8_t secured[64];
    secoc::TxInput in;
    in.header = ByteSpan(aad, sizeof aad);
    in.now = sim_.now();
    auto n = secoc_.tx->protect(0, ByteSpan(app, sizeof app), secured, in);
    if (!n.ok()) {
      ++send_failures;
      return;
    }
    std::uint8_t msg[96];
    ByteWriter w(msg);
    if (!someip::write_message(w, h, ByteSpan(secured, *n))) {
      ++send_failures;
      return;
    }
    std::uint8_t frame[256];
    auto f = net::build_udp_frame(spec_, w.written(), frame);
    if (!f.ok()) {
      ++send_failures;
      return;
    }
    if (records.size() <= seq) records.resize(seq + 1);
    records[seq].sent_ns = sim_.now().ns();
    ++sent;
    (void)send_protected(ByteSpan(frame, *f));
  }
  [[nodiscard]] int zone() const { return zone_; }
  [[nodiscard]] SecocStream& secoc() { return secoc_; }
  std::vector<StRecord> records;  // by sequence number
  std::uint64_t sent = 0;

 private:
  net::Simulator& sim_;
  int zone_;
  SecocStream& secoc_;
  net::UdpFrameSpec spec_;
};

class Camera final : public Station {
 public:
  Camera(int id, std::uint64_t seed) : rng_(seed) {
    spec_.dst_mac = kCentralMac;
    spec_.src_mac = net::MacAddress::local(0x0A0000 + static_cast<std::uint32_t>(id));
    spec_.tags[0] = net::VlanTag{net::kEtherTypeCTag, kBePcp, false, 20};
    spec_.tag_count = 1;
    spec_.src = {net::Ipv4Address::from_octets(10, 17, static_cast<std::uint8_t>(id), 20), kBePort};
    spec_.dst = {kCentralIp, kBePort};
  }
  // Hands one burst to the NIC; the caller schedules the next.
  void burst() {
    Bytes payload(kBePayload, 0);
    std::uint8_t frame[1600];
    for (int i = 0; i < kBurstFrames; ++i) {
      store_be32(payload.data(), seq_++);
      auto f = net::build_udp_frame(spec_, payload, frame);
      if (!f.ok()) {
        ++send_failures;
        continue;
      }
      ++sent;
      (void)send_protected(ByteSpan(frame, *f));
    }
  }
  net::SimRng& rng() { return rng_; }
  std::uint64_t sent = 0;

 private:
  net::SimRng rng_;
  net::UdpFrameSpec spec_;
  std::uint32_t seq_ = 0;
};

// The central compute node: validates its link's MACsec, then verifies each
// event with the sending ECU's SecOC receiver and records its latency.
class Central final : public net::FrameReceiver {
 public:
  explicit Central(net::Simulator& sim) : sim_(sim) {}
  void on_frame(ByteSpan f) override {
    buf_.assign(f.begin(), f.end());
    if (!validate_in_place(*secy, buf_)) return void(++macsec_drops);
    auto u = net::parse_udp_frame(buf_);
    if (!u.ok()) return void(++other_drops);
    if (u->dst().port == kBePort) {
      ++be_delivered;
      const std::int64_t now = sim_.now().ns();
      if (now >= measure_from_ns && now < measure_to_ns) be_wire_bytes += net::wire_bytes(f.size());
      return;
    }
    if (u->dst().port != kStPort) return void(++other_drops);
    ++st_macsec_accepted;
    auto m = someip::parse_message(u->payload());
    if (!m.ok() || m->header.client_id < 1 || static_cast<std::size_t>(m->header.client_id) > ecus.size()) return void(++other_drops);
    Ecu& ecu = *ecus[m->header.client_id - 1];
    std::uint8_t aad[someip::kHeaderAadSize];
    someip::header_aad(m->header, aad);
    std::uint8_t app[64];
    secoc::RxInput in;
    in.header = ByteSpan(aad, sizeof aad);
    in.now = sim_.now();
    auto n = ecu.secoc().rx->verify(0, m->payload, app, in);
    if (!n.ok()) return void(++secoc_rejected[ecu.zone()]);
    if (*n != kStAppPayload) return void(++other_drops);
    const std::uint32_t seq = load_be32(app);
    if (seq >= ecu.records.size() || ecu.records[seq].sent_ns < 0 || load_be32(app + 4) != setpoint(ecu.zone(), seq)) {
      ++accepted_altered;  // SecOC let a changed event through
      return;
    }
    if (ecu.records[seq].latency_ns >= 0) return void(++other_drops);  // a second copy (never expected)
    ecu.records[seq].latency_ns = sim_.now().ns() - ecu.records[seq].sent_ns;
  }
  macsec::SecY* secy = nullptr;
  std::vector<Ecu*> ecus;  // by zone - 1
  std::int64_t measure_from_ns = 0, measure_to_ns = 0;
  std::uint64_t macsec_drops = 0, other_drops = 0, be_delivered = 0, be_wire_bytes = 0;
  std::uint64_t st_macsec_accepted = 0, accepted_altered = 0;
  std::map<int, std::uint64_t> secoc_rejected;  // by zone

 private:
  net::Simulator& sim_;
  Bytes buf_;
};

// The compromised zonal switch: after its ingress SecY has removed MACsec,
// it reads each control event and changes the setpoint (checksums fixed), so
// its egress SecY protects the altered frame with the next link's SA.
class CompromisedSwitch final : public net::SwitchHook {
 public:
  net::HookVerdict on_frame(const net::HookContext&, Bytes& frame, net::SwitchControl&) override {
    auto u = net::parse_udp_frame(frame);
    if (!u.ok() || u->dst().port != kStPort) return net::HookVerdict::forward();
    auto m = someip::parse_message(u->payload());
    if (!m.ok() || m->payload.size() < kStAppPayload) return net::HookVerdict::forward();
    ++read_plaintext;
    if (example.empty()) {
      char id[32];
      std::snprintf(id, sizeof id, "0x%04x.0x%04x", m->header.service_id, m->header.method_id);
      example = std::string(id) + " client " + std::to_string(m->header.client_id) + " payload " +
                to_hex(m->payload.subspan(0, kStAppPayload)) + " (seq, setpoint) + SecOC trailer " +
                to_hex(m->payload.subspan(kStAppPayload));
    }
    // The setpoint's last byte, inside the frame (views point into it).
    const auto offset = static_cast<std::size_t>(m->payload.data() - frame.data()) + 7;
    frame[offset] ^= 0x5A;
    if (net::refresh_checksums(MutableByteSpan(frame.data(), frame.size()))) ++altered;
    return net::HookVerdict::forward();
  }
  std::uint64_t read_plaintext = 0;
  std::uint64_t altered = 0;
  std::string example;
};

// ------------------------------------------------------------- the network

// One egress port of the network and the ST windows it needs.
struct Egress {
  net::Segment* segment = nullptr;
  net::PortId port = 0;
  net::LinkSide side = net::LinkSide::kDownlink;
  std::uint64_t bps = 0;
  std::shared_ptr<const tsn::TimeBase> clock;  // the clock of the node the port belongs to (nullptr: simulated time)
  std::vector<StWindow> windows;
  int streams = 0;  // ST streams whose path crosses it
};

std::int64_t wire_ns(std::size_t frame_bytes, std::uint64_t bps) { return tsn::wire_time_ns(frame_bytes + 4, bps); }

std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

}  // namespace

ZonalRun run_zonal(const ZonalOptions& o) {
  validate(o);
  const int h = o.hops;
  const std::int64_t start = o.cycle_ns;  // one cycle of warm-up (learning, cameras starting)
  const std::int64_t end = start + static_cast<std::int64_t>(o.cycles) * o.cycle_ns;
  constexpr std::int64_t kDrainNs = 50'000'000;
  // Every node's clock over the whole run and its drain.
  const ZonalClocks clocks(o.clock, h, o.cable_ns, o.seed, end + kDrainNs + o.cycle_ns);
  net::Simulator sim(o.seed, TimePoint::from_ns(0));
  net::SegmentConfig sc;
  sc.switching_delay = Duration::nanoseconds(o.switching_delay_ns);
  auto link = [&](std::uint64_t bps) {
    net::LinkConfig l;
    l.latency = Duration::nanoseconds(o.cable_ns);
    l.bandwidth_bps = bps;
    l.queue_frames = kQueueLimit;
    return l;
  };
  std::vector<std::unique_ptr<net::Segment>> zones;  // [0] = Z1
  std::vector<std::unique_ptr<SwitchPorts>> procs;
  for (int k = 0; k < h; ++k) {
    zones.push_back(std::make_unique<net::Segment>(sim, sc));
    procs.push_back(std::make_unique<SwitchPorts>());
  }
  std::vector<std::unique_ptr<macsec::SecY>> secys;
  std::uint64_t station = 1;
  int link_no = 0;
  // Both ends of a link: (endpoint or far switch side, this switch's side).
  auto link_pair = [&]() {
    secys.push_back(make_secy(station++));
    secys.push_back(make_secy(station++));
    key_link(*secys[secys.size() - 2], *secys.back(), ++link_no);
    return std::pair<macsec::SecY*, macsec::SecY*>{secys[secys.size() - 2].get(), secys.back().get()};
  };
  std::vector<Egress> egress;
  auto add_egress = [&](net::Segment* s, net::PortId p, net::LinkSide side, std::uint64_t bps,
                        std::shared_ptr<const tsn::TimeBase> clock) {
    egress.push_back(Egress{s, p, side, bps, std::move(clock), {}, 0});
    return egress.size() - 1;
  };

  // C on Z1.
  Central central(sim);
  const net::PortId c_port = zones[0]->add_port(link(o.port_bps), &central);
  {
    auto [c_secy, sw_secy] = link_pair();
    central.secy = c_secy;
    procs[0]->bind(c_port, sw_secy);
  }
  const std::size_t e_to_c = add_egress(zones[0].get(), c_port, net::LinkSide::kDownlink, o.port_bps, clocks.zone(1));
  (void)add_egress(zones[0].get(), c_port, net::LinkSide::kUplink, o.port_bps, clocks.central());
  net::FrameSender& c_tx = zones[0]->sender(c_port);

  // Trunks: trunks[k-1] joins Z(k+1) (its A end) to Zk (its B end).
  std::vector<std::unique_ptr<net::SegmentTrunk>> trunks;
  std::vector<std::size_t> e_trunk;  // egress Z(k+1) -> Zk
  for (int k = 1; k < h; ++k) {
    trunks.push_back(std::make_unique<net::SegmentTrunk>(*zones[k], *zones[k - 1], link(o.port_bps)));
    auto [far, near] = link_pair();
    procs[k]->bind(trunks.back()->port_a(), near);
    procs[k - 1]->bind(trunks.back()->port_b(), far);
    // Downlink of port_a: Z(k+1)'s egress onto the trunk; its uplink: Zk's.
    e_trunk.push_back(
        add_egress(zones[k].get(), trunks.back()->port_a(), net::LinkSide::kDownlink, o.port_bps, clocks.zone(k + 1)));
    (void)add_egress(zones[k].get(), trunks.back()->port_a(), net::LinkSide::kUplink, o.port_bps, clocks.zone(k));
  }

  // ECUs and cameras.
  std::vector<std::unique_ptr<SecocStream>> streams_secoc;
  std::vector<std::unique_ptr<Ecu>> ecus;
  std::vector<std::unique_ptr<Camera>> cameras;
  std::vector<std::size_t> e_ecu;
  for (int k = 1; k <= h; ++k) {
    net::Segment& z = *zones[k - 1];
    streams_secoc.push_back(make_stream(k));
    ecus.push_back(std::make_unique<Ecu>(sim, k, *streams_secoc.back()));
    const net::PortId p = z.add_port(link(o.ecu_bps), ecus.back().get());
    auto [ep, sw] = link_pair();
    ecus.back()->secy = ep;
    ecus.back()->tx = &z.sender(p);
    procs[k - 1]->bind(p, sw);
    e_ecu.push_back(add_egress(&z, p, net::LinkSide::kUplink, o.ecu_bps, clocks.ecu(k)));
    (void)add_egress(&z, p, net::LinkSide::kDownlink, o.ecu_bps, clocks.zone(k));
    central.ecus.push_back(ecus.back().get());
    for (int c = 0; c < 2; ++c) {
      const int id = 2 * (k - 1) + c + 1;
      cameras.push_back(std::make_unique<Camera>(id, o.seed * 1000 + static_cast<std::uint64_t>(id)));
      const net::PortId cp = z.add_port(link(o.port_bps), cameras.back().get());
      auto [cam, csw] = link_pair();
      cameras.back()->secy = cam;
      cameras.back()->tx = &z.sender(cp);
      procs[k - 1]->bind(cp, csw);
      (void)add_egress(&z, cp, net::LinkSide::kUplink, o.port_bps, nullptr);  // BE only, every gate open
      (void)add_egress(&z, cp, net::LinkSide::kDownlink, o.port_bps, clocks.zone(k));
    }
  }
  for (int k = 0; k < h; ++k)
    for (net::PortId p = 0; p < zones[k]->port_count(); ++p) zones[k]->set_port_processor(p, procs[k].get());

  // ST frame sizes as the shapers see them (MACsec applied).
  const std::size_t st_frame =
      std::max<std::size_t>(60, 18 + 20 + 8 + 16 + secoc::PduProfile::vendor().secured_size(kStAppPayload)) +
      kSecyOverhead;
  const std::size_t be_frame = 18 + 20 + 8 + kBePayload + kSecyOverhead;

  // Each stream's path and windows: the ECU releases at the cycle start; at
  // every egress the window opens when the frame arrives there.
  std::vector<std::vector<std::size_t>> paths(static_cast<std::size_t>(h));
  std::vector<std::int64_t> planned;  // per stream: the arrival the windows were placed for
  for (int k = 1; k <= h; ++k) {
    auto& path = paths[static_cast<std::size_t>(k - 1)];
    path.push_back(e_ecu[static_cast<std::size_t>(k - 1)]);
    for (int j = k; j >= 2; --j) path.push_back(e_trunk[static_cast<std::size_t>(j - 2)]);
    path.push_back(e_to_c);
    std::int64_t at = 0;
    for (std::size_t i = 0; i < path.size(); ++i) {
      Egress& e = egress[path[i]];
      const std::int64_t w = wire_ns(st_frame, e.bps);
      e.windows.push_back(StWindow{at, at + w + kWindowMarginNs});
      ++e.streams;
      at += w + o.cable_ns + o.switching_delay_ns;
    }
    planned.push_back(at - o.switching_delay_ns);  // C does not forward
  }
  std::vector<tsn::GateControlList> gcls;
  for (auto& e : egress) {
    gcls.push_back(o.shaper == ZonalShaper::kOn ? zonal_gate_list(e.windows, o.cycle_ns, e.bps)
                                                : zonal_gate_list({}, o.cycle_ns, e.bps));
    if (o.shaper == ZonalShaper::kFifo) continue;
    tsn::GclLimits lim;
    lim.num_classes = 2;
    lim.link_bps = e.bps;
    if (auto problem = tsn::validate(gcls.back(), lim))
      throw std::runtime_error("zonal: gate list refused: " + problem->message);
    net::ShaperConfig shc;
    shc.port.num_classes = 2;
    shc.port.queue_limit_frames = kQueueLimit;
    if (o.shaper == ZonalShaper::kOn) shc.schedule.set_admin(gcls.back(), 0);
    shc.time_base = e.clock;
    e.segment->set_shaper(e.port, e.side, shc);
  }

  // Bounds per stream.
  std::vector<std::optional<std::int64_t>> bounds;
  for (int k = 1; k <= h; ++k) {
    if (o.shaper == ZonalShaper::kFifo) {
      bounds.emplace_back();
      continue;
    }
    std::vector<PathPort> pp;
    const auto& path = paths[static_cast<std::size_t>(k - 1)];
    for (std::size_t i = 0; i < path.size(); ++i) {
      const Egress& e = egress[path[i]];
      pp.push_back(PathPort{gcls[path[i]], e.bps, i == 0 ? 0 : o.switching_delay_ns, o.cable_ns, e.streams - 1});
    }
    bounds.push_back(zonal_path_bound(pp, st_frame, be_frame));
  }

  // Traffic. t = 0: C says hello so every switch learns its MAC.
  std::optional<CompromisedSwitch> attacker;
  if (o.compromised_switch) {
    attacker.emplace();
    zones[0]->add_hook(&*attacker);
  }
  {
    net::UdpFrameSpec hs;
    hs.dst_mac = net::MacAddress::broadcast();
    hs.src_mac = kCentralMac;
    hs.src = {kCentralIp, 9};
    hs.dst = {net::Ipv4Address::from_octets(10, 255, 255, 255), 9};
    std::uint8_t hello[128];
    const std::uint8_t body[4] = {'h', 'e', 'l', 'o'};
    auto f = net::build_udp_frame(hs, body, hello);
    Bytes wire;
    if (!f.ok() || !protect_into(*central.secy, ByteSpan(hello, *f), wire) || !c_tx.send_frame(wire))
      throw std::runtime_error("zonal: the central node's hello could not be sent");
  }
  central.measure_from_ns = start;
  central.measure_to_ns = end;
  for (auto& e : ecus) {
    Ecu* ecu = e.get();
    // Each ECU releases at its own clock's cycle start.
    const auto clock = clocks.ecu(ecu->zone());
    for (int c = 0; c < o.cycles; ++c) {
      const std::int64_t local = start + c * o.cycle_ns;
      const std::int64_t at = clock ? clock->true_at_or_after(local, 0) : local;
      sim.schedule_at(TimePoint::from_ns(at), [ecu, c] { ecu->send(static_cast<std::uint32_t>(c)); });
    }
  }
  const double be_bits_per_s = o.be_load_pct / 100.0 * static_cast<double>(o.port_bps);
  const double frame_bits = static_cast<double>(net::wire_bytes(be_frame)) * 8;
  const double per_camera_fps = be_bits_per_s / frame_bits / static_cast<double>(cameras.size());
  std::vector<std::shared_ptr<std::function<void()>>> camera_loops;
  if (per_camera_fps > 0) {
    const auto interval = static_cast<std::int64_t>(1e9 * kBurstFrames / per_camera_fps);
    for (auto& cam : cameras) {
      Camera* c = cam.get();
      // Bursts at a random phase, the gaps jittered by +-25 % around the mean.
      auto next = std::make_shared<std::function<void()>>();
      camera_loops.push_back(next);
      *next = [c, &sim, interval, end, next] {
        if (sim.now().ns() >= end) return;
        c->burst();
        const auto gap = interval * 3 / 4 + static_cast<std::int64_t>(c->rng().uniform(static_cast<std::uint64_t>(interval / 2 + 1)));
        sim.schedule_in(Duration::nanoseconds(gap), [next] { (*next)(); });
      };
      const auto phase = 100'000 + static_cast<std::int64_t>(c->rng().uniform(static_cast<std::uint64_t>(interval)));
      sim.schedule_at(TimePoint::from_ns(phase), [next] { (*next)(); });
    }
  }
  sim.run_until(TimePoint::from_ns(end));
  sim.run_until_idle(kDrainNs);
  // The cameras' closures hold themselves (they stopped at `end`): release them.
  for (auto& loop : camera_loops) *loop = nullptr;

  // Results.
  ZonalRun run;
  ZonalRow& r = run.row;
  r.hops = h;
  r.shaper = o.shaper;
  r.be_load_pct = o.be_load_pct;
  r.port_bps = o.port_bps;
  r.ecu_bps = o.ecu_bps;
  r.cycles = o.cycles;
  for (int k = 1; k <= h; ++k) {
    Ecu& ecu = *ecus[static_cast<std::size_t>(k - 1)];
    ZonalStream s;
    s.zone = k;
    s.sent = ecu.sent;
    s.bound_ns = bounds[static_cast<std::size_t>(k - 1)];
    s.planned_ns = planned[static_cast<std::size_t>(k - 1)];
    s.secoc_rejected = central.secoc_rejected[k];
    std::vector<std::int64_t> lat;
    for (const auto& rec : ecu.records)
      if (rec.latency_ns >= 0) lat.push_back(rec.latency_ns);
    std::sort(lat.begin(), lat.end());
    s.accepted = lat.size();
    if (!lat.empty()) {
      s.min_ns = lat.front();
      s.p50_ns = percentile(lat, 0.50);
      s.p99_ns = percentile(lat, 0.99);
      s.max_ns = lat.back();
    }
    if (s.bound_ns)
      s.over_bound = static_cast<std::uint64_t>(
          std::count_if(lat.begin(), lat.end(), [&](std::int64_t v) { return v > *s.bound_ns; }));
    r.st_over_bound += s.over_bound;
    r.streams.push_back(s);
  }
  const ZonalStream& far = r.streams.back();
  r.st_sent = far.sent;
  r.st_lost = far.sent - far.accepted;
  r.st_min_ns = far.min_ns;
  r.st_p50_ns = far.p50_ns;
  r.st_p99_ns = far.p99_ns;
  r.st_max_ns = far.max_ns;
  r.bound_ns = far.bound_ns;
  r.planned_ns = far.planned_ns;
  for (const auto& c : cameras) r.be_sent += c->sent;
  r.be_delivered = central.be_delivered;
  r.be_dropped = r.be_sent - r.be_delivered;
  const double seconds = static_cast<double>(end - start) / 1e9;
  r.be_offered_mbit_s = be_bits_per_s / 1e6;
  r.be_throughput_mbit_s = static_cast<double>(central.be_wire_bytes) * 8 / seconds / 1e6;
  for (const auto& e : egress) {
    if (const tsn::EgressPort* sh = e.segment->shaper(e.port, e.side))
      r.transmission_overruns += sh->counters(0).transmission_overruns + sh->counters(1).transmission_overruns;
  }
  r.macsec_drops = central.macsec_drops;
  for (const auto& p : procs) r.macsec_drops += p->drops;
  r.clock = o.clock.mode;
  if (r.clock != ZonalClock::kIdeal) {
    r.drift_ppm = o.clock.drift_ppm;
    r.wander_ppm_per_s = o.clock.wander_ppm_per_s;
  }
  if (r.clock == ZonalClock::kGptp) r.sync_interval_ms = sync_interval_ms(o.clock.log_sync_interval);
  r.start_offset_max_ns = clocks.start_offset_max_ns();
  {
    std::vector<const tsn::TimeBase*> path;  // the farthest ECU's egress ports, in the frames' direction
    for (const std::size_t e : paths.back()) path.push_back(egress[e].clock.get());
    r.misalign = path_misalignment(path, start, o.cycle_ns, o.cycles);
  }

  if (attacker) {
    zones[0]->remove_hook(&*attacker);
    ZonalCompromise c;
    c.hops = h;
    for (const auto& e : ecus) c.st_sent += e->sent;
    c.read_plaintext = attacker->read_plaintext;
    c.example_read = attacker->example;
    c.altered = attacker->altered;
    c.macsec_accepted_at_central = central.st_macsec_accepted;
    for (const auto& [zone, n] : central.secoc_rejected) c.secoc_rejected += n;
    c.accepted = central.accepted_altered;
    run.compromise = c;
  }
  for (auto& z : zones)
    for (net::PortId p = 0; p < z->port_count(); ++p) z->set_port_processor(p, nullptr);
  return run;
}

ZonalReport run_zonal_sweep(const ZonalSweepOptions& o) {
  if (o.min_hops < 1 || o.max_hops > 4 || o.min_hops > o.max_hops)
    throw std::invalid_argument("zonal: hops must be a range within 1-4, got " + std::to_string(o.min_hops) + "-" +
                                std::to_string(o.max_hops));
  ZonalReport rep;
  rep.options = o;
  ZonalOptions z;
  z.be_load_pct = o.be_load_pct;
  z.port_bps = o.port_bps;
  z.cycles = o.cycles;
  z.seed = o.seed;
  for (int hops = o.min_hops; hops <= o.max_hops; ++hops) {
    for (ZonalShaper s : {ZonalShaper::kOn, ZonalShaper::kStrict, ZonalShaper::kFifo}) {
      z.hops = hops;
      z.shaper = s;
      rep.rows.push_back(run_zonal(z).row);
    }
  }
  for (int hops = o.min_hops; hops <= o.max_hops; ++hops) {
    z.hops = hops;
    z.shaper = ZonalShaper::kOn;
    for (ZonalClock c : o.clocks) {
      if (c == ZonalClock::kIdeal) continue;
      for (double drift : o.drift_ppm) {
        for (double wander : o.wander_ppm_per_s) {
          z.clock.mode = c;
          z.clock.drift_ppm = drift;
          z.clock.wander_ppm_per_s = wander;
          if (c == ZonalClock::kFree) {
            rep.rows.push_back(run_zonal(z).row);
            continue;
          }
          for (int log_interval : o.log_sync_intervals) {
            z.clock.log_sync_interval = log_interval;
            rep.rows.push_back(run_zonal(z).row);
          }
        }
      }
    }
  }
  z.clock = ZonalClockOptions{};
  z.hops = o.max_hops;
  z.shaper = ZonalShaper::kOn;
  z.compromised_switch = true;
  rep.compromise = *run_zonal(z).compromise;
  return rep;
}

}  // namespace layersec::harness
