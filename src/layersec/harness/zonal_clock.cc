#include "layersec/harness/zonal_clock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "layersec/net/sim.h"
#include "layersec/ptp/sim.h"
#include "layersec/tsn/gate_control_list.h"

namespace layersec::harness {

const char* to_string(ZonalClock c) {
  switch (c) {
    case ZonalClock::kIdeal: return "ideal";
    case ZonalClock::kGptp: return "gptp";
    case ZonalClock::kFree: return "free";
  }
  return "?";
}

std::optional<ZonalClock> zonal_clock_from(std::string_view name) {
  for (ZonalClock c : {ZonalClock::kIdeal, ZonalClock::kGptp, ZonalClock::kFree})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

double sync_interval_ms(int log_sync_interval) { return std::ldexp(1000.0, log_sync_interval); }

namespace {

// At most 200 ppm at the network's start and 1 ppm/s of change over the
// longest default warm-up (30 s + 40 · 1 s): a node's error stays within
// 270 ppm, two neighbours within 540 ppm of each other, inside gPTP's
// ±1000 ppm rate check and the servo's 900 ppm range.
constexpr double kMaxDriftPpm = 200;
constexpr double kMaxWanderPpmPerS = 1;

void check(const char* field, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    throw std::invalid_argument(std::string("zonal clock: ") + field + " must be a finite number in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  }
}

// The nodes' frequency errors, uniform in [-bound, +bound], from a
// generator of their own (so the traffic is the same in every clock mode).
double uniform_pm(net::SimRng& rng, double bound) {
  const double u = static_cast<double>(rng.next_u64() >> 11) / 9007199254740992.0;  // [0, 1)
  return bound * (2 * u - 1);
}

// A node's clock as a shaper reads it: the recorded layersec clock
// (ptp::ClockChange; with free-running clocks only the initial one, the
// identity) over the node's oscillator, shifted to network time (network t
// = simulator t - shift) and by the epoch, and held monotonic: a change that
// would move the clock back (a servo update is anchored at the Sync's
// receipt, so it can move it by a fraction of a ns) holds it until it
// catches up.
class NodeTimeBase final : public tsn::TimeBase {
 public:
  NodeTimeBase(std::shared_ptr<const ptp::Simulator> sim, std::size_t node, std::int64_t shift, std::int64_t epoch)
      : sim_(std::move(sim)), node_(node), shift_(shift), epoch_(epoch) {
    const auto& h = sim_->clock_history(node_);
    // The change in effect at network time 0, then every later one.
    std::size_t first = 0;
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i].from_ns <= shift_) first = i;
    for (std::size_t i = first; i < h.size(); ++i) {
      Segment s;
      s.from = i == first ? 0 : h[i].from_ns - shift_;
      s.clock = h[i].clock;
      s.floor = segments_.empty() ? INT64_MIN : std::max(segments_.back().floor, raw(segments_.back(), s.from - 1));
      segments_.push_back(s);
    }
    for (std::size_t i = 0; i + 1 < segments_.size(); ++i) ends_.push_back(value(i, segments_[i + 1].from - 1));
  }

  [[nodiscard]] std::int64_t local_of(std::int64_t t) const override { return value(index(t), t); }

  [[nodiscard]] std::int64_t true_at_or_after(std::int64_t l, std::int64_t not_before) const override {
    if (l == tsn::kNever) return tsn::kNever;
    if (local_of(not_before) >= l) return not_before;
    // The first segment (at or after not_before's) whose last value reaches l.
    std::size_t k = index(not_before);
    const auto it = std::lower_bound(ends_.begin() + static_cast<std::ptrdiff_t>(k), ends_.end(), l);
    k = static_cast<std::size_t>(it - ends_.begin());
    const std::int64_t lo = std::max(not_before, segments_[k].from);
    auto f = [this, k](std::int64_t x) { return value(k, x); };
    if (k < ends_.size()) return tsn::first_at_or_above(f, l, lo, segments_[k + 1].from - 1);
    // The last segment runs on for ever at a rate near 1: widen until found.
    std::int64_t span = std::max<std::int64_t>(64, (l - value(k, lo)) * 2);
    for (;;) {
      const std::int64_t hi = lo + span;
      const std::int64_t t = tsn::first_at_or_above(f, l, lo, hi);
      if (t <= hi) return t;
      if (span > (std::int64_t{1} << 61)) return tsn::kNever;
      span *= 2;
    }
  }

 private:
  struct Segment {
    std::int64_t from = 0;  // network time
    ptp::SyncedClock clock;
    std::int64_t floor = INT64_MIN;
  };
  [[nodiscard]] std::int64_t raw(const Segment& s, std::int64_t t) const {
    return s.clock.to_synced(sim_->oscillator(node_, t + shift_)) - epoch_;
  }
  [[nodiscard]] std::int64_t value(std::size_t k, std::int64_t t) const {
    return std::max(raw(segments_[k], t), segments_[k].floor);
  }
  [[nodiscard]] std::size_t index(std::int64_t t) const {
    const auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                                     [](std::int64_t x, const Segment& s) { return x < s.from; });
    return it == segments_.begin() ? 0 : static_cast<std::size_t>(it - segments_.begin()) - 1;
  }

  std::shared_ptr<const ptp::Simulator> sim_;
  std::size_t node_;
  std::int64_t shift_;
  std::int64_t epoch_;
  std::vector<Segment> segments_;
  std::vector<std::int64_t> ends_;  // value at the last ns of every segment but the last
};

}  // namespace

