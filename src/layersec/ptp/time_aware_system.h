// A gPTP time-aware system (802.1AS-2020 §10): an end station (one port) or
// a relay (several ports), as GM, slave or relay, sans-I/O.
//
// The caller owns the links and the local clock: it passes every received
// message with its RX timestamp and every transmitted event message's TX
// timestamp (both on the local free-running time line), calls on_timer() at
// next_deadline(), and sends what output() holds (then clear_output()).
// Nothing here reads a clock or touches a socket.
//
// Per port: a peer-delay initiator and responder (peer_delay.h) and a role.
//  - Slave port: a Sync is held until its Follow_Up; then the grandmaster's
//    time at the Sync's receipt is
//      preciseOriginTimestamp + correction(Sync + Follow_Up)
//        + meanLinkDelay · rateRatio_upstream                   (§11.2.14.2)
//    with rateRatio = rateRatio_upstream · neighborRateRatio, and the PI
//    servo disciplines the layersec clock (SyncedClock) toward it. After
//    syncReceiptTimeout (no Sync for sync_receipt_timeout intervals) the
//    port follows no source and is "uncalibrated"; the clock holds the
//    servo's frequency estimate (without the proportional term) until Syncs
//    return and the servo relocks (a phase step only beyond its
//    step_threshold_ns).
//  - Master port: a GM sends Sync every 2^logSyncInterval s and Follow_Up
//    with the synced time of the Sync's TX timestamp; a relay forwards each
//    Sync/Follow_Up from its slave port with correction += upstream link
//    delay + residence time (both in GM time: · rateRatio) and
//    cumulativeScaledRateOffset = (rateRatio − 1)·2^41 (§11.1.3).
// Profiles:
//  - kGptp: Announce with path trace and the BMCA (bmca.h) pick the slave
//    port; Syncs from anything but the chosen master port are dropped.
//  - kAutomotive (linuxptp automotive-master.cfg / automotive-slave.cfg):
//    static roles, no Announce (received ones are dropped and counted),
//    asCapable from configuration, a GM that sends no Pdelay_Req, and a slave
//    that follows the first Sync source it hears and drops Syncs from any
//    other (a second GM). With interval_request, once `offset_threshold_ns`
//    held for `offset_values` samples the slave switches to its operational
//    intervals: it asks its master by Signaling for oper_log_sync_interval
//    and itself requests peer delay every 2^oper_log_pdelay_interval s.
// Every refused message is counted by reason per port (DropCounters); a
// refused message changes no state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/ptp/bmca.h"
#include "layersec/ptp/message.h"
#include "layersec/ptp/peer_delay.h"
#include "layersec/ptp/servo.h"

namespace layersec::ptp {

enum class Profile : std::uint8_t { kGptp, kAutomotive };
// Configured role: kAuto (gptp only) lets the BMCA decide.
enum class Role : std::uint8_t { kAuto, kGm, kSlave };

// A port's role (802.1AS-2020 §10.3.5 selectedRole; passive is not used).
enum class PortRole : std::uint8_t {
  kDisabled,  // not asCapable or no decision yet: sends no Sync/Announce
  kMaster,    // sends Sync (and Announce under gptp) toward its neighbour
  kSlave,     // receives time from its neighbour
};
const char* to_string(PortRole r);

inline constexpr std::size_t kMaxPorts = 8;

struct SystemConfig {
  Profile profile = Profile::kGptp;
  Role role = Role::kAuto;
  std::uint64_t clock_identity = 0;
  std::size_t port_count = 1;  // 1..kMaxPorts; in a relay port 0 faces the GM under automotive
  std::uint8_t domain = 0;
  std::uint8_t minor_version = 1;  // what this system sends (0 for linuxptp 3.x peers is fine too)
  std::int8_t log_sync_interval = -3;      // initialLogSyncInterval
  std::int8_t log_announce_interval = 0;
  std::uint8_t sync_receipt_timeout = 3;
  std::uint8_t announce_receipt_timeout = 3;
  PdelayConfig pdelay{};                   // log_interval = initialLogPdelayReqInterval
  PiServoConfig servo{};
  std::uint8_t priority1 = 248;
  std::uint8_t priority2 = 248;
  ClockQuality quality{};
  // automotive slave: switch to operational intervals once synchronised
  bool interval_request = false;
  std::int8_t oper_log_sync_interval = 0;
  std::int8_t oper_log_pdelay_interval = 2;
  double offset_threshold_ns = 30;
  std::uint32_t offset_values = 10;
  // The synced clock starts at local + initial_offset_ns (a GM's timescale).
  std::int64_t initial_offset_ns = 0;
};

// Thrown by the constructor for a configuration it cannot run (message
// names the field).
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Transmit {
  std::size_t port = 0;
  Message message{};
  bool event = false;  // wants a TX timestamp (Sync, Pdelay_Req, Pdelay_Resp)
};

struct PortCounters {
  DropCounters drops{};
  std::array<std::uint64_t, kParseErrorCount> malformed{};
  std::uint64_t rx = 0, tx = 0;
  std::uint64_t sync_accepted = 0;
};

// What the slave side measured at the last Follow_Up (for the CLI's JSON).
struct SyncStatus {
  bool valid = false;
  double offset_ns = 0;         // slave − GM at the Sync's receipt, before the servo's correction
  double path_delay_ns = 0;     // meanLinkDelay of the slave port
  double rate_ratio = 1;        // GM frequency / local frequency
  double frequency_ppb = 0;     // the layersec clock's frequency offset
  ServoState servo = ServoState::kUnlocked;
  std::uint64_t samples = 0;
};

class TimeAwareSystem {
 public:
  // Throws ConfigError for a port count outside 1..kMaxPorts, an interval
  // outside -8..8, kAuto under the automotive profile, or a zero clock identity.
  explicit TimeAwareSystem(const SystemConfig& config);

