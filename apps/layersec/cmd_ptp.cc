// `layersec ptp`: an IEEE 802.1AS (gPTP) end station on one interface, with
// kernel software timestamps (SO_TIMESTAMPING on AF_PACKET).
//
//   layersec ptp --iface IF [--iface IF2 ...] [--profile automotive|gptp]
//       [--role gm|slave|auto|relay] [--json] [--duration S] [--domain N] [--neighbor-prop-delay-thresh NS]
//       [--minor-version 0|1] [--interval-request [--offset-threshold NS]] [--servo hw|sw]
//
// Once a second it prints the slave's view: offset_ns (slave − GM, as the
// servo measured it; ptp4l's "offset"), path_delay_ns, rate_ratio and the
// state (gm, slave, uncalibrated, listening), with --json as one JSON line.
// The disciplined clock is layersec's own (an offset and rate over
// CLOCK_MONOTONIC_RAW); no host clock is adjusted. offset_to_realtime_ns is
// that clock minus this host's CLOCK_REALTIME: the true error when the GM
// serves this same host's CLOCK_REALTIME (ptp4l -S or layersec as GM in
// another namespace).
//
// With more than one --iface (2..8, distinct, existing) the process is a
// time-aware relay over all of them (ptp/ptp_relay.h): under automotive the
// first --iface faces the GM and --role must be absent or `relay`; under
// gptp the BMCA decides per port (--role absent, auto or relay). Its JSON
// line adds "ports" and "residence_ns". The protocol lives in
// src/layersec/ptp/; this file parses options and prints.
#include <net/if.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/ptp/ptp_relay.h"
#include "layersec/ptp/ptp_runner.h"