void validate(const ZonalClockOptions& o) {
  check("drift_ppm", o.drift_ppm, 0, kMaxDriftPpm);
  check("log_sync_interval", o.log_sync_interval, -7, 0);
  check("timestamp_noise_ns", o.timestamp_noise_ns, 0, 1000);
  check("wander_ppm_per_s", o.wander_ppm_per_s, 0, kMaxWanderPpmPerS);
  check("warmup_ns", static_cast<double>(o.warmup_ns), 0, 70e9);
}

ZonalClocks::ZonalClocks(const ZonalClockOptions& o, int hops, std::int64_t cable_ns, std::uint64_t seed,
                         std::int64_t horizon_ns)
    : options_(o), hops_(hops) {
  validate(o);
  if (hops < 1) throw std::invalid_argument("zonal clock: hops must be at least 1");
  const std::size_t n = 1 + 2 * static_cast<std::size_t>(hops);
  nodes_.resize(n);
  ppm_.assign(n, 0.0);
  if (o.mode == ZonalClock::kIdeal) return;
  net::SimRng rng(seed ^ 0x5A17C10C4D21F7E3ULL);
  for (double& p : ppm_) p = uniform_pm(rng, o.drift_ppm);
  std::vector<double> wander(n);
  for (double& w : wander) w = uniform_pm(rng, o.wander_ppm_per_s);
  const bool gptp = o.mode == ZonalClock::kGptp;
  const double interval_ns = sync_interval_ms(o.log_sync_interval) * 1e6;
  const std::int64_t warmup =
      !gptp ? 0 : o.warmup_ns > 0 ? o.warmup_ns : 30'000'000'000LL + static_cast<std::int64_t>(40 * interval_ns);

  // The oscillators (both modes) and, with gptp, the time-aware systems on
  // the network's topology.
  auto sim = std::make_shared<ptp::Simulator>(seed);
  auto config = [&](std::size_t i, std::size_t ports) {
    ptp::SystemConfig c;
    c.profile = ptp::Profile::kAutomotive;
    c.role = i == 0 ? ptp::Role::kGm : ptp::Role::kSlave;
    c.clock_identity = 0x02005A0000000000ULL + i + 1;
    c.port_count = ports;
    c.log_sync_interval = static_cast<std::int8_t>(o.log_sync_interval);
    c.pdelay.neighbor_prop_delay_thresh_ns = 1'000'000;
    return c;
  };
  std::vector<std::size_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool relay = i >= 1 && i <= static_cast<std::size_t>(hops);
    const std::size_t ports = relay ? (i < static_cast<std::size_t>(hops) ? 3 : 2) : 1;
    ptp::SimClock clock;
    clock.ppm = ppm_[i];  // at the network's time 0
    clock.ppm_per_s = wander[i];
    clock.ppm_at_ns = warmup;
    clock.start_ns = static_cast<std::int64_t>(i) * 1'000'003'123LL;  // unrelated start-up times
    clock.noise_ns = o.timestamp_noise_ns;
    clock.tx_latency_ns = relay ? kResidenceNs : 0;
    ids[i] = sim->add_node(config(i, ports), clock);
  }
  if (!gptp) {
    // Free-running: each node's oscillator from an origin that makes all
    // clocks agree at the network's time 0.
    sim->record_clocks(true);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t epoch = sim->clock_history(ids[i]).front().clock.to_synced(sim->oscillator(ids[i], 0));
      nodes_[i] = std::make_shared<NodeTimeBase>(sim, ids[i], 0, epoch);
    }
    return;
  }
  const ptp::SimLink link{cable_ns + kPhyDelayNs, 0};
  for (int k = 1; k <= hops; ++k) {
    const auto z = static_cast<std::size_t>(k);
    // Z1 port 0 to C; Zk port 0 to Z(k-1)'s port 2; Zk port 1 to ECUk.
    if (k == 1) {
      sim->connect(ids[0], 0, ids[z], 0, link);
    } else {
      sim->connect(ids[z - 1], 2, ids[z], 0, link);
    }
    sim->connect(ids[z], 1, ids[static_cast<std::size_t>(hops) + z], 0, link);
  }
  sim->record_clocks(true);
  sim->run_until(warmup);
  for (std::size_t i = 1; i < n; ++i)
    start_offset_max_ns_ = std::max(start_offset_max_ns_, std::fabs(sim->offset_between(ids[i], ids[0])));
  sim->run_until(warmup + horizon_ns);
  const ptp::SyncedClock& gm = sim->clock_history(ids[0]).front().clock;
  const std::int64_t epoch = gm.to_synced(sim->oscillator(ids[0], warmup));
  for (std::size_t i = 0; i < n; ++i) nodes_[i] = std::make_shared<NodeTimeBase>(sim, ids[i], warmup, epoch);
}

