#include "layersec/macsec/link.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "layersec/macsec/link_config.h"
#include "layersec/net/interface.h"
#include "layersec/net/offload.h"
#include "layersec/net/socket_filter.h"

namespace layersec::macsec {

// ---------------------------------------------------------------- MacsecLink

MacsecLink::MacsecLink(SecY secy) : secy_(std::move(secy)), out_(kMaxFrame + kMacsecOverhead) {}

std::optional<ByteSpan> MacsecLink::protect(ByteSpan plain) {
  auto secure = protect_checked(plain);
  if (!secure) return std::nullopt;
  return *secure;
}

Result<ByteSpan, ProtectError> MacsecLink::protect_checked(ByteSpan plain) {
  ++stats_.tx_frames;
  auto n = secy_.protect(plain, MutableByteSpan(out_.data(), out_.size()));
  if (!n) {
    ++stats_.tx_protect_errors;
    return Err(n.error());
  }
  return ByteSpan(out_.data(), *n);
}

std::optional<std::size_t> MacsecLink::protect_into(ByteSpan plain, MutableByteSpan out) {
  ++stats_.tx_frames;
  auto n = secy_.protect(plain, out);
  if (!n) {
    ++stats_.tx_protect_errors;
    return std::nullopt;
  }
  return *n;
}

std::optional<ByteSpan> MacsecLink::validate(MutableByteSpan wire) {
  ++stats_.rx_frames;
  auto r = secy_.validate(wire);
  if (!r) {
    if (r.error() == ReceiveDrop::kNoTag) {
      ++stats_.rx_not_macsec;
    } else {
      ++stats_.rx_dropped;
    }
    return std::nullopt;
  }
  if (r->disposition == Disposition::kUntagged) {
    // validateFrames not Strict delivers frames without a SecTAG; a link
    // never turns them into clear traffic on the controlled port.
    ++stats_.rx_not_macsec;
    return std::nullopt;
  }
  if (!r->verified()) {
    ++stats_.rx_unverified;
    return std::nullopt;
  }
  return r->frame;
}

namespace {

nlohmann::json offload_refused_json(const LinkStats& s) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < s.tx_offload_refused.size(); ++i) {
    j[net::counter_name(static_cast<net::OffloadError>(i))] = s.tx_offload_refused[i];
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const LinkStats& s) {
  return nlohmann::json{
      {"tx_frames", s.tx_frames},
      {"tx_sent", s.tx_sent},
      {"tx_protect_errors", s.tx_protect_errors},
      {"tx_send_errors", s.tx_send_errors},
      {"tx_offload_errors", s.tx_offload_errors},
      {"tx_offload_refused", offload_refused_json(s)},
      {"tx_gso_reads", s.tx_gso_reads},
      {"tx_gso_segments", s.tx_gso_segments},
      {"rx_frames", s.rx_frames},
      {"rx_not_for_us", s.rx_not_for_us},
      {"rx_not_macsec", s.rx_not_macsec},
      {"rx_control", s.rx_control},
      {"rx_dropped", s.rx_dropped},
      {"rx_unverified", s.rx_unverified},
      {"rx_delivered", s.rx_delivered},
      {"rx_deliver_errors", s.rx_deliver_errors},
      {"rx_gro_writes", s.rx_gro_writes},
      {"rx_gro_segments", s.rx_gro_segments},
      {"rx_ring_drops", s.rx_ring_drops},
      {"io_errors", s.io_errors},
  };
}

nlohmann::json to_json(const SecYStats& s) {
  nlohmann::json j = nlohmann::json::object();
  s.for_each([&](std::string_view name, std::uint64_t v) { j[std::string(name)] = v; });
  return j;
}

namespace {

template <typename Stats>
nlohmann::json counters_json(const Stats& s) {
  nlohmann::json j = nlohmann::json::object();
  s.for_each([&](std::string_view name, std::uint64_t v) { j[std::string(name)] = v; });
  return j;
}

}  // namespace

nlohmann::json per_sc_json(const SecY& secy) {
  nlohmann::json tx_sas = nlohmann::json::array();
  for (std::uint8_t an = 0; an < 4; ++an) {
    const TxSaStatus st = secy.tx_sa_status(an);
    if (!st.installed) continue;
    nlohmann::json sa = counters_json(st.stats);
    sa["an"] = an;
    sa["encoding"] = an == secy.encoding_an();
    sa["next_pn"] = st.next_pn;
    sa["exhausted"] = st.exhausted;
    if (secy.has_pn_store()) sa["pn_persisted"] = st.pn_persisted;
    tx_sas.push_back(std::move(sa));
  }
  nlohmann::json tx_sc = counters_json(secy.tx_sc_stats());
  tx_sc["sci"] = sci_text(secy.config().sci);
  tx_sc["sas"] = std::move(tx_sas);
  nlohmann::json rx_scs = nlohmann::json::array();
  for (Sci sci : secy.rx_scis()) {
    nlohmann::json sc = counters_json(*secy.rx_sc_stats(sci));
    sc["sci"] = sci_text(sci);
    nlohmann::json sas = nlohmann::json::array();
    for (std::uint8_t an = 0; an < 4; ++an) {
      const RxSaStatus st = secy.rx_sa_status(sci, an);
      if (!st.installed) continue;
      nlohmann::json sa = counters_json(st.stats);
      sa["an"] = an;
      sa["enabled"] = st.enabled;
      sa["next_pn"] = st.next_pn;
      sa["lowest_pn"] = st.lowest_pn;
      if (secy.has_pn_store()) sa["pn_persisted"] = st.pn_persisted;
      sas.push_back(std::move(sa));
    }
    sc["sas"] = std::move(sas);
    rx_scs.push_back(std::move(sc));
  }
  return nlohmann::json{{"tx_sc", std::move(tx_sc)}, {"rx_scs", std::move(rx_scs)}};
}

nlohmann::json MacsecLink::stats_json() const {
  const auto an = secy_.encoding_an();
  const auto sa = secy_.tx_sa_status(an);
  nlohmann::json j{
      {"secy", to_json(secy_.stats())},
      {"link", to_json(stats_)},
      {"tx_sa",
       {{"encoding_an", an}, {"next_pn", sa.next_pn}, {"exhausted", sa.exhausted},
        {"new_sa_needed", secy_.new_sa_needed()}}},
  };
  nlohmann::json per_sc = per_sc_json(secy_);
  j["tx_sc"] = std::move(per_sc["tx_sc"]);
  j["rx_scs"] = std::move(per_sc["rx_scs"]);
  return j;
}

// ------------------------------------------------------------------- TapLink

namespace {

[[noreturn]] void fail_io(const std::string& step, int err) {
  throw std::runtime_error(step + ": " + (err != 0 ? net::errno_text(err) : std::string("failed")));
}

}  // namespace

TapLink::TapLink(MacsecLink& link, net::TapDevice tap, net::PacketSocket lower, std::size_t frame_capacity)
    : link_(&link),
      tap_(std::move(tap)),
      lower_(std::move(lower)),
      buf_(MacsecLink::kMaxFrame + kMacsecOverhead),
      rx_batch_(kBatch, frame_capacity),
      tx_batch_(kBatch, frame_capacity),
      segment_buf_(frame_capacity) {}

TapLink::TapLink(TapLink&&) noexcept = default;
TapLink::~TapLink() = default;

TapLink TapLink::open(MacsecLink& link, const TapLinkOptions& options) {
  if (options.lower.empty() || options.name.empty()) throw std::runtime_error("lower and TAP names are required");
  auto lower_mtu = net::interface_mtu(options.lower);
  if (!lower_mtu) fail_io("lower interface " + options.lower, errno);
  auto lower_mac = net::interface_mac(options.lower);
  if (!lower_mac) fail_io("MAC of " + options.lower, errno);
  if (*lower_mtu <= kMacsecOverhead + 68) {
    throw std::runtime_error("lower interface " + options.lower + " MTU " + std::to_string(*lower_mtu) +
                             " leaves no room for the SecTAG and ICV");
  }
  int err = 0;
  auto sock = net::PacketSocket::open(options.lower, net::kEtherTypeAll, /*nonblocking=*/true, &err);
  if (!sock) fail_io("AF_PACKET socket on " + options.lower, err);
  auto tap = net::TapDevice::open(options.name, /*nonblocking=*/true, &err, /*vnet_header=*/options.offload,
                                  options.multi_queue);
  if (!tap) fail_io("TAP interface " + options.name, err);

  // A batch slot holds a lower-link frame: the MTU, the Ethernet header,
  // tags, and room to spare (a longer frame is counted, not delivered).
  TapLink t(link, std::move(*tap), std::move(*sock), static_cast<std::size_t>(*lower_mtu) + 64);
  // Large TCP segments and partial checksums from the TAP, finished here
  // (pump_tap): set while the TAP is still down. Best effort: without it
  // the kernel segments and checksums as before.
  t.tcp_offload_ = options.offload && t.tap_.enable_tcp_offload().ok();
  if (t.tcp_offload_) t.gro_ = std::make_unique<net::TcpCoalescer>();
  t.lower_name_ = options.lower;
  t.control_ether_types_ = options.control_ether_types;
  t.lower_mtu_ = *lower_mtu;
  if (options.extra_overhead < 0 || options.extra_overhead > 64) throw std::runtime_error("extra_overhead out of 0..64");
  t.mtu_ = *lower_mtu - kMacsecOverhead - options.extra_overhead;
  // A configured max_frame_size caps the TAP's MTU so that every frame the
  // kernel hands us fits (14 octets of Ethernet header + the MACsec
  // overhead); otherwise long frames would only be dropped as OutPktsTooLong.
  if (const std::size_t max = link.secy().config().max_frame_size; max != 0) {
    const int cap = static_cast<int>(max) - 14 - kMacsecOverhead - options.extra_overhead;
    if (cap < 68) {
      throw std::runtime_error("max_frame_size " + std::to_string(max) + " leaves the TAP an MTU below 68");
    }
    t.mtu_ = std::min(t.mtu_, cap);
  }
  t.mac_ = options.mac.value_or(*lower_mac);
  if (auto st = net::set_interface_mac(t.name(), t.mac_); !st) fail_io("set MAC of " + t.name(), errno);
  if (auto st = net::set_interface_mtu(t.name(), t.mtu_); !st) fail_io("set MTU of " + t.name(), errno);
  if (t.mac_ != *lower_mac) {
    // Frames for the TAP's own MAC must reach the socket.
    if (auto st = t.lower_.set_promiscuous(true); !st) {
      fail_io("promiscuous mode on " + options.lower, t.lower_.last_errno());
    }
    t.promiscuous_ = true;
  }
  t.attach_lower_filter();
  // Bursts from the TAP side of the peer arrive faster than one thread
  // drains them; a deeper receive queue on the lower socket trades latency
  // for fewer drops (best effort: the FORCE variant needs CAP_NET_ADMIN).
  // With the receive ring its slots are that queue; a kernel that refuses
  // the ring leaves the recvmmsg path (rx_ring() says which runs).
  if (!options.rx_ring || !t.lower_.enable_rx_ring(kRxRingFrames, static_cast<std::size_t>(*lower_mtu) + 64).ok()) {
    t.lower_.set_receive_buffer(4 * 1024 * 1024);
  }
  if (options.fanout_group != 0) {
    if (auto st = t.lower_.join_fanout(options.fanout_group, options.fanout); !st) {
      fail_io("PACKET_FANOUT group on " + options.lower, t.lower_.last_errno());
    }
  }
  if (options.bring_up) {
    if (auto st = net::set_interface_up(t.name(), true); !st) fail_io("bring up " + t.name(), errno);
  }
  return t;
}

void TapLink::enable_tsn(const LinkTsnConfig& config, const tsn::Clock& clock) {
  tsn_ = std::make_unique<TsnFramePath>(config);
  tsn_clock_ = &clock;
  tsn_buf_.reserve(MacsecLink::kMaxFrame + 4);
}

nlohmann::json TapLink::tsn_json() const {
  if (!tsn_) return nullptr;
  nlohmann::json j{{"config", describe(tsn_->config())}, {"path", to_json(tsn_->stats())}};
  j["shaper"] = shaper_ ? shaper_json(*shaper_) : nlohmann::json(nullptr);
  return j;
}

void TapLink::time_tsn_class(int traffic_class) {
  if (tsn_) tsn_times_ = std::make_unique<tsn::PassThroughTimes>(traffic_class);
}

void TapLink::clock_stepped() {
  if (shaper_) shaper_->clock_stepped();
}

void TapLink::set_frame_hook(LowerFrameHook* hook) {
  if (hook && !hook_) {
    if (auto st = lower_.enable_rx_timestamps(); !st) {
      fail_io("SO_TIMESTAMPING (software RX) on " + lower_name_, lower_.last_errno());
    }
  }
  hook_ = hook;
  attach_lower_filter();
}

void TapLink::attach_lower_filter() {
  net::LowerLinkFilterSpec spec;
  spec.unicast = mac_;
  spec.full_types = {kMacsecEtherType};
  if (hook_) {
    for (std::uint16_t t : hook_->lower_ether_types()) spec.full_types.push_back(t);
  }
  const auto program = net::lower_link_filter(spec);
  if (auto st = lower_.attach_filter(program); !st) {
    fail_io("socket filter (SO_ATTACH_FILTER) on " + lower_name_, lower_.last_errno());
  }
}

bool TapLink::send_lower(ByteSpan secure) {
  auto sent = lower_.send(secure);
  link_->count_send(sent.ok());
  return sent.ok();
}

void TapLink::attach(net::EventLoop& loop) {
  if (tsn_ && !shaper_) {
    tsn_timer_ = std::make_unique<tsn::LoopShaperTimer>(loop, *tsn_clock_, [this] { shaper_->service(); });
    tsn::DriverOptions opt;
    opt.late_tolerance_ns = tsn_->config().late_tolerance_ns;
    const std::int64_t now = tsn_clock_->now_ns();
    // The shaper queues plain (tagged) frames and the SecY protects each one
    // as it leaves: PNs then follow the wire order, which the shaper changes
    // (ST overtakes queued BE), so a receiver with replay_window 0 accepts
    // them. The guard band counts the SecTAG and ICV added after the shaper.
    tsn::PortConfig pc = tsn_->port_config();
    pc.expansion_bytes = static_cast<std::size_t>(kMacsecOverhead);
    shaper_ = std::make_unique<tsn::ShaperDriver>(
        tsn::EgressPort(pc, tsn_->gate_schedule(now)), *tsn_clock_, *tsn_timer_,
        [this](ByteSpan f, int traffic_class) {
          auto secure = link_->protect(f);
          const bool sent = secure && send_lower(*secure);
          if (tsn_times_) {
            tsn_times_->record(tsn::PassThroughTimes::Leg::kEgressOut, traffic_class,
                               tsn_clock_->now_ns() - shaper_->handing_start_ns());
          }
          return sent;
        },
        opt);
  }
  loop.watch(tap_.fd(), POLLIN, [this](short) { pump_tap(); });
  loop.watch(lower_.fd(), POLLIN, [this](short) { pump_lower(); });
}

void TapLink::detach(net::EventLoop& loop) {
  loop.unwatch(tap_.fd());
  loop.unwatch(lower_.fd());
  if (tsn_timer_) tsn_timer_->disarm();
}

std::size_t TapLink::pump_tap(std::size_t budget) {
  // The frames finished from one offloaded TAP frame go the way of any TAP
  // frame. The sink lives on the stack: a TapLink moves (open() returns it
  // by value), so nothing may keep `this` beyond the call.
  struct Sink final : net::FrameSink {
    explicit Sink(TapLink& l) : link(l) {}
    TapLink& link;
    void frame(ByteSpan f) override { link.tx_plain(f); }
  } sink(*this);
  // Frames the TAP's MTU allows, plus two tags.
  const std::size_t max_plain = std::min(static_cast<std::size_t>(mtu_) + 14 + 8, segment_buf_.size());
  std::size_t n = 0;
  while (n < budget) {
    net::VnetHeader vnet;
    auto r = tap_.read(MutableByteSpan(buf_.data(), buf_.size()), &vnet);
    if (!r) {
      if (r.error() != net::IoError::kWouldBlock) link_->count_io_error();
      break;
    }
    ++n;
    if (vnet.flags == 0 && vnet.gso_type == net::kVnetGsoNone) {
      tx_plain(ByteSpan(buf_.data(), *r));
      continue;
    }
    // A TCP segment up to 64 KiB or a partial checksum: finished here into
    // MTU-sized frames, each sent in order; a header or frame that does not
    // add up is dropped whole and counted by reason.
    auto done = net::complete_offload(vnet, MutableByteSpan(buf_.data(), *r),
                                      MutableByteSpan(segment_buf_.data(), segment_buf_.size()), max_plain, sink);
    if (!done) {
      link_->count_offload_error(done.error());
    } else if (*done > 1) {
      link_->count_gso(*done);
    }
  }
  flush_tx();
  return n;
}

void TapLink::tx_plain(ByteSpan plain) {
  if (!tsn_) {
    auto secure = link_->protect_into(plain, tx_batch_.next_slot());
    if (!secure) return;
    tx_batch_.commit(*secure);
    if (tx_batch_.full()) flush_tx();
    return;
  }
  // TSN first hop: classify and tag, protect, then the shaper decides when.
  const std::int64_t t0 = tsn_times_ ? tsn_clock_->now_ns() : 0;
  tsn_buf_.assign(plain.begin(), plain.end());
  const auto traffic_class = tsn_->egress(tsn_buf_);
  if (!traffic_class) return;
  if (tsn_times_) tsn_times_->record(tsn::PassThroughTimes::Leg::kEgressIn, *traffic_class, tsn_clock_->now_ns() - t0);
  if (!shaper_) {
    auto secure = link_->protect(ByteSpan(tsn_buf_.data(), tsn_buf_.size()));
    if (secure) send_lower(*secure);
  } else if (shaper_->submit(ByteSpan(tsn_buf_.data(), tsn_buf_.size()), *traffic_class) !=
             tsn::EnqueueResult::kQueued) {
    tsn_->count_shaper_refused();
  }
}

void TapLink::flush_tx() {
  if (tx_batch_.pending() == 0) return;
  const auto r = lower_.send(tx_batch_);
  link_->count_sent(r.sent, r.failed);
}

std::size_t TapLink::pump_lower(std::size_t budget) {
  std::size_t n = 0;
  while (n < budget) {
    auto r = lower_.receive(rx_batch_);
    if (!r) {
      if (r.error() != net::IoError::kWouldBlock) link_->count_io_error();
      break;
    }
    for (std::size_t i = 0; i < *r; ++i) {
      switch (rx_batch_.status(i)) {
        case net::PacketRxBatch::Status::kSkipped: continue;
        case net::PacketRxBatch::Status::kTruncated: link_->count_io_error(); continue;
        case net::PacketRxBatch::Status::kOk: break;
      }
      ++n;
      handle_lower(rx_batch_.frame(i), rx_batch_.rx_realtime_ns(i));
    }
    if (*r < rx_batch_.capacity()) break;  // drained
  }
  flush_gro();  // nothing waits beyond the wake-up
  // The ring slots of the last batch go back to the kernel (GRO copied what
  // it joined); until then poll() keeps reporting them.
  lower_.release(rx_batch_);
  link_->count_ring_drops(lower_.take_rx_ring_drops());
  return n;
}

void TapLink::handle_lower(MutableByteSpan frame, std::int64_t rx_ns) {
  const std::int64_t t0 = tsn_times_ ? tsn_clock_->now_ns() : 0;
  const std::size_t len = frame.size();
  std::uint8_t* const buf = frame.data();
  if (len >= 6 && (buf[0] & 0x01) == 0 && std::memcmp(buf, mac_.bytes.data(), 6) != 0) {
    // Unicast for another station (seen in promiscuous mode or on a veth):
    // not ours to validate, just as a NIC would filter it.
    link_->count_not_for_us();
    return;
  }
  if (hook_ && hook_->on_lower(ByteSpan(buf, len), rx_ns)) return;
  if (len >= 14 && !control_ether_types_.empty() &&
      std::find(control_ether_types_.begin(), control_ether_types_.end(),
                static_cast<std::uint16_t>((buf[12] << 8) | buf[13])) != control_ether_types_.end()) {
    link_->count_control();
    return;
  }
  auto plain = link_->validate(frame);
  if (!plain) return;
  if (hook_ && hook_->on_verified(*plain, rx_ns)) return;
  if (tsn_) {
    // validate() returned a view into `frame`; ingress pops the tag in place.
    const int traffic_class = tsn_times_ ? tsn_->class_of_tagged(*plain) : -1;
    auto delivered = tsn_->ingress(MutableByteSpan(buf + (plain->data() - buf), plain->size()));
    if (!delivered) return;
    plain = ByteSpan(delivered->data(), delivered->size());
    auto written = tap_.write(*plain);
    link_->count_deliver(written.ok());
    if (tsn_times_) tsn_times_->record(tsn::PassThroughTimes::Leg::kIngress, traffic_class, tsn_clock_->now_ns() - t0);
    return;
  }
  deliver(*plain);
}

void TapLink::deliver(ByteSpan plain) {
  if (gro_) {
    using Offer = net::TcpCoalescer::Offer;
    Offer o = gro_->offer(plain);
    if (o == Offer::kFlushFirst) {
      flush_gro();
      o = gro_->offer(plain);
    }
    if (o == Offer::kHeld) return;
    flush_gro();  // in order: the joined segments before this frame
  }
  auto written = tap_.write(plain);
  link_->count_deliver(written.ok());
}

void TapLink::flush_gro() {
  if (!gro_ || gro_->segments() == 0) return;
  const net::TcpCoalescer::Frame f = gro_->take();
  if (f.segments == 1) {
    auto written = tap_.write(f.frame);
    link_->count_deliver(written.ok());
    return;
  }
  auto written = tap_.write(f.frame, f.header);
  link_->count_deliver(f.segments, written.ok());
  if (written.ok()) link_->count_gro(f.segments);
}

// ------------------------------------------------------------ simulated segment

net::FrameShim make_sim_shim(MacsecLink& link) {
  auto outbound = [&link](std::vector<std::uint8_t>& frame) {
    auto secure = link.protect(ByteSpan(frame.data(), frame.size()));
    if (!secure) return false;
    frame.assign(secure->begin(), secure->end());
    link.count_send(true);
    return true;
  };
  auto inbound = [&link](std::vector<std::uint8_t>& frame) {
    auto plain = link.validate(MutableByteSpan(frame.data(), frame.size()));
    if (!plain) return false;
    const std::size_t offset = static_cast<std::size_t>(plain->data() - frame.data());
    const std::size_t size = plain->size();
    if (offset != 0) std::memmove(frame.data(), frame.data() + offset, size);
    frame.resize(size);
    link.count_deliver(true);
    return true;
  };
  return net::FrameShim(std::move(outbound), std::move(inbound));
}

bool MacsecPortProcessor::on_ingress(net::PortId port, std::vector<std::uint8_t>& frame) {
  auto it = links_.find(port);
  if (it == links_.end()) return true;
  auto plain = it->second->validate(MutableByteSpan(frame.data(), frame.size()));
  if (!plain) return false;
  const std::size_t offset = static_cast<std::size_t>(plain->data() - frame.data());
  const std::size_t size = plain->size();
  if (offset != 0) std::memmove(frame.data(), frame.data() + offset, size);
  frame.resize(size);
  it->second->count_deliver(true);
  return true;
}

bool MacsecPortProcessor::on_egress(net::PortId port, std::vector<std::uint8_t>& frame) {
  auto it = links_.find(port);
  if (it == links_.end()) return true;
  auto secure = it->second->protect(ByteSpan(frame.data(), frame.size()));
  if (!secure) return false;
  frame.assign(secure->begin(), secure->end());
  it->second->count_send(true);
  return true;
}

// -------------------------------------------------------------- MacsecFilter

// The most protect() adds: SecTAG with explicit SCI (802.1AE-2018 9.3) and
// the ICV of every GCM-AES suite (14.5).
static_assert(static_cast<std::size_t>(kMacsecOverhead) == kSecTagSizeWithSci + kIcvSize);

std::optional<ByteSpan> MacsecFilter::outbound(ByteSpan plain) {
  auto secure = link_->protect(plain);
  if (secure) link_->count_send(true);
  return secure;
}

std::optional<ByteSpan> MacsecFilter::inbound(MutableByteSpan wire) {
  auto plain = link_->validate(wire);
  if (plain) link_->count_deliver(true);
  return plain;
}

}  // namespace layersec::macsec
