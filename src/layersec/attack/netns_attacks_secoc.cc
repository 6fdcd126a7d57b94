// netns-secoc-vendor: `layersec node` publisher and subscriber in their own
// namespaces, the attacker forwarding between them (netns_attacks.h).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/attack/netns_attacks_env.h"
#include "layersec/attack/netns_attacks_frames.h"
#include "layersec/attack/report.h"

namespace layersec::attack::netns {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Key = std::pair<std::size_t, std::uint32_t>;

constexpr std::uint16_t kService = 0x1234;
constexpr std::uint16_t kEvent = 0x8001;
constexpr std::uint16_t kUnboundEvent = 0x8002;
constexpr std::size_t kMacLength = 8;
constexpr std::size_t kPayload = 16;          // the publisher's payload before the restart
constexpr std::size_t kPayloadRestarted = 20;  // and after (tells the two runs apart)
constexpr int kPublishIntervalMs = 5;
constexpr std::size_t kSdFreshness = 8;  // SD PDUs send their 64-bit timestamp FV in full

const char* kServerTemplate = R"({
  "unicast": "10.77.0.1", "network": "attack-server",
  "applications": [{"name": "attack-server", "id": "0x1001"}],
  "service-discovery": {"enable": "true", "multicast": "224.224.224.245", "port": "30490",
    "initial_delay_min": "0", "initial_delay_max": "20", "repetitions_base_delay": "30",
    "repetitions_max": "2", "cyclic_offer_delay": "500", "ttl": "3"},
  "services": [
    {"service": "0x1234", "instance": "0x0001", "unreliable": "30509", "methods": ["0x0001"],
     "eventgroups": [{"eventgroup": "0x0001", "events": ["0x8001"]}]},
    {"service": "0x5ec0", "instance": "0x0001", "unreliable": "30510",
     "eventgroups": [{"eventgroup": "0x0001", "events": ["0x8fff"]}]}],
  "clients": [{"service": "0x5ec0", "instance": "0x0001", "eventgroups": ["0x0001"]}],
  "secoc": {
    "engine": {"senderId": 1, "keyGroups": [{"name": "pair", "algorithm": "cmac-aes256"}],
      "syncTx": {"dataId": 65001, "keyGroup": "pair", "authInfoTxLength": 64, "periodMs": 1000},
      "syncRx": [{"id": 0, "dataId": 65002, "keyGroup": "pair", "authInfoTxLength": 64}],
      "txPdus": [{"id": 0, "profile": "vendor", "dataId": 258, "keyGroup": "pair"},
                 {"id": 1, "profile": "vendor", "dataId": 259, "keyGroup": "pair"}],
      "rxPdus": [{"id": 0, "profile": "vendor", "dataId": 257, "keyGroup": "pair", "syncChannel": 0,
                  "freshnessMode": "reorder-tolerant", "window": 32, "authenticationVerifyAttempts": 2}]},
    "keys": [{"keyGroup": "pair", "keyId": 1, "file": "KEY"}],
    "stateFile": "STATE",
    "bindings": [
      {"service": "0x1234", "instance": "0x0001", "method": "0x0001", "rxPdu": 0, "txPdu": 0},
      {"service": "0x1234", "instance": "0x0001", "event": "0x8001", "txPdu": 1}],
    "sync": {"service": "0x5ec0", "instance": "0x0001", "event": "0x8fff", "rxChannel": 0}},
  "test": {"serve": [{"service": "0x1234", "method": "0x0001", "reply": "echo"}],
           "publish": [{"service": "0x1234", "event": "0x8001", "interval_ms": 5, "payload_size": 16}]}
})";

