// The traffic driver of a netns scenario node (netns_traffic.h).
#include "layersec/harness/netns_traffic.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "layersec/net/event_loop.h"
#include "layersec/someip/runtime.h"

namespace layersec::harness {

using nlohmann::json;

namespace {

using layout::answer_method;
using layout::kEvent;
using layout::kEventgroup;
using layout::kInstance;
using layout::kService;

// From "every subscriber subscribed (and keyed)" to the first probe: time for
// the SubscribeAcks (multicast joins happen on them) and, rsa-mode-b, the last
// ConfirmAck (the client installs the key on it) to arrive, as the testbed
// waits after service discovery.
constexpr Duration kGroupSettle = Duration::milliseconds(50);
// Longest the loop sleeps before looking at `stop` again.
constexpr Duration kStopPoll = Duration::milliseconds(20);

// Payload flags (byte 12).
constexpr std::uint8_t kFlagProbe = 0x01;
constexpr std::uint8_t kFlagWarmup = 0x02;
constexpr std::uint8_t kFlagMeasured = 0x04;  // closed loop, measured iteration
constexpr std::uint8_t kFlagRate = 0x08;      // rate phase
constexpr std::size_t kPayloadHeader = 13;    // u32 sequence, u64 time, u8 flags

std::int64_t cpu_ns_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// --- payload ------------------------------------------------------------------

struct PayloadHeader {
  std::uint32_t sequence = 0;
  std::int64_t time_ns = 0;  // event: send time; answer: the subscriber's receive time
  std::uint8_t flags = 0;
};

void write_payload_header(std::vector<std::uint8_t>& p, const PayloadHeader& h) {
  ByteWriter w(MutableByteSpan(p.data(), kPayloadHeader));
  const bool ok = w.u32(h.sequence) && w.u64(static_cast<std::uint64_t>(h.time_ns)) && w.u8(h.flags);
  (void)ok;  // p.size() >= kMinPayload > kPayloadHeader: cannot fail
}

std::optional<PayloadHeader> read_payload_header(ByteSpan p) {
  if (p.size() < kPayloadHeader) return std::nullopt;
  ByteReader r(p.first(kPayloadHeader));
  PayloadHeader h;
  h.sequence = r.u32();
  h.time_ns = static_cast<std::int64_t>(r.u64());
  h.flags = r.u8();
  if (!r.ok()) return std::nullopt;
  return h;
}

using CostSnapshot = NetnsTraffic::CostSnapshot;

void apply_costs(NetnsNodeReport& r, const CostSnapshot& a, const CostSnapshot& b) {
  r.cpu_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.cpu_ns - a.cpu_ns));
  r.wall_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.wall_ns - a.wall_ns));
  r.secoc_protect_ns = b.protect_ns - a.protect_ns;
  r.secoc_verify_ns = b.verify_ns - a.verify_ns;
  r.secoc_protected = b.protected_ - a.protected_;
  r.secoc_verified = b.verified - a.verified;
}

}  // namespace

// The publisher's phases.
enum class NetnsTraffic::Phase : std::uint8_t {
  kWaitingForGroup,  // subscriptions (and keys) not complete yet
  kProbing,          // a readiness probe is in flight
  kWarmup,           // closed loop, not recorded
  kMeasuring,        // closed loop, recorded
  kRate,             // rate phase (timer driven)
  kDone,
};

NetnsTraffic::NetnsTraffic(const NetnsNodeSpec& spec, someip::Runtime& runtime, net::EventLoop& loop,
                           const std::atomic<bool>& stop, NetnsNodeReport& report, NetnsTrafficHooks hooks)
    : spec_(spec), runtime_(runtime), loop_(loop), stop_(stop), report_(report), hooks_(std::move(hooks)) {}

void NetnsTraffic::install_handlers() {
  runtime_.on_rejection([this](const someip::SecurityRejection& r) {
    const std::string key = std::string(secoc::to_string(r.reason)) + (r.sd ? "/sd" : "");
    rejection_reasons_[key] = rejection_reasons_.value(key, 0) + 1;
  });
  payload_.assign(spec_.payload_bytes, 0);
  if (spec_.role == "publisher") {
    answered_.assign(static_cast<std::size_t>(spec_.subscribers), false);
    for (int i = 0; i < spec_.subscribers; ++i) {
      auto st = runtime_.set_method_handler(kService, kInstance, answer_method(i),
                                             [this, i](const someip::Request& req, someip::Reply&) {
                                               on_answer(i, req.payload);
                                             });
      if (!st.ok()) fail("answer handler: " + std::string(someip::to_string(st.error())));
    }
  } else {
    runtime_.on_event(kService, kEvent, [this](const someip::Notification& n) { on_event(n.payload); });
  }
}

// Runs the loop once, waking no later than `deadline` nor kStopPoll from now.
void NetnsTraffic::turn(TimePoint deadline) {
  const TimePoint cap = loop_.now() + kStopPoll;
  loop_.run_once(std::min(deadline, cap));
}

