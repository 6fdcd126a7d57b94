// The client side's table of requests waiting for an answer: session ids,
// fixed slots for the pending calls, and a deadline heap for their timeouts.
// Sans-I/O: time comes in as `now`; nothing here runs a handler.
//
// Issuing, answering and expiring a request allocate nothing: slots are
// reserved for `capacity` calls up front, a 65,536-entry index maps a session
// id to its slot (128 KiB), and the deadline heap is compacted in place when
// answered requests have left it 2 x capacity entries long.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/someip/address.h"
#include "layersec/someip/runtime_types.h"

namespace layersec::someip {

// SOME/IP session ids: 1, 2, ..., 0xFFFF, 1, ... (never 0; feat_req_someip_649).
class SessionCounter {
 public:
  // The next session id.
  std::uint16_t next() {
    if (next_ == 0) next_ = 1;
    const std::uint16_t s = next_;
    next_ = next_ == 0xFFFF ? 1 : static_cast<std::uint16_t>(next_ + 1);
    return s;
  }

 private:
  std::uint16_t next_ = 1;
};

// A request sent and not answered yet.
struct PendingRequest {
  std::uint16_t service = 0;
  std::uint16_t instance = 0;
  std::uint16_t method = 0;
  Endpoint to;          // where it went: only an answer from there matches
  TimePoint deadline;
  ResponseHandler handler;
};

class RequestTable {
 public:
  // Room for `capacity` pending requests (1..32768).
  explicit RequestTable(std::size_t capacity);

  [[nodiscard]] std::size_t size() const { return slots_.size() - free_.size(); }
  [[nodiscard]] bool full() const { return !slots_.empty() && free_.empty(); }
  [[nodiscard]] bool contains(std::uint16_t session) const { return index_ != nullptr && index_[session] != kNone; }
  // The pending request of `session`, or null.
  [[nodiscard]] const PendingRequest* find(std::uint16_t session) const;

  // A session id for a new request: the next one that is not pending. Needs
  // !full() to be sure to end (fewer than 65,535 pending).
  [[nodiscard]] std::uint16_t take_session();
  // Records a request and its deadline. Precondition: !full(), !contains(session).
  void insert(std::uint16_t session, PendingRequest p);
  // Removes and returns the request (answered). Precondition: contains(session).
  PendingRequest take(std::uint16_t session);

  // The earliest deadline in the heap (may be an answered request's: waking
  // then finds nothing to expire), or TimePoint::max().
  [[nodiscard]] TimePoint next_deadline() const;
  // Removes and returns one request whose deadline is at or before `now`,
  // earliest first; nullopt when none is due. Call until nullopt.
  std::optional<std::pair<std::uint16_t, PendingRequest>> pop_expired(TimePoint now);
  // Removes every pending request, in session order (runtime stop).
  std::vector<std::pair<std::uint16_t, PendingRequest>> drain();

 private:
  static constexpr std::uint16_t kNone = 0xFFFF;
  static constexpr std::size_t kSessions = std::size_t{1} << 16;
  using Deadline = std::pair<TimePoint, std::uint16_t>;
  // The table's memory (the 64 Ki session index, the slots, the heap) is
  // taken by the first insert, so a runtime that never calls (a server)
  // does not pay for it; after that nothing grows or allocates.
  void allocate();
  void compact();

  std::size_t capacity_;
  std::vector<PendingRequest> slots_;
  std::vector<std::uint16_t> free_;
  std::unique_ptr<std::uint16_t[]> index_;  // slot of each session id (kNone: none); 64 Ki entries once allocated
  std::vector<Deadline> heap_;  // min-heap by deadline
  SessionCounter sessions_;
};

}  // namespace layersec::someip