const char* kClientTemplate = R"({
  "unicast": "10.77.0.2", "network": "attack-client",
  "applications": [{"name": "attack-client", "id": "0x2001"}],
  "service-discovery": {"enable": "true", "multicast": "224.224.224.245", "port": "30490",
    "initial_delay_min": "0", "initial_delay_max": "20", "repetitions_base_delay": "30",
    "repetitions_max": "2", "cyclic_offer_delay": "500", "ttl": "3"},
  "services": [{"service": "0x5ec0", "instance": "0x0001", "unreliable": "30510",
                "eventgroups": [{"eventgroup": "0x0001", "events": ["0x8fff"]}]}],
  "clients": [{"service": "0x1234", "instance": "0x0001", "unreliable": "30501", "eventgroups": ["0x0001"]},
              {"service": "0x5ec0", "instance": "0x0001", "eventgroups": ["0x0001"]}],
  "secoc": {
    "engine": {"senderId": 2, "keyGroups": [{"name": "pair", "algorithm": "cmac-aes256"}],
      "syncTx": {"dataId": 65002, "keyGroup": "pair", "authInfoTxLength": 64, "periodMs": 1000},
      "syncRx": [{"id": 0, "dataId": 65001, "keyGroup": "pair", "authInfoTxLength": 64}],
      "txPdus": [{"id": 0, "profile": "vendor", "dataId": 257, "keyGroup": "pair"}],
      "rxPdus": [{"id": 0, "profile": "vendor", "dataId": 258, "keyGroup": "pair", "syncChannel": 0,
                  "freshnessMode": "reorder-tolerant", "window": 32, "authenticationVerifyAttempts": 2},
                 {"id": 1, "profile": "vendor", "dataId": 259, "keyGroup": "pair", "syncChannel": 0,
                  "freshnessMode": "reorder-tolerant", "window": 32, "authenticationVerifyAttempts": 2}]},
    "keys": [{"keyGroup": "pair", "keyId": 1, "file": "KEY"}],
    "stateFile": "STATE",
    "bindings": [
      {"service": "0x1234", "instance": "0x0001", "method": "0x0001", "txPdu": 0, "rxPdu": 0},
      {"service": "0x1234", "instance": "0x0001", "event": "0x8001", "rxPdu": 1}],
    "sync": {"service": "0x5ec0", "instance": "0x0001", "event": "0x8fff", "rxChannel": 0}},
  "test": {"requests": [{"service": "0x1234", "method": "0x0001", "interval_ms": 200, "payload_size": 8}]}
})";

// `secured` false: the same node without its "secoc" section (the
// unsecured baseline: plain SOME/IP, unprotected SD).
std::string node_config(const char* tmpl, bool secured, const std::string& key, const std::string& state,
                        std::size_t payload) {
  json j = json::parse(tmpl);
  if (secured) {
    j["secoc"]["keys"][0]["file"] = key;
    j["secoc"]["stateFile"] = state;
  } else {
    j.erase("secoc");
  }
  if (j["test"].contains("publish")) {
    j["test"]["publish"][0]["payload_size"] = payload;
    j["test"]["publish"][0]["interval_ms"] = kPublishIntervalMs;
  }
  return j.dump(2) + "\n";
}

std::uint64_t read_trip(const std::string& state_file) {
  std::istringstream in(read_log(state_file));
  std::string word;
  while (in >> word)
    if (word == "tx_trip") {
      std::uint64_t t = 0;
      in >> t;
      return t;
    }
  return 0;
}

class SecocRun {
 public:
  SecocRun(const AttackOptions& options, bool secured)
      : options_(options),
        secured_(secured),
        rng_(options.seed ^ (secured ? 0x6e65746e73ULL : 0x706c61696eULL)),
        topo_(secured ? "s" : "u", "02:00:00:7b:00:01", "02:00:00:7b:00:02") {
    for (int i = 0; i < 2; ++i) {
      const std::string ns = i == 0 ? topo_.ns_a() : topo_.ns_b();
      MitmTopology::ip({"-n", ns, "addr", "add", i == 0 ? "10.77.0.1/24" : "10.77.0.2/24", "dev", "eth0"});
      MitmTopology::ip({"-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0"});
    }
    const std::string key = dir_.write("pair.key", random_hex(32) + "\n");
    server_state_ = dir_.path() + "/server.secoc-state";
    server_cfg_ = dir_.write("server.json", node_config(kServerTemplate, secured, key, server_state_, kPayload));
    server_cfg2_ =
        dir_.write("server2.json", node_config(kServerTemplate, secured, key, server_state_, kPayloadRestarted));
    client_cfg_ = dir_.write("client.json",
                             node_config(kClientTemplate, secured, key, dir_.path() + "/client.secoc-state", 0));
    sub_log_ = dir_.path() + "/client.out";
    mitm_.emplace(topo_);
    pub_.emplace(start_node(topo_.ns_a(), server_cfg_, dir_.path() + "/server.out", true));
    sub_.emplace(start_node(topo_.ns_b(), client_cfg_, sub_log_, true));
  }

  ~SecocRun() {
    if (sub_) (void)sub_->terminate();
    if (pub_) (void)pub_->terminate();
  }

