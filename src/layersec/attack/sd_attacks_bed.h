// The test bed of the SD attack runner (sd_attacks.h): the server, the
// client, the victim and the attacker host on one simulated switch, the
// on-path attacker (SdHook) and what the victims show (Probe). Internal to
// the attack module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/net/frame.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_host.h"
#include "layersec/node/stack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/address.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_message.h"

namespace layersec::attack::sd_bed {

constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kInstance = 0x0001;
constexpr std::uint16_t kEvent = 0x8001;
constexpr std::uint16_t kEventgroup = 0x0001;
constexpr std::uint16_t kServicePort = 30509;
constexpr std::uint16_t kClientPort = 30501;
constexpr std::uint16_t kSubscriberPort = 30502;
constexpr std::uint16_t kAttackerEventPort = 40000;
constexpr std::uint16_t kSd = someip::kSdPort;

// Ethernet (14) + IPv4 (20) + UDP (8), then the SOME/IP header (16) and the
// SD flags (4): where the entries array length is.
constexpr std::size_t kSomeip = 42;
constexpr std::size_t kEntriesLen = kSomeip + 16 + 4;
constexpr std::size_t kEntries = kEntriesLen + 4;
constexpr std::size_t kEntrySize = 16;

enum : std::uint32_t { kServer = 0, kClient = 1, kVictim = 2, kAttackerHost = 3, kHosts = 4 };
constexpr std::uint8_t kHostOctet[kHosts] = {1, 2, 3, 9};

inline net::Ipv4Address ip4(std::uint32_t h) { return net::Ipv4Address::from_octets(10, 0, 0, kHostOctet[h]); }
inline someip::IpAddress ipa(std::uint32_t h) { return someip::IpAddress::v4(10, 0, 0, kHostOctet[h]); }
inline someip::Endpoint udp(std::uint32_t h, std::uint16_t port) { return {ipa(h), port, someip::L4Proto::kUdp}; }

// Throws std::runtime_error("sd attack set-up: WHAT") unless `ok`.
void require(bool ok, const std::string& what);

// SD frames as the switch sees them (Ethernet/IPv4/UDP/SOME/IP/SD).
// Entries array length, whole entries inside the frame only.
[[nodiscard]] std::size_t entries_len(const std::vector<std::uint8_t>& f);
// The offset of the first entry of `type` with a non-zero TTL, or 0.
[[nodiscard]] std::size_t find_entry(const std::vector<std::uint8_t>& f, std::uint8_t type);
// The options array (offset, length) of an SD frame, clipped to the frame.
[[nodiscard]] std::pair<std::size_t, std::size_t> options_of(const std::vector<std::uint8_t>& f);
// Sets IPv4, UDP and SOME/IP lengths after the frame was resized, then the checksums.
void fix_lengths(std::vector<std::uint8_t>& f);

// The on-path attacker at the switch: on SD frames (port 30490 to 30490)
// it alters or captures the next frame `match` selects (once each time
// `armed` is set),
// and records every SD frame while `recording`.
class SdHook final : public net::SwitchHook {
 public:
  using Match = std::function<bool(const std::vector<std::uint8_t>&, net::Ipv4Address src)>;
  using Alter = std::function<void(std::vector<std::uint8_t>&)>;
  struct Captured {
    net::PortId ingress = 0;
    std::vector<std::uint8_t> frame;
  };

  net::HookVerdict on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                            net::SwitchControl&) override;
  // The receiver's parser on the altered bytes (unprotected SD only):
  // counts sd_invalid_<reason> in `invalid`.
  void check(const std::vector<std::uint8_t>& f);

  Match match;
  Alter alter;  // null: capture instead
  bool armed = false;
  bool parse_check = false;
  bool recording = false;
  std::uint64_t fired = 0;
  TimePoint fired_at;  // when it last fired
  Captured captured;
  std::vector<Captured> history;
  std::map<std::string, std::uint64_t> invalid;
};

