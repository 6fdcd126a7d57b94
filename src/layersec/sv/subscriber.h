// Sans-I/O SV subscriber with stream supervision and per-stream security.
//
// on_frame(bytes, now) runs, in this order (parse, then act):
//   1. decode_frame(): any malformation -> dropped, counted by DecodeError
//   2. APPID lookup -> unknown APPID dropped and counted
//   3. structure: noASDU and the dataset size must match the subscription
//   4. secured streams: tag verification (bad tag, unknown key, missing or
//      malformed extension -> dropped and counted); unsecured streams drop
//      frames that carry an extension they cannot check
//   5. smpCnt: in range and consecutive inside the frame; across frames gaps
//      are counted (frame delivered). Unsecured streams drop duplicate and
//      stale smpCnt. Secured streams do not use smpCnt as replay protection:
//      step 4 already refused every frame whose frameCounter is not above
//      the stream's floor (counted as replays), so a fresh frame whose smpCnt
//      went backwards (a restarted publisher) resynchronises supervision
//      (counted in smp_cnt_resyncs) and is delivered
//   6. field-selective scheme: APPID, svID, noASDU, confRev, smpSynch compared
//      with the cached copy (only now, after the MAC verified, as in the paper)
//      -> mismatches dropped; other schemes: svID must match, confRev changes
//      dropped and counted
//   7. Simulate bit: dropped and counted unless the subscription accepts
//      simulated frames (IEC 61850-7-4 LPHD.Sim)
//   8. with a FloorStore (floor_store.h) and a frameCounter at or above the
//      stream's persisted resume point: the next reservation is saved first;
//      a failed save drops the frame (kFloorNotPersisted, fail closed)
//   9. only now does state change: counter floor, smpCnt window, key epoch,
//      cached invariants, last-arrival time; the frame is delivered. A
//      rejected frame (a replay among them) changes nothing but a counter.
//
// poll(now) detects stream timeouts (no valid frame for `timeout`); time is
// passed in, never read. A timeout restarts smpCnt supervision of unsecured
// streams; secured streams keep their counter floor for the life of the
// subscription (and, with a FloorStore, across restarts: a restarted
// subscriber resumes at the persisted reservation, so frames recorded before
// the restart stay refused). The Frame returned by a delivery views the caller's bytes
// and stays valid until the next on_frame() call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/sv/floor_store.h"
#include "layersec/sv/frame.h"
#include "layersec/sv/replay.h"
#include "layersec/sv/security.h"

namespace layersec::sv {

struct SubscriptionConfig {
  std::uint16_t appid = 0x4000;
  std::string sv_id = "LAYERSEC01";
  std::optional<std::uint32_t> conf_rev;  // expected; learnt from the first frame when unset
  std::size_t asdus_per_frame = 1;
  std::size_t seq_data_size = 64;         // dataset bytes per ASDU (4I+4U: 64)
  // Where the publisher wraps smpCnt (1..65536, at least asdus_per_frame);
  // usually Profile::smp_cnt_wrap(), set otherwise to follow a publisher
  // that wraps elsewhere (e.g. 48000 or 65536 at 96 kHz).
  std::uint32_t smp_cnt_wrap = 4000;
  Duration timeout = Duration::milliseconds(10);
  bool accept_simulated = false;
  SecurityConfig security;
};

// Why a frame was dropped.
enum class DropReason : std::uint8_t {
  kMalformed,          // decode_frame() failed (see Subscriber::malformed())
  kUnknownAppId,
  kWrongNoAsdu,
  kWrongDataset,       // sample data size differs from the subscription
  kUnexpectedExtension,// unsecured subscription, frame carries an extension
  kSecurity,           // tag/extension/key failure (see StreamCounters)
  kBadSmpCnt,          // smpCnt out of range or not consecutive inside the frame
  kDuplicate,
  kStale,
  kInvariantMismatch,  // selective scheme: cached invariant differs
  kWrongSvId,
  kConfRevMismatch,
  kSimulated,
  kFloorNotPersisted,  // verified, but the FloorStore could not save the counter floor's reservation
};
std::string_view to_string(DropReason r);

struct StreamCounters {
  std::uint64_t received = 0;       // frames with this stream's APPID
  std::uint64_t delivered = 0;
  std::uint64_t gaps = 0;           // frames that followed lost samples
  std::uint64_t missing_samples = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t stale = 0;
  std::uint64_t replays = 0;        // secured stream: frames refused as replays (replayed_counter)
  std::uint64_t bad_tag = 0;
  std::uint64_t unknown_key = 0;
  std::uint64_t bad_extension = 0;  // missing, malformed or wrong algorithm
  std::uint64_t replayed_counter = 0;  // frameCounter not above the stream's floor
  std::uint64_t smp_cnt_resyncs = 0;   // secured: fresh frame, smpCnt behind (publisher restart)
  std::uint64_t unexpected_extension = 0;
  std::uint64_t wrong_no_asdu = 0;
  std::uint64_t wrong_dataset = 0;
  std::uint64_t bad_smp_cnt = 0;
  std::uint64_t invariant_mismatch = 0;
  std::uint64_t wrong_sv_id = 0;
  std::uint64_t conf_rev_changes = 0;
  std::uint64_t simulated = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t key_changes = 0;
  std::uint64_t floor_not_persisted = 0;  // FloorStore: verified, refused because the reservation failed
  std::uint64_t floor_saves = 0;          // FloorStore: reservations saved on the frame path
};

struct Delivery {
  std::size_t stream = 0;
  const Frame* frame = nullptr;
  std::uint32_t missing_samples = 0;  // lost before this frame
};

class Subscriber {
 public:
  Subscriber() = default;