  std::vector<AttackRow> run() {
    wait_for_events(kPayload, "the subscriber received no event within 15 s (SD, subscription or sync failed)");
    (void)consume();
    std::vector<AttackRow> rows;
    rows.push_back(replay());
    for (TamperRegion r : {TamperRegion::kHeader, TamperRegion::kPayload, TamperRegion::kAuth})
      if (secured_ || r != TamperRegion::kAuth) rows.push_back(tamper(r));
    rows.push_back(forge());
    rows.push_back(relabel());
    rows.push_back(sd_spoof());
    if (secured_) rows.push_back(restart());  // the unsecured node has no freshness state to lose
    return rows;
  }

 private:
  net::ChildProcess start_node(const std::string& ns, const std::string& cfg, const std::string& log, bool first) {
    std::vector<std::string> argv{program_, "node", "--config", cfg, "--json", "--seed", "1"};
    if (first) argv.push_back("--first-start");
    return MitmTopology::spawn(ns, argv, log);
  }

  // The publisher's notification, unchanged, as it left the publisher.
  bool is_event(const Frame& f, bool from_a) const {
    if (!from_a) return false;
    const auto n = locate_notification(f);
    return n && n->service == kService && n->event == kEvent;
  }

  std::optional<Key> key_of(const Frame& f) {
    const auto n = locate_notification(f);
    if (!n || n->payload_length < 4) return std::nullopt;
    if (auth_length_ == 0 && secured_) {
      const std::size_t data = pub_payload_;
      if (n->payload_length > data) auth_length_ = n->payload_length - data;
    }
    if (n->payload_length < auth_length_) return std::nullopt;
    const auto seq = notification_sequence(f);
    if (!seq) return std::nullopt;
    return Key{n->payload_length - auth_length_, *seq};
  }

  // Forwards with `hook`; notifications forwarded unchanged become
  // legitimate traffic (into `phase_legit` when given). SD offers of the
  // publisher are kept as templates. `tick` runs every loop iteration.
  void forward(milliseconds d, const Mitm::Hook& hook, std::set<Key>* phase_legit,
               const std::function<bool()>& tick = {}) {
    mitm_->run(
        d,
        [&](Frame& f, bool from_a) {
          if (from_a && is_sd(f)) {
            Frame probe = f;
            if (sd_stop_offer(probe, kService) > 0) sd_template_ = f;
          }
          if (!from_a) {
            const auto u = locate_udp(f);
            if (u && u->dst_ip == kHijackIp) ++hijack_followed_;
            if (!u && f.size() >= 42 && f[12] == 0x08 && f[13] == 0x06) {
              const std::uint32_t target = (std::uint32_t{f[38]} << 24) | (std::uint32_t{f[39]} << 16) |
                                           (std::uint32_t{f[40]} << 8) | f[41];
              if (target == kHijackIp) ++hijack_followed_;
            }
          }
          const bool event = is_event(f, from_a);
          const Frame before = event ? f : Frame{};
          if (hook && !hook(f, from_a)) return false;
          if (event && f == before) {
            if (auto k = key_of(f)) {
              untouched_.insert(*k);
              if (phase_legit) phase_legit->insert(*k);
            }
          }
          return true;
        },
        tick);
  }

  void settle() { forward(milliseconds(400), {}, nullptr); }

  Judged consume() {
    const std::string text = read_log(sub_log_);
    const std::string fresh = text.size() > offset_ ? text.substr(offset_) : std::string();
    // Only whole lines: a line being written stays for the next phase.
    const std::size_t end = fresh.rfind('\n');
    const std::string lines = end == std::string::npos ? std::string() : fresh.substr(0, end + 1);
    offset_ += lines.size();
    return judge_lines(lines, kService, kEvent, untouched_, seen_);
  }

  void wait_for_events(std::size_t payload, const std::string& error) {
    auto last = std::chrono::steady_clock::now();
    bool got = false;
    forward(
        milliseconds(15000), {}, nullptr, [&] {
          const auto now = std::chrono::steady_clock::now();
          if (now - last < milliseconds(100)) return false;
          last = now;
          const std::string text = read_log(sub_log_);
          const std::string needle = "\"size\":" + std::to_string(payload) + ",";
          std::istringstream in(text.size() > offset_ ? text.substr(offset_) : std::string());
          std::string line;
          while (std::getline(in, line))
            if (line.find("\"type\":\"event\"") != std::string::npos && line.find(needle) != std::string::npos) {
              got = true;
              return true;
            }
          return false;
        });
    if (!got) throw std::runtime_error(error);
  }

