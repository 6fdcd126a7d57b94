#include "layersec/net/sim.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <stdexcept>

namespace layersec::net {

// ---------------------------------------------------------------- SimRng

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

SimRng::SimRng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t SimRng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t SimRng::uniform(std::uint64_t n) {
  if (n == 0) return 0;
  // Rejection sampling removes the modulo bias.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t v;
  do {
    v = next_u64();
  } while (v >= limit);
  return v % n;
}

Duration SimRng::uniform_duration(Duration lo, Duration hi) {
  if (hi <= lo) return lo;
  const auto span = static_cast<std::uint64_t>(hi.ns() - lo.ns());
  return lo + Duration::nanoseconds(static_cast<std::int64_t>(span == UINT64_MAX ? next_u64() : uniform(span + 1)));
}

bool SimRng::bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  // 53 random bits as a double in [0, 1).
  const double u = static_cast<double>(next_u64() >> 11) * (1.0 / 9007199254740992.0);
  return u < p;
}

// ---------------------------------------------------------------- Simulator

Simulator::Simulator(std::uint64_t seed, TimePoint start) : now_(start), rng_(seed) {}

EventId Simulator::schedule_at(TimePoint t, Callback cb, OwnerId owner) {
  EventId id{std::max(t, now_), next_seq_++};
  Event ev;
  ev.cb = std::move(cb);
  ev.owner = owner == kInheritOwner ? current_owner() : owner;
  ev.ready_ns = cpu_clock_ ? model_now_ns() : 0;
  events_.emplace(id, std::move(ev));
  return id;
}

bool Simulator::cancel(EventId id) { return events_.erase(id) != 0; }

// Ends the innermost work when the callback returns or throws.
class Simulator::WorkGuard {
 public:
  explicit WorkGuard(Simulator& sim) : sim_(sim) {}
  ~WorkGuard() { sim_.exit_work(); }
  WorkGuard(const WorkGuard&) = delete;
  WorkGuard& operator=(const WorkGuard&) = delete;

 private:
  Simulator& sim_;
};

bool Simulator::step() {
  if (events_.empty()) return false;
  auto it = events_.begin();
  now_ = it->first.time;
  Event ev = std::move(it->second);
  events_.erase(it);
  // Only the callback is measured: the event queue's own cost is the
  // simulator's, not a node's.
  enter_work(ev.owner, ev.ready_ns, cpu_clock_ ? cpu_clock_->now().ns() : 0);
  WorkGuard guard(*this);
  ev.cb();
  return true;
}

void Simulator::enable_cpu_attribution(const Clock& real_clock) {
  cpu_clock_ = &real_clock;
  busy_until_.clear();
  busy_total_.clear();
  model_floor_ = 0;
  model_high_ = 0;
}

std::int64_t& Simulator::busy_slot(OwnerId owner) {
  if (owner >= busy_until_.size()) {
    busy_until_.resize(static_cast<std::size_t>(owner) + 1, 0);
    busy_total_.resize(static_cast<std::size_t>(owner) + 1, 0);
  }
  return busy_until_[owner];
}

std::int64_t Simulator::owner_busy_until_ns(OwnerId owner) const {
  return owner < busy_until_.size() ? busy_until_[owner] : 0;
}

std::int64_t Simulator::owner_busy_ns(OwnerId owner) const {
  return owner < busy_total_.size() ? busy_total_[owner] : 0;
}

std::int64_t Simulator::model_time_at(std::int64_t real_ns) const {
  if (!cpu_clock_) return 0;
  if (work_.empty()) return model_high_;
  const Work& w = work_.back();
  return w.model_start + (real_ns - w.real_start - w.excluded);
}

std::int64_t Simulator::model_now_ns() const {
  if (!cpu_clock_) return 0;
  if (work_.empty()) return model_high_;
  return model_time_at(cpu_clock_->now().ns());
}

