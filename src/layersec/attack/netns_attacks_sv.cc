// netns-sv-62351-hmac-sha256: `layersec sv publish` in namespace a,
// `layersec sv subscribe` in namespace b, the attacker forwarding between
// them (netns_attacks.h). IEC 62351-6 extension, HMAC-SHA256, one key file
// shared by both ends, the default 4000/1 profile, untagged frames.
//
// The counts come from the subscriber: its final JSON line (delivered,
// rejections by reason). The attacker knows how many genuine frames it
// forwarded untouched; a subscriber that delivered more than that accepted
// something the attacker sent or altered. Each class runs on a fresh
// subscriber process so that its final line is the class's. Before the
// count starts and before a subscriber stops, the attacker withholds the
// publisher's frames (uncounted) until the subscriber's reports show its
// socket drained, so every untouched frame it counted has arrived.
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdint>
#include <functional>
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

constexpr std::uint16_t kSvType = 0x88BA;
const std::string kConfiguration = "netns-sv-62351-hmac-sha256";

bool is_sv(const Frame& f) { return f.size() > 26 && ((f[12] << 8) | f[13]) == kSvType; }

// The JSON lines of a subscriber log whose "type" is `type`, in order.
std::vector<json> lines_of_type(const std::string& log, const char* type) {
  const std::string text = read_log(log);
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    json j = json::parse(text.substr(start, end - start), nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.value("type", "") == type) out.push_back(std::move(j));
    start = end + 1;
  }
  return out;
}

// The last "final" line of a subscriber log (an empty object when none).
json final_line(const std::string& log) {
  auto lines = lines_of_type(log, "final");
  return lines.empty() ? json::object() : std::move(lines.back());
}

bool log_has_ready(const std::string& log) { return read_log(log).find("\"type\":\"ready\"") != std::string::npos; }

class SvRun {
 public:
  explicit SvRun(const AttackOptions& options)
      : options_(options), rng_(options.seed ^ 0x73766e6e73ULL), topo_("v", "02:00:00:7d:00:01", "02:00:00:7d:00:02") {
    key_ = dir_.write("sv.key", random_hex(32) + "\n");
    mitm_.emplace(topo_);
    pub_.emplace(MitmTopology::spawn(topo_.ns_a(),
                                     {program_, "sv", "publish", "--iface", "eth0", "--auth", "hmac-sha256", "--key",
                                      key_, "--no-vlan", "--duration", "3600", "--json"},
                                     dir_.path() + "/pub.out"));
  }

  ~SvRun() {
    if (sub_) (void)sub_->terminate();
    if (pub_) (void)pub_->terminate();
  }

  std::vector<AttackRow> run(double soak_seconds) {
    std::vector<AttackRow> rows;
    rows.push_back(replay());
    rows.push_back(tamper());
    rows.push_back(forge());
    rows.push_back(restart_replay());
    if (soak_seconds > 0) rows.push_back(soak(soak_seconds));
    return rows;
  }

