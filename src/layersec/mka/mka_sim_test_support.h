// A deterministic in-memory LAN for MKA tests: participants on one shared
// segment (every MKPDU reaches every other node after `latency`), each
// with a FakeSecY, driven by their deadlines on a fake clock. A toy data
// plane sends a frame from every transmitting node every `data_interval`
// and counts, per receiver, frames delivered and frames lost (the receiver
// counts the sender as a live peer, yet has no receive SA holding the
// sender's SAK: exactly what make-before-break must prevent).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/participant.h"

namespace layersec::mka::testing {

inline std::uint64_t sci_of(std::uint8_t last_mac_octet, std::uint16_t port = 1) {
  return (std::uint64_t{0x020000000000ULL | last_mac_octet} << 16) | port;
}

inline SecretBytes test_cak(std::uint8_t fill = 0x11, std::size_t n = 16) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(fill + i);
  return SecretBytes(v);
}

inline std::vector<std::uint8_t> test_ckn() { return {0xC0, 0xFF, 0xEE, 0x01, 0x02, 0x03, 0x04, 0x05}; }

inline TimePoint at_ms(std::int64_t ms) { return TimePoint::from_ns(ms * 1000000); }

class Sim {
 public:
  struct Node {
    std::string name;
    std::uint64_t sci = 0;
    ParticipantConfig config;
    std::uint8_t cak_fill = 0x11;
    std::unique_ptr<FakeSecY> secy;
    std::unique_ptr<DeterministicRandom> rng;
    std::unique_ptr<Participant> p;
    bool up = false;
    std::vector<Event> events;
    std::vector<SaAction> actions;
    std::vector<DropReason> drops;
    std::uint64_t data_sent = 0;
    std::uint64_t data_delivered = 0;
    std::uint64_t data_lost = 0;          // sender live here, yet no matching receive SA
    std::uint64_t first_delivery_ns = 0;  // when this node first received a protected frame
    int incarnation = 0;
  };
  struct InFlight {
    TimePoint at;
    std::size_t from;
    std::vector<std::uint8_t> frame;
  };

  Duration latency = Duration::milliseconds(1);
  Duration data_interval = Duration::milliseconds(10);
  Duration pn_report_interval = Duration::seconds(1);
  std::size_t cak_len = 16;  // every node's CAK length (set before add())
  TimePoint now{};
  std::vector<Node> nodes;
  std::uint64_t sequence = 0;
  // Return false to drop the MKPDU from `from` to `to` (or rewrite `frame`).
  std::function<bool(std::size_t from, std::size_t to, std::vector<std::uint8_t>& frame)> filter;
  struct Tapped {
    TimePoint at;
    std::size_t from;
    std::vector<std::uint8_t> frame;
  };
  std::vector<Tapped> tap;  // every MKPDU sent

  std::size_t add(const std::string& name, std::uint64_t sci, std::uint8_t priority,
                  const std::function<void(ParticipantConfig&)>& tweak = {}, std::uint8_t cak_fill = 0x11) {
    Node n;
    n.name = name;
    n.sci = sci;
    n.config.sci = sci;
    n.config.ckn = test_ckn();
    n.config.key_server_priority = priority;
    if (tweak) tweak(n.config);
    n.cak_fill = cak_fill;
    nodes.push_back(std::move(n));
    const std::size_t i = nodes.size() - 1;
    build(i);
    return i;
  }
  // A fresh participant (new MI, new SecY): a process restart.
  void build(std::size_t i) {
    Node& n = nodes[i];
    ++n.incarnation;
    n.first_delivery_ns = 0;
    n.secy = std::make_unique<FakeSecY>(n.sci, &sequence);
    n.rng = std::make_unique<DeterministicRandom>(n.sci * 7919 + static_cast<std::uint64_t>(n.incarnation));
    n.p = std::make_unique<Participant>(n.config, test_cak(n.cak_fill, cak_len), *n.secy, *n.rng);
  }
  void start(std::size_t i) {
    nodes[i].up = true;
    apply(i, nodes[i].p->start(now));
  }
  // The node vanishes (cable pulled, process killed): no more frames either way.
  void kill(std::size_t i) { nodes[i].up = false; }
  void restart(std::size_t i) {
    build(i);
    start(i);
  }

