// A gPTP port inside `layersec macsec up --ptp FILE` (IO): IEEE 802.1AS on
// the link's lower interface, run in the link's process and event loop, as a
// switch port runs gPTP beside its SecY.
//
//   protect true   every gPTP frame travels inside a MACsec frame of this
//                  link's SecY (the plain frame 01-80-C2-00-00-0E / 0x88F7
//                  is protected like any other frame from the controlled
//                  port, so an on-path device can neither read, forge,
//                  replay nor alter it). Received, only a verified frame
//                  reaches the port; a plain 0x88F7 frame on the lower link
//                  is dropped and counted (rx_plain_refused).
//   protect false  plain 0x88F7 to 01-80-C2-00-00-0E, as ptp4l sends it
//                  (interoperates with any 802.1AS peer); gPTP inside MACsec
//                  is then dropped and counted (rx_protected_refused): each
//                  end accepts exactly the form it is configured for.
//
// Timestamps are the kernel's software timestamps of the frame on the lower
// interface, i.e. of the outer (MACsec) frame when protected: RX from the
// link's ETH_P_ALL socket (SO_TIMESTAMPING, taken before the nftables guard
// of lower_guard.h drops anything), TX from the error queue of a send-only
// ptp::PtpSocket, matched by the first 64 octets of the frame sent (the
// SecTAG's PN makes them unique). Encryption happens before the TX timestamp
// and verification after the RX timestamp, so neither adds to the measured
// path; the 32 octets more per frame add the same serialisation time to every
// gPTP frame in both directions, which the peer delay absorbs (docs/ptp.md
// has the measured cost).
//
// SyncedShaperClock is the tsn::Clock the link's shaper runs on when both
// --tsn and --ptp are given: the port's disciplined layersec clock, so the
// gate schedules of all nodes follow the grandmaster's time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_ptp_config.h"
#include "layersec/net/event_loop.h"
#include "layersec/ptp/ptp_runner.h"
#include "layersec/ptp/ptp_socket.h"
#include "layersec/ptp/servo.h"
#include "layersec/tsn/shaper_driver.h"

namespace layersec::macsec {

// Where a frame of the lower link goes when the link runs a gPTP port.
enum class PtpFrameVerdict : std::uint8_t {
  kNotPtp,               // not gPTP: the link handles it as before
  kToPort,               // gPTP in the configured form: for the port
  kRefusedPlain,         // plain 0x88F7 while protect is true: dropped
  kRefusedProtected,     // gPTP inside MACsec while protect is false: dropped
  kRefusedDestination,   // 0x88F7 to another address than 01-80-C2-00-00-0E: dropped
};
const char* to_string(PtpFrameVerdict v);

// A frame as it arrived on the lower link (before the SecY): untagged
// EtherType 0x88F7 is gPTP in clear.
PtpFrameVerdict classify_lower_frame(ByteSpan wire, bool protect);
// A plain frame the SecY verified: untagged EtherType 0x88F7 is gPTP that
// travelled inside MACsec.
PtpFrameVerdict classify_verified_frame(ByteSpan plain, bool protect);

struct LinkPtpStats {
  std::uint64_t rx_plain = 0;              // plain gPTP frames handed to the port (protect false)
  std::uint64_t rx_protected = 0;          // verified gPTP frames handed to the port (protect true)
  std::uint64_t rx_plain_refused = 0;      // kRefusedPlain
  std::uint64_t rx_protected_refused = 0;  // kRefusedProtected
  std::uint64_t rx_bad_destination = 0;    // kRefusedDestination
  // protect true: gPTP frames the SecY refused, dropped (never sent in clear,
  // never queued; the port counts them as send errors and goes on).
  std::uint64_t tx_no_sa = 0;              // no enabled transmit SA yet (MKA: before the first SAK)
  std::uint64_t tx_protect_errors = 0;     // any other refusal (PN exhausted, PN state not saved, ...)
};
nlohmann::json to_json(const LinkPtpStats& s);

// The frame a gPTP port puts on the lower link for `frame` (a whole plain
// gPTP frame): `frame` itself when `protect` is false, else `frame`
// protected by `link`'s encoding SA (a view into the link's buffer, valid
// until its next protect). nullopt when the SecY refused, counted in
// `stats` by reason (tx_no_sa: kNoTransmitSa; tx_protect_errors: anything
// else) and by the link (tx_protect_errors): fail closed, the frame is
// dropped. Sans-I/O: LinkPtp's send path, and the tests'.
std::optional<ByteSpan> gptp_wire_frame(MacsecLink& link, bool protect, ByteSpan frame, LinkPtpStats& stats);

// The layersec clock as the shaper's clock: now_ns() = clock.to_synced(local
// now). `local_now` reads the clock's local time line (CLOCK_MONOTONIC_RAW
// in the link; a fake in tests). `clock` is not owned.
class SyncedShaperClock final : public tsn::Clock {
 public:
  SyncedShaperClock(const ptp::SyncedClock& clock, std::function<std::int64_t()> local_now)
      : clock_(clock), local_now_(std::move(local_now)) {}
  [[nodiscard]] std::int64_t now_ns() const override { return clock_.to_synced(local_now_()); }