 private:
  // Starts a subscriber in b (extra options appended) and forwards until it
  // has delivered genuine frames.
  void start_sub(const std::vector<std::string>& extra) {
    log_ = dir_.path() + "/sub" + std::to_string(sub_runs_++) + ".out";
    std::vector<std::string> argv{program_, "sv", "subscribe", "--iface", "eth0", "--auth", "hmac-sha256", "--key",
                                  key_, "--json", "--interval", "0.2"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    sub_.emplace(MitmTopology::spawn(topo_.ns_b(), argv, log_));
    // Until the subscriber's socket is bound, nothing reaches it: frames
    // forwarded before are not counted.
    mitm_->run(milliseconds(10000), [](Frame&, bool) { return true; },
               [&] { return log_has_ready(log_) || !sub_->running(); });
    if (!log_has_ready(log_)) throw std::runtime_error("layersec sv subscribe did not get ready in " + topo_.ns_b());
    // Frames forwarded before the count starts may still be on their way:
    // withhold the stream until the subscriber has reported, and count its
    // deliveries from that report on.
    quiet();
    baseline_ = last_stats_delivered();
    untouched_ = 0;
  }

  // Drops the publisher's frames (none counted) until the subscriber has
  // drained its socket, then stops it and returns its final line.
  json stop_sub() {
    quiet();
    (void)sub_->terminate();
    sub_.reset();
    json j = final_line(log_);
    if (!j.contains("streams") || !j["streams"].is_array() || j["streams"].empty())
      throw std::runtime_error("layersec sv subscribe printed no final report");
    return j;
  }

  // Forwards for up to `limit`, `hook` seeing every SV frame from a first
  // (it may alter the frame, return false to drop it); untouched forwarded
  // SV frames are counted. `tick` runs every poll round; true ends it.
  void forward(milliseconds limit, const std::function<bool(Frame&)>& hook, const std::function<bool()>& tick) {
    mitm_->run(
        limit,
        [&](Frame& f, bool from_a) {
          if (!from_a || !is_sv(f)) return true;
          const Frame before = f;
          if (hook && !hook(f)) return false;
          if (f == before) ++untouched_;
          return true;
        },
        tick);
  }

  AttackRow row_from(const std::string& cls, std::uint64_t attempts, const json& fin, const std::string& note) {
    AttackRow row;
    row.layer = "sv";
    row.configuration = kConfiguration;
    row.attack_class = cls;
    row.attempts = attempts;
    const json& s = fin["streams"][0];
    const std::uint64_t total = s.value("delivered", std::uint64_t{0});
    const std::uint64_t delivered = total > baseline_ ? total - baseline_ : 0;
    row.accepted = delivered > untouched_ ? delivered - untouched_ : 0;
    row.legit_delivered = delivered - row.accepted;
    row.legit_lost = untouched_ > delivered ? untouched_ - delivered : 0;
    if (fin.contains("rejections") && fin["rejections"].is_object()) {
      for (const auto& [name, v] : fin["rejections"].items())
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0) row.rejected[name] = v.get<std::uint64_t>();
    }
    // "security" is the subscriber's drop reason for every failed check of
    // the extension; its stream counters say which check.
    if (row.rejected.count("security") > 0) {
      std::uint64_t split = 0;
      std::map<std::string, std::uint64_t> by;
      for (const char* name : {"bad_tag", "unknown_key", "replayed_counter", "bad_extension"}) {
        const std::uint64_t v = s.value(name, std::uint64_t{0});
        if (v > 0) by[name] = v;
        split += v;
      }
      if (split == row.rejected["security"]) {
        row.rejected.erase("security");
        row.rejected.insert(by.begin(), by.end());
      }
    }
    for (const char* name : {"malformed", "unknown_appid"})
      if (fin.value(name, std::uint64_t{0}) > 0) row.rejected[name] = fin[name].get<std::uint64_t>();
    const std::uint64_t refused = total_rejected(row);
    if (row.attempts > row.accepted + refused) row.rejected["dropped-unreported"] = row.attempts - row.accepted - refused;
    row.note = note;
    return row;
  }

  // Replaces the last 32 bytes (the HMAC-SHA256 tag) of a frame longer than
  // 60 bytes with random ones; returns where they start (the frame's size
  // when it is too short to have them).
  std::size_t randomise_tag(Frame& f) {
    const std::size_t tag = f.size() > 60 ? f.size() - 32 : f.size();
    for (std::size_t i = tag; i < f.size(); ++i) f[i] = static_cast<std::uint8_t>(rng_());
    return tag;
  }

  milliseconds budget() const { return milliseconds(20000 + options_.attempts * 10); }

  // Every genuine frame re-sent right after it, and once more 250 frames
  // (about 60 ms) later.
  AttackRow replay() {
    start_sub({});
    std::uint64_t sent = 0;
    std::vector<Frame> now, later;
    std::vector<std::pair<std::uint64_t, Frame>> delayed;
    std::uint64_t seen = 0;
    forward(
        budget(),
        [&](Frame& f) {
          if (sent < options_.attempts) {
            now.push_back(f);
            delayed.emplace_back(seen + 250, f);
          }
          ++seen;
          return true;
        },
        [&] {
          for (const Frame& f : now) {
            if (sent >= options_.attempts) break;
            mitm_->inject(f, true);
            ++sent;
          }
          now.clear();
          while (!delayed.empty() && delayed.front().first <= seen && sent < options_.attempts) {
            mitm_->inject(delayed.front().second, true);
            delayed.erase(delayed.begin());
            ++sent;
          }
          return sent >= options_.attempts;
        });
    return row_from("N.sv-replay", sent, stop_sub(),
                    "genuine frames re-sent right after themselves and again ~60 ms later; accepted = "
                    "delivered beyond the genuine frames forwarded");
  }

  // One random bit of every other genuine frame flipped (Ethernet header
  // excluded: the subscriber's socket must still receive it).
  AttackRow tamper() {
    start_sub({});
    std::uint64_t sent = 0, seen = 0;
    forward(
        budget(),
        [&](Frame& f) {
          if (sent >= options_.attempts || seen++ % 2 == 1) return true;
          flip_bit_after_header(f, rng_);
          ++sent;
          return true;
        },
        [&] { return sent >= options_.attempts; });
    return row_from("N.sv-tamper", sent, stop_sub(),
                    "one bit flipped (APPID..tag) in every other genuine frame; altered frames are not counted "
                    "as genuine, so their loss is the attack's");
  }

