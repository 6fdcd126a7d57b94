#include "layersec/someip/request_table.h"

#include <algorithm>
#include <cstring>

namespace layersec::someip {

namespace {
bool later(const std::pair<TimePoint, std::uint16_t>& a, const std::pair<TimePoint, std::uint16_t>& b) {
  return a.first > b.first;
}
}  // namespace

RequestTable::RequestTable(std::size_t capacity) : capacity_(capacity) {}

void RequestTable::allocate() {
  slots_.resize(capacity_);
  free_.reserve(capacity_);
  for (std::size_t i = capacity_; i-- > 0;) free_.push_back(static_cast<std::uint16_t>(i));
  // kNone is all ones: one byte fill (memset) of uninitialised memory, not
  // an element loop (which the fuzzing build instruments per element).
  static_assert(kNone == 0xFFFF);
  index_.reset(new std::uint16_t[kSessions]);
  std::memset(index_.get(), 0xFF, kSessions * sizeof(std::uint16_t));
  heap_.reserve(2 * capacity_ + 1);
}

const PendingRequest* RequestTable::find(std::uint16_t session) const {
  if (index_ == nullptr) return nullptr;
  const std::uint16_t i = index_[session];
  return i == kNone ? nullptr : &slots_[i];
}

std::uint16_t RequestTable::take_session() {
  std::uint16_t session = sessions_.next();
  while (contains(session)) session = sessions_.next();
  return session;
}

void RequestTable::insert(std::uint16_t session, PendingRequest p) {
  if (slots_.empty()) allocate();
  const TimePoint deadline = p.deadline;
  const std::uint16_t i = free_.back();
  free_.pop_back();
  slots_[i] = std::move(p);
  index_[session] = i;
  if (heap_.size() >= 2 * capacity_) compact();
  heap_.emplace_back(deadline, session);
  std::push_heap(heap_.begin(), heap_.end(), later);
}

// Answered requests leave stale heap entries; drop them in place so the heap
// stays within 2 x capacity (no growth, no allocation).
void RequestTable::compact() {
  heap_.erase(std::remove_if(heap_.begin(), heap_.end(),
                             [&](const Deadline& t) {
                               const PendingRequest* q = find(t.second);
                               return !q || q->deadline != t.first;
                             }),
              heap_.end());
  std::make_heap(heap_.begin(), heap_.end(), later);
}

PendingRequest RequestTable::take(std::uint16_t session) {
  const std::uint16_t i = index_[session];
  index_[session] = kNone;
  free_.push_back(i);
  PendingRequest p = std::move(slots_[i]);
  slots_[i].handler = nullptr;
  return p;
}

TimePoint RequestTable::next_deadline() const { return heap_.empty() ? TimePoint::max() : heap_.front().first; }

std::optional<std::pair<std::uint16_t, PendingRequest>> RequestTable::pop_expired(TimePoint now) {
  while (!heap_.empty() && heap_.front().first <= now) {
    const auto [deadline, session] = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    const PendingRequest* found = find(session);
    if (!found || found->deadline != deadline) continue;  // answered
    return std::make_pair(session, take(session));
  }
  return std::nullopt;
}

std::vector<std::pair<std::uint16_t, PendingRequest>> RequestTable::drain() {
  std::vector<std::pair<std::uint16_t, PendingRequest>> out;
  const std::size_t pending = size();
  out.reserve(pending);
  // Stops at the last pending session: an idle table costs nothing here.
  for (std::size_t s = 0; out.size() < pending && s < kSessions; ++s)
    if (index_[s] != kNone) out.emplace_back(static_cast<std::uint16_t>(s), take(static_cast<std::uint16_t>(s)));
  heap_.clear();
  return out;
}

}  // namespace layersec::someip