std::int64_t Simulator::begin_model_window() {
  assert(work_.empty() && "begin_model_window inside running work");
  if (!cpu_clock_) return 0;
  model_floor_ = std::max(model_floor_, model_high_);
  model_high_ = model_floor_;
  return model_floor_;
}

void Simulator::enter_work(OwnerId owner, std::int64_t ready_ns, std::int64_t real_now) {
  if (!cpu_clock_) {
    work_.push_back(Work{owner, 0, 0, 0});
    return;
  }
  std::int64_t& busy = busy_slot(owner);
  const std::int64_t start = std::max({ready_ns, busy, model_floor_});
  // The owner is busy from here on; exit_work sets the real end.
  busy = start;
  work_.push_back(Work{owner, start, real_now, 0});
}

void Simulator::exit_work() {
  assert(!work_.empty());
  const Work w = work_.back();
  work_.pop_back();
  if (!cpu_clock_) return;
  const std::int64_t real_end = cpu_clock_->now().ns();
  const std::int64_t duration = std::max<std::int64_t>(0, real_end - w.real_start - w.excluded);
  const std::int64_t end = w.model_start + duration;
  std::int64_t& busy = busy_slot(w.owner);
  busy = std::max(busy, end);
  busy_total_[w.owner] += duration;
  model_high_ = std::max(model_high_, end);
  // The enclosing work did not run while this one did.
  if (!work_.empty()) work_.back().excluded += real_end - w.real_start;
}

Simulator::CpuScope::CpuScope(Simulator& sim, OwnerId owner, std::optional<std::int64_t> ready_ns) : sim_(sim) {
  const OwnerId resolved = owner == kInheritOwner ? sim.current_owner() : owner;
  if (!sim.work_.empty() && sim.work_.back().owner == resolved) return;  // already on that CPU
  // One clock read: where the enclosing work stops and this one starts.
  const std::int64_t real = sim.cpu_clock_ ? sim.cpu_clock_->now().ns() : 0;
  std::int64_t ready = sim.model_time_at(real);
  if (ready_ns) ready = std::min(ready, *ready_ns);
  sim.enter_work(resolved, ready, real);
  entered_ = true;
}

Simulator::CpuScope::~CpuScope() {
  if (entered_) sim_.exit_work();
}

std::size_t Simulator::run_until(TimePoint t) {
  std::size_t n = 0;
  while (!events_.empty() && events_.begin()->first.time <= t) {
    step();
    ++n;
  }
  if (t > now_) now_ = t;
  return n;
}

std::size_t Simulator::run_until_idle(std::size_t max_events) {
  std::size_t n = 0;
  while (n < max_events && step()) ++n;
  return n;
}

std::optional<TimePoint> Simulator::next_event_time() const {
  if (events_.empty()) return std::nullopt;
  return events_.begin()->first.time;
}

// ---------------------------------------------------------------- FrameShim

bool FrameShim::send_frame(ByteSpan frame) {
  if (!lower_) return false;
  buffer_.assign(frame.begin(), frame.end());
  if (outbound_ && !outbound_(buffer_)) {
    ++outbound_drops_;
    return false;
  }
  return lower_->send_frame(buffer_);
}

void FrameShim::on_frame(ByteSpan frame) {
  if (!upper_) return;
  // A local copy: the upper layer may send (and so reuse buffer_) from
  // inside its receive callback.
  std::vector<std::uint8_t> copy(frame.begin(), frame.end());
  if (inbound_ && !inbound_(copy)) {
    ++inbound_drops_;
    return;
  }
  upper_->on_frame(copy);
}

// ---------------------------------------------------------------- Segment

std::size_t wire_bytes(std::size_t frame_size) {
  return std::max(frame_size, kEthernetMinFrameSize) + 4 + 8 + 12;
}

class Segment::Port final : public FrameSender {
 public:
  Port(Segment& seg, PortId id, LinkConfig link, FrameReceiver* rx, OwnerId endpoint, OwnerId engine)
      : seg_(seg), id_(id), link(link), receiver(rx), endpoint_owner(endpoint), switch_owner(engine) {}
  bool send_frame(ByteSpan frame) override { return seg_.endpoint_send(id_, frame); }

