#include "layersec/bench/tsn_bench_link.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "layersec/base/time.h"
#include "layersec/harness/stats.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_tsn.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/tap.h"
#include "layersec/net/thread_timing.h"
#include "layersec/tsn/shaper_driver.h"

namespace layersec::bench {
namespace {

constexpr std::size_t kBuf = 65535 + 64;
// The bench probe's frame as the shaper queues it: 200 + UDP 8 + IPv4 20 +
// Ethernet 14 + C-tag 4 (tsn_bench.cc).
constexpr std::size_t kProbeFrame = 246;

// Runs `loop` until `stop` is set (checked every 20 ms).
void run_loop(net::EventLoop& loop, const std::atomic<bool>& stop) {
  std::function<void()> tick = [&] {
    if (stop.load()) {
      loop.stop();
      return;
    }
    loop.add_timer_in(Duration::milliseconds(20), tick);
  };
  loop.add_timer_in(Duration::milliseconds(20), tick);
  loop.run_until(loop.now() + Duration::seconds(365LL * 24 * 3600));
}

class MacsecBenchLink final : public BenchLink {
 public:
  explicit MacsecBenchLink(const BenchLinkSpec& s) {
    macsec::SecYConfig c;
    c.sci = s.sci;
    c.vlan_mode = s.tsn.layout;
    c.clear_tags_in_icv = s.tsn.clear_tags_in_icv;
    macsec::SecY secy(c);
    auto ok = secy.install_tx_sa(0, macsec::SaKeys{ByteSpan(s.tx_key.data(), s.tx_key.size())}, 1).ok() &&
              secy.set_encoding_sa(0).ok() && secy.add_rx_sc(s.peer_sci).ok() &&
              secy.install_rx_sa(s.peer_sci, 0, macsec::SaKeys{ByteSpan(s.rx_key.data(), s.rx_key.size())}, 1).ok();
    if (!ok) throw std::runtime_error("bench link " + s.tap + ": SA installation failed");
    link_ = std::make_unique<macsec::MacsecLink>(std::move(secy));
    macsec::TapLinkOptions o;
    o.lower = s.lower;
    o.name = s.tap;
    o.mac = s.tap_mac;
    o.extra_overhead = 4;
    {
      net::NetnsScope scope(s.netns);
      tap_ = std::make_unique<macsec::TapLink>(macsec::TapLink::open(*link_, o));
    }
    tap_->enable_tsn(s.tsn, clock_);
    tap_->time_tsn_class(s.timed_class);
    thread_ = std::thread([this, prio = s.realtime_priority] {
      if (prio > 0) realtime_error_ = net::set_thread_fifo(prio);
      MonotonicClock mono;
      net::EventLoop loop(mono);
      tap_->attach(loop);
      run_loop(loop, stop_);
      tap_->detach(loop);
    });
  }
  ~MacsecBenchLink() override { stop(); }
  void stop() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] nlohmann::json stats() const override {
    return nlohmann::json{{"macsec", link_->stats_json()},
                          {"tsn", tap_->tsn_json()},
                          {"pass_through", pass_through_json(times())},
                          {"realtime", realtime_error_}};
  }
  [[nodiscard]] const tsn::PassThroughTimes& times() const override { return *tap_->tsn_times(); }

