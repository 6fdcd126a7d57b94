#include "layersec/ptp/sim.h"

#include <algorithm>
#include <cmath>

namespace layersec::ptp {

std::size_t Simulator::add_node(const SystemConfig& config, const SimClock& clock) {
  Node n;
  n.system = std::make_unique<TimeAwareSystem>(config);
  n.clock = clock;
  n.peers.resize(config.port_count);
  nodes_.push_back(std::move(n));
  return nodes_.size() - 1;
}

void Simulator::connect(std::size_t a, std::size_t pa, std::size_t b, std::size_t pb, const SimLink& link) {
  auto& A = nodes_.at(a).peers.at(pa);
  auto& B = nodes_.at(b).peers.at(pb);
  if (A.connected || B.connected) throw ConfigError("sim: port already connected");
  A = Node::Peer{true, b, pb, link.delay_ns + link.asymmetry_ns / 2};
  B = Node::Peer{true, a, pa, link.delay_ns - link.asymmetry_ns / 2};
}

void Simulator::inject(std::size_t node, std::size_t port, std::vector<std::uint8_t> message, std::int64_t at_ns) {
  Delivery d;
  d.at = at_ns;
  d.order = order_++;
  d.node = node;
  d.port = port;
  d.bytes = std::move(message);
  queue_.push(std::move(d));
}

std::int64_t Simulator::local(const Node& n, std::int64_t t) const {
  const double td = static_cast<double>(t);
  if (n.clock.ppm_per_s == 0) return n.clock.start_ns + t + static_cast<std::int64_t>(std::llround(td * n.clock.ppm * 1e-6));
  const double ramp = 0.5 * n.clock.ppm_per_s * 1e-9 * td * (td - 2.0 * static_cast<double>(n.clock.ppm_at_ns));
  return n.clock.start_ns + t + static_cast<std::int64_t>(std::llround((td * n.clock.ppm + ramp) * 1e-6));
}

std::int64_t Simulator::global_at_or_after(const Node& n, TimePoint l) const {
  if (l == TimePoint::max()) return INT64_MAX;
  if (n.clock.ppm_per_s == 0) {
    const double t = static_cast<double>(l.ns() - n.clock.start_ns) / (1.0 + n.clock.ppm * 1e-6);
    std::int64_t g = static_cast<std::int64_t>(std::ceil(t));
    while (local(n, g) < l.ns()) ++g;
    return std::max(g, now_);
  }
  // A changing frequency: bracket from now (local is non-decreasing while
  // the error stays above -10⁶ ppm), then bisect.
  std::int64_t lo = now_;
  if (local(n, lo) >= l.ns()) return lo;
  std::int64_t step = std::max<std::int64_t>(1, l.ns() - local(n, lo));
  std::int64_t hi = lo + step;
  while (local(n, hi) < l.ns()) {
    if (step > (std::int64_t{1} << 60)) return INT64_MAX;
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  while (hi - lo > 1) {  // local(lo) < l <= local(hi)
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (local(n, mid) >= l.ns()) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

double Simulator::gaussian() {
  // splitmix64 + Box-Muller: the same sequence with every standard library.
  auto next = [this] {
    std::uint64_t z = (rng_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  };
  const double u1 = next(), u2 = next();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

std::int64_t Simulator::stamp(const Node& n, std::int64_t t) {
  const double noise = n.clock.noise_ns > 0 ? gaussian() * n.clock.noise_ns : 0.0;
  return local(n, t) + static_cast<std::int64_t>(std::llround(noise));
}

void Simulator::transmit(std::size_t index, std::size_t port, const std::vector<std::uint8_t>& bytes, bool event,
                         MessageType type, std::uint16_t seq) {
  Node& n = nodes_[index];
  const Node::Peer& peer = n.peers.at(port);
  if (peer.connected) {
    Delivery d;
    d.at = now_ + peer.delay_ns;
    d.order = order_++;
    d.node = peer.node;
    d.port = peer.port;
    d.bytes = bytes;
    queue_.push(std::move(d));
    ++frames_;
  }
  if (event) n.system->tx_timestamp(port, type, seq, TimePoint::from_ns(stamp(n, now_)));
}

void Simulator::drain(std::size_t index) {
  Node& n = nodes_[index];
  std::vector<std::uint8_t> buf(kMaxMessageSize);
  while (!n.system->output().empty()) {
    const std::vector<Transmit> sent = n.system->output();
    n.system->clear_output();
    for (const Transmit& t : sent) {
      const std::size_t len = encode_message(t.message, buf);
      if (len == 0) continue;
      std::vector<std::uint8_t> bytes(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
      if (n.clock.tx_latency_ns > 0) {
        Delivery d;
        d.at = now_ + n.clock.tx_latency_ns;
        d.order = order_++;
        d.node = index;
        d.port = t.port;
        d.bytes = std::move(bytes);
        d.send = true;
        d.event = t.event;
        d.type = t.message.header.type;
        d.seq = t.message.header.sequence_id;
        queue_.push(std::move(d));
      } else {
        transmit(index, t.port, bytes, t.event, t.message.header.type, t.message.header.sequence_id);
      }
    }
  }
}

void Simulator::record_clocks(bool on) {
  recording_ = on;
  if (!on) return;
  for (std::size_t i = 0; i < nodes_.size(); ++i) note_clock(i);
}

void Simulator::note_clock(std::size_t index) {
  Node& n = nodes_[index];
  const SyncedClock& c = n.system->clock();
  if (!n.history.empty() && n.history.back().clock == c) return;
  if (!n.history.empty() && n.history.back().from_ns == now_) {
    n.history.back().clock = c;  // several changes at one instant: the last holds from then on
  } else {
    n.history.push_back(ClockChange{now_, c});
  }
}

void Simulator::run_until(std::int64_t t_ns) {
  for (;;) {
    std::int64_t next = INT64_MAX;
    std::size_t timer_node = nodes_.size();
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const std::int64_t g = global_at_or_after(nodes_[i], nodes_[i].system->next_deadline());
      if (g < next) {
        next = g;
        timer_node = i;
      }
    }
    const bool delivery_first = !queue_.empty() && queue_.top().at <= next;
    if (delivery_first) next = queue_.top().at;
    if (next > t_ns || next == INT64_MAX) break;
    now_ = std::max(now_, next);
    if (delivery_first) {
      Delivery d = queue_.top();
      queue_.pop();
      Node& n = nodes_.at(d.node);
      if (d.send) {
        transmit(d.node, d.port, d.bytes, d.event, d.type, d.seq);
      } else {
        n.system->receive(d.port, ByteSpan(d.bytes), TimePoint::from_ns(stamp(n, now_)));
      }
      drain(d.node);
      if (recording_) note_clock(d.node);
    } else {
      Node& n = nodes_[timer_node];
      n.system->on_timer(TimePoint::from_ns(local(n, now_)));
      drain(timer_node);
      if (recording_) note_clock(timer_node);
    }
  }
  now_ = std::max(now_, t_ns);
}

double Simulator::offset_between(std::size_t node, std::size_t reference) const {
  const Node& a = nodes_.at(node);
  const Node& b = nodes_.at(reference);
  const std::int64_t la = local(a, now_), lb = local(b, now_);
  return static_cast<double>(a.system->clock().to_synced(la) - b.system->clock().to_synced(lb)) +
         a.system->clock().to_synced_fraction(la) - b.system->clock().to_synced_fraction(lb);
}

}  // namespace layersec::ptp
