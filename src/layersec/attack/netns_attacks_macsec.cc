// netns-macsec-gcm-aes-128: `layersec macsec up` in two namespaces, the
// attacker forwarding between their lower interfaces (netns_attacks.h). The
// runner sends tagged frames into A's TAP (ms0) and counts what comes out
// of B's TAP; B's exit statistics give the SecY's reasons.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/attack/netns_attacks_env.h"
#include "layersec/attack/netns_attacks_frames.h"
#include "layersec/attack/report.h"

namespace layersec::attack::netns {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr std::uint16_t kLegitType = 0x88B5;  // IEEE local experimental EtherType
constexpr std::uint16_t kMacsecType = 0x88E5;
const std::uint8_t kMacA[6] = {0x02, 0x00, 0x00, 0x7c, 0x00, 0x01};
const std::uint8_t kMacB[6] = {0x02, 0x00, 0x00, 0x7c, 0x00, 0x02};
const std::string kConfiguration = "netns-macsec-gcm-aes-128";

bool is_macsec(const Frame& f) { return f.size() > 14 && ((f[12] << 8) | f[13]) == kMacsecType; }

Frame ethernet(const std::uint8_t* dst, const std::uint8_t* src, std::uint16_t type) {
  Frame f(dst, dst + 6);
  f.insert(f.end(), src, src + 6);
  f.push_back(static_cast<std::uint8_t>(type >> 8));
  f.push_back(static_cast<std::uint8_t>(type));
  return f;
}

Frame legit_frame(std::uint32_t seq) {
  Frame f = ethernet(kMacB, kMacA, kLegitType);
  for (char c : std::string("LGIT")) f.push_back(static_cast<std::uint8_t>(c));
  for (int i = 0; i < 4; ++i) f.push_back(static_cast<std::uint8_t>(seq >> (24 - 8 * i)));
  f.resize(60, 0);
  return f;
}

// A plain frame with the attacker's marker: kinds 0 (local EtherType to B),
// 1 (IPv4/UDP to B), 2 (local EtherType, broadcast).
Frame plain_frame(std::uint64_t i) {
  static const std::uint8_t kBroadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  const int kind = static_cast<int>(i % 3);
  Frame f = ethernet(kind == 2 ? kBroadcast : kMacB, kMacA, kind == 1 ? 0x0800 : kLegitType);
  Frame body;
  if (kind == 1) {
    // IPv4 10.78.0.1 -> 10.78.0.2, UDP 40000 -> 9001.
    body = {0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 78, 0, 1, 10, 78, 0, 2,
            0x9c, 0x40, 0x23, 0x29, 0, 0, 0, 0};
  }
  for (char c : std::string("ATCK")) body.push_back(static_cast<std::uint8_t>(c));
  for (int b = 0; b < 4; ++b) body.push_back(static_cast<std::uint8_t>(i >> (24 - 8 * b)));
  body.resize(std::max<std::size_t>(body.size(), 40), 0);
  if (kind == 1) {
    body[2] = static_cast<std::uint8_t>(body.size() >> 8);
    body[3] = static_cast<std::uint8_t>(body.size());
    const std::size_t udp = body.size() - 20;
    body[24] = static_cast<std::uint8_t>(udp >> 8);
    body[25] = static_cast<std::uint8_t>(udp);
  }
  f.insert(f.end(), body.begin(), body.end());
  refresh(f);
  return f;
}

bool contains_marker(const Frame& f) {
  static const std::uint8_t m[4] = {'A', 'T', 'C', 'K'};
  return std::search(f.begin(), f.end(), m, m + 4) != f.end();
}

net::PacketSocket open_tap(const std::string& ns, std::uint16_t type, net::ChildProcess& link) {
  for (int i = 0; i < 200; ++i) {
    {
      net::NetnsScope scope(ns);
      auto s = net::PacketSocket::open("ms0", type, true);
      if (s) return std::move(s).value();
    }
    if (!link.running()) throw std::runtime_error("layersec macsec up exited in " + ns);
    std::this_thread::sleep_for(milliseconds(50));
  }
  throw std::runtime_error("the MACsec interface ms0 did not come up in " + ns);
}

// The last JSON object of a `macsec up` log (its exit statistics).
json exit_stats(const std::string& log) {
  const std::string text = read_log(log);
  std::size_t at = text.rfind("\n{\n");
  at = at == std::string::npos ? (text.rfind("{\n", 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (at == std::string::npos) return json::object();
  json j = json::parse(text.substr(at), nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

std::uint64_t stat(const json& j, const char* section, const char* name) {
  if (!j.contains(section) || !j[section].contains(name) || !j[section][name].is_number_unsigned()) return 0;
  return j[section][name].get<std::uint64_t>();
}

class MacsecRun {
 public:
  explicit MacsecRun(const AttackOptions& options)
      : options_(options), rng_(options.seed ^ 0x6d61637365ULL), topo_("m", "02:00:00:7c:00:01", "02:00:00:7c:00:02") {
    const std::string ka = dir_.write("a.key", random_hex(16) + "\n");
    const std::string kb = dir_.write("b.key", random_hex(16) + "\n");
    const auto cfg = [&](const std::string& tx, const std::string& rx, const std::string& peer_sci,
                         const std::string& pn) {
      json j{{"cipher_suite", "GCM-AES-128"},
             {"pn_state_file", dir_.path() + "/" + pn},
             {"tx", {{"sas", json::array({{{"an", 0}, {"key_file", tx}}})}}},
             {"rx", json::array({{{"sci", peer_sci}, {"sas", json::array({{{"an", 0}, {"key_file", rx}}})}}})}};
      return j.dump(2) + "\n";
    };
    const std::string ca = dir_.write("a.json", cfg(ka, kb, "0200007c00020001", "a.pn-state"));
    cfg_b_ = dir_.write("b.json", cfg(kb, ka, "0200007c00010001", "b.pn-state"));
    mitm_.emplace(topo_);
    link_a_.emplace(MitmTopology::spawn(
        topo_.ns_a(), {program_, "macsec", "up", "--link", "eth0", "--name", "ms0", "--config", ca, "--new-key"},
        dir_.path() + "/a.out"));
    tx_.emplace(open_tap(topo_.ns_a(), kLegitType, *link_a_));
    start_b();
  }

  // B runs once per class, so its exit statistics are the class's: the
  // first start provisions its PN state, later ones resume from it.
  void start_b() {
    log_b_ = dir_.path() + "/b" + std::to_string(b_runs_) + ".out";
    std::vector<std::string> argv{program_, "macsec", "up", "--link", "eth0", "--name", "ms0", "--config", cfg_b_};
    if (b_runs_++ == 0) argv.emplace_back("--new-key");
    untouched_at_b_start_ = untouched_macsec_;
    link_b_.emplace(MitmTopology::spawn(topo_.ns_b(), argv, log_b_));
    rx_.emplace(open_tap(topo_.ns_b(), net::kEtherTypeAll, *link_b_));
  }

  json stop_b() {
    rx_.reset();
    (void)link_b_->terminate();
    link_b_.reset();
    const json st = exit_stats(log_b_);
    if (!st.contains("secy") || !st.contains("link"))
      throw std::runtime_error("layersec macsec up in B printed no statistics at exit");
    return st;
  }

  // Runs one class on a fresh B, then takes B's reasons for it.
  AttackRow with_fresh_b(AttackRow (MacsecRun::*cls)(), bool first) {
    if (!first) {
      start_b();
      const std::uint64_t before = received_;
      forward(milliseconds(10000), {}, [&] { return received_ > before; });
      if (received_ == before) throw std::runtime_error("no legitimate frame crossed the restarted MACsec link");
    }
    AttackRow row = (this->*cls)();
    const json st = stop_b();
    if (cls == &MacsecRun::tamper || cls == &MacsecRun::soak) {
      // B's own count: every frame its SecY passed needs an untouched
      // MACsec frame; more passed than the attacker left untouched in B's
      // lifetime means a tampered one was accepted.
      const std::uint64_t ok = stat(st, "secy", "InPktsOK");
      const std::uint64_t untouched = untouched_macsec_ - untouched_at_b_start_;
      if (ok > untouched) row.accepted += ok - untouched;
    }
    for (const char* name : {"rx_not_macsec", "rx_not_for_us"})
      if (const std::uint64_t v = stat(st, "link", name); v > 0) row.rejected[name] = v;
    for (const auto& [name, value] : st["secy"].items()) {
      if (name.rfind("InPkts", 0) != 0 || !value.is_number_unsigned() || value.get<std::uint64_t>() == 0) continue;
      if (name == "InPktsOK" || name == "InPktsNoTag") continue;  // InPktsNoTag: the same frames as rx_not_macsec
      row.rejected[name] = value.get<std::uint64_t>();
    }
    const std::uint64_t refused = total_rejected(row);
    if (row.attempts > row.accepted + refused) row.rejected["dropped-unreported"] = row.attempts - row.accepted - refused;
    return row;
  }

  ~MacsecRun() {
    if (link_a_) (void)link_a_->terminate();
    if (link_b_) (void)link_b_->terminate();
  }

  std::vector<AttackRow> run(double soak_seconds) {
    // Legitimate traffic must flow before the attack.
    forward(milliseconds(10000), {}, [&] { return received_ > 0; });
    if (received_ == 0) throw std::runtime_error("no legitimate frame crossed the MACsec link within 10 s");
    std::vector<AttackRow> rows;
    rows.push_back(with_fresh_b(&MacsecRun::lower_inject, true));
    rows.push_back(with_fresh_b(&MacsecRun::replay, false));
    rows.push_back(with_fresh_b(&MacsecRun::tamper, false));
    if (soak_seconds > 0) {
      soak_seconds_ = soak_seconds;
      rows.push_back(with_fresh_b(&MacsecRun::soak, false));
    }
    return rows;
  }

 private:
  struct Phase {
    std::uint32_t first_seq = 0;
    std::uint64_t attack_seen_before = 0;
    std::uint64_t duplicates_before = 0;
    std::uint64_t corrupt_before = 0;
    std::uint64_t untouched_before = 0;
  };

  Phase begin() {
    return {next_seq_, attack_seen_, duplicates_, corrupt_, untouched_macsec_};
  }

  // Sends the next legitimate frame into A's TAP every millisecond and
  // reads B's TAP, then forwards with `hook`; `tick` as in Mitm::run.
  void forward(milliseconds d, const Mitm::Hook& hook, const std::function<bool()>& tick) {
    auto last = std::chrono::steady_clock::now();
    mitm_->run(
        d,
        [&](Frame& f, bool from_a) {
          const bool macsec = from_a && is_macsec(f);
          const Frame before = macsec ? f : Frame{};
          if (hook && !hook(f, from_a)) return false;
          if (macsec && f == before) ++untouched_macsec_;
          return true;
        },
        [&] {
          const auto now = std::chrono::steady_clock::now();
          if (now - last >= milliseconds(1)) {
            last = now;
            if (tx_->send(legit_frame(next_seq_))) ++next_seq_;
          }
          read_b();
          return tick && tick();
        });
  }

  void read_b() {
    Frame buf(2048);
    for (int i = 0; i < 64; ++i) {
      buf.resize(2048);
      auto got = rx_->receive(buf);
      if (!got) return;
      buf.resize(got.value());
      if (contains_marker(buf)) {
        ++attack_seen_;
        continue;
      }
      if (buf.size() < 22 || buf[12] != 0x88 || buf[13] != 0xB5) continue;
      const std::uint32_t seq =
          (std::uint32_t{buf[18]} << 24) | (std::uint32_t{buf[19]} << 16) | (std::uint32_t{buf[20]} << 8) | buf[21];
      if (buf != legit_frame(seq) || seq >= next_seq_) {
        ++corrupt_;
        continue;
      }
      if (seen_[seq]++ > 0) {
        ++duplicates_;
      } else {
        ++received_;
      }
    }
  }

  // Legitimate frames are those sent between begin() and `end_seq` (before
  // the settle time, so each had time to arrive).
  AttackRow finish(const Phase& p, std::uint32_t end_seq, const std::string& cls, std::uint64_t attempts,
                   std::uint64_t accepted, const std::string& note) {
    AttackRow row;
    row.layer = "macsec";
    row.configuration = kConfiguration;
    row.attack_class = cls;
    row.attempts = attempts;
    row.accepted = accepted;
    for (std::uint32_t s = p.first_seq; s < end_seq; ++s) {
      if (seen_.count(s) > 0) {
        ++row.legit_delivered;
      } else {
        ++row.legit_lost;
      }
    }
    row.note = note;
    return row;
  }

  void settle() { forward(milliseconds(300), {}, {}); }

  AttackRow lower_inject() {
    Phase p = begin();
    std::uint64_t sent = 0;
    auto last = std::chrono::steady_clock::now();
    forward(milliseconds(20000 + options_.attempts * 10), {}, [&] {
      const auto now = std::chrono::steady_clock::now();
      if (now - last >= milliseconds(1)) {
        last = now;
        mitm_->inject(plain_frame(sent), true);
        ++sent;
      }
      return sent >= options_.attempts;
    });
    const std::uint32_t end_seq = next_seq_;
    settle();
    return finish(p, end_seq, "N.lower-inject", sent, attack_seen_ - p.attack_seen_before,
                  "plain frames (local EtherType unicast/broadcast, IPv4/UDP) injected on B's lower "
                  "interface; accepted = frames with the marker read from B's TAP");
  }

  AttackRow replay() {
    Phase p = begin();
    std::uint64_t sent = 0;
    std::vector<Frame> pending;
    forward(
        milliseconds(20000 + options_.attempts * 10),
        [&](Frame& f, bool from_a) {
          if (from_a && is_macsec(f) && sent < options_.attempts) {
            pending.push_back(f);
            ++sent;
          }
          return true;
        },
        [&] {
          for (const Frame& f : pending) mitm_->inject(f, true);
          pending.clear();
          return sent >= options_.attempts;
        });
    const std::uint32_t end_seq = next_seq_;
    settle();
    return finish(p, end_seq, "N.macsec-replay", sent, duplicates_ - p.duplicates_before,
                  "each MACsec frame from A re-sent to B right after it (same PN); accepted = a "
                  "legitimate frame out of B's TAP twice");
  }

  AttackRow tamper() {
    Phase p = begin();
    std::uint64_t sent = 0;
    std::uint64_t seen = 0;
    forward(
        milliseconds(20000 + options_.attempts * 10),
        [&](Frame& f, bool from_a) {
          if (!from_a || !is_macsec(f) || sent >= options_.attempts) return true;
          if (seen++ % 2 == 1) return true;
          flip_bit_after_header(f, rng_);
          ++sent;
          return true;
        },
        [&] { return sent >= options_.attempts; });
    const std::uint32_t end_seq = next_seq_;
    settle();
    // Damaged frames out of B's TAP; with_fresh_b adds B's InPktsOK check.
    const std::uint64_t accepted = corrupt_ - p.corrupt_before;
    AttackRow row = finish(p, end_seq, "N.tamper", sent, accepted,
                           "in the middle: flips one bit (SecTAG, secure data or ICV) of every other MACsec frame "
                           "from A; legit_lost excludes the frames those carried");
    // The frames inside tampered MACsec frames are lost by the attack itself.
    row.legit_lost = row.legit_lost > sent ? row.legit_lost - sent : 0;
    return row;
  }


  // The soak: for soak_seconds_ the attacker injects as fast as it can, in
  // batches of 64 beside the legitimate frames (one per millisecond),
  // replays of recorded MACsec frames, copies with one bit flipped and plain
  // frames; B's resident memory is sampled every second. Then legitimate
  // traffic alone for a second: every frame of it must come out of B's TAP.
  AttackRow soak() {
    std::vector<Frame> recorded;
    forward(milliseconds(10000), [&](Frame& f, bool from_a) {
      if (from_a && is_macsec(f) && recorded.size() < 256) recorded.push_back(f);
      return true;
    }, [&] { return recorded.size() >= 256; });
    if (recorded.empty()) throw std::runtime_error("no MACsec frame to record for the soak");
    Phase p = begin();
    SoakLoad load(link_b_->pid(), soak_seconds_);
    std::uint64_t sent = 0;
    forward(load.limit(), {}, [&] {
      if (load.over()) return true;
      for (int i = 0; i < 64; ++i, ++sent) {
        if (sent % 3 == 2) {
          mitm_->inject(plain_frame(sent), true);
          continue;
        }
        Frame f = recorded[sent % recorded.size()];
        if (sent % 3 == 1) {
          flip_bit_after_header(f, rng_);
        }
        mitm_->inject(f, true);
      }
      return false;
    });
    const double load_s = load.seconds_run();
    const std::uint32_t load_end_seq = next_seq_;
    settle();
    load.finish();
    std::uint64_t lost_load = 0;
    for (std::uint32_t q = p.first_seq; q < load_end_seq; ++q) lost_load += seen_.count(q) == 0 ? 1 : 0;
    // After the load.
    const std::uint32_t after_first = next_seq_;
    const auto after_end = std::chrono::steady_clock::now() + milliseconds(1000);
    forward(milliseconds(2000), {}, [&] { return std::chrono::steady_clock::now() >= after_end; });
    const std::uint32_t after_last = next_seq_;
    settle();
    std::uint64_t after_ok = 0;
    for (std::uint32_t q = after_first; q < after_last; ++q) after_ok += seen_.count(q) > 0 ? 1 : 0;
    const std::uint64_t after_n = after_last - after_first;
    char text[512];
    std::snprintf(text, sizeof text,
                  "%.0f s of replays, bit flips and plain frames at %.0f frames/s beside 1,000 legitimate/s; B's RSS "
                  "start/max/end %.1f/%.1f/%.1f MiB; legitimate lost under the load %llu; after the load %llu/%llu "
                  "delivered",
                  load_s, static_cast<double>(sent) / load_s, load.rss_start(), load.rss_max(), load.rss_end(),
                  static_cast<unsigned long long>(lost_load), static_cast<unsigned long long>(after_ok),
                  static_cast<unsigned long long>(after_n));
    const std::uint64_t accepted = (duplicates_ - p.duplicates_before) + (corrupt_ - p.corrupt_before) +
                                   (attack_seen_ - p.attack_seen_before);
    AttackRow row = finish(p, after_last, "N.soak", sent, accepted, text);
    // Overload may cost legitimate frames during the load (in the note);
    // after it, none (legit_lost).
    row.legit_lost = after_n - after_ok;
    return row;
  }

  double soak_seconds_ = 0;
  AttackOptions options_;
  std::mt19937_64 rng_;
  const std::string program_ = self_program();
  MitmTopology topo_;
  TempDir dir_;
  std::string log_b_;
  std::string cfg_b_;
  int b_runs_ = 0;
  std::uint64_t untouched_at_b_start_ = 0;
  std::optional<Mitm> mitm_;
  std::optional<net::ChildProcess> link_a_;
  std::optional<net::ChildProcess> link_b_;
  std::optional<net::PacketSocket> tx_;
  std::optional<net::PacketSocket> rx_;
  std::uint32_t next_seq_ = 0;
  std::map<std::uint32_t, std::uint64_t> seen_;
  std::uint64_t received_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t corrupt_ = 0;
  std::uint64_t attack_seen_ = 0;
  std::uint64_t untouched_macsec_ = 0;
};

}  // namespace

std::vector<AttackRow> run_macsec(const AttackOptions& options, double soak_seconds) {
  MacsecRun run(options);
  return run.run(soak_seconds);
}

}  // namespace layersec::attack::netns