 private:
  std::string realtime_error_;
  tsn::TaiClock clock_;
  std::unique_ptr<macsec::MacsecLink> link_;
  std::unique_ptr<macsec::TapLink> tap_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The same TSN path and shaper without a SecY: frames leave as the tagger
// left them.
class PlainBenchLink final : public BenchLink {
 public:
  explicit PlainBenchLink(const BenchLinkSpec& s)
      : path_(s.tsn), mac_(s.tap_mac), buf_(kBuf), times_(s.timed_class) {
    int err = 0;
    net::NetnsScope scope(s.netns);
    auto lower_mtu = net::interface_mtu(s.lower);
    if (!lower_mtu) throw std::runtime_error("bench link: lower interface " + s.lower + ": " + net::errno_text(errno));
    auto sock = net::PacketSocket::open(s.lower, net::kEtherTypeAll, true, &err);
    if (!sock) throw std::runtime_error("bench link: AF_PACKET on " + s.lower + ": " + net::errno_text(err));
    auto tap = net::TapDevice::open(s.tap, true, &err);
    if (!tap) throw std::runtime_error("bench link: TAP " + s.tap + ": " + net::errno_text(err));
    lower_ = std::make_unique<net::PacketSocket>(std::move(*sock));
    tap_ = std::make_unique<net::TapDevice>(std::move(*tap));
    if (!net::set_interface_mac(s.tap, s.tap_mac).ok() || !net::set_interface_mtu(s.tap, *lower_mtu - 4).ok() ||
        !lower_->set_promiscuous(true).ok() || !net::set_interface_up(s.tap, true).ok()) {
      throw std::runtime_error("bench link: configuring " + s.tap + ": " + net::errno_text(errno));
    }
    lower_->set_receive_buffer(4 * 1024 * 1024);
    thread_ = std::thread([this, prio = s.realtime_priority] {
      if (prio > 0) realtime_error_ = net::set_thread_fifo(prio);
      run();
    });
  }
  ~PlainBenchLink() override { stop(); }
  void stop() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] nlohmann::json stats() const override {
    nlohmann::json j{{"path", macsec::to_json(path_.stats())}};
    j["shaper"] = shaper_ ? macsec::shaper_json(*shaper_) : nlohmann::json(nullptr);
    j["link"] = {{"tx_sent", tx_sent_}, {"tx_send_errors", tx_errors_}, {"rx_delivered", rx_delivered_}};
    j["diag"] = {{"max_send_us", static_cast<double>(max_send_ns_) / 1e3},
                 {"sends_over_200us", slow_sends_},
                 {"max_pump_tap_us", static_cast<double>(max_pump_ns_) / 1e3},
                 {"tap_pumps_full", full_pumps_},
                 {"max_queued_per_class", {max_queued_[0], max_queued_[1]}},
                 {"st_ahead_of_probe", ahead_summary()}};
    return nlohmann::json{{"tsn", std::move(j)}, {"pass_through", pass_through_json(times_)}, {"realtime", realtime_error_}};
  }
  [[nodiscard]] const tsn::PassThroughTimes& times() const override { return times_; }