  void receive(std::size_t port, ByteSpan message, TimePoint rx);
  void receive(std::size_t port, const Message& m, TimePoint rx);
  void tx_timestamp(std::size_t port, MessageType type, std::uint16_t sequence_id, TimePoint tx);
  void on_timer(TimePoint now);
  [[nodiscard]] TimePoint next_deadline() const;

  [[nodiscard]] const std::vector<Transmit>& output() const { return out_; }
  void clear_output() { out_.clear(); }

  [[nodiscard]] const SystemConfig& config() const { return config_; }
  [[nodiscard]] PortRole port_role(std::size_t port) const { return ports_.at(port).role; }
  [[nodiscard]] const PortCounters& counters(std::size_t port) const { return ports_.at(port).counters; }
  [[nodiscard]] const PdelayInitiator& pdelay(std::size_t port) const { return ports_.at(port).initiator; }
  [[nodiscard]] std::int8_t log_sync_interval(std::size_t port) const { return ports_.at(port).log_sync_interval; }
  [[nodiscard]] const SyncStatus& status() const { return status_; }
  [[nodiscard]] const SyncedClock& clock() const { return clock_; }
  [[nodiscard]] bool is_grandmaster() const { return grandmaster_; }
  [[nodiscard]] bool operational_intervals() const { return oper_switched_; }
  // The grandmaster this system follows (its own identity when GM). Under
  // the automotive profile (no Announce) it is the clock whose Syncs port 0
  // follows, the GM itself unless a relay is in between; 0 before the first.
  [[nodiscard]] std::uint64_t grandmaster_identity() const;
  // "gm", "slave", "listening" (no time source yet) or "relay".
  [[nodiscard]] const char* state() const;

 private:
  struct PendingSync {
    bool valid = false;
    std::uint16_t seq = 0;
    PortIdentity source{};
    std::int64_t rx = 0;
    std::int64_t correction = 0;
    std::int8_t log_interval = 0;
  };
  // Time information a relay forwards (from the last Follow_Up).
  struct SyncInfo {
    Timestamp origin{};
    double correction_ns = 0;  // up to the Sync's receipt at this system, GM time
    std::int64_t rx = 0;       // local receipt time
    double rate_ratio = 1;     // GM / local
    FollowUpInfo follow_up{};
  };
  struct PendingForward {
    bool valid = false;
    std::uint16_t seq = 0;
    SyncInfo info{};
  };
  // The GM's time properties as its Announce carries them (802.1AS-2020
  // §10.5.3.2.7: a relay passes them on unchanged).
  struct TimeProperties {
    std::uint16_t flags = kFlagPtpTimescale;  // leap61/59, UTC offset valid, PTP timescale, traceable bits
    std::int16_t current_utc_offset = 0;
    std::uint8_t time_source = 0xA0;
  };
  struct Announced {
    bool valid = false;
    TimeProperties time{};
    PriorityVector vector{};
    TimePoint expiry{};
    std::uint8_t path_count = 0;
    std::array<std::uint64_t, kMaxPathTrace> path{};
  };
  struct Port {
    Port(const PortIdentity& id, const PdelayConfig& pd, std::uint8_t minor)
        : identity(id), initiator(id, pd), responder(id, minor) {}
    PortIdentity identity;
    PortRole role = PortRole::kDisabled;
    PdelayInitiator initiator;
    PdelayResponder responder;
    PortCounters counters{};
    std::int8_t log_sync_interval = -3;
    std::int8_t log_announce_interval = 0;
    bool sync_stopped = false;
    TimePoint next_sync{};
    TimePoint next_announce{};
    std::uint16_t sync_seq = 0, announce_seq = 0, signaling_seq = 0;
    bool gm_sync_pending = false;  // GM Sync sent, waiting for its TX timestamp
    PendingSync pending{};
    PendingForward forward{};
    Announced announced{};
    TimePoint sync_deadline = TimePoint::max();  // sync receipt timeout (slave port)
    std::optional<PortIdentity> followed;  // automotive: the Sync source this slave follows
  };

  void drop(Port& p, DropReason r) { p.counters.drops.count(r); }
  bool as_capable(const Port& p) const;
  void on_sync(Port& p, std::size_t index, const Message& m, TimePoint rx);
  void on_follow_up(Port& p, std::size_t index, const Message& m);
  void on_announce(Port& p, const Message& m, TimePoint rx);
  void on_signaling(Port& p, const Message& m, TimePoint rx);
  void forward_sync(const SyncInfo& info, std::size_t from);
  void send_follow_up(Port& p, std::size_t index, const SyncInfo& info, std::int64_t tx);
  void send_announce(Port& p, std::size_t index);
  void run_bmca(TimePoint now);
  void apply_static_roles();
  void emit(std::size_t port, const Message& m, bool event);
  PriorityVector own_vector() const;

  SystemConfig config_;
  std::vector<Port> ports_;
  std::vector<Transmit> out_;
  SyncedClock clock_;
  PiServo servo_;
  SyncStatus status_{};
  bool grandmaster_ = false;
  PriorityVector gm_vector_{};
  TimeProperties gm_time_{};  // what this system announces (its own as GM)
  std::uint8_t gm_path_count_ = 0;
  std::array<std::uint64_t, kMaxPathTrace> gm_path_{};
  std::uint32_t good_offsets_ = 0;
  bool oper_switched_ = false;
  bool bmca_started_ = false;
};

}  // namespace layersec::ptp
