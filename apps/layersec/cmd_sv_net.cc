// `layersec sv publish`, `layersec sv subscribe` and `layersec sv kdc`: the
// SV publisher and subscriber on real interfaces (AF_PACKET raw sockets) and
// the ML-KEM key distribution centre over UDP (docs/sv.md). Options are
// parsed here; the work is in src/layersec/sv_io:
//
//   sv publish    sv_io::publish_on_interface: a merging unit, frames paced
//                 on absolute deadlines (clock_nanosleep TIMER_ABSTIME +
//                 spin), signed, sent on an AF_PACKET socket; reports send
//                 jitter (mean/p99/max).
//   sv subscribe  sv_io::subscribe_on_interface: receives, verifies and
//                 supervises one stream; prints its counters and rejections
//                 periodically and at the end (JSON lines with --json);
//                 --state FILE persists the counter floor (sv_io/floor_file.h).
// The options of sv subscribe and --kdc are declared in sv_cli.h.
//   sv kdc        sv_io::KdcServer: sv::kdc::Kdc behind a UDP socket;
//                 publish and subscribe take their keys from it with --kdc
//                 (sv_io::KdcClient).
// The subcommands join the `sv` group that cmd_sv.cc creates.
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/frame.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/profiles.h"
#include "layersec/sv_io/host.h"
#include "layersec/sv_io/kdc_client.h"
#include "layersec/sv_io/kdc_server.h"
#include "layersec/sv_io/publisher_loop.h"
#include "layersec/sv_io/stop_signal.h"
#include "layersec/sv_io/subscriber_loop.h"
#include "sv_cli.h"

