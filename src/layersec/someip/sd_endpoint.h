// SD session handling per communication relation and peer reboot detection
// (Open SOME/IP Specification feat_req_someipsd_32..41, 764, 1148).
//
// Sending: one Session ID counter for the multicast relation and one per
// unicast peer. Each starts at 1, never takes 0, wraps 0xFFFF -> 1, and its
// reboot flag stays set until that counter wraps (feat_req_someipsd_40/41).
// The unicast flag is always set (feat_req_someipsd_100).
//
// Receiving: per peer (SD endpoint) and per relation (multicast, unicast) the
// last (session, reboot flag) is kept; a reboot is detected when
//   old.reboot == 0 && new.reboot == 1, or
//   old.reboot == 1 && new.reboot == 1 && old.session >= new.session.
//
// Both tables are bounded (max_peers); the least recently used peer is
// forgotten when full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layersec/someip/address.h"

namespace layersec::someip {

// One Session ID counter with its reboot flag.
class SdSessionCounter {
 public:
  struct Stamp {
    std::uint16_t session_id;
    bool reboot;
  };
  // The stamp for the next message; advances the counter.
  Stamp take();
  [[nodiscard]] std::uint16_t peek() const { return next_; }

 private:
  std::uint16_t next_ = 1;
  bool reboot_ = true;
};

class SdEndpoint {
 public:
  explicit SdEndpoint(std::size_t max_peers = 256) : max_peers_(max_peers) {}

  struct TxStamp {
    std::uint16_t session_id;
    std::uint8_t flags;  // reboot (maybe) | unicast
  };
  // Session and flags for the next message to the multicast group, or to
  // unicast peer `peer`.
  TxStamp next_multicast();
  TxStamp next_unicast(const Endpoint& peer);

  // Records a received SD message; true when it shows the peer rebooted.
  bool observe(const Endpoint& peer, bool via_multicast, std::uint16_t session_id, bool reboot);
  // Forgets what was observed of every peer (e.g. after our own restart).
  void reset_observations() { rx_.clear(); }
  [[nodiscard]] std::size_t tracked_peers() const { return rx_.size(); }

 private:
  struct RxRelation {
    bool seen = false;
    std::uint16_t session = 0;
    bool reboot = false;
  };
  struct RxPeer {
    Endpoint peer;
    RxRelation multicast;
    RxRelation unicast;
    std::uint64_t last_use = 0;
  };
  struct TxPeer {
    Endpoint peer;
    SdSessionCounter counter;
    std::uint64_t last_use = 0;
  };
  std::size_t max_peers_;
  std::uint64_t tick_ = 0;
  SdSessionCounter multicast_;
  std::vector<TxPeer> tx_;
  std::vector<RxPeer> rx_;
};

}  // namespace layersec::someip
