#include "layersec/tsn/egress_port.h"

#include <algorithm>
#include <stdexcept>

namespace layersec::tsn {

namespace {
constexpr std::size_t kFcs = 4;
}

const char* to_string(EnqueueResult r) {
  switch (r) {
    case EnqueueResult::kQueued: return "queued";
    case EnqueueResult::kQueueFull: return "queue_full";
    case EnqueueResult::kMaxSduExceeded: return "max_sdu_exceeded";
    case EnqueueResult::kNeverFits: return "never_fits";
    case EnqueueResult::kBadClass: return "bad_class";
  }
  return "unknown";
}

EgressPort::EgressPort(PortConfig config, GateSchedule schedule) : config_(config), gates_(std::move(schedule)) {
  config_.num_classes = std::clamp(config_.num_classes, 1, kMaxTrafficClasses);
  if (config_.link_bps == 0) config_.link_bps = 1;
}

std::int64_t EgressPort::set_schedule(const GateControlList& gcl, std::int64_t now_ns) {
  GclLimits limits;
  limits.num_classes = config_.num_classes;
  limits.link_bps = config_.link_bps;
  if (auto problem = validate(gcl, limits)) throw std::invalid_argument("gate control list: " + problem->message);
  return gates_.set_admin(gcl, now_ns);
}

std::int64_t EgressPort::wire_time(std::size_t frame_bytes) const {
  return wire_time_ns(frame_bytes + config_.expansion_bytes + kFcs, config_.link_bps);
}

EnqueueResult EgressPort::enqueue(std::vector<std::uint8_t> frame, int c, std::int64_t now_ns, std::uint64_t tag) {
  if (c < 0 || c >= config_.num_classes) return EnqueueResult::kBadClass;
  const auto ci = static_cast<std::size_t>(c);
  auto& k = counters_[ci];
  gates_.advance(now_ns);
  const std::uint32_t sdu = config_.max_sdu[ci];
  if (sdu != 0 && frame.size() > sdu) {
    ++k.dropped_max_sdu;
    return EnqueueResult::kMaxSduExceeded;
  }
  if (config_.length_aware && wire_time(frame.size()) > gates_.max_window(c)) {
    ++k.dropped_never_fits;
    return EnqueueResult::kNeverFits;
  }
  if (queues_[ci].size() >= config_.queue_limit_frames) {
    ++k.dropped_queue_full;
    return EnqueueResult::kQueueFull;
  }
  queues_[ci].push_back(Queued{std::move(frame), tag, false});
  ++k.enqueued;
  return EnqueueResult::kQueued;
}

bool EgressPort::may_start(int c, std::int64_t t) const {
  const auto& q = queues_[static_cast<std::size_t>(c)];
  if (q.empty() || !gates_.open(c, t)) return false;
  if (!config_.length_aware) return true;
  const std::int64_t close = gates_.close_time(c, t);
  return close == kNever || t + wire_time(q.front().frame.size()) <= close;
}

std::optional<Transmission> EgressPort::dequeue(std::int64_t now_ns) {
  gates_.advance(now_ns);
  if (now_ns < busy_until_) return std::nullopt;
  for (int c = config_.num_classes - 1; c >= 0; --c) {
    auto& q = queues_[static_cast<std::size_t>(c)];
    if (q.empty()) continue;
    auto& k = counters_[static_cast<std::size_t>(c)];
    if (config_.length_aware && wire_time(q.front().frame.size()) > gates_.max_window(c)) {
      // A new schedule made the head frame unsendable: drop it, do not block.
      ++k.dropped_never_fits;
      dropped_tags_.push_back(q.front().tag);
      q.pop_front();
      ++c;  // look at this class again
      continue;
    }
    if (!may_start(c, now_ns)) {
      if (!q.front().counted_held) {
        q.front().counted_held = true;
        ++k.held;
      }
      continue;
    }
    Queued item = std::move(q.front());
    q.pop_front();
    Transmission t;
    t.traffic_class = c;
    t.start_ns = now_ns;
    t.end_ns = now_ns + wire_time(item.frame.size());
    t.tag = item.tag;
    const std::int64_t close = gates_.close_time(c, now_ns);
    if (close != kNever && t.end_ns > close) ++k.transmission_overruns;
    ++k.transmitted;
    k.transmitted_bytes += item.frame.size();
    t.frame = std::move(item.frame);
    busy_until_ = t.end_ns;
    return t;
  }
  return std::nullopt;
}

std::int64_t EgressPort::next_event(std::int64_t now_ns) const {
  if (now_ns < busy_until_) {
    bool any = false;
    for (int c = 0; c < config_.num_classes; ++c) any = any || !queues_[static_cast<std::size_t>(c)].empty();
    return any ? busy_until_ : kNever;
  }
  std::int64_t best = kNever;
  for (int c = 0; c < config_.num_classes; ++c) {
    const auto& q = queues_[static_cast<std::size_t>(c)];
    if (q.empty()) continue;
    if (may_start(c, now_ns)) return now_ns;
    // The next instant the head frame may start: the next opening, or, if
    // the gate is open but the window is too short, the next window.
    std::int64_t t = gates_.next_open(c, now_ns);
    const std::int64_t need = config_.length_aware ? wire_time(q.front().frame.size()) : 0;
    for (int guard = 0; guard < 64 && t != kNever; ++guard) {
      const std::int64_t close = gates_.close_time(c, t);
      if (close == kNever || t + need <= close) break;
      t = gates_.next_open(c, close);
    }
    best = std::min(best, t);
  }
  return best;
}

}  // namespace layersec::tsn