  // Adds a stream; returns its index. Throws std::invalid_argument when the
  // APPID is taken or the security configuration/key is unusable.
  std::size_t add_stream(const SubscriptionConfig& config, std::optional<KeyMaterial> key = std::nullopt);
  // Announces a stream's next group key (rollover).
  Status<SecurityError> set_next_key(std::size_t stream, KeyMaterial key);

  // Persists the counter floor of every secured stream added so far in
  // `store` (not owned; it must outlive the subscriber), reserving `reserve`
  // (1..kMaxFloorReserve) frameCounters ahead (floor_store.h). Loads each
  // stream's resume point now and refuses frames below it. A secured stream
  // without a record is kMissing unless `start` is kFirstStart, which writes
  // a record at 0. On an error nothing is attached. Streams added afterwards
  // are refused (add_stream throws std::logic_error); call it once.
  Status<FloorError> set_floor_store(FloorStore* store, std::uint64_t reserve, FloorStart start);
  // Clean shutdown: saves each secured stream's exact resume point (the last
  // accepted frameCounter + 1) where it is below the reservation, so a clean
  // restart loses no genuine frame. kIo if any save failed (the reservation
  // then stays in force, which keeps the invariant).
  Status<FloorStoreError> persist_floors();
  // The stream's persisted resume point (nullopt without a store or unsecured).
  [[nodiscard]] std::optional<std::uint64_t> persisted_floor(std::size_t stream) const {
    return streams_[stream].resume;
  }

  Result<Delivery, DropReason> on_frame(ByteSpan frame, TimePoint now);
  // Marks streams whose last valid frame is older than their timeout.
  // Returns the number of streams that timed out in this call.
  std::size_t poll(TimePoint now);
  // Earliest time poll() could report a timeout (TimePoint::max() if none).
  [[nodiscard]] TimePoint next_timeout() const;

  [[nodiscard]] std::size_t stream_count() const { return streams_.size(); }
  [[nodiscard]] const StreamCounters& counters(std::size_t stream) const { return streams_[stream].counters; }
  [[nodiscard]] const SubscriptionConfig& config(std::size_t stream) const { return streams_[stream].config; }
  [[nodiscard]] bool timed_out(std::size_t stream) const { return streams_[stream].timed_out; }
  [[nodiscard]] std::uint64_t malformed(DecodeError e) const { return malformed_[static_cast<std::size_t>(e)]; }
  [[nodiscard]] std::uint64_t malformed_total() const;
  [[nodiscard]] std::uint64_t unknown_appid() const { return unknown_appid_; }

 private:
  struct Invariants {
    bool valid = false;
    std::array<std::uint8_t, kMaxIdentifierBytes> sv_id{};
    std::size_t sv_id_len = 0;
    std::uint16_t no_asdu = 0;
    std::uint32_t conf_rev = 0;
    std::uint8_t smp_synch = 0;
  };
  struct Stream {
    SubscriptionConfig config;
    std::optional<FrameVerifier> verifier;
    FloorKey floor_key;
    std::optional<std::uint64_t> resume;  // persisted resume point (with a FloorStore)
    SmpCntWindow window;
    Invariants cache;
    std::optional<std::uint32_t> conf_rev;
    bool active = false;
    bool timed_out = false;
    TimePoint last_rx;
    StreamCounters counters;
  };
  Result<Delivery, DropReason> drop(Stream& s, DropReason r);
  std::vector<Stream> streams_;
  std::array<std::uint64_t, kDecodeErrorCount> malformed_{};
  std::uint64_t unknown_appid_ = 0;
  FloorStore* floor_store_ = nullptr;
  std::uint64_t floor_reserve_ = 1;
  Frame last_;
};

}  // namespace layersec::sv