  void apply(std::size_t i, Output out) {
    Node& n = nodes[i];
    for (auto& f : out.frames) {
      tap.push_back(Tapped{now, i, f});
      in_flight_.push_back(InFlight{now + latency, i, std::move(f)});
    }
    n.events.insert(n.events.end(), out.events.begin(), out.events.end());
    n.actions.insert(n.actions.end(), out.sa_actions.begin(), out.sa_actions.end());
    if (out.dropped) n.drops.push_back(*out.dropped);
  }
  // Delivers `frame` to node `to` now, as if it came off the wire.
  Output inject(std::size_t to, const std::vector<std::uint8_t>& frame) {
    Output out = nodes[to].p->on_mkpdu(frame, now);
    Output copy = out;
    apply(to, std::move(copy));
    return out;
  }

  void run_until(TimePoint end) {
    for (int guard = 0; guard < 10000000; ++guard) {
      TimePoint next = TimePoint::max();
      for (const auto& f : in_flight_) next = std::min(next, f.at);
      for (const auto& n : nodes) {
        if (n.up) next = std::min(next, n.p->next_deadline());
      }
      next = std::min(next, next_data_);
      next = std::min(next, next_pn_);
      if (next > end) break;
      if (next < now) next = now;
      now = next;
      deliver_frames();
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].up && nodes[i].p->next_deadline() <= now) apply(i, nodes[i].p->on_timer(now));
      }
      if (now >= next_data_) {
        data_tick();
        next_data_ = now + data_interval;
      }
      if (now >= next_pn_) {
        for (std::size_t i = 0; i < nodes.size(); ++i) {
          const FakeSecY::TxSa* sa = nodes[i].secy->encoding_sa();
          if (nodes[i].up && sa != nullptr) apply(i, nodes[i].p->on_tx_pn(sa->next_pn, now));
        }
        next_pn_ = now + pn_report_interval;
      }
    }
    now = std::max(now, end);
  }
  void run_for(Duration d) { run_until(now + d); }

  // ---- queries
  Participant& p(std::size_t i) { return *nodes[i].p; }
  FakeSecY& secy(std::size_t i) { return *nodes[i].secy; }
  std::string tx_fingerprint(std::size_t i) {
    const auto* sa = nodes[i].secy->encoding_sa();
    return sa == nullptr ? "" : sa->fingerprint;
  }
  std::uint64_t total_lost() const {
    std::uint64_t n = 0;
    for (const auto& x : nodes) n += x.data_lost;
    return n;
  }
  std::size_t count_events(std::size_t i, EventType t) const {
    return static_cast<std::size_t>(std::count_if(nodes[i].events.begin(), nodes[i].events.end(),
                                                  [&](const Event& e) { return e.type == t; }));
  }
  const Event* last_event(std::size_t i, EventType t) const {
    for (auto it = nodes[i].events.rbegin(); it != nodes[i].events.rend(); ++it) {
      if (it->type == t) return &*it;
    }
    return nullptr;
  }
  // The last MKPDU node `i` sent (empty if none).
  std::vector<std::uint8_t> last_sent(std::size_t i) const {
    for (auto it = tap.rbegin(); it != tap.rend(); ++it) {
      if (it->from == i) return it->frame;
    }
    return {};
  }
  bool is_live_peer(std::size_t at, std::uint64_t sci) const {
    for (const auto& pi : nodes[at].p->peers()) {
      if (pi.live && pi.sci == sci) return true;
    }
    return false;
  }

 private:
  void deliver_frames() {
    std::vector<InFlight> due;
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
      if (it->at <= now) {
        due.push_back(std::move(*it));
        it = in_flight_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& f : due) {
      if (!nodes[f.from].up) continue;  // killed before its frame left
      for (std::size_t to = 0; to < nodes.size(); ++to) {
        if (to == f.from || !nodes[to].up) continue;
        std::vector<std::uint8_t> copy = f.frame;
        if (filter && !filter(f.from, to, copy)) continue;
        apply(to, nodes[to].p->on_mkpdu(copy, now));
      }
    }
  }
  void data_tick() {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].up) continue;
      const auto frame = nodes[i].secy->send();
      if (!frame) continue;
      ++nodes[i].data_sent;
      for (std::size_t to = 0; to < nodes.size(); ++to) {
        if (to == i || !nodes[to].up) continue;
        if (nodes[to].secy->receive(*frame)) {
          ++nodes[to].data_delivered;
          if (nodes[to].first_delivery_ns == 0) nodes[to].first_delivery_ns = static_cast<std::uint64_t>(now.ns());
        } else if (is_live_peer(to, nodes[i].sci) && nodes[to].secy->encoding_sa() != nullptr) {
          ++nodes[to].data_lost;
        }
      }
    }
  }

  std::vector<InFlight> in_flight_;
  TimePoint next_data_{};
  TimePoint next_pn_{};
};

}  // namespace layersec::mka::testing