  AttackRow finish(const std::string& cls, std::uint64_t attempts, const std::set<Key>& phase_legit,
                   const std::string& note) {
    settle();
    const Judged j = consume();
    AttackRow row;
    row.layer = secured_ ? "secoc" : "someip";
    row.configuration = secured_ ? "netns-secoc-vendor" : "netns-someip-unsecured";
    row.acceptance_expected = !secured_;
    row.attack_class = cls;
    row.attempts = attempts;
    row.accepted = j.accepted;
    row.rejected = j.rejections;
    stop_offers_ = j.stop_offers;
    std::uint64_t got = 0;
    for (const Key& k : phase_legit) got += seen_.count(k);
    row.legit_delivered = got;
    row.legit_lost = phase_legit.size() - got;
    std::uint64_t refused = 0;
    for (const auto& [reason, n] : j.rejections) refused += n;
    if (attempts > row.accepted + refused) row.rejected["dropped-unreported"] = attempts - row.accepted - refused;
    row.note = note;
    return row;
  }

  // Injects `pending` frames (in order) one per loop iteration.
  std::function<bool()> drain(std::vector<Frame>& pending, std::uint64_t& sent, std::uint64_t target) {
    return [this, &pending, &sent, target] {
      for (const Frame& f : pending) mitm_->inject(f, true);
      pending.clear();
      return sent >= target;
    };
  }

  milliseconds budget() const { return milliseconds(20000 + options_.attempts * 4 * kPublishIntervalMs); }

  // One injected copy per notification, right after it.
  template <class Make>
  AttackRow injected(const std::string& cls, Make make, const std::string& note) {
    std::set<Key> legit;
    std::vector<Frame> pending;
    std::uint64_t sent = 0;
    forward(
        budget(),
        [&](Frame& f, bool from_a) {
          if (is_event(f, from_a) && sent < options_.attempts) {
            Frame copy = f;
            if (make(copy)) {
              pending.push_back(std::move(copy));
              ++sent;
            }
          }
          return true;
        },
        &legit, drain(pending, sent, options_.attempts));
    for (const Frame& f : pending) mitm_->inject(f, true);
    return finish(cls, sent, legit, note);
  }

  AttackRow replay() {
    return injected(
        "N.replay", [](Frame&) { return true; },
        "the attacker re-sends each notification at once after forwarding it (duplicate FV)");
  }

  AttackRow tamper(TamperRegion region) {
    std::set<Key> legit;
    std::uint64_t sent = 0;
    std::uint64_t seen = 0;
    forward(
        budget(),
        [&](Frame& f, bool from_a) {
          if (!is_event(f, from_a) || sent >= options_.attempts) return true;
          if (seen++ % 2 == 1) return true;  // every other one passes untouched
          (void)key_of(f);                   // learn the trailer length first
          if (tamper_notification(f, region, auth_length_, rng_)) ++sent;
          return true;
        },
        &legit, [&] { return sent >= options_.attempts; });
    return finish(std::string("N.tamper.") + to_string(region), sent, legit,
                  std::string("in the middle: flips one bit of the ") + to_string(region) +
                      " of every other notification (checksums fixed), the rest pass");
  }

  AttackRow forge() {
    return injected(
        "N.forge",
        [this](Frame& f) {
          (void)key_of(f);
          // The next counter value, so the MAC is what decides.
          if (!secured_) return forge_notification(f, 0xEE, 0, 0, rng_);
          return forge_notification(f, 0xEE, auth_length_, kMacLength, rng_) &&
                 bump_freshness(f, auth_length_ - kMacLength, kMacLength, 1);
        },
        "the attacker's payload on the publisher's header, FV one ahead of the publisher's, MAC under "
        "another key (random)");
  }

  AttackRow relabel() {
    return injected(
        "N.relabel", [](Frame& f) { return relabel_notification(f, kUnboundEvent); },
        "a copy of each notification relabelled to event 0x8002 (offered nowhere, bound to no PDU)");
  }

  static constexpr std::uint32_t kHijackIp = (10u << 24) | (77u << 16) | 66u;