std::shared_ptr<const tsn::TimeBase> ZonalClocks::zone(int k) const {
  return nodes_.at(static_cast<std::size_t>(k));
}
std::shared_ptr<const tsn::TimeBase> ZonalClocks::ecu(int k) const {
  return nodes_.at(static_cast<std::size_t>(hops_ + k));
}

Misalignment path_misalignment(const std::vector<const tsn::TimeBase*>& ports, std::int64_t first_local,
                               std::int64_t period, int count) {
  Misalignment m;
  if (ports.size() < 2 || count < 1) return m;
  double sq = 0;
  std::vector<std::int64_t> at(ports.size());
  for (int c = 0; c < count; ++c) {
    const std::int64_t l = first_local + static_cast<std::int64_t>(c) * period;
    for (std::size_t i = 0; i < ports.size(); ++i) at[i] = ports[i] ? ports[i]->true_at_or_after(l, 0) : l;
    for (std::size_t i = 0; i + 1 < ports.size(); ++i) {
      const double d = static_cast<double>(at[i + 1] - at[i]);
      m.max_abs_ns = std::max(m.max_abs_ns, std::fabs(d));
      sq += d * d;
      ++m.samples;
    }
    m.path_max_abs_ns = std::max(m.path_max_abs_ns, std::fabs(static_cast<double>(at.back() - at.front())));
  }
  m.rms_ns = std::sqrt(sq / static_cast<double>(m.samples));
  return m;
}

}  // namespace layersec::harness
