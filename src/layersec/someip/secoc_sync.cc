#include "layersec/someip/secoc_sync.h"

#include <algorithm>

namespace layersec::someip {

void SyncScheduler::start(TimePoint now, bool engine_attached) {
  deadline_ = engine_attached ? now : TimePoint::max();
}

bool SyncScheduler::schedule_forced(TimePoint now) {
  if (newcomers_.empty() || forced_at_) return false;
  const TimePoint at = last_forced_ ? std::max(now, *last_forced_ + kForcedSpacing) : now;
  forced_at_ = at;
  deadline_ = std::min(deadline_, at);
  return true;
}

std::optional<SyncScheduler::Due> SyncScheduler::poll(secoc::Engine& engine, TimePoint now, const Clock& freshness) {
  if (now < deadline_) return std::nullopt;
  if (buf_.size() < engine.sync_message_size()) buf_.resize(engine.sync_message_size());
  const bool forced = forced_at_ && now >= *forced_at_;
  if (forced) {
    engine.request_sync();
    last_forced_ = now;
    forced_at_.reset();
  }
  const TimePoint fnow = freshness.now();
  auto r = engine.poll(fnow, buf_);
  if (!r.ok()) {
    ++counters_.secoc_protect_failed;
    deadline_ = now + kRetry;
    return std::nullopt;
  }
  deadline_ = r->next_deadline == TimePoint::max() ? TimePoint::max() : now + (r->next_deadline - fnow);
  if (forced_at_) deadline_ = std::min(deadline_, *forced_at_);
  Due due;
  if (forced) due.newcomers.swap(newcomers_);
  due.message = ByteSpan(buf_.data(), r->sync_bytes);
  return due;
}

}  // namespace layersec::someip
