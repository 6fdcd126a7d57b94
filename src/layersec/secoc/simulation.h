// A sender and a receiver engine joined by a simulated link, with simulated
// time; for tests, the fuzzer, the benchmark and the resynchronisation
// measurement. No clock, no I/O: time is a TimePoint the caller advances.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "layersec/secoc/engine.h"

namespace layersec::secoc {

struct LinkOptions {
  PduProfile profile = PduProfile::vendor();
  FreshnessMode mode = FreshnessMode::kStrict;
  std::uint32_t window = kDefaultWindow;  // capped to what the profile can disambiguate
  std::uint8_t verify_attempts = 1;
  Duration sync_period = Duration::seconds(1);
  std::uint16_t pdu_data_id = 0x0100;
  std::uint16_t sync_data_id = 0xFF00;
};

// The configurations a LinkOptions stands for: tx PDU 0 / rx PDU 0, key group
// 0 ("pdu", the profile's algorithm) and 1 ("sync", CMAC-AES-128), sync
// channel 0.
EngineConfig link_sender_config(const LinkOptions& o);
EngineConfig link_receiver_config(const LinkOptions& o);
// Deterministic test key of the right size for `a`, distinct per key id.
SecretBytes test_key(AuthAlgorithm a, std::uint32_t key_id);

class SimulatedLink {
 public:
  // Starts both engines (memory stores), installs key id 1 in both groups
  // and delivers the start-up sync message.
  explicit SimulatedLink(const LinkOptions& o);

  Engine& sender() { return *tx_; }
  Engine& receiver() { return *rx_; }
  MemoryStateStore& sender_store() { return tx_store_; }
  [[nodiscard]] TimePoint now() const { return now_; }

  // Advances time; a sync message that falls due is delivered to the
  // receiver if `deliver_sync`, else dropped. Returns the number of sync
  // messages emitted.
  int advance(Duration d, bool deliver_sync = true);
  // Protects `payload` as the next PDU; returns the Secured I-PDU.
  [[nodiscard]] std::vector<std::uint8_t> send(ByteSpan payload);
  // Verifies `secured` at the receiver; the Authentic I-PDU lands in out.
  [[nodiscard]] Result<std::size_t, Rejection> receive(ByteSpan secured, std::vector<std::uint8_t>& out);
  // Restarts the sender from its store (a crash: no state is flushed).
  void restart_sender();

 private:
  LinkOptions o_;
  MemoryStateStore tx_store_;
  MemoryStateStore rx_store_;
  std::unique_ptr<Engine> tx_;
  std::unique_ptr<Engine> rx_;
  TimePoint now_;
  std::vector<std::uint8_t> sync_buf_;
};

struct ResyncReport {
  int trials = 0;
  int recovered = 0;
  Duration min = Duration::infinite();
  Duration max = Duration::zero();
  Duration mean = Duration::zero();
  std::uint64_t rejected_after_burst = 0;  // legitimate PDUs dropped while out of sync
};

// Burst loss larger than W: in each trial the link runs for a few sync
// periods, then `burst` consecutive PDUs are lost (burst starting at a
// different phase of the sync period in every trial). Resynchronisation time
// = time of the first PDU accepted after the burst minus the send time of the
// first PDU after the burst (0 if that one is accepted). Simulated time only.
ResyncReport measure_burst_resync(const LinkOptions& o, Duration pdu_interval, std::uint32_t burst,
                                  int trials);

}  // namespace layersec::secoc