 private:
  void run() {
    MonotonicClock mono;
    net::EventLoop loop(mono);
    tsn::LoopShaperTimer timer(loop, clock_, [this] { shaper_->service(); });
    tsn::DriverOptions opt;
    opt.late_tolerance_ns = path_.config().late_tolerance_ns;
    shaper_ = std::make_unique<tsn::ShaperDriver>(
        tsn::EgressPort(path_.port_config(), path_.gate_schedule(clock_.now_ns())), clock_, timer,
        [this](ByteSpan f, int traffic_class) {
          const std::int64_t t0 = clock_.now_ns();
          const bool ok = lower_->send(f).ok();
          const std::int64_t done = clock_.now_ns();
          times_.record(tsn::PassThroughTimes::Leg::kEgressOut, traffic_class, done - shaper_->handing_start_ns());
          const std::int64_t took = done - t0;
          max_send_ns_ = std::max(max_send_ns_, took);
          if (took > 200'000) ++slow_sends_;
          ok ? ++tx_sent_ : ++tx_errors_;
          return ok;
        },
        opt);
    loop.watch(tap_->fd(), POLLIN, [this](short) { pump_tap(); });
    loop.watch(lower_->fd(), POLLIN, [this](short) { pump_lower(); });
    run_loop(loop, stop_);
    loop.unwatch(tap_->fd());
    loop.unwatch(lower_->fd());
    timer.disarm();
  }
  // Diagnostics beside the shaper's counters: how long one TAP pump and
  // one lower send take, how often a pump found 64 frames waiting in the
  // TAP (a backlog in the kernel's FIFO, where ST waits behind BE), and the
  // deepest class queue in the shaper.
  void pump_tap() {
    const std::int64_t t0 = clock_.now_ns();
    int i = 0;
    for (; i < 64; ++i) {
      auto r = tap_->read(MutableByteSpan(buf_.data(), buf_.size() - 8));
      if (!r) break;
      const std::int64_t t_read = clock_.now_ns();
      frame_.assign(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(*r));
      auto c = path_.egress(frame_);
      if (!c) continue;
      times_.record(tsn::PassThroughTimes::Leg::kEgressIn, *c, clock_.now_ns() - t_read);
      // The probe's frame (200-byte UDP payload, tagged): how many ST frames
      // were queued in front of it.
      if (*c == 1 && frame_.size() == kProbeFrame) st_ahead_.push_back(static_cast<double>(shaper_->port().queued(1)));
      if (shaper_->submit(ByteSpan(frame_.data(), frame_.size()), *c) != tsn::EnqueueResult::kQueued) {
        path_.count_shaper_refused();
      }
      for (int k = 0; k < 2; ++k) max_queued_[k] = std::max(max_queued_[k], shaper_->port().queued(k));
    }
    if (i == 64) ++full_pumps_;
    max_pump_ns_ = std::max(max_pump_ns_, clock_.now_ns() - t0);
  }
  void pump_lower() {
    for (int i = 0; i < 64; ++i) {
      auto r = lower_->receive(MutableByteSpan(buf_.data(), buf_.size()));
      if (!r) break;
      const std::int64_t t_rx = clock_.now_ns();
      const std::size_t len = *r;
      // Only frames for the TAP's MAC or group addresses (a NIC's filter).
      if (len < 14 || ((buf_[0] & 1) == 0 && std::memcmp(buf_.data(), mac_.bytes.data(), 6) != 0)) continue;
      const int tc = path_.class_of_tagged(ByteSpan(buf_.data(), len));
      auto d = path_.ingress(MutableByteSpan(buf_.data(), len));
      if (!d) continue;
      if (tap_->write(ByteSpan(d->data(), d->size())).ok()) ++rx_delivered_;
      times_.record(tsn::PassThroughTimes::Leg::kIngress, tc, clock_.now_ns() - t_rx);
    }
  }

  tsn::TaiClock clock_;
  macsec::TsnFramePath path_;
  net::MacAddress mac_;
  std::unique_ptr<net::PacketSocket> lower_;
  std::unique_ptr<net::TapDevice> tap_;
  std::unique_ptr<tsn::ShaperDriver> shaper_;
  std::vector<std::uint8_t> buf_, frame_;
  std::uint64_t tx_sent_ = 0, tx_errors_ = 0, rx_delivered_ = 0;
  std::int64_t max_send_ns_ = 0, max_pump_ns_ = 0;
  std::uint64_t slow_sends_ = 0, full_pumps_ = 0;
  std::size_t max_queued_[2] = {0, 0};
  std::vector<double> st_ahead_;
  tsn::PassThroughTimes times_;
  [[nodiscard]] nlohmann::json ahead_summary() const {
    if (st_ahead_.empty()) return nullptr;
    const harness::Summary a = harness::summarize(st_ahead_);
    return {{"count", a.count}, {"p50", a.p50}, {"p99", a.p99}, {"max", a.max}};
  }
  std::string realtime_error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

nlohmann::json pass_through_json(const tsn::PassThroughTimes& t) {
  using Leg = tsn::PassThroughTimes::Leg;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, leg] : {std::pair{"egress_in", Leg::kEgressIn}, std::pair{"egress_out", Leg::kEgressOut},
                                  std::pair{"ingress", Leg::kIngress}}) {
    const auto& v = t.us(leg);
    if (v.empty()) {
      j[name] = nullptr;
      continue;
    }
    const harness::Summary a = harness::summarize(v);
    j[name] = {{"count", a.count}, {"p50", a.p50}, {"p99", a.p99}, {"max", a.max}};
  }
  j["traffic_class"] = t.traffic_class();
  j["dropped_samples"] = t.dropped();
  return j;
}

std::unique_ptr<BenchLink> BenchLink::start(const BenchLinkSpec& spec) {
  if (spec.macsec) return std::make_unique<MacsecBenchLink>(spec);
  return std::make_unique<PlainBenchLink>(spec);
}

}  // namespace layersec::bench
