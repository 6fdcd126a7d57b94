// `layersec sv publish`, `layersec sv subscribe` and `layersec sv kdc`: the
// SV publisher and subscriber on real interfaces (AF_PACKET raw sockets) and
// the ML-KEM key distribution centre over UDP (docs/sv.md).
//
//   sv publish    a merging unit: frames paced on absolute deadlines
//                 (clock_nanosleep TIMER_ABSTIME + spin), signed, sent on an
//                 AF_PACKET socket; reports send jitter (mean/p99/max).
//   sv subscribe  receives, verifies and supervises one stream; prints its
//                 counters and rejections periodically and at the end (JSON
//                 lines with --json).
//   sv kdc        sv::kdc::Kdc behind a UDP socket; publish and subscribe take
//                 their keys from it with --kdc.
// The subcommands join the `sv` group that cmd_sv.cc creates.
#include <linux/if_packet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/file.h"
#include "layersec/base/keyfile.h"
#include "layersec/kex/kem.h"
#include "layersec/net/io.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/udp_socket.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"
#include "sv_cli.h"

namespace layersec::app {
namespace {

using namespace layersec::sv;
using namespace layersec::app::svcli;

// --- sv publish / sv subscribe (AF_PACKET on a real interface) -------------------

// Longest --duration / --remove time any sv command accepts (about 115 days;
// far inside int64 nanoseconds).
constexpr double kMaxRunSeconds = 1e7;

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// SIGINT/SIGTERM end a run cleanly (final report printed). No SA_RESTART, so
// a sleeping publisher or a polling subscriber wakes up at once.
void install_stop_handlers() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

net::PacketSocket open_packet_socket(const std::string& iface, std::uint16_t ether_type, bool nonblocking) {
  if (iface.empty()) throw std::runtime_error("--iface is required");
  int err = 0;
  auto sock = net::PacketSocket::open(iface, ether_type, nonblocking, &err);
  if (!sock) {
    throw std::runtime_error("cannot open an AF_PACKET socket on " + iface + ": " + to_string(sock.error()) +
                             (err != 0 ? " (" + net::errno_text(err) + ")" : std::string()) +
                             (err == EPERM ? "; raw sockets need root or CAP_NET_RAW" : ""));
  }
  return std::move(sock).value();
}

// --realtime: lock memory and run SCHED_FIFO at `priority`. Returns "" on
// success, else why not (the run goes on without it, and says so).
std::string enter_realtime(int priority) {
  std::string why;
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) why = "mlockall: " + net::errno_text(errno);
  sched_param sp{};
  sp.sched_priority = priority;
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
    why += std::string(why.empty() ? "" : "; ") + "SCHED_FIFO: " + net::errno_text(errno);
  }
  return why;
}

// --- sv kdc, and --kdc for sv publish / sv subscribe (UDP transport) ------------
//
// One datagram per KDC message (kdc.h). `sv kdc` writes the provisioning
// files an offline registration would hand out: DIR/kdc.pub (the KDC's ML-KEM
// encapsulation key, 0644) and DIR/<ID>.id (the IED's identity value A_ID, hex,
// 0600). IEDs read both, authenticate over UDP and receive their stream's keys;
// later distributions (scheduled rekeys, membership changes) arrive on the
// same socket. The KDC's times are wall-clock (CLOCK_REALTIME); the publisher
// converts a key's valid-from to CLOCK_MONOTONIC for schedule_rekey().

std::int64_t wall_ns() { return clock_ns(CLOCK_REALTIME); }
TimePoint wall_now() { return TimePoint::from_ns(wall_ns()); }
TimePoint mono_of_wall(TimePoint w) {
  if (w == TimePoint::max()) return w;
  return TimePoint::from_ns(mono_ns() + (w.ns() - wall_ns()));
}

