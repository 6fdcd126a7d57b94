// SyncScheduler: when a runtime polls its SecOC engine (the engine's
// start-up and periodic sync messages, key expiry), and the forced new reset
// cycles that new subscribers of the sync eventgroup start.
//
// A new subscriber (maybe a restarted receiver) must not be sent the cached
// latest sync message: it may have accepted that cycle before its restart and
// must not resume inside it. Instead the runtime collects such subscribers
// during an SD step (add_newcomer) and, at the end of the step, asks for a
// new cycle (schedule_forced). Forced cycles are at most one per
// kForcedSpacing, so a unicast copy to a newcomer is not overtaken by the
// next forced cycle's multicast, and subscriptions cannot burn reset counters
// faster than that. Sans-I/O: times come in; the runtime sends the message.
#pragma once

#include <optional>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/time.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/address.h"
#include "layersec/someip/runtime_types.h"

namespace layersec::someip {

class SyncScheduler {
 public:
  static constexpr Duration kForcedSpacing = Duration::milliseconds(20);
  // After a failed poll (freshness exhausted, state store failed).
  static constexpr Duration kRetry = Duration::milliseconds(100);

  // What a due poll produced.
  struct Due {
    ByteSpan message;                 // sync message to notify (empty: none); valid until the next poll
    std::vector<Endpoint> newcomers;  // forced cycle: subscribers that also get a unicast copy
  };

  // `counters` (the runtime's) is not owned.
  explicit SyncScheduler(RuntimeCounters& counters) : counters_(counters) {}

  // Runtime start: with an engine, a poll is due at once (its start-up sync);
  // without one, never.
  void start(TimePoint now, bool engine_attached);
  // A new subscriber of the sync eventgroup at `subscriber` (its UDP endpoint).
  void add_newcomer(const Endpoint& subscriber) { newcomers_.push_back(subscriber); }
  // End of an SD step: with newcomers and no forced cycle pending, schedules
  // one at `now`, or kForcedSpacing after the last forced one. True when it
  // did (a poll may be due now).
  bool schedule_forced(TimePoint now);
  // When the runtime must call poll() next (TimePoint::max(): never).
  [[nodiscard]] TimePoint deadline() const { return deadline_; }

  // When due at runtime time `now`: starts the forced cycle if one is due,
  // polls `engine` on `freshness`, and moves the deadline to the engine's
  // next one (translated to runtime time) or the next forced cycle. nullopt
  // when not due or when the poll failed (counted as secoc_protect_failed;
  // retried kRetry later).
  [[nodiscard]] std::optional<Due> poll(secoc::Engine& engine, TimePoint now, const Clock& freshness);

 private:
  RuntimeCounters& counters_;
  TimePoint deadline_ = TimePoint::max();
  std::vector<Endpoint> newcomers_;
  std::optional<TimePoint> forced_at_;    // runtime time of the next forced cycle
  std::optional<TimePoint> last_forced_;  // runtime time of the last one
  std::vector<std::uint8_t> buf_;
};

}  // namespace layersec::someip
