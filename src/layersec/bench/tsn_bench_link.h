// One end of a `layersec bench tsn` link: a TAP interface over a veth end in
// a network namespace with the TSN first hop (classification and tagging,
// the time-aware shaper on CLOCK_TAI at the emulated port speed, the checked
// tag pop on receive), either with MACsec (macsec::TapLink over a SecY with
// static keys: the same code `layersec macsec up --tsn` runs) or without (the
// same TSN path and shaper, frames sent as they are), each on its own thread
// with its own net::EventLoop (whose shaper timer sets the thread's timer
// slack to 1 ns; optionally SCHED_FIFO). Root only. Start-up failures throw
// std::runtime_error naming the step.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link_tsn_config.h"
#include "layersec/macsec/secy.h"
#include "layersec/net/frame.h"
#include "layersec/tsn/pass_through.h"

namespace layersec::bench {

struct BenchLinkSpec {
  std::string netns;              // namespace of the lower interface
  std::string lower;              // the veth end
  std::string tap;                // TAP to create
  net::MacAddress tap_mac;        // differs from the veth's, so the kernel ignores our frames on the veth
  bool macsec = false;
  macsec::Sci sci;                // MACsec: ours
  macsec::Sci peer_sci;           // MACsec: the peer's
  std::vector<std::uint8_t> tx_key, rx_key;  // MACsec: 16-octet SAKs (GCM-AES-128)
  macsec::LinkTsnConfig tsn;
  int realtime_priority = 0;      // > 0: the link's thread runs SCHED_FIFO at it
  int timed_class = 1;            // the class whose pass-through the link times (tsn/pass_through.h)
};

class BenchLink {
 public:
  // Opens the TAP and the lower socket inside spec.netns, brings the TAP up
  // and starts the link's thread.
  static std::unique_ptr<BenchLink> start(const BenchLinkSpec& spec);
  virtual ~BenchLink() = default;
  // Stops the thread (idempotent); stats() is stable afterwards.
  virtual void stop() = 0;
  // {"macsec": SecY and link counters (MACsec only), "tsn": {path, shaper},
  //  "realtime": "" (SCHED_FIFO in effect, or not asked for) or why not}.
  [[nodiscard]] virtual nlohmann::json stats() const = 0;
  // Per-frame pass-through times of spec.timed_class (after stop()).
  [[nodiscard]] virtual const tsn::PassThroughTimes& times() const = 0;
};

// {"egress_in"|"egress_out"|"ingress": {"count", "p50", "p99", "max"} (us) or null}.
[[nodiscard]] nlohmann::json pass_through_json(const tsn::PassThroughTimes& t);

}  // namespace layersec::bench