  Segment& seg_;
  PortId id_;
  LinkConfig link;
  FrameReceiver* receiver;
  PortProcessor* processor = nullptr;
  OwnerId endpoint_owner;  // the node's CPU: deliveries to it
  OwnerId switch_owner;    // the switch's engine for this port
  Direction up;    // endpoint -> switch
  Direction down;  // switch -> endpoint
  PortStats stats;
};

Segment::Segment(Simulator& sim, SegmentConfig config) : sim_(sim), config_(config) {}

Segment::~Segment() {
  // Events still queued in the simulator hold a weak reference to this
  // segment through alive_ and become no-ops.
  *alive_ = false;
  for (Port* p : ports_) delete p;
}

PortId Segment::add_port(LinkConfig link, FrameReceiver* receiver) {
  const auto id = static_cast<PortId>(ports_.size());
  const OwnerId endpoint = sim_.new_owner();
  const OwnerId engine = sim_.new_owner();
  ports_.push_back(new Port(*this, id, link, receiver, endpoint, engine));
  return id;
}

void Segment::set_receiver(PortId port, FrameReceiver* receiver) { ports_.at(port)->receiver = receiver; }
OwnerId Segment::endpoint_owner(PortId port) const { return ports_.at(port)->endpoint_owner; }
OwnerId Segment::switch_owner(PortId port) const { return ports_.at(port)->switch_owner; }
void Segment::set_endpoint_owner(PortId port, OwnerId owner) { ports_.at(port)->endpoint_owner = owner; }

FrameSender& Segment::sender(PortId port) { return *ports_.at(port); }

void Segment::add_hook(SwitchHook* hook) { hooks_.push_back(hook); }
void Segment::remove_hook(SwitchHook* hook) { std::erase(hooks_, hook); }
void Segment::add_tap(FrameRecorder* tap, TapPoint point) { taps_.emplace_back(tap, point); }
void Segment::set_port_processor(PortId port, PortProcessor* processor) { ports_.at(port)->processor = processor; }

void Segment::remove_tap(FrameRecorder* tap) {
  std::erase_if(taps_, [tap](const auto& t) { return t.first == tap; });
}

std::optional<PortId> Segment::lookup(const MacAddress& mac) const {
  auto it = mac_table_.find(mac);
  if (it == mac_table_.end()) return std::nullopt;
  return it->second;
}

const PortStats& Segment::port_stats(PortId port) const { return ports_.at(port)->stats; }