  // Frames the attacker makes without the key: a genuine frame's samples
  // (the bytes before the extension) randomised and its last 32 bytes (the
  // tag) random, injected beside the genuine stream.
  AttackRow forge() {
    start_sub({});
    std::uint64_t sent = 0;
    std::optional<Frame> model;
    auto last = std::chrono::steady_clock::now();
    forward(
        budget(),
        [&](Frame& f) {
          if (!model) model = f;
          return true;
        },
        [&] {
          if (!model || sent >= options_.attempts) return sent >= options_.attempts;
          const auto t = std::chrono::steady_clock::now();
          if (t - last < std::chrono::microseconds(500)) return false;  // 2,000 forgeries/s
          last = t;
          Frame f = *model;
          const std::size_t tag = randomise_tag(f);
          for (int k = 0; k < 4 && tag > 40; ++k) f[40 + rng_() % (tag - 40)] = static_cast<std::uint8_t>(rng_());
          mitm_->inject(f, true);
          ++sent;
          return false;
        });
    return row_from("N.sv-forge", sent, stop_sub(),
                    "frames made without the key (a genuine frame's body randomised, a random tag) injected "
                    "beside the genuine stream");
  }

  // The subscriber with a persisted counter floor (--state): the attacker
  // records genuine frames, the subscriber is killed (-9) and restarted on
  // its state file while the attacker withholds the live stream and injects
  // the recording first; then the live stream resumes.
  AttackRow restart_replay() {
    const std::string state = dir_.path() + "/sub.floor";
    start_sub({"--state", state, "--first-start"});
    std::vector<Frame> recording;
    const std::uint64_t want = std::min<std::uint64_t>(options_.attempts, 4000);
    forward(
        budget(),
        [&](Frame& f) {
          if (recording.size() < want) recording.push_back(f);
          return true;
        },
        [&] { return recording.size() >= want; });
    kill_hard(*sub_);
    sub_.reset();
    log_ = dir_.path() + "/sub" + std::to_string(sub_runs_++) + ".out";
    sub_.emplace(MitmTopology::spawn(topo_.ns_b(),
                                     {program_, "sv", "subscribe", "--iface", "eth0", "--auth", "hmac-sha256",
                                      "--key", key_, "--json", "--interval", "0.2", "--state", state},
                                     log_));
    // The live stream withheld until the restarted subscriber is ready.
    mitm_->run(milliseconds(10000), [](Frame& f, bool from_a) { return !(from_a && is_sv(f)); },
               [&] { return log_has_ready(log_) || !sub_->running(); });
    if (!log_has_ready(log_)) throw std::runtime_error("the restarted layersec sv subscribe did not get ready");
    baseline_ = 0;  // nothing reached it yet
    untouched_ = 0;
    std::uint64_t sent = 0;
    // The recording first, with the live stream still withheld.
    mitm_->run(
        milliseconds(20000), [](Frame& f, bool from_a) { return !(from_a && is_sv(f)); },
        [&] {
          for (int i = 0; i < 40 && sent < recording.size(); ++i) mitm_->inject(recording[sent++], true);
          return sent >= recording.size();
        });
    // Then the live stream, long enough to pass the reserved floor (the
    // default reserve is about 2 s of this stream).
    const auto until = std::chrono::steady_clock::now() + milliseconds(4000);
    forward(milliseconds(5000), {}, [&] { return std::chrono::steady_clock::now() >= until; });
    AttackRow row = row_from("N.sv-restart", sent, stop_sub(),
                             "subscriber killed (-9) and restarted on its --state file; the pre-restart recording "
                             "injected before the first live frame");
    // Genuine frames below the reserved floor are refused after a restart
    // by design (docs/sv.md): the row allows that loss.
    row.loss_allowed = true;
    return row;
  }


  // The subscriber's stats lines so far.
  std::vector<json> stats() const {
    std::vector<json> out;
    for (json& j : lines_of_type(log_, "stats"))
      if (j.contains("streams") && j["streams"].is_array() && !j["streams"].empty()) out.push_back(std::move(j));
    return out;
  }

  // Frames the subscriber has taken from its socket, by a stats line.
  static std::uint64_t taken(const json& j) {
    return j["streams"][0].value("received", std::uint64_t{0}) + j.value("malformed", std::uint64_t{0}) +
           j.value("unknown_appid", std::uint64_t{0}) + j.value("non_sv_frames", std::uint64_t{0});
  }

