// MKA on a MACsec link (`layersec macsec up --mka FILE`): the I/O around the
// sans-I/O participant (mka/participant.h).
//
//   EAPOL socket   AF_PACKET bound to EtherType 0x888E on the lower interface,
//                  member of 01-80-C2-00-00-03 (the PAE group address,
//                  802.1X-2020 §11.1.1). Every frame read goes to
//                  Participant::on_mkpdu (the codec refuses any other
//                  destination, counted); every MKPDU of an Output is sent.
//                  The lower guard admits exactly these frames past its
//                  netdev filter (lower_guard.h, allow_mka).
//   timer          one EventLoop timer at Participant::next_deadline(),
//                  re-armed after every call into the participant.
//   SecY           driven through mka::GatedSecYDriver (MacsecSecYDriver
//                  with the transmit SA installed disabled until the
//                  participant enables it): receive SAs, the transmit SA,
//                  the encoding AN, retirement. Until the first SAK the
//                  SecY has no SA and the link sends nothing (fail closed).
//   transmit PN    every kTxPnPeriod Participant::on_tx_pn gets the encoding
//                  SA's next PN (the key server rekeys past the threshold).
//   events         one JSON object per participant event through a sink
//                  (the runner prints it as a line): peers potential, live
//                  and lost, key server elected, SAK generated / installed /
//                  transmitting / retired with "kn", "an" and
//                  "sak_fingerprint" (mka::fingerprint: 16 hex digits of
//                  SHA-256, never the key), the first drop of each reason.
//
// Single-threaded on the link's loop; the object must not move once started
// (callbacks hold `this`), hence open() returns a unique_ptr.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_mka_config.h"
#include "layersec/mka/participant.h"
#include "layersec/mka/gated_secy_driver.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/packet_socket.h"

namespace layersec::macsec {

// How often the encoding SA's next PN is reported to the participant.
inline constexpr Duration kTxPnPeriod = Duration::milliseconds(500);

// The EAPOL socket's counters (the participant counts the protocol).
struct LinkMkaCounters {
  std::uint64_t rx_frames = 0;     // frames read from the EAPOL socket
  std::uint64_t rx_truncated = 0;  // longer than the receive buffer: dropped
  std::uint64_t tx_frames = 0;     // MKPDUs sent
  std::uint64_t tx_errors = 0;     // MKPDUs the socket refused
  std::uint64_t io_errors = 0;     // receive failures other than "nothing waiting"
  std::uint64_t timer_runs = 0;    // Participant::on_timer calls
  std::uint64_t tx_pn_reports = 0; // Participant::on_tx_pn calls
};

// A participant event as a JSON object: {"event": "mka_<type>", "t_ns":
// CLOCK_MONOTONIC ns, ...}: "sci"/"mi" (peers, key server), "kn", "an",
// "key_server_mi", "sak_fingerprint" (SAK events), "reason" (rekey, peer
// loss), "error" (SecY errors). Never a key.
nlohmann::json mka_event_json(const mka::Event& e);
// Snake-case names of the drop and rekey reasons (JSON keys).
std::string_view drop_key(mka::DropReason r);
std::string_view rekey_key(mka::RekeyReason r);
// {"state", "mi", "mn", "key_server": {"sci", "self"} or null, "peers": [{"sci",
//  "mi", "mn", "priority", "live"}], "live_peers", "sak": {"state", "latest",
//  "old"} ({"kn", "an", "sak_fingerprint", "tx", "rx"} or null), "counters":
//  {participant counters}, "drops": {reason: n}, "malformed": {codec error: n
//  (non-zero only)}, "rekeys": {reason: n}, "socket": {LinkMkaCounters}}.
nlohmann::json mka_stats_json(const mka::Participant& p, const LinkMkaCounters& socket);

class LinkMka {
 public:
  using EventSink = std::function<void(const nlohmann::json&)>;

  // Builds the participant over link.secy() (our SCI is the SecY's; the
  // CAK is copied from `config`) and opens the EAPOL socket on `lower` in
  // the calling thread's namespace. Throws std::runtime_error naming the
  // failing step (socket, multicast membership, participant settings).
  static std::unique_ptr<LinkMka> open(MacsecLink& link, const LinkMkaConfig& config, const std::string& lower,
                                       EventSink sink);
  ~LinkMka();
  LinkMka(const LinkMka&) = delete;
  LinkMka& operator=(const LinkMka&) = delete;

  // Watches the socket on `loop`, starts the participant (its first MKPDU
  // goes out at once) and arms the timers.
  void start(net::EventLoop& loop);
  // Stops the participant (every SA removed: nothing more is protected),
  // unwatches the socket and cancels the timers. Idempotent.
  void stop();
  // Asks the participant for a new SAK now (Participant::rekey_now): false,
  // and nothing changes, when this member is not the key server.
  bool rekey_now();

  [[nodiscard]] const mka::Participant& participant() const { return *participant_; }
  [[nodiscard]] const LinkMkaCounters& counters() const { return counters_; }
  [[nodiscard]] nlohmann::json stats_json() const;

  // Reads and handles up to `budget` frames from the socket (the loop's
  // callback; public for tests).
  std::size_t pump(std::size_t budget = 32);

 private:
  LinkMka(net::PacketSocket socket, EventSink sink);
  // Sends the frames, reports the events and re-arms the timer.
  void handle(mka::Output out);
  void arm();
  void tx_pn_tick();

  net::PacketSocket socket_;
  EventSink sink_;
  mka::SystemRandom rng_;
  std::unique_ptr<mka::GatedSecYDriver> adapter_;
  std::unique_ptr<mka::Participant> participant_;
  net::EventLoop* loop_ = nullptr;
  std::optional<net::EventLoop::TimerId> deadline_timer_;
  std::optional<net::EventLoop::TimerId> pn_timer_;
  TimePoint armed_at_ = TimePoint::max();
  LinkMkaCounters counters_;
  std::array<bool, mka::kDropReasonCount> drop_reported_{};
  std::vector<std::uint8_t> buf_;
};

}  // namespace layersec::macsec