NetnsTraffic::CostSnapshot NetnsTraffic::snapshot() const {
  const auto& c = runtime_.counters();
  return {cpu_ns_now(), monotonic_now_ns(), c.secoc_protect_ns, c.secoc_verify_ns, c.secoc_protected, c.secoc_verified};
}

// --- publisher ------------------------------------------------------------------

bool NetnsTraffic::group_ready() {
  const auto n = static_cast<std::size_t>(spec_.subscribers);
  if (runtime_.subscriber_count(kService, kInstance, kEventgroup) != n) return false;
  return !hooks_.group_keyed || hooks_.group_keyed();
}

// Sends one closed-loop event; false when the runtime refused it.
bool NetnsTraffic::send_iteration(std::uint8_t flags) {
  ++sequence_;
  std::fill(answered_.begin(), answered_.end(), false);
  answers_ = 0;
  last_one_way_ = 0;
  in_flight_ = true;
  const std::int64_t t = monotonic_now_ns();
  t_send_ = t;
  write_payload_header(payload_, {sequence_, t, flags});
  iteration_deadline_ = loop_.now() + spec_.timeout;
  if (!runtime_.notify(kService, kInstance, kEvent, payload_).ok()) {
    ++notify_failures_;
    return false;
  }
  return true;
}

void NetnsTraffic::on_answer(int i, ByteSpan payload) {
  auto h = read_payload_header(payload);
  if (!h || !in_flight_ || h->sequence != sequence_) return;
  auto idx = static_cast<std::size_t>(i);
  if (answered_[idx]) return;
  answered_[idx] = true;
  last_one_way_ = std::max(last_one_way_, h->time_ns - t_send_);
  if (++answers_ == spec_.subscribers) {
    t_done_ = monotonic_now_ns();
    in_flight_ = false;
    iteration_complete_ = true;
  }
}

void NetnsTraffic::run_publisher(std::int64_t started_ns) {
  const TimePoint ready_deadline = loop_.now() + spec_.ready_timeout;
  Phase phase = Phase::kWaitingForGroup;
  TimePoint group_ready_at = TimePoint::max();  // max: not all subscribed (and keyed) yet
  TimePoint next_start = loop_.now();
  bool pacing = false;     // closed loop: waiting for next_start
  bool measuring = false;  // the measured phase has begun (costs snapshot taken)
  int warmup_left = spec_.warmup;
  int measured_left = spec_.iterations;
  CostSnapshot cost_start;

  while (phase != Phase::kDone) {
    if (stopping()) fail("stopped before the publisher's phase ended");
    switch (phase) {
      case Phase::kWaitingForGroup: {
        const TimePoint now = loop_.now();
        if (now >= ready_deadline) fail(not_ready_reason());
        if (!group_ready()) {
          group_ready_at = TimePoint::max();
          turn(now + Duration::milliseconds(2));
          break;
        }
        if (group_ready_at == TimePoint::max()) group_ready_at = now;
        if (now - group_ready_at < kGroupSettle) {
          turn(group_ready_at + kGroupSettle);
          break;
        }
        ++report_.ready_probes;
        (void)send_iteration(kFlagProbe);
        phase = Phase::kProbing;
        break;
      }
      case Phase::kProbing: {
        if (iteration_complete_) {
          iteration_complete_ = false;
          report_.ready_ns = monotonic_now_ns() - started_ns;
          if (spec_.mode == "rate") {
            start_rate_phase();
            phase = Phase::kRate;
          } else if (warmup_left == 0 && measured_left == 0) {
            phase = Phase::kDone;
          } else {
            phase = warmup_left > 0 ? Phase::kWarmup : Phase::kMeasuring;
            pacing = true;
            next_start = loop_.now() + spec_.pacing;
          }
          break;
        }
        const TimePoint now = loop_.now();
        if (now >= iteration_deadline_) {
          in_flight_ = false;
          if (now >= ready_deadline) fail(not_ready_reason());
          phase = Phase::kWaitingForGroup;
          break;
        }
        turn(iteration_deadline_);
        break;
      }
      case Phase::kWarmup:
      case Phase::kMeasuring: {
        const bool measured = phase == Phase::kMeasuring;
        if (pacing) {
          if (loop_.now() < next_start) {
            turn(next_start);
            break;
          }
          pacing = false;
          if (measured && !measuring) {
            measuring = true;
            cost_start = snapshot();
          }
          // A refused notify is not retried: the iteration times out.
          (void)send_iteration(measured ? kFlagMeasured : kFlagWarmup);
          break;
        }
        if (iteration_complete_) {
          iteration_complete_ = false;
          if (measured) {
            report_.half_rtt_ns.push_back((t_done_ - t_send_) / 2);
            report_.one_way_ns.push_back(last_one_way_);
            ++report_.iterations_completed;
          }
        } else if (loop_.now() >= iteration_deadline_) {
          in_flight_ = false;
          if (measured) ++report_.timeouts;
        } else {
          turn(iteration_deadline_);
          break;
        }
        if (!measured) {
          if (--warmup_left == 0) phase = Phase::kMeasuring;
        } else if (--measured_left == 0) {
          apply_costs(report_, cost_start, snapshot());
          phase = Phase::kDone;
          break;
        }
        if (phase == Phase::kMeasuring && measured_left == 0) {
          phase = Phase::kDone;  // warm-up only
          break;
        }
        pacing = true;
        next_start = loop_.now() + spec_.pacing;
        break;
      }
      case Phase::kRate:
        if (rate_done_) {
          phase = Phase::kDone;
          break;
        }
        turn(TimePoint::max());
        break;
      case Phase::kDone:
        break;
    }
  }
  // Let the last datagrams leave before the runtime stops.
  const TimePoint linger = loop_.now() + Duration::milliseconds(20);
  while (loop_.now() < linger) loop_.run_once(linger);
}