net::Ipv4Endpoint need_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  std::optional<net::Ipv4Address> a;
  std::string port;
  if (colon != std::string::npos) {
    a = net::Ipv4Address::parse(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (!a || !check_whole_in(port, 1, 65535).empty()) {
    throw std::runtime_error("expected ADDRESS:PORT (port 1..65535), got " + text);
  }
  return net::Ipv4Endpoint{*a, static_cast<std::uint16_t>(std::stoul(port))};
}

kex::KemScheme need_mlkem(const std::string& name) {
  auto k = kex::parse_scheme(name);
  if (!k || sv::kdc::wire_of_kem(*k) == 0) throw std::runtime_error("--kem must be ml-kem-512, ml-kem-768 or ml-kem-1024");
  return *k;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

// "APPID,SVID,SCHEME,PUBLISHER,SUB1+SUB2"
sv::kdc::StreamGroupConfig parse_stream_spec(const std::string& spec) {
  const auto f = split(spec, ',');
  if (f.size() != 5) throw std::runtime_error("--stream wants APPID,SVID,SCHEME,PUBLISHER,SUB1+SUB2: " + spec);
  sv::kdc::StreamGroupConfig g;
  if (const auto why = check_whole_in(f[0], 0, 0xFFFF); !why.empty()) {
    throw std::runtime_error("--stream " + spec + ": APPID " + why);
  }
  const bool hex = f[0].size() > 2 && f[0][0] == '0' && (f[0][1] == 'x' || f[0][1] == 'X');
  g.appid = static_cast<std::uint16_t>(std::stoul(f[0], nullptr, hex ? 16 : 10));
  g.sv_id = f[1];
  g.security = need_scheme(f[2]);
  g.publisher = f[3];
  if (!f[4].empty()) g.subscribers = split(f[4], '+');
  return g;
}

struct KdcOptions {
  std::string listen;
  std::string dir;
  std::vector<std::string> streams;
  std::vector<std::string> removals;  // ID@SECONDS
  std::string kem = "ml-kem-768";
  double lifetime_s = 3600;
  double lead_s = 2;
  double duration_s = 0;
};

void send_all(net::UdpSocket& sock, const std::map<std::string, net::Ipv4Endpoint>& where,
              const std::vector<sv::kdc::Outgoing>& out, std::uint64_t& unsent) {
  for (const auto& o : out) {
    auto it = where.find(o.recipient);
    if (it == where.end() || !sock.send_to(it->second, o.message)) ++unsent;
  }
}

void run_kdc(const KdcOptions& o) {
  namespace kdc = sv::kdc;
  if (o.streams.empty()) throw std::runtime_error("give at least one --stream");
  kdc::KdcConfig cfg;
  cfg.kem = need_mlkem(o.kem);
  cfg.key_lifetime = Duration::nanoseconds(static_cast<std::int64_t>(o.lifetime_s * 1e9));
  cfg.key_change_lead = Duration::nanoseconds(static_cast<std::int64_t>(o.lead_s * 1e9));
  auto created = kdc::Kdc::create(cfg);
  if (!created) throw std::runtime_error("KDC: " + std::string(to_string(created.error())) + " (lead must be below lifetime)");
  kdc::Kdc& k = **created;
  std::vector<kdc::StreamGroupConfig> groups;
  std::vector<std::string> ids;
  for (const auto& spec : o.streams) {
    groups.push_back(parse_stream_spec(spec));
    ids.push_back(groups.back().publisher);
    for (const auto& s : groups.back().subscribers) ids.push_back(s);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const auto& id : ids) {
    if (id.empty() || id.find('/') != std::string::npos || id[0] == '.') throw std::runtime_error("bad IED id " + id);
    auto a = k.register_ied(id);
    if (!a) throw std::runtime_error("cannot register " + id + ": " + std::string(to_string(a.error())));
    auto w = write_key_file_hex(o.dir + "/" + id + ".id", a->span(), true);
    if (!w) throw std::runtime_error("cannot write " + o.dir + "/" + id + ".id: " + std::string(to_string(w.error())));
  }
  if (auto w = write_public_file(o.dir + "/kdc.pub", k.public_key(), true); !w) {
    throw std::runtime_error("cannot write " + o.dir + "/kdc.pub: " + std::string(to_string(w.error())));
  }
  for (const auto& g : groups) {
    auto s = k.add_stream(g, wall_now());
    if (!s) throw std::runtime_error("stream " + g.sv_id + ": " + std::string(to_string(s.error())));
  }
  struct Removal {
    std::string id;
    std::int64_t at_mono;
    bool done = false;
  };
  const std::int64_t start = mono_ns();
  std::vector<Removal> removals;
  for (const auto& r : o.removals) {
    const auto at = r.find('@');
    if (at == std::string::npos) throw std::runtime_error("--remove wants ID@SECONDS: " + r);
    const std::string secs = r.substr(at + 1);
    if (const auto why = check_finite_in(secs, 0, kMaxRunSeconds); !why.empty()) {
      throw std::runtime_error("--remove " + r + ": SECONDS " + why);
    }
    removals.push_back({r.substr(0, at), start + static_cast<std::int64_t>(std::stod(secs) * 1e9)});
  }
  int err = 0;
  auto opened = net::UdpSocket::open(need_endpoint(o.listen), {}, &err);
  if (!opened) throw std::runtime_error("cannot listen on " + o.listen + ": " + net::errno_text(err));
  net::UdpSocket sock = std::move(opened).value();
  install_stop_handlers();
  std::cout << nlohmann::json{{"type", "ready"}, {"listen", o.listen}, {"kem", o.kem}, {"ieds", ids}}.dump()
            << std::endl;
  std::map<std::string, net::Ipv4Endpoint> where;
  std::uint64_t unsent = 0;
  const std::int64_t end = o.duration_s > 0 ? start + static_cast<std::int64_t>(o.duration_s * 1e9) : INT64_MAX;
  std::vector<std::uint8_t> buf(65536);
  while (g_stop == 0 && mono_ns() < end) {
    std::int64_t wake = std::min(end, mono_ns() + 1'000'000'000);
    const TimePoint due = k.next_deadline();
    if (due != TimePoint::max()) wake = std::min(wake, mono_of_wall(due).ns());
    for (const auto& r : removals) {
      if (!r.done) wake = std::min(wake, r.at_mono);
    }
    pollfd pfd{sock.fd(), POLLIN, 0};
    const std::int64_t wait_ms = std::clamp<std::int64_t>((wake - mono_ns() + 999'999) / 1'000'000, 0, 1000);
    if (::poll(&pfd, 1, static_cast<int>(wait_ms)) < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    for (;;) {
      auto r = sock.receive(buf);
      if (!r) break;
      const ByteSpan msg(buf.data(), r->size);
      auto res = k.on_auth_request(msg, wall_now());
      if (!res) {
        std::cout << nlohmann::json{{"type", "rejected"}, {"from", r->src.to_string()},
                                    {"reason", std::string(to_string(res.error()))}}.dump() << std::endl;
        continue;
      }
      auto req = kdc::parse_auth_request(msg);  // parsed fine a moment ago
      if (!req) continue;
      const std::string id(reinterpret_cast<const char*>(req->id.data()), req->id.size());
      where[id] = r->src;
      if (!sock.send_to(r->src, res->response)) ++unsent;
      send_all(sock, where, res->distributions, unsent);
      std::cout << nlohmann::json{{"type", "session"}, {"id", id}, {"from", r->src.to_string()},
                                  {"keys", res->distributions.size()}}.dump() << std::endl;
    }
    auto out = k.poll(wall_now());
    if (!out.empty()) {
      send_all(sock, where, out, unsent);
      std::cout << nlohmann::json{{"type", "rekey"}, {"reason", "scheduled"}, {"distributions", out.size()}}.dump()
                << std::endl;
    }
    for (auto& r : removals) {
      if (r.done || mono_ns() < r.at_mono) continue;
      r.done = true;
      for (std::size_t s = 0; s < k.stream_count(); ++s) {
        auto rm = k.remove_member(s, r.id, wall_now());
        if (!rm) continue;  // not a member of this stream
        send_all(sock, where, *rm, unsent);
        std::cout << nlohmann::json{{"type", "rekey"}, {"reason", "removed " + r.id}, {"stream", s},
                                    {"key_id", k.current_key_id(s)}, {"distributions", rm->size()}}.dump()
                  << std::endl;
      }
    }
  }
  const auto& c = k.counters();
  nlohmann::json rejected = nlohmann::json::object();
  for (std::size_t i = 0; i < sv::kdc::kKdcErrorCount; ++i) {
    if (c.rejected[i] != 0) rejected[std::string(to_string(static_cast<sv::kdc::KdcError>(i)))] = c.rejected[i];
  }
  std::cout << nlohmann::json{{"type", "final"}, {"requests", c.requests}, {"sessions", c.sessions},
                              {"distributions", c.distributions}, {"rekeys", c.rekeys}, {"unsent", unsent},
                              {"rejected", rejected}}.dump()
            << std::endl;
}

// The IED side of --kdc for sv publish / sv subscribe.
struct KdcLink {
  std::unique_ptr<sv::kdc::IedClient> ied;
  std::optional<net::UdpSocket> sock;
  net::Ipv4Endpoint kdc;
  std::uint16_t appid = 0;
  std::string sv_id;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(65536);
  std::uint64_t rejected = 0;

  // Opens every datagram waiting; keeps this stream's key updates.
  std::vector<sv::kdc::GroupKeyUpdate> drain() {
    std::vector<sv::kdc::GroupKeyUpdate> out;
    for (;;) {
      auto r = sock->receive(buf);
      if (!r) break;
      if (r->src != kdc) continue;
      auto u = ied->on_key_distribution(ByteSpan(buf.data(), r->size), wall_now());
      if (!u) {
        ++rejected;
        std::cerr << "kdc: distribution rejected: " << to_string(u.error()) << "\n";
        continue;
      }
      if (u->appid == appid && u->sv_id == sv_id) out.push_back(std::move(u).value());
    }
    return out;
  }
};

KdcLink kdc_connect(const std::string& endpoint, const std::string& id, const std::string& dir,
                    const std::string& kem_name, std::uint16_t appid, const std::string& sv_id,
                    std::vector<sv::kdc::GroupKeyUpdate>& initial) {
  if (id.empty() || dir.empty()) throw std::runtime_error("--kdc needs --id ID and --kdc-dir DIR");
  const kex::KemScheme kem = need_mlkem(kem_name);
  SecretBytes a = load_key_file(dir + "/" + id + ".id");
  // Regular file only, bounded (an ML-KEM-1024 key is 1,568 bytes): a FIFO
  // or device here never blocks or exhausts memory; FileError names the path.
  const std::string pub = read_regular_file(dir + "/kdc.pub", 64 * 1024);
  std::vector<std::uint8_t> ek(pub.begin(), pub.end());
  KdcLink link;
  link.kdc = need_endpoint(endpoint);
  link.appid = appid;
  link.sv_id = sv_id;
  auto ied = sv::kdc::IedClient::create(id, kem, std::move(a), std::move(ek));
  if (!ied) throw std::runtime_error("IED " + id + ": " + std::string(to_string(ied.error())) +
                                     " (identity file, kdc.pub and --kem must match the KDC's)");
  link.ied = std::move(ied).value();
  int err = 0;
  auto s = net::UdpSocket::open(net::Ipv4Endpoint{net::Ipv4Address::any(), 0}, {}, &err);
  if (!s) throw std::runtime_error("UDP socket: " + net::errno_text(err));
  link.sock.emplace(std::move(s).value());
  for (int attempt = 0; attempt < 5 && initial.empty() && g_stop == 0; ++attempt) {
    auto req = link.ied->start(wall_now());
    if (!req) throw std::runtime_error("cannot build the KDC request");
    if (!link.sock->send_to(link.kdc, *req)) throw std::runtime_error("cannot send to the KDC " + endpoint);
    const std::int64_t give_up = mono_ns() + 1'000'000'000;
    while (mono_ns() < give_up && initial.empty()) {
      pollfd pfd{link.sock->fd(), POLLIN, 0};
      if (::poll(&pfd, 1, 50) <= 0) continue;
      for (;;) {
        auto r = link.sock->receive(link.buf);
        if (!r) break;
        if (r->src != link.kdc) continue;
        const ByteSpan msg(link.buf.data(), r->size);
        auto t = sv::kdc::peek_type(msg);
        if (t && *t == sv::kdc::MessageType::kAuthResponse) {
          if (auto ok = link.ied->on_auth_response(msg, wall_now()); !ok) {
            std::cerr << "kdc: confirmation rejected: " << to_string(ok.error()) << "\n";
          }
          continue;
        }
        auto u = link.ied->on_key_distribution(msg, wall_now());
        if (!u) {
          std::cerr << "kdc: distribution rejected: " << to_string(u.error()) << "\n";
          continue;
        }
        if (u->appid == appid && u->sv_id == sv_id) initial.push_back(std::move(u).value());
      }
    }
    if (initial.empty()) continue;  // no answer within 1 s: a new request
    // The predecessor (while still in use) and the current key come back to
    // back; give the second one a moment to arrive.
    const std::int64_t settle = mono_ns() + 100'000'000;
    while (mono_ns() < settle) {
      pollfd pfd{link.sock->fd(), POLLIN, 0};
      if (::poll(&pfd, 1, 20) > 0) {
        for (auto& u : link.drain()) initial.push_back(std::move(u));
      }
    }
  }
  if (initial.empty()) {
    throw std::runtime_error("no key for appid " + std::to_string(appid) + " " + sv_id + " from the KDC at " +
                             endpoint + " (not authenticated, or not a member of the stream)");
  }
  return link;
}

// Where a publisher or subscriber gets its keys from `sv kdc` (instead of --key).
struct KdcClientOptions {
  std::string endpoint;  // ADDRESS:PORT of `sv kdc`; empty: keys from --key
  std::string id;
  std::string dir;
  std::string kem = "ml-kem-768";
};

void add_kdc_client_options(CLI::App* cmd, KdcClientOptions& o) {
  cmd->add_option("--kdc", o.endpoint, "get the stream's keys from `sv kdc` at ADDRESS:PORT (UDP) instead of --key");
  cmd->add_option("--id", o.id, "IED identity registered at the KDC (with --kdc)");
  cmd->add_option("--kdc-dir", o.dir, "directory with kdc.pub and ID.id (with --kdc)");
  cmd->add_option("--kem", o.kem, "ML-KEM set of the KDC (default ml-kem-768)");
}

struct PublishOptions {
  std::string iface;
  StreamOptions stream;
  double duration_s = 0;
  std::uint64_t count = 0;
  bool json = false;
  double spin_us = 50;
  bool realtime = false;
  KdcClientOptions kdc;
};

// Merging unit on a real interface: frames due on absolute deadlines
// (profile.deadline(start, k)); the loop sleeps with clock_nanosleep
// (CLOCK_MONOTONIC, TIMER_ABSTIME) until spin_us before the deadline, spins
// to it, builds the frame and send()s it on an AF_PACKET socket. Late
// wake-ups skip the frames whose deadlines passed (counted), so smpCnt stays
// aligned with time. Jitter is reported as
//   lateness    processing start - deadline
//   send_done   send() returned - deadline
//   period_dev  |interval between consecutive send() returns - nominal|
void run_publish(const PublishOptions& o) {
  if (o.duration_s <= 0 && o.count == 0) throw std::runtime_error("give --duration S and/or --count N");
  const Profile p = need_profile(o.stream.profile);
  StreamConfig c = stream_config(o.stream, p);
  std::optional<KeyMaterial> key;
  std::optional<KdcLink> link;
  std::optional<sv::kdc::GroupKeyUpdate> announced;
  if (!o.kdc.endpoint.empty()) {
    if (!o.stream.key_file.empty()) throw std::runtime_error("--kdc and --key exclude each other");
    std::vector<sv::kdc::GroupKeyUpdate> init;
    link.emplace(kdc_connect(o.kdc.endpoint, o.kdc.id, o.kdc.dir, o.kdc.kem, o.stream.appid, o.stream.sv_id, init));
    auto keys = sv::kdc::initial_keys(std::move(init), wall_now());
    c.security = keys.current->security;
    c.security.sender_id = o.stream.appid;
    key = std::move(keys.current->key);
    announced = std::move(keys.next);
  } else if (c.security.scheme != Scheme::kNone) {
    key = file_key(o.stream);
  }
  // The frame counter (every scheme; AES-GMAC's IV) starts at the wall-clock
  // time in ns, so a restarted publisher never repeats one under the same
  // key (docs/sv.md, "Freshness across restarts"). Keys the KDC sends later
  // continue the same sequence (FrameSigner never goes back).
  if (key) key->initial_counter = publisher_counter_base();
  net::PacketSocket sock = open_packet_socket(o.iface, 0x88BA, false);
  c.eth.src = sock.interface_mac().bytes;
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const std::string rt_failure = o.realtime ? enter_realtime(80) : std::string();
  if (!rt_failure.empty()) std::cerr << "warning: --realtime not in effect: " << rt_failure << "\n";
  install_stop_handlers();

  const std::int64_t spin_ns = static_cast<std::int64_t>(o.spin_us * 1000);
  const std::int64_t start_ns = mono_ns() + 20'000'000;
  Publisher pub = key ? Publisher(c, p, TimePoint::from_ns(start_ns), std::move(*key))
                      : Publisher(c, p, TimePoint::from_ns(start_ns));
  std::uint32_t newest_key_id = key ? pub.signer()->key_id() : 0;
  auto take_key = [&](sv::kdc::GroupKeyUpdate u) {
    if (u.key.key_id <= newest_key_id) return;  // re-delivery of a key already in use or scheduled
    newest_key_id = u.key.key_id;
    pub.schedule_rekey(std::move(u.key), mono_of_wall(u.valid_from));
  };
  if (announced) take_key(std::move(*announced));
  const std::uint64_t kdc_check_every = std::max<std::uint64_t>(1, p.frames_per_second() / 100);  // ~10 ms
  const std::uint64_t max_frames = o.count ? o.count : UINT64_MAX;
  const std::int64_t end_ns =
      o.duration_s > 0 ? start_ns + static_cast<std::int64_t>(o.duration_s * 1e9) : INT64_MAX;
  const std::size_t expect = static_cast<std::size_t>(std::min<double>(
      o.count ? static_cast<double>(o.count) : o.duration_s * p.frames_per_second(), 20'000'000.0));
  std::vector<std::int64_t> late, done, period;
  late.reserve(expect);
  done.reserve(expect);
  period.reserve(expect);
  std::vector<Sample> samples(p.asdus_per_frame * 8);
  std::uint64_t sent = 0, send_errors = 0;
  int last_errno = 0;
  std::int64_t prev_done = 0;
  const std::int64_t nominal_ns = static_cast<std::int64_t>(1e9 / p.frames_per_second());
  if (!o.json) {
    std::cout << "publishing " << p.name << " (" << p.sample_rate_hz << "/" << p.asdus_per_frame << ", "
              << p.frames_per_second() << " frames/s, " << pub.frame_template().size() << " bytes, auth "
              << scheme_name(c.security);
    if (c.security.scheme != Scheme::kNone) std::cout << ", key id " << o.stream.key_id;
    std::cout << ") on " << o.iface << std::endl;
  }
  while (g_stop == 0 && sent + send_errors < max_frames) {
    const TimePoint dl = pub.next_deadline();
    if (dl.ns() >= end_ns) break;
    const std::int64_t wake = dl.ns() - spin_ns;
    if (mono_ns() < wake) {
      const timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
      while (g_stop == 0 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
      }
      if (g_stop != 0) break;
    }
    std::int64_t now = mono_ns();
    while (now < dl.ns()) now = mono_ns();
    fill_samples(samples, p.asdus_per_frame, pub.frame_index() * p.asdus_per_frame, p.sample_rate_hz);
    auto f = pub.build_next(samples);
    if (!f) throw std::runtime_error("publisher failed: " + std::string(to_string(pub.last_security_error())));
    auto s = sock.send(*f);
    const std::int64_t t_done = mono_ns();
    if (s) {
      ++sent;
    } else {
      ++send_errors;
      last_errno = sock.last_errno();
    }
    late.push_back(now - dl.ns());
    done.push_back(t_done - dl.ns());
    if (prev_done != 0) period.push_back(std::abs((t_done - prev_done) - nominal_ns));
    prev_done = t_done;
    if (link && pub.frame_index() % kdc_check_every == 0) {
      for (auto& u : link->drain()) take_key(std::move(u));
    }
    const std::uint64_t before = pub.counters().skipped_frames;
    pub.skip_to(TimePoint::from_ns(mono_ns()));
    if (pub.counters().skipped_frames != before) prev_done = 0;  // a skip is not a period sample
  }
  const double elapsed = static_cast<double>(mono_ns() - start_ns) / 1e9;
  nlohmann::json out{{"type", "publisher"},
                     {"iface", o.iface},
                     {"profile", std::string(p.name)},
                     {"rate", std::to_string(p.sample_rate_hz) + "/" + std::to_string(p.asdus_per_frame)},
                     {"auth", scheme_name(c.security)},
                     {"frame_bytes", pub.frame_template().size()},
                     {"interarrival_us", p.interarrival_us()},
                     {"frames_sent", sent},
                     {"frames_skipped", pub.counters().skipped_frames},
                     {"send_errors", send_errors},
                     {"elapsed_s", elapsed},
                     {"load_average", loadavg()},
                     {"method", "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to deadline - spin_us, spin, "
                                "build + sign + send() on AF_PACKET; times in us"},
                     {"spin_us", o.spin_us},
                     {"realtime", o.realtime && rt_failure.empty()}};
  if (c.security.scheme != Scheme::kNone) out["key_id"] = pub.signer()->key_id();
  out["rekeys"] = pub.counters().rekeys;
  if (link) out["kdc_rejected"] = link->rejected;
  if (send_errors != 0) out["last_send_error"] = net::errno_text(last_errno);
  out["jitter_us"] = nlohmann::json{
      {"lateness", stats_json(late)}, {"send_done", stats_json(done)}, {"period_dev", stats_json(period)}};
  if (o.json) {
    std::cout << out.dump() << std::endl;
  } else {
    const auto& j = out["jitter_us"];
    std::printf("sent %llu frames in %.3f s (skipped %llu late deadlines, %llu send errors)\n",
                static_cast<unsigned long long>(sent), elapsed,
                static_cast<unsigned long long>(pub.counters().skipped_frames),
                static_cast<unsigned long long>(send_errors));
    for (const char* k : {"lateness", "send_done", "period_dev"}) {
      std::printf("  %-10s mean %8.2f us  p99 %8.2f us  max %9.2f us\n", k, j[k]["mean"].get<double>(),
                  j[k]["p99"].get<double>(), j[k]["max"].get<double>());
    }
  }
}

struct SubscribeOptions {
  std::string iface;
  StreamOptions stream;
  double duration_s = 0;
  double interval_s = 1;
  double timeout_ms = 100;
  bool json = false;
  bool accept_simulated = false;
  bool realtime = false;
  KdcClientOptions kdc;
};

// EtherType 0x88BA, directly or behind one 802.1Q tag.
bool is_sv_frame(ByteSpan f) {
  if (f.size() < 14) return false;
  std::uint16_t et = load_be16(f.data() + 12);
  if (et == 0x8100 && f.size() >= 18) et = load_be16(f.data() + 16);
  return et == 0x88BA;
}

// Subscriber on a real interface: an AF_PACKET socket bound to every
// EtherType (so priority-tagged frames keep their tag; non-SV frames are
// counted and ignored), promiscuous for the multicast groups, poll() with a
// timeout at the next report / stream timeout. Each frame goes through
// sv::Subscriber (decode, verify, supervise) with its CLOCK_MONOTONIC
// arrival time. Reports: a line per interval and a final one (JSON with --json).
void run_subscribe(const SubscribeOptions& o) {
  const Profile p = need_profile(o.stream.profile);
  SubscriptionConfig s = subscription_config(o.stream, p, o.accept_simulated);
  if (o.timeout_ms <= 0) throw std::runtime_error("--timeout-ms must be positive");
  if (o.interval_s <= 0) throw std::runtime_error("--interval must be positive");
  s.timeout = Duration::microseconds(static_cast<std::int64_t>(o.timeout_ms * 1000));
  std::optional<KeyMaterial> key;
  std::optional<KdcLink> link;
  std::optional<sv::kdc::GroupKeyUpdate> announced;
  if (!o.kdc.endpoint.empty()) {
    if (!o.stream.key_file.empty()) throw std::runtime_error("--kdc and --key exclude each other");
    std::vector<sv::kdc::GroupKeyUpdate> init;
    link.emplace(kdc_connect(o.kdc.endpoint, o.kdc.id, o.kdc.dir, o.kdc.kem, o.stream.appid, o.stream.sv_id, init));
    auto keys = sv::kdc::initial_keys(std::move(init), wall_now());
    s.security = keys.current->security;
    key = std::move(keys.current->key);
    announced = std::move(keys.next);
  } else if (s.security.scheme != Scheme::kNone) {
    key = file_key(o.stream);
  }
  std::uint32_t newest_key_id = key ? key->key_id : 0;
  Subscriber sub;
  const auto id = sub.add_stream(s, std::move(key));
  auto take_key = [&](sv::kdc::GroupKeyUpdate u) {
    if (u.key.key_id <= newest_key_id) return;
    newest_key_id = u.key.key_id;
    if (auto st = sub.set_next_key(id, std::move(u.key)); !st) {
      std::cerr << "kdc: key " << newest_key_id << " refused: " << to_string(st.error()) << "\n";
    }
  };
  if (announced) take_key(std::move(*announced));
  net::PacketSocket sock = open_packet_socket(o.iface, net::kEtherTypeAll, true);
  if (!sock.set_promiscuous(true)) {
    throw std::runtime_error("cannot set " + o.iface + " promiscuous: " + net::errno_text(sock.last_errno()));
  }
  // A large receive buffer rides out scheduling gaps at 96 kHz; frames the
  // kernel still drops for this socket are read from PACKET_STATISTICS and
  // reported as socket_drops.
  const int rcvbuf = 16 << 20;
  if (setsockopt(sock.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0) {
    (void)setsockopt(sock.fd(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  }
  std::uint64_t socket_drops = 0;
  auto read_socket_drops = [&] {
    tpacket_stats st{};
    socklen_t len = sizeof st;
    if (getsockopt(sock.fd(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) socket_drops += st.tp_drops;
  };
  const std::string rt_failure = o.realtime ? enter_realtime(70) : std::string();
  if (!rt_failure.empty()) std::cerr << "warning: --realtime not in effect: " << rt_failure << "\n";
  install_stop_handlers();

  std::array<std::uint64_t, 16> drops{};
  std::uint64_t non_sv = 0, rx_errors = 0, truncated = 0;
  const std::int64_t start = mono_ns();
  const std::int64_t end = o.duration_s > 0 ? start + static_cast<std::int64_t>(o.duration_s * 1e9) : INT64_MAX;
  const std::int64_t interval = static_cast<std::int64_t>(o.interval_s * 1e9);
  std::int64_t next_report = start + interval;
  std::vector<std::uint8_t> buf(9216);

  auto report = [&](bool final) {
    read_socket_drops();
    nlohmann::json stream = counters_json(sub.counters(id));
    stream["appid"] = s.appid;
    stream["svID"] = s.sv_id;
    stream["auth"] = scheme_name(s.security);
    if (s.security.scheme != Scheme::kNone) stream["key_id"] = link ? newest_key_id : o.stream.key_id;
    stream["timed_out"] = sub.timed_out(id);
    nlohmann::json rejections = nlohmann::json::object();
    for (std::size_t r = 0; r < drops.size(); ++r) {
      if (drops[r] != 0) rejections[std::string(to_string(static_cast<DropReason>(r)))] = drops[r];
    }
    nlohmann::json line{{"type", final ? "final" : "stats"},
                        {"iface", o.iface},
                        {"elapsed_s", static_cast<double>(mono_ns() - start) / 1e9},
                        {"streams", nlohmann::json::array({stream})},
                        {"rejections", rejections},
                        {"malformed", sub.malformed_total()},
                        {"unknown_appid", sub.unknown_appid()},
                        {"non_sv_frames", non_sv},
                        {"rx_errors", rx_errors},
                        {"truncated", truncated},
                        {"socket_drops", socket_drops}};
    if (link) line["kdc_rejected"] = link->rejected;
    if (o.json) {
      std::cout << line.dump() << std::endl;
      return;
    }
    const auto& c = sub.counters(id);
    std::printf("%s %.1fs appid 0x%04x %s: received %llu delivered %llu gaps %llu bad_tag %llu unknown_key %llu "
                "bad_ext %llu replays %llu timeouts %llu | malformed %llu unknown_appid %llu\n",
                final ? "final" : "stats", line["elapsed_s"].get<double>(), s.appid, s.sv_id.c_str(),
                static_cast<unsigned long long>(c.received), static_cast<unsigned long long>(c.delivered),
                static_cast<unsigned long long>(c.gaps), static_cast<unsigned long long>(c.bad_tag),
                static_cast<unsigned long long>(c.unknown_key), static_cast<unsigned long long>(c.bad_extension),
                static_cast<unsigned long long>(c.replays), static_cast<unsigned long long>(c.timeouts),
                static_cast<unsigned long long>(sub.malformed_total()),
                static_cast<unsigned long long>(sub.unknown_appid()));
    std::fflush(stdout);
  };

  if (o.json) {
    // Scripts wait for this line: the socket is open and bound.
    std::cout << nlohmann::json{{"type", "ready"}, {"iface", o.iface}}.dump() << std::endl;
  } else {
    std::cout << "subscribing to appid 0x" << std::hex << s.appid << std::dec << " " << s.sv_id << " (" << p.name
              << ", auth " << scheme_name(s.security) << ") on " << o.iface << std::endl;
  }
  while (g_stop == 0) {
    std::int64_t now = mono_ns();
    if (now >= end) break;
    std::int64_t wake = std::min(end, next_report);
    const TimePoint to = sub.next_timeout();
    if (to != TimePoint::max()) wake = std::min(wake, to.ns());
    const std::int64_t wait_ms = std::clamp<std::int64_t>((wake - now + 999'999) / 1'000'000, 0, 1000);
    pollfd pfd[2] = {{sock.fd(), POLLIN, 0}, {link ? link->sock->fd() : -1, POLLIN, 0}};
    const int pr = ::poll(pfd, link ? 2 : 1, static_cast<int>(wait_ms));
    if (pr < 0 && errno != EINTR) throw std::runtime_error("poll: " + net::errno_text(errno));
    if (link && (pfd[1].revents & POLLIN) != 0) {
      for (auto& u : link->drain()) take_key(std::move(u));
    }
    for (;;) {
      auto r = sock.receive(buf);
      if (!r) {
        if (r.error() == net::IoError::kWouldBlock) break;
        if (r.error() == net::IoError::kTruncated) {
          ++truncated;
          continue;
        }
        ++rx_errors;
        break;
      }
      const ByteSpan frame(buf.data(), *r);
      if (!is_sv_frame(frame)) {
        ++non_sv;
        continue;
      }
      auto d = sub.on_frame(frame, TimePoint::from_ns(mono_ns()));
      if (!d) ++drops[static_cast<std::size_t>(d.error()) % drops.size()];
    }
    now = mono_ns();
    (void)sub.poll(TimePoint::from_ns(now));
    if (now >= next_report) {
      report(false);
      while (next_report <= now) next_report += interval;
    }
  }
  report(true);
}

const CommandRegistration reg(42, [](CLI::App& root) {
  CLI::App* sv = root.get_subcommand("sv");  // created by cmd_sv.cc (order 40)

  auto pubo = std::make_shared<PublishOptions>();
  auto* pubc = sv->add_subcommand("publish", "merging unit: send a profile's frames on a real interface (AF_PACKET, root)");
  pubc->add_option("--iface", pubo->iface, "interface to send on")->required();
  add_stream_options(pubc, pubo->stream, StreamRole::kSender);
  pubc->add_option("--duration", pubo->duration_s, "seconds to publish, 0..1e7 (0: --count alone)")
      ->check(finite_in(0, kMaxRunSeconds));
  pubc->add_option("--count", pubo->count, "frames to send, 0..1e12 (stops at whichever of --count/--duration comes first)")
      ->check(whole_in(0, 1'000'000'000'000ULL));
  pubc->add_flag("--json", pubo->json, "print the final report as one JSON line");
  pubc->add_option("--spin-us", pubo->spin_us, "wake this long before each deadline and spin, 0..10000 us (default 50)")
      ->check(finite_in(0, 10'000));
  pubc->add_flag("--realtime", pubo->realtime, "mlockall + SCHED_FIFO priority 80 (root); warns and goes on if refused");
  add_kdc_client_options(pubc, pubo->kdc);
  pubc->callback([pubo] { run_publish(*pubo); });

  auto subo = std::make_shared<SubscribeOptions>();
  auto* subc = sv->add_subcommand("subscribe", "subscriber: receive, verify and supervise a stream on a real interface (AF_PACKET, root)");
  subc->add_option("--iface", subo->iface, "interface to receive on")->required();
  add_stream_options(subc, subo->stream, StreamRole::kReceiver);
  subc->add_option("--duration", subo->duration_s, "seconds to run, 0..1e7 (default 0: until SIGINT/SIGTERM)")
      ->check(finite_in(0, kMaxRunSeconds));
  subc->add_option("--interval", subo->interval_s, "seconds between reports, 0.001..86400 (default 1)")
      ->check(finite_in(0.001, 86'400));
  subc->add_option("--timeout-ms", subo->timeout_ms, "stream timeout, 0.001..3600000 ms (default 100)")
      ->check(finite_in(0.001, 3'600'000));
  subc->add_flag("--json", subo->json, "JSON lines: {type: stats|final, streams:[{counters}], rejections, ...}");
  subc->add_flag("--accept-simulated", subo->accept_simulated, "deliver frames with the Simulate bit");
  subc->add_flag("--realtime", subo->realtime, "mlockall + SCHED_FIFO priority 70 (root); warns and goes on if refused");
  add_kdc_client_options(subc, subo->kdc);
  subc->callback([subo] { run_subscribe(*subo); });

  auto ko = std::make_shared<KdcOptions>();
  auto* kdcc = sv->add_subcommand("kdc", "ML-KEM key distribution centre for SV group keys over UDP (docs/sv.md)");
  kdcc->add_option("--listen", ko->listen, "ADDRESS:PORT to serve on")->required();
  kdcc->add_option("--dir", ko->dir, "directory for the provisioning files kdc.pub and ID.id (0600)")->required();
  kdcc->add_option("--stream", ko->streams, "APPID,SVID,SCHEME,PUBLISHER,SUB1+SUB2 (repeatable)")->required();
  kdcc->add_option("--remove", ko->removals, "ID@SECONDS: remove ID from its streams (rekey) after SECONDS");
  kdcc->add_option("--kem", ko->kem, "ml-kem-512, ml-kem-768 (default) or ml-kem-1024");
  kdcc->add_option("--lifetime", ko->lifetime_s, "seconds each group key lives, 0.01..1e7 (default 3600)")
      ->check(finite_in(0.01, kMaxRunSeconds));
  kdcc->add_option("--lead", ko->lead_s, "seconds a new key is distributed before use, 0..1e7, below --lifetime (default 2)")
      ->check(finite_in(0, kMaxRunSeconds));
  kdcc->add_option("--duration", ko->duration_s, "seconds to run, 0..1e7 (default 0: until SIGINT/SIGTERM)")
      ->check(finite_in(0, kMaxRunSeconds));
  kdcc->callback([ko] { run_kdc(*ko); });
});

}  // namespace
}  // namespace layersec::app
