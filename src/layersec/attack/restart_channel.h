// One secured sender -> receiver channel of the restart and recovery runners
// (restart_attacks.h, recovery_attacks.h): the real SecOC engines, MACsec
// SecYs or SV publisher/subscriber, persisted through the project's own
// state stores (secoc::FileStateStore, macsec::FilePnStore, the SV
// subscriber's sv_io::FileFloorStore; the SV publisher persists nothing),
// with simulated time. The runners sit between emit() and
// deliver(): they drop, record, replay, reorder and duplicate frames, kill
// and rebuild either end (objects destroyed without a clean shutdown: only
// what was persisted survives), delete or roll back state files.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/time.h"

namespace layersec::attack::detail {

// A frame on the wire between the two ends.
struct Wire {
  std::vector<std::uint8_t> bytes;
  bool control = false;                 // a SecOC sync message (not a data frame)
  std::uint64_t seq = 0;                // legitimate sequence number (data frames)
  std::array<std::uint64_t, 3> fv{};    // freshness identity: SecOC (trip, reset, msg) or
                                        // (timestamp, 0, 0); MACsec (PN, 0, 0); SV (frameCounter, 0, 0)
  TimePoint sent;
};

// What the receiver did with a frame.
struct Verdict {
  bool delivered = false;  // handed to the application as valid (control: accepted as new)
  std::uint64_t seq = 0;   // the sequence number of the delivered data frame
  std::string reason;      // the receiver's own counter/reason name when refused
};

struct ChannelInfo {
  std::string layer;          // "secoc", "macsec", "sv"
  std::string configuration;  // e.g. "secoc-vendor-counter"
  std::string unit;           // what must never repeat: "FV", "PN", "frameCounter"
  std::uint32_t window = 0;   // frames a data frame may arrive ahead of / behind the newest
  std::optional<Duration> sync_period;  // SecOC counter freshness: the sync period
  Duration interval;          // between two legitimate data frames
  std::string description;    // one phrase for notes
};

class Channel {
 public:
  virtual ~Channel() = default;
  [[nodiscard]] virtual const ChannelInfo& info() const = 0;
  // Builds the sender (receiver) from its state file; `first` is the first
  // provisioning (a new state file). nullopt: running; otherwise the stack's
  // own reason for refusing to start.
  virtual std::optional<std::string> start_sender(bool first) = 0;
  virtual std::optional<std::string> start_receiver(bool first) = 0;
  // Destroys it without a clean shutdown.
  virtual void kill_sender() = 0;
  virtual void kill_receiver() = 0;
  [[nodiscard]] virtual bool sender_up() const = 0;
  [[nodiscard]] virtual bool receiver_up() const = 0;
  // The state files (empty: the end persists nothing).
  [[nodiscard]] virtual std::string sender_state_path() const = 0;
  [[nodiscard]] virtual std::string receiver_state_path() const = 0;
  // Advances one frame interval and returns what the sender emits: control
  // frames first, then one data frame (nothing when the sender is down or
  // refused to send; refusals counted in send_refusals()).
  virtual std::vector<Wire> emit() = 0;
  // Time passes without traffic (a restart's downtime).
  virtual void idle(Duration d) = 0;
  // The receiver judges a copy of `w` (a refused verdict when it is down).
  virtual Verdict deliver(const Wire& w) = 0;
  // The sender learns that the receiver came back (SOME/IP: the new
  // subscription forces a SecOC sync message); no-op elsewhere.
  virtual void receiver_restarted() {}
  [[nodiscard]] virtual TimePoint now() const = 0;
  [[nodiscard]] virtual std::uint64_t send_refusals() const = 0;
};

enum class SecocFreshness : std::uint8_t { kCounter, kTimestamp };
enum class MacsecSuite : std::uint8_t { kGcmAes128, kGcmAesXpn128 };

// `state_dir` empty: in-memory stores (recovery runner); otherwise the
// state files live there. Neither end is started: call start_*().
// Throw std::runtime_error when the set-up (keys, configuration) fails.
std::unique_ptr<Channel> make_secoc_channel(SecocFreshness f, std::uint64_t seed, const std::string& state_dir);
std::unique_ptr<Channel> make_macsec_channel(MacsecSuite s, std::uint64_t seed, const std::string& state_dir);
// SV: the publisher has no state file (sender_state_path() is empty); the
// subscriber's counter floor is in `state_dir` (empty: in memory).
std::unique_ptr<Channel> make_sv_channel(std::uint64_t seed, const std::string& state_dir = {});

// A mkdtemp(3) directory (mode 0700) removed with its contents on destruction.
class TempDir {
 public:
  TempDir();  // throws std::runtime_error when mkdtemp fails
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::uint64_t mix64(std::uint64_t x);  // splitmix64 finaliser

}  // namespace layersec::attack::detail