std::string NetnsTraffic::not_ready_reason() const {
  const auto n = static_cast<std::size_t>(spec_.subscribers);
  std::string why = "not ready within ready_timeout (" + std::to_string(spec_.ready_timeout.ms()) + " ms): " +
                    std::to_string(runtime_.subscriber_count(kService, kInstance, kEventgroup)) + " of " +
                    std::to_string(n) + " subscribed";
  if (hooks_.keying_status) why += hooks_.keying_status();
  why += ", " + std::to_string(report_.ready_probes) + " probes, none answered by every subscriber";
  if (report_.ready_probes > 0) {
    std::string missing;
    for (std::size_t i = 0; i < answered_.size(); ++i)
      if (!answered_[i]) missing += (missing.empty() ? "" : ",") + std::to_string(i);
    why += " (last probe unanswered by subscriber " + missing + ")";
  }
  return why;
}

void NetnsTraffic::start_rate_phase() {
  rate_t0_ = loop_.now();
  rate_index_ = 0;
  rate_cost_start_ = snapshot();
  schedule_rate();
}

TimePoint NetnsTraffic::rate_deadline(std::uint64_t k) const {
  return rate_t0_ + Duration::nanoseconds(std::llround(static_cast<double>(k) * 1e9 / spec_.rate_hz));
}

// Absolute deadlines: event k is due at t0 + k / rate; a late loop sends
// every event already due before it sleeps again.
void NetnsTraffic::schedule_rate() {
  loop_.add_timer(rate_deadline(rate_index_), [this] {
    const TimePoint end = rate_t0_ + spec_.rate_duration;
    TimePoint now = loop_.now();
    while (rate_deadline(rate_index_) < end && rate_deadline(rate_index_) <= now) {
      write_payload_header(payload_, {static_cast<std::uint32_t>(rate_index_), monotonic_now_ns(), kFlagRate});
      if (runtime_.notify(kService, kInstance, kEvent, payload_).ok()) {
        ++report_.sent;
      } else {
        ++notify_failures_;
      }
      ++rate_index_;
      now = loop_.now();
    }
    if (rate_deadline(rate_index_) < end) {
      schedule_rate();
      return;
    }
    const TimePoint finished = loop_.now();
    apply_costs(report_, rate_cost_start_, snapshot());
    const double wall_s = std::max((finished - rate_t0_).s(), spec_.rate_duration.s());
    report_.achieved_rate_hz = wall_s > 0 ? static_cast<double>(report_.sent) / wall_s : 0;
    rate_done_ = true;
  });
}

// --- subscriber -----------------------------------------------------------------

void NetnsTraffic::on_event(ByteSpan payload) {
  auto h = read_payload_header(payload);
  if (!h) return;
  const std::int64_t t_rx = monotonic_now_ns();
  if (h->flags & kFlagRate) {
    ++report_.received;
    max_rate_sequence_ = std::max<std::int64_t>(max_rate_sequence_, h->sequence);
    report_.one_way_ns.push_back(t_rx - h->time_ns);
    if (!measured_seen_) {
      measured_seen_ = true;
      cost_start_ = cost_base_;
    }
    cost_end_ = snapshot();
    return;
  }
  // Closed loop: answer with our receive time (same size as the event).
  answer_.assign(payload.begin(), payload.end());
  write_payload_header(answer_, {h->sequence, t_rx, h->flags});
  if (!runtime_.fire_and_forget(kService, kInstance, answer_method(spec_.index), answer_).ok()) ++notify_failures_;
  if (h->flags & kFlagMeasured) {
    report_.one_way_ns.push_back(t_rx - h->time_ns);
    if (!measured_seen_) {
      measured_seen_ = true;
      cost_start_ = cost_base_;
    }
    cost_end_ = snapshot();
  } else {
    cost_base_ = snapshot();
  }
}

void NetnsTraffic::run_subscriber() {
  cost_base_ = snapshot();
  while (!stopping()) {
    if (hooks_.before_turn) hooks_.before_turn();
    turn(loop_.now() + kStopPoll);
  }
  if (measured_seen_) apply_costs(report_, cost_start_, cost_end_);
  if (report_.received > 0) {
    const auto expected = static_cast<std::uint64_t>(max_rate_sequence_ + 1);
    report_.lost = expected > report_.received ? expected - report_.received : 0;
  }
}

}  // namespace layersec::harness