// What the victims show at one moment.
struct Probe {
  std::uint64_t downs = 0;
  std::uint64_t lost = 0;
  std::uint64_t attacker_subscribes = 0;
  std::uint64_t attacker_requests = 0;
  std::uint64_t attacker_events = 0;
  std::uint64_t victim_events = 0;
  std::uint64_t extra = 0;  // deliveries that are not a pending notification
  std::uint64_t rejected = 0;
};

// One configuration on the simulated segment.
class Bed {
 public:
  // Builds the nodes (protected SD or not), starts the client and, with
  // `start_server`, the server (notifications begin once the client
  // subscribed, or after 1 s). Throws std::runtime_error on a set-up failure.
  Bed(bool protected_sd, std::uint64_t seed, bool start_server = true);
  ~Bed();
  Bed(const Bed&) = delete;
  Bed& operator=(const Bed&) = delete;

  void start_server();
  // Throws unless the client has the service and the server one subscriber.
  void require_discovered();

  [[nodiscard]] bool healthy() const {
    return client_->runtime().available(kService, kInstance) &&
           server_->runtime().subscriber_count(kService, kInstance, kEventgroup) == 1;
  }
  [[nodiscard]] std::size_t subscribers() const {
    return server_->runtime().subscriber_count(kService, kInstance, kEventgroup);
  }
  net::Simulator& sim() { return sim_; }
  SdHook& hook() { return hook_; }
  void inject(net::PortId ingress, const std::vector<std::uint8_t>& frame) { seg_.inject(ingress, frame); }
  // An SD message from the attacker host's own address; with protected SD
  // protected as a node would, under keys of the attacker's own (it has
  // the protocol, not the group key).
  void send_own(const net::Ipv4Endpoint& to, const someip::SdEntry& e,
                const std::optional<someip::Endpoint>& named);

  // Advances time in 1 ms steps, one legitimate notification every 10 ms
  // once the server runs.
  void advance(Duration d);
  // Advances until `done` (checked every `step`) or `limit`; false on the limit.
  bool advance_until(const std::function<bool()>& done, Duration limit, Duration step = Duration::milliseconds(1));

  [[nodiscard]] Probe probe() const {
    Probe p = probe_;
    p.lost = legit_sent_ - delivered_ - pending_in_flight();
    p.rejected = rejected_total();
    return p;
  }
  [[nodiscard]] std::uint64_t legit_sent() const { return legit_sent_; }
  [[nodiscard]] std::uint64_t delivered() const { return delivered_; }

  // Rejections by reason from both nodes (and, unprotected, the parser at the switch).
  [[nodiscard]] std::map<std::string, std::uint64_t> rejections() const;

 private:
  [[nodiscard]] std::uint64_t rejected_total() const;
  // The last notification is in flight only within 1 ms of being sent.
  [[nodiscard]] std::uint64_t pending_in_flight() const {
    return pending_.count(next_seq_ - 1) == 1 && sim_.now() < last_sent_ + Duration::milliseconds(1) ? 1 : 0;
  }
  void notify();
  void on_attacker_sd(const net::UdpDatagram& d);

  bool protected_;
  net::Simulator sim_;
  net::Segment seg_;
  std::unique_ptr<net::SimHost> hosts_[kHosts];
  net::PortId ports_[kHosts] = {0, 0, 0, 0};
  std::unique_ptr<node::Stack> server_;
  std::unique_ptr<node::Stack> client_;
  secoc::MemoryStateStore forger_store_;
  std::unique_ptr<secoc::Engine> forger_;  // protected SD: the attacker's engine
  SdHook hook_;
  Probe probe_;
  std::map<std::string, std::uint64_t> security_;
  bool server_started_ = false;
  TimePoint next_event_;
  TimePoint last_sent_;
  std::uint32_t next_seq_ = 1;
  std::set<std::uint32_t> pending_;
  std::uint64_t legit_sent_ = 0;
  std::uint64_t delivered_ = 0;
  std::uint16_t attacker_session_ = 1;
};

}  // namespace layersec::attack::sd_bed