  AttackRow sd_spoof() {
    if (!sd_template_) forward(milliseconds(1500), {}, nullptr, [this] { return sd_template_.has_value(); });
    if (!sd_template_) throw std::runtime_error("no SD offer of the publisher was seen");
    std::set<Key> legit;
    std::uint64_t sent = 0;
    hijack_followed_ = 0;
    auto last = std::chrono::steady_clock::now();
    forward(budget(), {}, &legit, [&] {
      const auto now = std::chrono::steady_clock::now();
      if (sent >= options_.attempts) return true;
      if (now - last < milliseconds(2)) return false;
      last = now;
      Frame f = *sd_template_;
      // A timestamp FV just after the latest real offer's: judged on the MAC.
      if (secured_) (void)bump_freshness(f, kSdFreshness, kMacLength, 1 + sent);
      if (sent % 2 == 0) {
        (void)sd_stop_offer(f, kService);
      } else {
        (void)sd_hijack_endpoint(f, kHijackIp);
      }
      mitm_->inject(f, true);
      ++sent;
      return false;
    });
    forward(milliseconds(600), {}, nullptr);  // time for a hijacked client to send its requests
    AttackRow row = finish("N.sd-spoof", sent, legit,
                           "the publisher's SD offer from its address as StopOffer (TTL 0) and, alternately, "
                           "with its endpoint moved to 10.77.0.66");
    // Counted: StopOffers the subscriber acted on (availability lines, in
    // finish's "stop_offers_"), and frames it sent towards the hijacked
    // endpoint (ARP for it or datagrams to it).
    row.accepted += hijack_followed_ + stop_offers_;
    // Unprotected SD: the accepted StopOffers cut the subscription, so the
    // baseline loses events by the attack's own effect.
    row.loss_allowed = !secured_;
    if (row.rejected.count("dropped-unreported") > 0) {
      const std::uint64_t d = row.rejected["dropped-unreported"];
      const std::uint64_t acted = hijack_followed_ + stop_offers_;
      if (d > acted) {
        row.rejected["dropped-unreported"] = d - acted;
      } else {
        row.rejected.erase("dropped-unreported");
      }
    }
    return row;
  }

  AttackRow restart() {
    // 1. The capture: `attempts` notifications of the first run.
    std::vector<Frame> capture;
    forward(
        budget(),
        [&](Frame& f, bool from_a) {
          if (is_event(f, from_a) && capture.size() < options_.attempts) capture.push_back(f);
          return true;
        },
        nullptr, [&] { return capture.size() >= options_.attempts; });
    settle();
    (void)consume();
    const std::uint64_t trip_before = read_trip(server_state_);
    // 2. kill -9 and a restart with the same state file (no --first-start).
    kill_hard(*pub_);
    pub_.reset();
    pub_.emplace(start_node(topo_.ns_a(), server_cfg2_, dir_.path() + "/server2.out", false));
    pub_payload_ = kPayloadRestarted;
    wait_for_events(kPayloadRestarted, "the subscriber received nothing from the restarted publisher within 15 s");
    const std::uint64_t trip_after = read_trip(server_state_);
    (void)consume();
    // 3. The replay of the first run's capture into the subscriber.
    std::set<Key> legit;
    std::vector<Frame> pending;
    std::uint64_t sent = 0;
    std::size_t next = 0;
    forward(
        budget(),
        [&](Frame& f, bool from_a) {
          if (is_event(f, from_a) && next < capture.size()) {
            pending.push_back(capture[next++]);
            ++sent;
          }
          return true;
        },
        &legit, drain(pending, sent, capture.size()));
    for (const Frame& f : pending) mitm_->inject(f, true);
    AttackRow row = finish("N.restart", sent, legit,
                           "kill -9 of the publisher, restart on its state file (tx_trip " +
                               std::to_string(trip_before) + " -> " + std::to_string(trip_after) +
                               "), then the pre-restart capture replayed");
    if (trip_after <= trip_before) {
      // The restarted publisher reuses freshness values: count it.
      row.accepted += 1;
      row.note += "; FINDING: the trip counter did not advance";
    }
    return row;
  }

  AttackOptions options_;
  bool secured_;
  std::mt19937_64 rng_;
  const std::string program_ = self_program();
  MitmTopology topo_;
  TempDir dir_;
  std::optional<Mitm> mitm_;
  std::optional<net::ChildProcess> pub_;
  std::optional<net::ChildProcess> sub_;
  std::string server_state_, server_cfg_, server_cfg2_, client_cfg_, sub_log_;
  std::size_t offset_ = 0;
  std::size_t pub_payload_ = kPayload;
  std::size_t auth_length_ = 0;
  std::set<Key> untouched_;
  std::set<Key> seen_;
  std::optional<Frame> sd_template_;
  std::uint64_t hijack_followed_ = 0;
  std::uint64_t stop_offers_ = 0;
};

}  // namespace

std::vector<AttackRow> run_secoc(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  for (bool secured : {false, true}) {
    SecocRun run(options, secured);
    auto got = run.run();
    rows.insert(rows.end(), got.begin(), got.end());
  }
  return rows;
}

}  // namespace layersec::attack::netns
