// Persistence of the freshness state that must survive a restart:
//   * the sender's trip counter (bumped and persisted before the first
//     Secured I-PDU of every start, so a Freshness Value is never reused
//     after a crash; JASPAR: "TripCnt +1 at start, written back to NVM");
//   * per sync channel the highest (trip, reset) a receiver accepted, so an
//     old sync message replayed after a receiver restart is refused.
//
// The engine sees only the StateStore interface; FileStateStore writes a
// small text file atomically (write temp, fsync, rename, fsync directory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layersec/base/result.h"

namespace layersec::secoc {

struct PersistedState {
  std::uint64_t tx_trip = 0;  // last trip counter handed to the sender (0 = never started)
  struct RxSync {
    std::uint32_t channel = 0;
    std::uint64_t trip = 0;
    std::uint64_t reset = 0;
    friend bool operator==(const RxSync&, const RxSync&) = default;
  };
  std::vector<RxSync> rx;
  friend bool operator==(const PersistedState&, const PersistedState&) = default;
};

enum class StoreError : std::uint8_t {
  kIo,       // open/write/fsync/rename failed
  kCorrupt,  // the file exists but does not parse: refuse to guess a trip counter
};

class StateStore {
 public:
  virtual ~StateStore() = default;
  // A missing state (first start) loads as PersistedState{}.
  [[nodiscard]] virtual Result<PersistedState, StoreError> load() = 0;
  // Durable when it returns success.
  [[nodiscard]] virtual Status<StoreError> save(const PersistedState& state) = 0;
};

// In-memory store for tests and simulations (a "crash" keeps its contents).
class MemoryStateStore final : public StateStore {
 public:
  Result<PersistedState, StoreError> load() override { return state_; }
  Status<StoreError> save(const PersistedState& s) override {
    if (fail_saves_) return Err(StoreError::kIo);
    state_ = s;
    ++saves_;
    return {};
  }
  [[nodiscard]] const PersistedState& state() const { return state_; }
  [[nodiscard]] int saves() const { return saves_; }
  void set_fail_saves(bool f) { fail_saves_ = f; }

 private:
  PersistedState state_;
  int saves_ = 0;
  bool fail_saves_ = false;
};

// Text file "layersec-secoc-state 1 / tx_trip N / rx CH TRIP RESET / end".
class FileStateStore final : public StateStore {
 public:
  explicit FileStateStore(std::string path) : path_(std::move(path)) {}
  Result<PersistedState, StoreError> load() override;
  // Writes path.tmp (mode 0600), fsyncs it, renames it over path and fsyncs
  // the directory.
  Status<StoreError> save(const PersistedState& state) override;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Serialisation used by FileStateStore (exposed for tests and the fuzzer).
std::string serialize_state(const PersistedState& s);
[[nodiscard]] Result<PersistedState, StoreError> parse_state(const std::string& text);

}  // namespace layersec::secoc