bool Segment::transmit(PortId port, Direction& dir, Frame frame, std::function<void(Frame)> arrive,
                       OwnerId arrive_owner) {
  if (dir.shaper) return transmit_shaped(port, dir, std::move(frame), std::move(arrive), arrive_owner);
  const LinkConfig& link = ports_[port]->link;
  const TimePoint now = sim_.now();
  while (!dir.in_queue.empty() && dir.in_queue.front() <= now) dir.in_queue.pop_front();
  if (dir.in_queue.size() >= link.queue_frames) return false;
  Duration serialization = Duration::zero();
  if (link.bandwidth_bps != 0) {
    const std::uint64_t bits = wire_bytes(frame.size()) * 8;
    serialization = Duration::nanoseconds(static_cast<std::int64_t>(bits * 1'000'000'000ull / link.bandwidth_bps));
  }
  const TimePoint start = std::max(now, dir.busy_until);
  const TimePoint done = start + serialization;
  dir.busy_until = done;
  dir.in_queue.push_back(done);
  std::weak_ptr<bool> alive = alive_;
  sim_.schedule_at(
      done + link.latency,
      [alive, f = std::move(frame), arrive = std::move(arrive)]() mutable {
        if (auto a = alive.lock(); a && *a) arrive(std::move(f));
      },
      arrive_owner);
  return true;
}

bool Segment::endpoint_send(PortId port, ByteSpan frame) {
  Port& p = *ports_[port];
  if (frame.size() < kEthernetHeaderSize || frame.size() > kEthernetMaxFrameSize) {
    ++p.stats.tx_rejected;
    return false;
  }
  Frame copy(frame.begin(), frame.end());
  if (!transmit(
          port, p.up, std::move(copy), [this, port](Frame f) { switch_ingress(port, std::move(f)); }, p.switch_owner)) {
    ++p.stats.tx_queue_drops;
    return false;
  }
  ++p.stats.tx_frames;
  p.stats.tx_bytes += frame.size();
  return true;
}

void Segment::switch_ingress(PortId ingress, Frame frame) {
  ++stats_.frames_in;
  for (auto& [tap, point] : taps_)
    if (point == TapPoint::kIngress) tap->record(sim_.now(), frame);
  if (PortProcessor* proc = ports_[ingress]->processor) {
    if (!proc->on_ingress(ingress, frame) || frame.size() < kEthernetHeaderSize) {
      ++stats_.port_processor_drops;
      return;
    }
  }

  HookVerdict total;
  if (!hooks_.empty()) {
    HookContext ctx{sim_.now(), ingress, ++hook_frames_};
    // Copy the list: a hook may remove itself or add another.
    const std::vector<SwitchHook*> hooks = hooks_;
    for (SwitchHook* h : hooks) {
      const HookVerdict v = h->on_frame(ctx, frame, *this);
      if (v.drop) {
        ++stats_.hook_drops;
        return;
      }
      total.delay += v.delay;
      total.duplicates += v.duplicates;
    }
  }
  if (frame.size() < kEthernetHeaderSize) {
    ++stats_.hook_drops;  // a hook truncated it below a header
    return;
  }
  stats_.hook_duplicates += total.duplicates;
  const Duration delay = total.delay + config_.switching_delay;
  for (unsigned i = 0; i <= total.duplicates; ++i) {
    if (delay == Duration::zero()) {
      switch_forward(ingress, i == total.duplicates ? std::move(frame) : frame);
    } else {
      std::weak_ptr<bool> alive = alive_;
      sim_.schedule_in(
          delay,
          [this, alive, ingress, f = frame]() mutable {
            if (auto a = alive.lock(); a && *a) switch_forward(ingress, std::move(f));
          },
          ports_[ingress]->switch_owner);
    }
  }
}

void Segment::inject(PortId ingress, ByteSpan frame, Duration delay) {
  if (frame.size() < kEthernetHeaderSize || ingress >= ports_.size()) return;
  ++stats_.injected;
  std::weak_ptr<bool> alive = alive_;
  sim_.schedule_in(
      delay,
      [this, alive, ingress, f = Frame(frame.begin(), frame.end())]() mutable {
        if (auto a = alive.lock(); a && *a) switch_forward(ingress, std::move(f));
      },
      ports_[ingress]->switch_owner);
}

void Segment::learn(const MacAddress& src, PortId port) {
  if (src.is_multicast()) return;  // a group address is never a source
  auto it = mac_table_.find(src);
  if (it != mac_table_.end()) {
    it->second = port;  // station moved
    return;
  }
  if (mac_table_.size() < config_.mac_table_limit) mac_table_.emplace(src, port);
}

void Segment::switch_forward(PortId ingress, Frame frame) {
  for (auto& [tap, point] : taps_)
    if (point == TapPoint::kForwarded) tap->record(sim_.now(), frame);
  MacAddress dst;
  MacAddress src;
  std::copy_n(frame.begin(), 6, dst.bytes.begin());
  std::copy_n(frame.begin() + 6, 6, src.bytes.begin());
  learn(src, ingress);
  // Forwarding decided: every egress copy is ready from here (a switch
  // replicates a flooded frame to its ports at once).
  const std::int64_t forwarded_at = sim_.model_now_ns();
  if (!dst.is_multicast()) {
    if (auto port = lookup(dst)) {
      if (*port == ingress) {
        ++stats_.filtered;
        return;
      }
      ++stats_.forwarded_unicast;
      deliver(*port, frame, forwarded_at);
      return;
    }
  }
  ++stats_.flooded;
  for (PortId p = 0; p < ports_.size(); ++p)
    if (p != ingress) deliver(p, frame, forwarded_at);
}

void Segment::deliver(PortId egress, const Frame& frame, std::int64_t ready_ns) {
  Port& p = *ports_[egress];
  // The egress port's engine copies, processes and queues the frame; the
  // forwarding engine hands it over and goes on to the next port.
  Simulator::CpuScope engine(sim_, p.switch_owner, ready_ns);
  Frame copy = frame;
  if (p.processor && !p.processor->on_egress(egress, copy)) {
    ++stats_.port_processor_drops;
    return;
  }
  const bool queued = transmit(
      egress, p.down, std::move(copy),
      [this, egress](Frame f) {
        Port& port = *ports_[egress];
        ++port.stats.rx_frames;
        port.stats.rx_bytes += f.size();
        if (port.receiver) port.receiver->on_frame(f);
      },
      p.endpoint_owner);
  if (!queued) ++p.stats.rx_queue_drops;
}

}  // namespace layersec::net

// ---- 802.1Qbv shaping of a link direction --------------------------------

namespace layersec::net {

struct Segment::Shaper {
  Shaper(tsn::PortConfig pc, tsn::GateSchedule gates, tsn::TrafficClassMap map, std::uint8_t pcp,
         std::shared_ptr<const tsn::TimeBase> tb)
      : port(pc, std::move(gates)), classes(map), default_pcp(pcp), time_base(std::move(tb)) {}
  struct Waiting {
    std::function<void(Frame)> arrive;
    OwnerId owner;
  };
  // The port's clock at simulated time t, and the first simulated time >=
  // not_before at which the port's clock reads `local` (identity without a
  // time base).
  [[nodiscard]] std::int64_t local(std::int64_t t) const { return time_base ? time_base->local_of(t) : t; }
  [[nodiscard]] std::int64_t at_local(std::int64_t local_ns, std::int64_t not_before) const {
    return time_base ? time_base->true_at_or_after(local_ns, not_before) : local_ns;
  }
  tsn::EgressPort port;
  tsn::TrafficClassMap classes;
  std::uint8_t default_pcp;
  std::shared_ptr<const tsn::TimeBase> time_base;
  std::map<std::uint64_t, Waiting> waiting;  // by the frame's tag in the shaper
  std::uint64_t next_tag = 0;
  std::optional<EventId> pump_event;
  std::int64_t pump_at = tsn::kNever;
};

Segment::Direction& Segment::direction(PortId port, LinkSide side) {
  Port& p = *ports_.at(port);
  return side == LinkSide::kUplink ? p.up : p.down;
}

void Segment::set_shaper(PortId port, LinkSide side, ShaperConfig config) {
  Direction& dir = direction(port, side);
  const LinkConfig& link = ports_.at(port)->link;
  config.port.link_bps = link.bandwidth_bps;
  if (link.bandwidth_bps == 0) throw std::invalid_argument("set_shaper: the link has no bandwidth to shape");
  config.port.queue_limit_frames = std::max<std::size_t>(config.port.queue_limit_frames, 1);
  const auto classes = config.classes ? *config.classes : *tsn::TrafficClassMap::standard(config.port.num_classes);
  if (classes.num_classes() != config.port.num_classes) {
    throw std::invalid_argument("set_shaper: the class map and the port disagree on the number of classes");
  }
  if (dir.shaper && dir.shaper->pump_event) sim_.cancel(*dir.shaper->pump_event);
  dir.shaper = std::make_shared<Shaper>(config.port, std::move(config.schedule), classes, config.default_pcp,
                                        std::move(config.time_base));
}

const tsn::EgressPort* Segment::shaper(PortId port, LinkSide side) const {
  const Port& p = *ports_.at(port);
  const Direction& dir = side == LinkSide::kUplink ? p.up : p.down;
  return dir.shaper ? &dir.shaper->port : nullptr;
}

std::optional<TimePoint> Segment::set_schedule(PortId port, LinkSide side, const tsn::GateControlList& gcl) {
  Direction& dir = direction(port, side);
  if (!dir.shaper) return std::nullopt;
  Shaper& s = *dir.shaper;
  const std::int64_t now = sim_.now().ns();
  const std::int64_t at = s.port.set_schedule(gcl, s.local(now));
  pump(port, dir);
  return TimePoint::from_ns(s.at_local(at, now));
}

bool Segment::transmit_shaped(PortId port, Direction& dir, Frame frame, std::function<void(Frame)> arrive,
                              OwnerId arrive_owner) {
  Shaper& s = *dir.shaper;
  // The outer tag's PCP when the tag is in the clear, else the port default.
  std::uint8_t pcp = s.default_pcp;
  if (frame.size() >= 16) {
    const std::uint16_t tpid = static_cast<std::uint16_t>((frame[12] << 8) | frame[13]);
    if (tpid == kEtherTypeCTag || tpid == kEtherTypeSTag) pcp = static_cast<std::uint8_t>(frame[14] >> 5);
  }
  const int tc = s.classes.traffic_class(pcp);
  const std::uint64_t tag = ++s.next_tag;
  if (s.port.enqueue(std::move(frame), tc, s.local(sim_.now().ns()), tag) != tsn::EnqueueResult::kQueued) return false;
  s.waiting.emplace(tag, Shaper::Waiting{std::move(arrive), arrive_owner});
  pump(port, dir);
  return true;
}

void Segment::pump(PortId port, Direction& dir) {
  std::shared_ptr<Shaper> s = dir.shaper;
  const LinkConfig& link = ports_[port]->link;
  // The port runs on its own clock (local); the simulator on `now`.
  const std::int64_t now = sim_.now().ns();
  const std::int64_t local = s->local(now);
  std::weak_ptr<bool> alive = alive_;
  if (auto t = s->port.dequeue(local)) {
    auto it = s->waiting.find(t->tag);
    if (it != s->waiting.end()) {
      Shaper::Waiting w = std::move(it->second);
      s->waiting.erase(it);
      const std::int64_t end = s->at_local(t->end_ns, now);
      dir.busy_until = TimePoint::from_ns(end);
      sim_.schedule_at(
          TimePoint::from_ns(end) + link.latency,
          [alive, f = std::move(t->frame), arrive = std::move(w.arrive)]() mutable {
            if (auto a = alive.lock(); a && *a) arrive(std::move(f));
          },
          w.owner);
    }
  }
  // Frames the shaper dropped from its queues (a new schedule made them
  // unsendable) leave their callbacks behind; forget those.
  for (const std::uint64_t dropped : s->port.take_dropped_tags()) s->waiting.erase(dropped);
  const std::int64_t next_local = s->port.next_event(local);
  if (next_local == tsn::kNever) return;
  const std::int64_t next = s->at_local(next_local, now);
  if (next == tsn::kNever) return;
  if (s->pump_event && s->pump_at <= next && s->pump_at > now) return;  // an earlier look is already due
  if (s->pump_event) sim_.cancel(*s->pump_event);
  s->pump_at = next;
  Direction* d = &dir;
  s->pump_event = sim_.schedule_at(
      TimePoint::from_ns(next),
      [this, alive, port, d, weak = std::weak_ptr<Shaper>(s)]() {
        auto a = alive.lock();
        auto sh = weak.lock();
        if (!a || !*a || !sh || d->shaper != sh) return;
        sh->pump_event.reset();
        sh->pump_at = tsn::kNever;
        pump(port, *d);
      },
      ports_[port]->switch_owner);
}

}  // namespace layersec::net