namespace layersec::app {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

struct Options {
  std::vector<std::string> ifaces;
  bool role_given = false;
  std::string profile = "gptp";
  std::string role = "auto";
  bool json = false;
  double duration_s = 0;
  std::uint64_t domain = 0;
  std::uint64_t delay_thresh_ns = 800;
  std::uint64_t minor_version = 1;
  bool interval_request = false;
  std::uint64_t offset_threshold_ns = 30;
  std::string servo = "hw";
};

void refuse(const std::string& why) {
  std::cerr << "layersec ptp: " << why << "\n";
  set_exit_code(2);
}

void run_relay(const Options& o, const ptp::SystemConfig& c);

void run(const Options& o) {
  ptp::RunnerOptions ro;
  ro.interface = o.ifaces.front();
  ro.duration_s = o.duration_s;
  ptp::SystemConfig& c = ro.system;
  c.profile = o.profile == "automotive" ? ptp::Profile::kAutomotive : ptp::Profile::kGptp;
  c.role = o.role == "gm" ? ptp::Role::kGm : (o.role == "slave" ? ptp::Role::kSlave : ptp::Role::kAuto);
  const bool relay = o.ifaces.size() > 1;
  if (relay) {
    if (o.ifaces.size() > ptp::kMaxPorts) return refuse("--iface: a relay takes at most 8 interfaces");
    for (std::size_t i = 0; i < o.ifaces.size(); ++i) {
      for (std::size_t k = 0; k < i; ++k) {
        if (o.ifaces[k] == o.ifaces[i]) return refuse("--iface: " + o.ifaces[i] + " is given twice");
      }
      if (o.ifaces[i].empty() || o.ifaces[i].size() >= IF_NAMESIZE || ::if_nametoindex(o.ifaces[i].c_str()) == 0) {
        return refuse("--iface: no interface named '" + o.ifaces[i] + "'");
      }
    }
    if (c.profile == ptp::Profile::kAutomotive) {
      if (o.role_given && o.role != "relay") {
        return refuse("--role: with several --iface the process is a relay: under automotive --role must be absent or relay");
      }
      c.role = ptp::Role::kSlave;  // the core's static relay roles: port 0 slave (faces the GM), the others master
    } else {
      if (o.role != "auto" && o.role != "relay") {
        return refuse("--role: with several --iface the process is a relay: under gptp --role must be absent, auto or relay");
      }
      c.role = ptp::Role::kAuto;
    }
  } else if (o.role == "relay") {
    return refuse("--role: relay needs at least two --iface");
  }
  if (c.profile == ptp::Profile::kAutomotive && c.role == ptp::Role::kAuto) {
    std::cerr << "layersec ptp: --role: the automotive profile has static roles: give gm or slave\n";
    set_exit_code(2);
    return;
  }
  c.domain = static_cast<std::uint8_t>(o.domain);
  c.minor_version = static_cast<std::uint8_t>(o.minor_version);
  c.pdelay.neighbor_prop_delay_thresh_ns = static_cast<std::int64_t>(o.delay_thresh_ns);
  c.interval_request = o.interval_request;
  c.offset_threshold_ns = static_cast<double>(o.offset_threshold_ns);
  if (o.servo == "sw") c.servo = ptp::software_timestamp_servo();
  if (c.profile == ptp::Profile::kAutomotive) c.servo.step_threshold_ns = 1e9;  // automotive-slave.cfg: step_threshold 1 (s)
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  if (relay) return run_relay(o, c);

  const auto each = [&](const ptp::TimeAwareSystem& sys, double t, double off_real, const ptp::RunnerStats& rs) {
    const auto& st = sys.status();
    const bool slave = !sys.is_grandmaster() && st.valid;
    if (o.json) {
      std::cout << ptp::status_json(sys, t, off_real, rs).dump() << std::endl;
    } else {
      char line[256];
      std::snprintf(line, sizeof line, "t %6.1f s  %-12s offset %10.1f ns  delay %8.1f ns  rate_ratio %.9f  drops %llu\n",
                    t, sys.state(), slave ? st.offset_ns : 0.0, sys.pdelay(0).mean_link_delay_ns(),
                    slave ? st.rate_ratio : 1.0, static_cast<unsigned long long>(sys.counters(0).drops.total()));
      std::cout << line << std::flush;
    }
  };
  try {
    ptp::TimestampingInfo info;
    const auto st = ptp::run_ptp(ro, each, &g_stop, &info);
    std::cerr << "layersec ptp: " << o.ifaces.front() << ": SO_TIMESTAMPING software tx " << (info.software_tx ? "yes" : "no")
              << ", rx " << (info.software_rx ? "yes" : "no") << ", hardware tx " << (info.hardware_tx ? "yes" : "no")
              << ", phc " << info.phc_index << "; frames in " << st.frames_in << " out " << st.frames_out
              << ", rx without timestamp " << st.rx_without_timestamp << ", tx timestamps missed "
              << st.tx_timestamp_missed << ", send errors " << st.send_errors << "\n";
  } catch (const ptp::PtpSocketError& e) {
    std::cerr << "layersec ptp: " << e.what() << "\n";
    set_exit_code(1);
  } catch (const ptp::ConfigError& e) {
    std::cerr << "layersec ptp: " << e.what() << "\n";
    set_exit_code(2);
  }
}

void run_relay(const Options& o, const ptp::SystemConfig& c) {
  ptp::RelayOptions ro;
  ro.interfaces = o.ifaces;
  ro.duration_s = o.duration_s;
  ro.system = c;
  const auto each = [&](const ptp::PtpRelay& relay, double t, double off_real) {
    const ptp::TimeAwareSystem& sys = relay.system();
    if (o.json) {
      std::cout << ptp::relay_status_json(relay, o.ifaces, t, off_real).dump() << std::endl;
      return;
    }
    const auto& st = sys.status();
    const bool synced = !sys.is_grandmaster() && st.valid;
    char head[160];
    std::snprintf(head, sizeof head, "t %6.1f s  %-12s offset %10.1f ns  residence p50 %8.0f ns", t, sys.state(),
                  synced ? st.offset_ns : 0.0, relay.stats().window_residence_p50_ns);
    std::string line = head;
    for (std::size_t i = 0; i < relay.port_count(); ++i) {
      line += "  " + o.ifaces[i] + " " + ptp::to_string(sys.port_role(i)) + " fwd " +
              std::to_string(relay.stats().ports[i].syncs_forwarded) + " drops " +
              std::to_string(sys.counters(i).drops.total());
    }
    std::cout << line << std::endl;
  };
  try {
    std::vector<ptp::TimestampingInfo> infos;
    const ptp::RelayStats st = ptp::run_ptp_relay(ro, each, &g_stop, &infos);
    for (std::size_t i = 0; i < st.ports.size() && i < infos.size(); ++i) {
      const auto& p = st.ports[i];
      std::cerr << "layersec ptp: " << o.ifaces[i] << ": SO_TIMESTAMPING software tx "
                << (infos[i].software_tx ? "yes" : "no") << ", rx " << (infos[i].software_rx ? "yes" : "no")
                << "; frames in " << p.frames_in << " out " << p.frames_out << ", syncs forwarded "
                << p.syncs_forwarded << ", rx without timestamp " << p.rx_without_timestamp
                << ", tx timestamps missed " << p.tx_timestamp_missed << ", send errors " << p.send_errors << "\n";
    }
  } catch (const ptp::PtpSocketError& e) {
    std::cerr << "layersec ptp: " << e.what() << "\n";
    set_exit_code(1);
  } catch (const ptp::ConfigError& e) {
    std::cerr << "layersec ptp: " << e.what() << "\n";
    set_exit_code(2);
  }
}

const CommandRegistration reg(66, [](CLI::App& root) {
  auto opts = std::make_shared<Options>();
  auto* cmd = root.add_subcommand("ptp", "IEEE 802.1AS gPTP end station (software timestamps; disciplines layersec's clock)");
  cmd->add_option("--iface", opts->ifaces,
                  "the interface (AF_PACKET, EtherType 0x88F7); repeat it (2..8) for a relay, the first facing the GM "
                  "under automotive")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--profile", opts->profile, "gptp (BMCA, Announce) or automotive (static roles)")
      ->check(CLI::IsMember({"gptp", "automotive"}));
  auto* role = cmd->add_option("--role", opts->role,
                               "gm, slave or auto (BMCA; gptp only); relay (or absent) with several --iface")
                   ->check(CLI::IsMember({"gm", "slave", "auto", "relay"}));
  cmd->add_flag("--json", opts->json, "one JSON line per second");
  cmd->add_option("--duration", opts->duration_s, "stop after S seconds (default: run until SIGINT/SIGTERM)")
      ->check(finite_in(0, 1e7));
  cmd->add_option("--domain", opts->domain, "gPTP domain number (default 0)")->check(whole_in(0, 127));
  cmd->add_option("--neighbor-prop-delay-thresh", opts->delay_thresh_ns,
                  "asCapable only while the link delay is at most NS (default 800; a veth needs more)")
      ->check(whole_in(1, 1'000'000'000));
  cmd->add_option("--minor-version", opts->minor_version, "minorVersionPTP sent: 1 (802.1AS-2020) or 0 (linuxptp 3.x)")
      ->check(whole_in(0, 1));
  cmd->add_flag("--interval-request", opts->interval_request,
                "automotive slave: once synchronised, ask for 1 s Sync by Signaling and request peer delay every 4 s");
  cmd->add_option("--offset-threshold", opts->offset_threshold_ns,
                  "with --interval-request: switch once 10 offsets in a row are within NS (default 30, as linuxptp)")
      ->check(whole_in(1, 1'000'000'000));
  cmd->add_option("--servo", opts->servo, "PI constants: hw (default: linuxptp's hardware-timestamp constants, which also track best here) or sw (ptp4l -S defaults)")
      ->check(CLI::IsMember({"sw", "hw"}));
  cmd->callback([opts, role] {
    opts->role_given = role->count() > 0;
    run(*opts);
  });
});

}  // namespace
}  // namespace layersec::app
