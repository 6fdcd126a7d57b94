// The test bed of the SOME/IP + SecOC attack runner (someip_attacks.h):
// one configuration of a publisher (10.0.0.1) and a subscriber (10.0.0.2)
// built with node::build_stack on the simulated segment (net::Simulator, one
// switch), subscribed, keys installed, counter freshness synchronised, with
// an on-path attacker at the switch (net::SwitchHook) and a wiretap on every
// link. Internal to the attack module (someip_attacks.cc and the class files
// beside it); the counting rules are in docs/attack.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "layersec/attack/report.h"
#include "layersec/base/bytes.h"
#include "layersec/base/secret.h"
#include "layersec/macsec/link.h"
#include "layersec/net/recorder.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/profile.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/runtime.h"

namespace layersec::attack::someip_bed {

// Ethernet (14) + IPv4 without options (20) + UDP (8): where SOME/IP starts.
constexpr std::size_t kSomeip = 42;
constexpr std::size_t kPayload = kSomeip + 16;  // the Authentic I-PDU (no auth header in any profile used)
constexpr std::size_t kPayloadBytes = 8;        // seq (be32) | ~seq (be32)
constexpr std::uint16_t kUnboundEvent = 0x8002;  // configured nowhere, bound nowhere
// Simulated wall-clock epoch (Unix seconds), as the testbed's.
constexpr std::int64_t kEpochNs = 1'780'000'000LL * 1'000'000'000LL;
constexpr std::size_t kDelayedHistory = 200;
// The sync service: the publisher's SecOC sync messages as notifications.
constexpr std::uint16_t kSyncService = 0x1240;
constexpr std::uint16_t kSyncEvent = 0x8100;
constexpr std::uint16_t kSyncGroup = 0x0010;
constexpr std::uint16_t kSyncPort = 30520;
constexpr Duration kGap = Duration::microseconds(500);
// Request/response: a method of the event service (configurations with
// has_rr()), its request and response each a SecOC PDU of their own.
constexpr std::uint16_t kRrMethod = 0x0020;
constexpr std::uint16_t kRrRequestDataId = 0x0300;
constexpr std::uint16_t kRrResponseDataId = 0x0301;
constexpr Duration kRrTimeout = Duration::milliseconds(50);

enum class Config : std::uint8_t {
  kUnsecured,
  kCounter,     // vendor profile, counter freshness + sync
  kTimestamp,   // vendor MAC, timestamp FV
  kHybrid,      // kCounter over hop-by-hop MACsec
  kProfile1,    // AUTOSAR profile 1, counter freshness + sync
  kProfile2,    // AUTOSAR profile 2: no FV at all
  kProfile3,    // AUTOSAR profile 3 (JASPAR), counter freshness + sync
  kAead,        // non-standard aead-gcm, counter freshness + sync
  kHybridAead,  // kAead over hop-by-hop MACsec
};

struct ConfigInfo {
  Config config;
  const char* layer;
  const char* name;
};

[[nodiscard]] secoc::PduProfile event_profile(Config c);
// The engines of the publisher (tx: the event; rx: each subscriber's answer
// and, with has_rr(), the request) and of subscriber `index`, with the
// configuration's profile, its sync messages and key groups.
[[nodiscard]] secoc::EngineConfig publisher_engine(Config c, int subscribers);
[[nodiscard]] secoc::EngineConfig subscriber_engine(Config c, int index);
// A key of n bytes derived from `seed` (the simulation's RNG; test keys).
[[nodiscard]] SecretBytes seeded_key(std::uint64_t seed, std::size_t n = 32);
// Throws std::runtime_error("someip attack set-up: " + what) unless ok.
void require(bool ok, const std::string& what);
[[nodiscard]] inline bool is_secured(Config c) { return c != Config::kUnsecured; }
[[nodiscard]] inline bool is_hybrid(Config c) { return c == Config::kHybrid || c == Config::kHybridAead; }
[[nodiscard]] inline bool is_aead(Config c) { return c == Config::kAead || c == Config::kHybridAead; }
// Counter freshness with sync messages (every secured configuration but the
// timestamp one and profile 2, which has no FV).
[[nodiscard]] inline bool counter_sync(Config c) {
  return is_secured(c) && c != Config::kTimestamp && c != Config::kProfile2;
}

// A row of configuration `info` (layer, name, acceptance_expected for the
// unsecured baseline; the note marks the in-switch position of hybrid
// configurations and brute-force classes of short-MAC profiles).
[[nodiscard]] AttackRow make_row(const ConfigInfo& info, const char* cls, std::string note);

// Request/response runs where both directions need no sync message: the
// unsecured baseline and timestamp freshness (the request goes from the
// subscriber, which sends no sync messages, to the publisher).
[[nodiscard]] inline bool has_rr(Config c) { return c == Config::kUnsecured || c == Config::kTimestamp; }

// Whether the 8 payload bytes (seq | ~seq) of a notification with a seq in
// [first, first + count) appear anywhere in `f`.
[[nodiscard]] bool payload_readable(ByteSpan f, std::uint32_t first, std::uint32_t count);

// Every frame as it arrives at the switch from a link: what a wiretap sees.
class WireTap final : public net::FrameRecorder {
 public:
  void record(TimePoint, ByteSpan f) override {
    if (!on) return;
    ++frames;
    if (payload_readable(f, first, count)) ++readable;
  }
  bool on = false;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::uint64_t frames = 0;
  std::uint64_t readable = 0;
};

[[nodiscard]] bool is_event_frame(const std::vector<std::uint8_t>& f);
[[nodiscard]] bool is_sync_frame(const std::vector<std::uint8_t>& f);
[[nodiscard]] bool is_request_frame(const std::vector<std::uint8_t>& f);
[[nodiscard]] bool is_response_frame(const std::vector<std::uint8_t>& f);
// Sets the IPv4 total length, UDP length and SOME/IP length after the frame
// was resized (the SOME/IP message fills the datagram), then the checksums.
void fix_lengths(std::vector<std::uint8_t>& f);
// Flips one random bit of bytes [from, from + len).
void flip_in(std::vector<std::uint8_t>& f, std::size_t from, std::size_t len, net::SimRng& rng);
// Flips one random bit of bits [from_bit, from_bit + bits) counted MSB-first
// from byte `base` (the bit-packed SecOC trailer).
void flip_bits(std::vector<std::uint8_t>& f, std::size_t base, std::size_t from_bit, std::size_t bits,
               net::SimRng& rng);

// The on-path attacker at the switch. Event notifications are matched to
// the order the bed sent them (`schedule`: true = a target), since under
// aead-gcm the payload is not readable: targets are altered (or held back),
// the others kept as `last`. Sync messages go to `sync` when set.
class Attacker final : public net::SwitchHook {
 public:
  using Alter = std::function<void(std::vector<std::uint8_t>&)>;
  using SyncHook = std::function<net::HookVerdict(std::vector<std::uint8_t>&)>;
  net::HookVerdict on_frame(const net::HookContext&, std::vector<std::uint8_t>& frame, net::SwitchControl&) override;

