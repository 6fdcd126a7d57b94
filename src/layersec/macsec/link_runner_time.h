// Internal to the `layersec macsec up` runners (link_runner.cc with static
// SAKs, link_mka_runner.cc with MKA): the link's time, set up the same way
// whichever keys the SecY has.
//
//   --ptp   a gPTP port beside the SecY (link_ptp.h): hooked into the TAP
//           link's lower-frame path, its timers on the link's loop, one
//           {"event": "ptp", ...} JSON line a second on stdout. With
//           "protect": true it sends only what the SecY protects: while the
//           SecY has no transmit SA (MKA before its first SAK) every gPTP
//           frame is dropped and counted (tx_no_sa), and the port runs on
//           with the SA the SecY transmits with at each send, so a SAK
//           rollover needs nothing from here.
//   --tsn   the time-aware shaper on the gPTP-disciplined clock
//           (SyncedShaperClock) when --ptp is given, else on CLOCK_TAI; a
//           servo step restarts the shaper's model (TapLink::clock_stepped).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "layersec/macsec/link.h"
#include "layersec/macsec/link_ptp.h"
#include "layersec/macsec/link_ptp_config.h"
#include "layersec/macsec/link_runner.h"
#include "layersec/macsec/link_tsn_config.h"
#include "layersec/net/event_loop.h"
#include "layersec/tsn/shaper_driver.h"

namespace layersec::macsec::runner {

// --tsn's tag layout: the SecY keeps the first hop's tag in front of the
// SecTAG (clear-tag) or encrypts it (standard), as the TSN file says, which
// overrides the SecY's VLAN settings; the tag costs the TAP 4 octets of MTU.
// No-op without --tsn.
void apply_tsn_layout(const std::optional<LinkTsnConfig>& tsn, SecYConfig& secy, TapLinkOptions& tap);

class LinkTime {
 public:
  // Opens the gPTP port on o.lower (send-only socket; the clock identity
  // from tap.mac()) and hooks it into `tap` when `ptp` is set; enables the
  // TSN first hop on the resulting clock when `tsn` is set. `link` and `tap`
  // are not owned and must outlive this object; the TAP link keeps a
  // pointer to the port, so it must be detached from its loop before this
  // object goes (both runners declare it after the TAP link). Throws
  // (start-up) what LinkPtp and TapLink throw.
  LinkTime(MacsecLink& link, TapLink& tap, const LinkRunOptions& o, const std::optional<LinkTsnConfig>& tsn,
           const std::optional<LinkPtpConfig>& ptp);
  ~LinkTime();
  LinkTime(const LinkTime&) = delete;
  LinkTime& operator=(const LinkTime&) = delete;

  // The start-up lines ("  tsn ...", "  ptp ...") for stderr.
  void describe(std::ostream& os) const;
  // Runs the port's timers and the once-a-second "ptp" line on `loop`
  // (after TapLink::attach); no-op without --ptp. The object must not move
  // while attached.
  void attach(net::EventLoop& loop);
  // Cancels what attach() armed (idempotent).
  void detach();

  // The gPTP port (for the report's "ptp" counters), or nullptr.
  [[nodiscard]] const LinkPtp* ptp() const { return ptp_.get(); }

 private:
  void second();

  TapLink& tap_;
  LinkRunOptions options_;
  std::optional<LinkTsnConfig> tsn_;
  std::optional<LinkPtpConfig> ptp_config_;
  std::unique_ptr<LinkPtp> ptp_;
  tsn::TaiClock tai_;
  std::unique_ptr<SyncedShaperClock> gptp_time_;
  net::EventLoop* loop_ = nullptr;
  std::optional<net::EventLoop::TimerId> second_timer_;
};

}  // namespace layersec::macsec::runner