namespace layersec::app {
namespace {

using namespace layersec::sv;
using namespace layersec::app::svcli;
using sv_io::need_mlkem;

Duration seconds(double s) { return Duration::nanoseconds(static_cast<std::int64_t>(s * 1e9)); }

// --- sv kdc ----------------------------------------------------------------------

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
kdc::StreamGroupConfig parse_stream_spec(const std::string& spec) {
  const auto f = split(spec, ',');
  if (f.size() != 5) throw std::runtime_error("--stream wants APPID,SVID,SCHEME,PUBLISHER,SUB1+SUB2: " + spec);
  kdc::StreamGroupConfig g;
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

void run_kdc(const KdcOptions& o) {
  if (o.streams.empty()) throw std::runtime_error("give at least one --stream");
  kdc::KdcConfig cfg;
  cfg.kem = need_mlkem(o.kem);
  cfg.key_lifetime = seconds(o.lifetime_s);
  cfg.key_change_lead = seconds(o.lead_s);
  auto server = sv_io::KdcServer::create(cfg, sv_io::wall_clock(), std::cout);
  std::vector<kdc::StreamGroupConfig> groups;
  for (const auto& spec : o.streams) groups.push_back(parse_stream_spec(spec));
  server->provision(groups, o.dir);
  for (const auto& r : o.removals) {
    const auto at = r.find('@');
    if (at == std::string::npos) throw std::runtime_error("--remove wants ID@SECONDS: " + r);
    const std::string secs = r.substr(at + 1);
    if (const auto why = check_finite_in(secs, 0, kMaxRunSeconds); !why.empty()) {
      throw std::runtime_error("--remove " + r + ": SECONDS " + why);
    }
    server->schedule_removal(r.substr(0, at), seconds(std::stod(secs)));
  }
  server->listen(need_endpoint(o.listen), o.listen);
  sv_io::install_stop_handlers();
  std::cout << nlohmann::json{{"type", "ready"}, {"listen", o.listen}, {"kem", o.kem}, {"ieds", server->ieds()}}.dump()
            << std::endl;
  MonotonicClock clock;
  net::EventLoop loop(clock);
  server->run(loop, o.duration_s > 0 ? seconds(o.duration_s) : Duration::zero());
}

// --- --kdc for sv publish / sv subscribe -------------------------------------------

// The stream's keys from `sv kdc` (--kdc), instead of --key.
sv_io::KdcStreamKeys kdc_keys(const KdcClientOptions& o, const StreamOptions& stream) {
  if (!stream.key_file.empty()) throw std::runtime_error("--kdc and --key exclude each other");
  if (o.id.empty() || o.dir.empty()) throw std::runtime_error("--kdc needs --id ID and --kdc-dir DIR");
  sv_io::KdcClientConfig c;
  c.kem = need_mlkem(o.kem);
  sv_io::KdcCredentials credentials = sv_io::load_kdc_credentials(o.dir, o.id);
  c.kdc = need_endpoint(o.endpoint);
  c.kdc_text = o.endpoint;
  c.id = o.id;
  c.appid = stream.appid;
  c.sv_id = stream.sv_id;
  return sv_io::fetch_stream_keys(c, std::move(credentials), sv_io::wall_clock());
}

// --- sv publish / sv subscribe (AF_PACKET on a real interface) -------------------

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

void run_publish(const PublishOptions& o) {
  if (o.duration_s <= 0 && o.count == 0) throw std::runtime_error("give --duration S and/or --count N");
  sv_io::PublishRun run;
  run.profile = need_profile(o.stream.profile);
  run.stream = stream_config(o.stream, run.profile);
  if (!o.kdc.endpoint.empty()) {
    auto keys = kdc_keys(o.kdc, o.stream);
    run.stream.security = keys.security;
    run.stream.security.sender_id = o.stream.appid;
    run.key = std::move(keys.current);
    run.kdc.emplace(std::move(keys.client));
    run.announced = std::move(keys.next);
  } else if (run.stream.security.scheme != Scheme::kNone) {
    run.key = file_key(o.stream);
  }
  run.iface = o.iface;
  run.key_id_shown = o.stream.key_id;
  run.duration_s = o.duration_s;
  run.count = o.count;
  run.spin_us = o.spin_us;
  run.json = o.json;
  run.realtime = o.realtime;
  sv_io::publish_on_interface(std::move(run), std::cout);
}

void run_subscribe(const SubscribeOptions& o) {
  const Profile p = need_profile(o.stream.profile);
  sv_io::SubscribeRun run;
  run.subscription = subscription_config(o.stream, p, o.accept_simulated);
  if (o.timeout_ms <= 0) throw std::runtime_error("--timeout-ms must be positive");
  if (o.interval_s <= 0) throw std::runtime_error("--interval must be positive");
  run.subscription.timeout = Duration::microseconds(static_cast<std::int64_t>(o.timeout_ms * 1000));
  if (!o.kdc.endpoint.empty()) {
    auto keys = kdc_keys(o.kdc, o.stream);
    run.subscription.security = keys.security;
    run.key = std::move(keys.current);
    run.kdc.emplace(std::move(keys.client));
    run.announced = std::move(keys.next);
  } else if (run.subscription.security.scheme != Scheme::kNone) {
    run.key = file_key(o.stream);
  }
  run.iface = o.iface;
  run.profile_name = std::string(p.name);
  run.key_id_shown = o.stream.key_id;
  run.duration = o.duration_s > 0 ? seconds(o.duration_s) : Duration::zero();
  run.interval = seconds(o.interval_s);
  run.json = o.json;
  run.realtime = o.realtime;
  if (o.state_path.empty() && (o.first_start || o.floor_reserve != kDefaultFloorReserve)) {
    throw std::runtime_error("--first-start and --floor-reserve need --state FILE");
  }
  if (!o.state_path.empty() && run.subscription.security.scheme == Scheme::kNone) {
    throw std::runtime_error("--state persists a secured stream's counter floor: give --auth SCHEME (not none)");
  }
  run.state_path = o.state_path;
  run.first_start = o.first_start;
  run.floor_reserve = o.floor_reserve;
  sv_io::subscribe_on_interface(std::move(run), std::cout);
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
  add_subscribe_options(subc, *subo);
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
