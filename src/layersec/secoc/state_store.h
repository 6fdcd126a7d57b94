// Persistence of the freshness state that must survive a restart:
//   * the sender's trip counter (bumped and persisted before the first
//     Secured I-PDU of every start, so a Freshness Value is never reused
//     after a crash; JASPAR: "TripCnt +1 at start, written back to NVM");
//   * per sync channel the highest (trip, reset) a receiver accepted, so an
//     old sync message replayed after a receiver restart is refused.
//
// The engine sees only the StateStore interface; FileStateStore writes a
// small text file atomically (write temp, fsync, rename, fsync directory).
//
// A missing state is StoreError::kMissing, never an empty state: a deleted
// file must not restart the trip counter (Engine::start refuses it unless
// StartOptions::first_start says this is the first provisioning).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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
  kIo,       // open/write/fsync/rename failed, or the file is not ours (symlink, mode, owner)
  kCorrupt,  // the file exists but does not parse: refuse to guess a trip counter
  kMissing,  // no state yet (first start) or deleted
};
std::string_view to_string(StoreError e);

class StateStore {
 public:
  virtual ~StateStore() = default;
  // A missing state is kMissing (see above).
  [[nodiscard]] virtual Result<PersistedState, StoreError> load() = 0;
  // Durable when it returns success.
  [[nodiscard]] virtual Status<StoreError> save(const PersistedState& state) = 0;
};

// In-memory store for tests and simulations (a "crash" keeps its contents).
// It starts provisioned with an empty state; set_missing(true) makes it
// behave like a deleted state file until the next save.
class MemoryStateStore final : public StateStore {
 public:
  Result<PersistedState, StoreError> load() override {
    if (missing_) return Err(StoreError::kMissing);
    return state_;
  }
  Status<StoreError> save(const PersistedState& s) override {
    if (fail_saves_) return Err(StoreError::kIo);
    state_ = s;
    missing_ = false;
    ++saves_;
    return {};
  }
  void set_missing(bool m) { missing_ = m; }
  [[nodiscard]] const PersistedState& state() const { return state_; }
  [[nodiscard]] int saves() const { return saves_; }
  void set_fail_saves(bool f) { fail_saves_ = f; }

 private:
  PersistedState state_;
  int saves_ = 0;
  bool fail_saves_ = false;
  bool missing_ = false;
};

// Text file "layersec-secoc-state 1 / tx_trip N / rx CH TRIP RESET / end".
// load() reads it with base/keyfile.h's checks and refuses (kIo, with
// last_error() saying why) a symlink, a non-regular file, a file with
// group/other permission bits, one owned by another user or one in a
// directory others can write; ENOENT is kMissing.
// I/O adapter: defined in file_state_store.cc (library secoc_io).
class FileStateStore final : public StateStore {
 public:
  explicit FileStateStore(std::string path) : path_(std::move(path)) {}
  Result<PersistedState, StoreError> load() override;
  // Writes a new temp file in the same directory (mkostemp: unpredictable
  // name, O_EXCL, mode 0600, so a planted file or symlink is never written
  // through), fsyncs it, renames it over path and fsyncs the directory.
  Status<StoreError> save(const PersistedState& state) override;
  [[nodiscard]] const std::string& path() const { return path_; }
  // The reason of the last failed load()/save(), naming the path.
  [[nodiscard]] const std::string& last_error() const { return last_error_; }

 private:
  Status<StoreError> fail(StoreError e, const std::string& why);
  std::string path_;
  std::string last_error_;
};

// Serialisation used by FileStateStore (exposed for tests and the fuzzer).
std::string serialize_state(const PersistedState& s);
[[nodiscard]] Result<PersistedState, StoreError> parse_state(const std::string& text);

}  // namespace layersec::secoc
