// The secured SV subscriber's counter floor, persisted across restarts
// (sans-I/O interface; the file is sv_io/floor_file.h).
//
// A secured stream accepts a frame only if its authenticated 64-bit
// frameCounter is above every counter accepted on the stream (security.h).
// Kept in memory only, that floor dies with the process: a restarted
// subscriber would take it from the first frame it sees, so frames recorded
// before the restart and injected before the first genuine one would be
// accepted once. With a FloorStore attached (Subscriber::set_floor_store) the
// subscriber keeps, per stream, one persisted number, the **resume point**:
//
//   every frameCounter accepted on the stream is below the persisted resume
//   point (invariant, kept across crashes),
//
// by persisting a reservation before it accepts a frame at or above the
// resume point: resume = counter + reserve (a save every `reserve` frames of a
// steady publisher, as the MACsec receiver reserves PN blocks, pn_state.h). A
// restarted subscriber accepts only counters at or above the persisted resume
// point, so a kill -9 at any moment can never let it accept a counter at or
// below one it accepted before. The cost, by design: after a crash, the
// running publisher's frames between the last accepted counter and the
// reservation (at most reserve - 1 frames) are refused as replayed_counter;
// a clean shutdown (Subscriber::persist_floors) writes the exact resume point
// and loses nothing. If a save fails the frame is refused
// (DropReason::kFloorNotPersisted): fail closed.
//
// Records are keyed by the subscription (APPID, svID): the frameCounter
// continues across key changes, so the floor does too.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "layersec/base/result.h"

namespace layersec::sv {

struct FloorKey {
  std::uint16_t appid = 0;
  std::string sv_id;
  friend auto operator<=>(const FloorKey&, const FloorKey&) = default;
};

enum class FloorStoreError : std::uint8_t {
  kIo,       // the floor could not be written durably (or read)
  kCorrupt,  // the stored state does not parse: never guess a floor
};
std::string_view to_string(FloorStoreError e);

// Where a subscriber keeps its counter floors. load() is called when the
// store is attached, save() on the frame path once per reservation and at a
// clean shutdown; save() must be durable when it returns success. An
// implementation may do I/O; the subscriber does none itself.
class FloorStore {
 public:
  virtual ~FloorStore() = default;
  // The persisted resume point of `key` (the lowest frameCounter a restarted
  // subscriber may accept); nullopt when there is no record.
  [[nodiscard]] virtual Result<std::optional<std::uint64_t>, FloorStoreError> load(const FloorKey& key) = 0;
  // Records `resume`. Durable on success; on failure the stored value is
  // unchanged.
  [[nodiscard]] virtual Status<FloorStoreError> save(const FloorKey& key, std::uint64_t resume) = 0;
};

// In-memory store for tests and simulations: a "crash" is dropping the
// subscriber and building a new one on the same store.
class MemoryFloorStore final : public FloorStore {
 public:
  Result<std::optional<std::uint64_t>, FloorStoreError> load(const FloorKey& key) override;
  Status<FloorStoreError> save(const FloorKey& key, std::uint64_t resume) override;

  [[nodiscard]] std::size_t saves() const { return saves_; }
  [[nodiscard]] std::size_t size() const { return records_.size(); }
  void set_fail_saves(bool fail) { fail_saves_ = fail; }
  void set_fail_loads(bool fail) { fail_loads_ = fail; }
  void clear() { records_.clear(); }

 private:
  std::map<FloorKey, std::uint64_t> records_;
  std::size_t saves_ = 0;
  bool fail_saves_ = false;
  bool fail_loads_ = false;
};

// How Subscriber::set_floor_store treats a secured stream without a record.
enum class FloorStart : std::uint8_t {
  kResume,      // a record is required (FloorError::kMissing otherwise): a
                // deleted state file fails closed
  kFirstStart,  // the operator says this is the first start: a record at 0 is
                // written (so the next start resumes); an existing record is
                // never rewound
};

// Why Subscriber::set_floor_store refused.
enum class FloorError : std::uint8_t {
  kMissing,    // no record for a secured stream and not kFirstStart
  kStore,      // the store failed to load or to write the first record
  kCorrupt,    // the store's state is corrupt
  kBadReserve, // reserve is 0
};
std::string_view to_string(FloorError e);

// Largest reservation (frames) a subscriber accepts.
inline constexpr std::uint64_t kMaxFloorReserve = 1'000'000'000;

// resume point after accepting `counter` with reservation `reserve` (>= 1),
// saturating at 2^64-1 (the signer never uses 2^64-1, so counter < 2^64-1).
[[nodiscard]] constexpr std::uint64_t floor_reservation(std::uint64_t counter, std::uint64_t reserve) {
  return reserve > UINT64_MAX - counter ? UINT64_MAX : counter + reserve;
}

}  // namespace layersec::sv