  // The "delivered" of the subscriber's newest stats line.
  std::uint64_t last_stats_delivered() const {
    const auto lines = stats();
    return lines.empty() ? 0 : lines.back()["streams"][0].value("delivered", std::uint64_t{0});
  }

  // Withholds the live stream until the subscriber has drained its socket:
  // two more stats lines, the newest two at least 0.15 s apart in the
  // subscriber's own time (two reports a starved loop prints back to back
  // prove nothing) and taking the same number of frames. A slow build can
  // take seconds to drain a full socket: at most 30 s.
  void quiet() {
    const std::size_t before = stats().size();
    mitm_->run(milliseconds(30000), [](Frame& f, bool from_a) { return !(from_a && is_sv(f)); }, [&] {
      const auto lines = stats();
      if (lines.size() < before + 2) return false;
      const json& a = lines[lines.size() - 2];
      const json& b = lines[lines.size() - 1];
      return b.value("elapsed_s", 0.0) - a.value("elapsed_s", 0.0) >= 0.15 && taken(a) == taken(b);
    });
  }

  // The soak: for `seconds` the attacker injects as fast as it can, in
  // batches of 64 beside the live stream, replays of recorded frames,
  // copies with one bit flipped and forgeries with a random tag; the
  // subscriber's resident memory is sampled every second. Then the live
  // stream alone for a second: every frame of it must be delivered.
  AttackRow soak(double seconds) {
    start_sub({});
    std::vector<Frame> recorded;
    forward(budget(), [&](Frame& f) {
      if (recorded.size() < 256) recorded.push_back(f);
      return true;
    }, [&] { return recorded.size() >= 256; });
    SoakLoad load(sub_->pid(), seconds);
    std::uint64_t sent = 0;
    forward(load.limit(), {}, [&] {
      if (load.over()) return true;
      for (int i = 0; i < 64; ++i, ++sent) {
        Frame f = recorded[sent % recorded.size()];
        if (sent % 3 == 1) {
          flip_bit_after_header(f, rng_);
        } else if (sent % 3 == 2) {
          randomise_tag(f);
        }
        mitm_->inject(f, true);
      }
      return false;
    });
    const double load_s = load.seconds_run();
    const std::uint64_t untouched_load = untouched_;
    quiet();
    const std::uint64_t delivered_load = last_stats_delivered() - baseline_;
    load.finish();
    // After the load: the live stream alone for a second.
    const auto after_end = std::chrono::steady_clock::now() + milliseconds(1000);
    forward(milliseconds(2000), {}, [&] { return std::chrono::steady_clock::now() >= after_end; });
    const std::uint64_t untouched_after = untouched_ - untouched_load;
    const json fin = stop_sub();
    const std::uint64_t delivered_after =
        fin["streams"][0].value("delivered", std::uint64_t{0}) - baseline_ - delivered_load;
    char text[512];
    std::snprintf(text, sizeof text,
                  "%.0f s of replays, bit flips and forgeries at %.0f frames/s beside the 4000/s stream; subscriber "
                  "RSS start/max/end %.1f/%.1f/%.1f MiB; genuine frames lost under the load %llu (socket drops "
                  "%llu); after the load %llu/%llu delivered",
                  load_s, static_cast<double>(sent) / load_s, load.rss_start(), load.rss_max(), load.rss_end(),
                  static_cast<unsigned long long>(untouched_load > delivered_load ? untouched_load - delivered_load : 0),
                  static_cast<unsigned long long>(fin.value("socket_drops", std::uint64_t{0})),
                  static_cast<unsigned long long>(delivered_after), static_cast<unsigned long long>(untouched_after));
    AttackRow row = row_from("N.soak", sent, fin, text);
    // Overload may cost genuine frames during the load (the kernel's socket
    // drops; in the note); after it, none: legit_lost counts only the
    // second after the load, as the MACsec soak's does.
    row.legit_lost = untouched_after > delivered_after ? untouched_after - delivered_after : 0;
    return row;
  }

  AttackOptions options_;
  std::mt19937_64 rng_;
  const std::string program_ = self_program();
  MitmTopology topo_;
  TempDir dir_;
  std::string key_;
  std::string log_;
  int sub_runs_ = 0;
  std::uint64_t untouched_ = 0;
  std::uint64_t baseline_ = 0;  // the subscriber's deliveries before the count started
  std::optional<Mitm> mitm_;
  std::optional<net::ChildProcess> pub_;
  std::optional<net::ChildProcess> sub_;
};

}  // namespace

std::vector<AttackRow> run_sv(const AttackOptions& options, double soak_seconds) {
  SvRun run(options);
  return run.run(soak_seconds);
}

}  // namespace layersec::attack::netns