  Alter alter;
  Duration hold = Duration::zero();  // > 0: targets are held back this long instead of altered
  SyncHook sync;
  std::deque<bool> schedule;
  std::vector<std::uint8_t> last;
  std::vector<std::uint8_t> last_sync;
  std::uint64_t altered = 0;
  // Request/response: responses matched to requests in order (`rr_schedule`:
  // true = a target, dropped when rr_drop, else altered by rr_alter).
  std::deque<bool> rr_schedule;
  Alter rr_alter;
  bool rr_drop = false;
  std::vector<std::uint8_t> last_request;
  std::vector<std::uint8_t> last_response;
  // A3 read: event frames seen at the switch, and those with readable payload.
  bool reading = false;
  std::uint32_t read_first = 0;
  std::uint32_t read_count = 0;
  std::uint64_t read_frames = 0;
  std::uint64_t read_plain = 0;
};

// The subscriber's counters at one moment, to diff around a class.
struct Snapshot {
  someip::RxCounters rx;
  net::SimHostStats host;
  std::uint64_t unsubscribed = 0;
  std::uint64_t tp_rejected = 0;
  std::uint64_t syncs_accepted = 0;
  std::uint64_t syncs_duplicate = 0;
  std::uint64_t late_responses = 0;
  macsec::LinkStats link;
  std::map<std::string, std::uint64_t> security;
};

// One configuration on the simulated segment: publisher (10.0.0.1) and
// subscriber (10.0.0.2) on one switch, subscribed, keys installed. Throws
// std::runtime_error if a set-up step fails.
class Bed {
 public:
  Bed(Config config, std::uint64_t seed);
  ~Bed();
  Bed(const Bed&) = delete;
  Bed& operator=(const Bed&) = delete;

