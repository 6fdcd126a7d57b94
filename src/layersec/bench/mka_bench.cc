#include "layersec/bench/mka_bench.h"

#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "layersec/base/keyfile.h"
#include "layersec/base/secret.h"
#include "layersec/bench/bench_env.h"
#include "layersec/crypto/kdf.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/udp_socket.h"

namespace layersec::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTap = "mkb0";
constexpr std::uint16_t kPort = 9100;
constexpr std::uint32_t kMagic = 0x4D4B4142;  // "MKAB"

std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The JSON event lines of a child's log so far.
std::vector<json> read_events(const fs::path& log) {
  std::vector<json> out;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() != '{') continue;
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.contains("event")) out.push_back(std::move(j));
  }
  return out;
}

// Waits until `pred` holds for one event of the log (the first such event).
json wait_event(const fs::path& log, const std::function<bool(const json&)>& pred, double seconds,
                const std::string& what, net::ChildProcess* child = nullptr) {
  const std::int64_t end = mono_ns() + static_cast<std::int64_t>(seconds * 1e9);
  while (mono_ns() < end) {
    for (const auto& e : read_events(log)) {
      if (pred(e)) return e;
    }
    if (child != nullptr && !child->running()) {
      std::ifstream in(log);
      std::stringstream s;
      s << in.rdbuf();
      throw std::runtime_error("bench mka: the link exited while waiting for " + what + ":\n" + s.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("bench mka: timed out waiting for " + what + " in " + log.string());
}

bool is(const json& e, const char* name) { return e.value("event", "") == name; }

// The receiving end of a load phase: a UDP socket in B's namespace,
// collecting distinct sequence numbers per phase.
class Receiver {
 public:
  explicit Receiver(net::UdpSocket sock) : sock_(std::move(sock)) {
    thread_ = std::thread([this] { run(); });
  }
  ~Receiver() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void begin(std::uint32_t phase, std::uint64_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = phase;
    seen_.assign(count, false);
    distinct_ = 0;
  }
  [[nodiscard]] std::uint64_t distinct() {
    std::lock_guard<std::mutex> lock(mu_);
    return distinct_;
  }

 private:
  void run() {
    std::vector<std::uint8_t> buf(2048);
    while (!stop_) {
      auto r = sock_.receive(MutableByteSpan(buf.data(), buf.size()));
      if (!r) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
      if (r->size < 16) continue;
      ByteReader rd(ByteSpan(buf.data(), r->size));
      const std::uint32_t magic = rd.u32();
      const std::uint32_t phase = rd.u32();
      const std::uint64_t seq = rd.u64();
      if (!rd.ok() || magic != kMagic) continue;
      std::lock_guard<std::mutex> lock(mu_);
      if (phase != phase_ || seq >= seen_.size() || seen_[seq]) continue;
      seen_[seq] = true;
      ++distinct_;
    }
  }
  net::UdpSocket sock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::uint32_t phase_ = 0;
  std::vector<bool> seen_;
  std::uint64_t distinct_ = 0;
};

// Sends `count` datagrams at `rate` (busy-paced on CLOCK_MONOTONIC), or
// until `stop` when count is 0. Returns (sent, send errors, seconds).
struct SendResult {
  std::uint64_t sent = 0, errors = 0;
  double seconds = 0;
};
SendResult send_flow(net::UdpSocket& sock, net::Ipv4Endpoint dst, std::uint32_t phase, std::uint64_t count,
                     double rate, std::size_t payload, const std::atomic<bool>* stop = nullptr) {
  std::vector<std::uint8_t> buf(std::max<std::size_t>(payload, 16), 0x5A);
  SendResult r;
  const std::int64_t t0 = mono_ns();
  const double period_ns = 1e9 / rate;
  for (std::uint64_t i = 0; count == 0 || i < count; ++i) {
    if (stop != nullptr && *stop) break;
    const auto due = t0 + static_cast<std::int64_t>(static_cast<double>(i) * period_ns);
    while (mono_ns() < due) {
    }
    ByteWriter w(MutableByteSpan(buf.data(), 16));
    w.u32(kMagic);
    w.u32(phase);
    w.u64(i);
    auto s = sock.send_to(dst, ByteSpan(buf.data(), buf.size()));
    s.ok() ? ++r.sent : ++r.errors;
  }
  r.seconds = static_cast<double>(mono_ns() - t0) / 1e9;
  return r;
}

json mka_file(const std::string& cak, const MkaBenchOptions& o, int priority, std::uint32_t rekey_ms) {
  json timers{{"hello_ms", o.hello_ms}, {"life_ms", o.life_ms}, {"rekey_interval_ms", rekey_ms}};
  return json{{"cak_file", cak},     {"ckn", "6c61796572736563206d6b612062656e6368"},
              {"priority", priority}, {"cipher_suite", o.cipher_suite},
              {"timers", timers}};
}

}  // namespace

MkaBenchReport run_mka_bench(const MkaBenchOptions& options) {
  MkaBenchReport rep;
  rep.options = options;
  const MkaBenchOptions& o = options;
  if (o.rate <= 0 || o.seconds <= 0) throw std::invalid_argument("bench mka: rate and seconds must be positive");
  std::string why;
  if (!net::netns_available(&why)) throw std::runtime_error("bench mka needs network namespaces: " + why);
  const std::string program = program_path(o.program);
  WorkDir work("layersec-mka-bench");
  // The CAK: random, in a 0600 key file (never printed).
  {
    const std::size_t n = o.cipher_suite.find("256") != std::string::npos ? 32 : 16;
    SecretBytes cak(n);
    if (!crypto::random_bytes(cak.mutable_span()).ok()) throw std::runtime_error("bench mka: no random CAK");
    std::string detail;
    if (!write_key_file_hex((work.path() / "cak.key").string(), cak.span(), false, &detail).ok()) {
      throw std::runtime_error("bench mka: cak file: " + detail);
    }
  }
  write_text(work.path() / "a.json", mka_file("cak.key", o, 10, 0).dump());
  write_text(work.path() / "a2.json", mka_file("cak.key", o, 10, o.rekey_interval_ms).dump());
  write_text(work.path() / "b.json", mka_file("cak.key", o, 20, 0).dump());

  net::NetnsTopology topo = net::NetnsTopology::pair("mkb");
  const net::NetnsNode& na = topo.node(0);
  const net::NetnsNode& nb = topo.node(1);
  for (std::size_t i : {0U, 1U}) {
    if (topo.exec(i, {"ip", "addr", "flush", "dev", topo.node(i).interface}) != 0) {
      throw std::runtime_error("bench mka: cannot remove the veth addresses");
    }
  }
  const auto up = [&](std::size_t i, const char* cfg, const char* log) {
    return topo.spawn(i,
                      {program, "macsec", "up", "--link", topo.node(i).interface, "--name", kTap, "--mka",
                       (work.path() / cfg).string(), "--stats-interval", "1"},
                      (work.path() / log).string());
  };
  const auto address = [&](std::size_t i, const char* ip, const char* peer_ip, const net::MacAddress& peer_mac) {
    topo.exec(i, {"ip", "addr", "add", std::string(ip) + "/24", "dev", kTap});
    topo.exec(i, {"ip", "neigh", "replace", peer_ip, "lladdr", peer_mac.to_string(), "dev", kTap, "nud",
                  "permanent"});
  };
  const net::Ipv4Endpoint dst{*net::Ipv4Address::parse("10.78.0.2"), kPort};
  // A's sending socket (blocking: the pacing loop waits, nothing is dropped here).
  const auto open_sender = [&] {
    net::NetnsScope in_a(na.netns);
    net::UdpSocketOptions so;
    so.nonblocking = false;
    auto s = net::UdpSocket::open({*net::Ipv4Address::parse("10.78.0.1"), 0}, so);
    if (!s) throw std::runtime_error("bench mka: UDP socket in A's namespace");
    return std::move(*s);
  };

  // ---- bring-up: A runs and sends; B comes up ("link up"): until the first
  // protected frame of A's flow is on B's wire, and until both transmit.
  std::optional<net::PacketSocket> wire;
  {
    net::NetnsScope in_b(nb.netns);
    auto s = net::PacketSocket::open(nb.interface, 0x88E5, /*nonblocking=*/true);
    if (!s) throw std::runtime_error("bench mka: capture socket on " + nb.interface);
    wire.emplace(std::move(*s));
  }
  net::ChildProcess a = up(0, "a.json", "a.log");
  wait_event(work.path() / "a.log", [](const json& e) { return is(e, "mka_started"); }, 10, "A's start", &a);
  address(0, "10.78.0.1", "10.78.0.2", nb.mac);
  std::optional<net::UdpSocket> tx;
  tx.emplace(open_sender());
  std::atomic<bool> stop_early{false};
  std::thread early([&] { send_flow(*tx, dst, 0, 0, o.rate, o.payload, &stop_early); });
  // The wire watcher runs before B exists, so the first MACsec frame from A
  // is timed when it arrives, not when we get round to reading it.
  std::atomic<std::int64_t> first_frame_ns{0};
  std::thread watcher([&] {
    std::vector<std::uint8_t> buf(2048);
    const std::int64_t end = mono_ns() + 15'000'000'000;
    while (mono_ns() < end && first_frame_ns == 0 && !stop_early) {
      auto r = wire->receive(MutableByteSpan(buf.data(), buf.size()));
      if (r && *r >= 12 && std::memcmp(buf.data() + 6, na.mac.bytes.data(), 6) == 0) {
        first_frame_ns = mono_ns();
      } else if (!r) {
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      }
    }
  });
  // Whatever happens below, both threads stop before their objects go.
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& a;
    std::thread& b;
    void join() {
      stop = true;
      if (a.joinable()) a.join();
      if (b.joinable()) b.join();
    }
    ~Joiner() { join(); }
  } joiner{stop_early, watcher, early};
  net::ChildProcess b = up(1, "b.json", "b.log");
  const json b_start =
      wait_event(work.path() / "b.log", [](const json& e) { return is(e, "mka_started"); }, 10, "B's start", &b);
  const std::int64_t link_up = b_start.value("t_ns", std::int64_t{0});
  const json ta = wait_event(work.path() / "a.log", [](const json& e) { return is(e, "mka_sak_transmitting"); }, 10,
                             "A transmitting", &a);
  const json tb = wait_event(work.path() / "b.log", [](const json& e) { return is(e, "mka_sak_transmitting"); }, 10,
                             "B transmitting", &b);
  for (int i = 0; i < 500 && first_frame_ns == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  joiner.join();
  if (first_frame_ns != 0) rep.bringup_first_frame_ms = ms(first_frame_ns - link_up);
  rep.bringup_sak_ms = ms(std::max(ta.value("t_ns", std::int64_t{0}), tb.value("t_ns", std::int64_t{0})) - link_up);
  rep.sak_fingerprint = ta.value("sak_fingerprint", "");
  if (tb.value("sak_fingerprint", "") != rep.sak_fingerprint) {
    throw std::runtime_error("bench mka: A and B transmit with different SAKs");
  }

  // ---- load phases
  address(1, "10.78.0.2", "10.78.0.1", na.mac);
  std::optional<Receiver> rx;
  {
    net::NetnsScope in_b(nb.netns);
    net::UdpSocketOptions so;
    so.receive_buffer = 8 << 20;
    auto s = net::UdpSocket::open(dst, so);
    if (!s) throw std::runtime_error("bench mka: UDP socket in B's namespace");
    rx.emplace(std::move(*s));
  }
  const auto count = static_cast<std::uint64_t>(o.rate * o.seconds);
  const auto load = [&](std::uint32_t phase, const fs::path& log, MkaLoadPhase& out) {
    rx->begin(phase, count);
    const std::int64_t t0 = mono_ns();
    const SendResult s = send_flow(*tx, dst, phase, count, o.rate, o.payload);
    const std::int64_t t1 = mono_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last ones in flight
    out.sent = s.sent;
    out.send_errors = s.errors;
    out.seconds = s.seconds;
    out.received = rx->distinct();
    out.lost = out.sent - std::min(out.sent, out.received);
    for (const auto& e : read_events(log)) {
      const auto t = e.value("t_ns", std::int64_t{0});
      if (is(e, "mka_sak_transmitting") && t >= t0 && t <= t1) ++out.rekeys;
    }
  };
  load(1, work.path() / "a.log", rep.baseline);

  // A again, now rekeying every rekey_interval_ms (a restart: B supersedes
  // A's old MI and takes the key server's new SAK).
  a.terminate();
  net::ChildProcess a2 = up(0, "a2.json", "a2.log");
  const json t2 = wait_event(work.path() / "a2.log", [](const json& e) { return is(e, "mka_sak_transmitting"); }, 15,
                             "the restarted A transmitting", &a2);
  const std::string fp2 = t2.value("sak_fingerprint", "");
  wait_event(
      work.path() / "b.log",
      [&](const json& e) { return is(e, "mka_sak_transmitting") && e.value("sak_fingerprint", "") == fp2; }, 15,
      "B on the restarted A's SAK", &b);
  address(0, "10.78.0.1", "10.78.0.2", nb.mac);
  tx.emplace(open_sender());  // A's TAP is new: so is its address
  load(2, work.path() / "a2.log", rep.rekey);
  rx->stop();

  // ---- exclusion: B killed, until A reports it lost.
  const std::int64_t killed = mono_ns();
  ::kill(b.pid(), SIGKILL);
  b.wait();
  const double limit = (o.life_ms + o.hello_ms) / 1000.0 + 10;
  try {
    const json lost = wait_event(work.path() / "a2.log", [](const json& e) { return is(e, "mka_peer_lost"); }, limit,
                                 "A losing B", &a2);
    rep.exclusion_ms = ms(lost.value("t_ns", std::int64_t{0}) - killed);
  } catch (const std::runtime_error& e) {
    rep.notes.push_back(e.what());
  }
  a2.terminate();
  rep.notes.push_back("bring-up: A (key server) runs and sends " + std::to_string(static_cast<long long>(o.rate)) +
                      " datagrams/s into its TAP (refused by its SecY until MKA installs a SAK); link up = B's "
                      "mka_started event; first protected frame = the first MACsec frame from A on B's veth");
  rep.notes.push_back("the baseline and the rekey phase send the same flow over the same link in this run; the "
                      "rekey phase's A was restarted with timers.rekey_interval_ms");
  return rep;
}

json mka_bench_json(const MkaBenchReport& r) {
  const auto phase = [](const MkaLoadPhase& p) {
    return json{{"sent", p.sent},   {"received", p.received}, {"lost", p.lost},
                {"send_errors", p.send_errors}, {"rekeys", p.rekeys}, {"seconds", p.seconds}};
  };
  const MkaBenchOptions& o = r.options;
  json j{{"options",
          {{"cipher_suite", o.cipher_suite}, {"rate", o.rate}, {"seconds", o.seconds},
           {"rekey_interval_ms", o.rekey_interval_ms}, {"hello_ms", o.hello_ms}, {"life_ms", o.life_ms},
           {"payload", o.payload}}},
         {"bringup",
          {{"until_both_transmit_ms", r.bringup_sak_ms},
           {"until_first_protected_frame_ms",
            r.bringup_first_frame_ms ? json(*r.bringup_first_frame_ms) : json(nullptr)},
           {"sak_fingerprint", r.sak_fingerprint}}},
         {"rekey",
          {{"baseline", phase(r.baseline)},
           {"with_rekeys", phase(r.rekey)},
           {"goal", "0 datagrams lost across rekeys"},
           {"goal_met", r.rekey.lost == 0 && r.rekey.rekeys > 0}}},
         {"exclusion", {{"ms", r.exclusion_ms ? json(*r.exclusion_ms) : json(nullptr)}, {"life_ms", o.life_ms},
                        {"hello_ms", o.hello_ms}}},
         {"method",
          "two `layersec macsec up --mka` processes in network namespaces on a veth pair, UDP through the TAPs, "
          "event times from their JSON lines (CLOCK_MONOTONIC, one clock for all namespaces)"},
         {"notes", r.notes}};
  return j;
}

void write_mka_bench_table(std::ostream& out, const MkaBenchReport& r) {
  const MkaBenchOptions& o = r.options;
  out << std::fixed << std::setprecision(1);
  out << "MKA on the user-space MACsec link (" << o.cipher_suite << ", hello " << o.hello_ms << " ms, life "
      << o.life_ms << " ms)\n";
  const auto fixed = [](double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v;
    return s.str();
  };
  out << "  bring-up, link up -> first protected frame on the wire: "
      << (r.bringup_first_frame_ms ? fixed(*r.bringup_first_frame_ms) + " ms" : std::string("none seen")) << "\n";
  out << "  bring-up, link up -> both transmit with the SAK:       " << r.bringup_sak_ms << " ms\n";
  const auto row = [&](const std::string& name, const MkaLoadPhase& p) {
    out << "  " << name << p.sent << " sent, " << p.received << " received, " << p.lost << " lost, " << p.rekeys
        << " rekeys in " << p.seconds << " s\n";
  };
  out << "  " << static_cast<long long>(o.rate) << " datagrams/s for " << o.seconds << " s:\n";
  row("  baseline (no rekey):        ", r.baseline);
  row("  rekey every " + std::to_string(o.rekey_interval_ms) + " ms:      ", r.rekey);
  out << "  frames lost during rekeys: " << r.rekey.lost << " (goal 0; baseline " << r.baseline.lost << ")\n";
  out << "  member exclusion after kill -9: "
      << (r.exclusion_ms ? fixed(*r.exclusion_ms) + " ms" : std::string("not seen")) << " (life time "
      << o.life_ms << " ms)\n";
  for (const auto& n : r.notes) out << "  note: " << n << "\n";
}

}  // namespace layersec::bench