 private:
  const ptp::SyncedClock& clock_;
  std::function<std::int64_t()> local_now_;
};

class LinkPtp final : public LowerFrameHook {
 public:
  // Opens the send-only gPTP socket on `lower` and builds the port (clock
  // identity from `mac`, the link's MAC). `link` is not owned and must
  // outlive this object. Throws ptp::PtpSocketError (start-up).
  LinkPtp(const LinkPtpConfig& config, MacsecLink& link, const std::string& lower, const net::MacAddress& mac);
  ~LinkPtp() override;
  LinkPtp(const LinkPtp&) = delete;
  LinkPtp& operator=(const LinkPtp&) = delete;

  // LowerFrameHook (called by TapLink::pump_lower).
  bool on_lower(ByteSpan wire, std::int64_t rx_realtime_ns) override;
  bool on_verified(ByteSpan plain, std::int64_t rx_realtime_ns) override;
  // gPTP's EtherType (0x88F7): plain gPTP frames reach on_lower whole.
  [[nodiscard]] std::vector<std::uint16_t> lower_ether_types() const override;

  // Runs the port's timers on `loop` (until detach). The object must not
  // move while attached.
  void attach(net::EventLoop& loop);
  void detach();
  // Called after the servo stepped the clock (the shaper restarts its model).
  void on_clock_step(std::function<void()> cb) { on_step_ = std::move(cb); }

  [[nodiscard]] const ptp::TimeAwareSystem& system() const { return port_.system(); }
  [[nodiscard]] const ptp::SyncedClock& clock() const { return port_.system().clock(); }
  [[nodiscard]] const LinkPtpStats& stats() const { return stats_; }
  [[nodiscard]] const ptp::RunnerStats& port_stats() const { return port_.stats(); }
  [[nodiscard]] const ptp::TimestampingInfo& timestamping() const { return socket_.timestamping(); }
  [[nodiscard]] bool protect() const { return protect_; }

  // The once-a-second line: ptp::status_json (closing the second's window of
  // offsets) plus "protect" and "link" (LinkPtpStats, and the port's frame
  // counters).
  nlohmann::json second_json();
  // Counters for the exit report.
  [[nodiscard]] nlohmann::json counters_json() const;

 private:
  ptp::SendOutcome send(ByteSpan frame, bool event);
  // Acts on a verdict: the frame to the port (counted in `accepted`), or
  // dropped and counted; false for kNotPtp (the link goes on with it).
  bool take(PtpFrameVerdict verdict, ByteSpan frame, std::int64_t rx_realtime_ns, std::uint64_t& accepted);
  void deliver(ByteSpan frame, std::int64_t rx_realtime_ns);
  // Tells on_clock_step's callback about a new servo step, re-arms the timer.
  void after_port_ran();
  void rearm();

  MacsecLink& link_;
  bool protect_;
  int tx_timeout_ms_;
  ptp::PtpSocket socket_;
  ptp::PtpPort port_;
  LinkPtpStats stats_;
  std::function<void()> on_step_;
  std::uint64_t steps_seen_ = 0;
  net::EventLoop* loop_ = nullptr;
  std::optional<net::EventLoop::TimerId> timer_;
  std::int64_t start_raw_ns_ = 0;
};

}  // namespace layersec::macsec