  [[nodiscard]] Config config() const { return config_; }
  [[nodiscard]] bool secured() const { return is_secured(config_); }
  [[nodiscard]] secoc::PduProfile profile() const { return event_profile(config_); }
  [[nodiscard]] std::size_t trailer_bytes() const { return secured() ? profile().auth_info_bytes() : 0; }
  net::Simulator& sim() { return sim_; }
  Attacker& attacker() { return attacker_; }
  WireTap& tap() { return tap_; }
  node::Stack& publisher() { return *pub_; }
  node::Stack& subscriber() { return *sub_; }
  [[nodiscard]] std::uint32_t next_seq() const { return next_seq_; }

  // A legitimate notification the subscriber must receive.
  void send_legit();
  // A notification the attacker alters in flight (an attempt, not legit).
  void send_target();
  void inject(const std::vector<std::uint8_t>& frame) { seg_.inject(ports_[0], frame); }
  void inject_from_subscriber(const std::vector<std::uint8_t>& frame) { seg_.inject(ports_[1], frame); }

  // A notification with an attacker's payload on the publisher's last header:
  // plain (unsecured) or protected by the forger's engine (wrong key).
  std::vector<std::uint8_t> forge(std::uint64_t i);
  // Counter freshness: keeps the forger's MsgCnt level with the publisher's
  // next one (starting a new reset cycle of its own when the publisher did),
  // so the forgery's truncated FV is fresh and it is judged on its MAC.
  void align_forger();
  // A sync message of the forger's engine (the publisher's configuration
  // under another key), as a SOME/IP notification on the last sync frame.
  std::vector<std::uint8_t> forge_sync();

  [[nodiscard]] Snapshot snapshot() const;
  // Starts a class: zeroes its figures.
  void begin();
  // Ends a class: lets the last frames arrive and fills `row`.
  void end(AttackRow& row);
  // Sync messages the subscriber applied since begin().
  [[nodiscard]] std::uint64_t syncs_applied() const;

  // Request/response (has_rr()): the subscriber calls kRrMethod with a fresh
  // seq; the publisher's handler echoes it. A legitimate call must complete
  // with its own payload; any response a target call completes with, and any
  // wrong payload a legitimate one completes with, is `accepted`. Returns the
  // session id used.
  std::uint16_t rr_request(bool target);
  // Requests the publisher's handler executed since begin().
  [[nodiscard]] std::uint64_t executions() const { return executions_; }
  [[nodiscard]] std::uint64_t rr_requests_sent() const { return rr_sent_; }

 private:
  void notify(std::uint32_t seq);
  void classify(const someip::Notification& n);

  Config config_;
  net::Simulator sim_;
  net::Segment seg_;
  std::unique_ptr<net::SimHost> hosts_[2];
  std::optional<node::MacsecSpec> host_macsec_[2];
  std::unique_ptr<macsec::MacsecLink> switch_secy_[2];  // hybrid: the switch ports' SecYs
  std::unique_ptr<net::FrameShim> shims_[2];             // hybrid: over the hosts' SecYs
  macsec::MacsecPortProcessor switch_ports_;
  WireTap tap_;
  net::PortId ports_[2] = {0, 0};
  std::unique_ptr<node::Stack> pub_;
  std::unique_ptr<node::Stack> sub_;
  secoc::MemoryStateStore forger_store_;
  std::unique_ptr<secoc::Engine> forger_;
  Attacker attacker_;
  std::map<std::string, std::uint64_t> security_;
  Snapshot before_;
  std::uint32_t next_seq_ = 1;
  std::set<std::uint32_t> pending_;
  std::uint64_t legit_sent_ = 0;
  std::uint64_t legit_delivered_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint64_t executions_ = 0;
  std::uint64_t rr_sent_ = 0;
};

// Alters one in-flight notification per attempt, a legitimate one after it.
void run_in_flight(Bed& bed, AttackRow& row, std::uint64_t attempts, Attacker::Alter alter);
// One legitimate notification per attempt, then one injected frame.
void run_injected(Bed& bed, AttackRow& row, std::uint64_t attempts,
                  const std::function<std::vector<std::uint8_t>(std::uint64_t)>& make);

}  // namespace layersec::attack::someip_bed
