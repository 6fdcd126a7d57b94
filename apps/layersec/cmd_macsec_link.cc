// `layersec macsec up`: a MACsec interface, the equivalent of the kernel's
// `ip link add link eth0 macsec0 type macsec ...` plus its SAs.
//
// --backend user (default): creates the TAP interface NAME on top of the
// lower interface (MTU 32 bytes smaller, MAC copied or configured), protects
// everything the kernel sends on it with the configured SecY (EtherType
// 0x88E5 on the lower interface) and delivers only verified frames back.
// SIGHUP re-reads the configuration file and switches SAs without
// restarting the interface (sa_rotation.h): new SAs are installed, the
// encoding SA is switched between two frames, SAs no longer listed are
// retired (receive SAs once the peer's frames arrive on a newer SA, plus
// rx_retire_delay_ms, or after rx_retire_timeout_ms). Every change, refused
// reload, retirement and "new SA needed" is one JSON line on stdout.
//
// --backend kernel: hands the configuration to the Linux macsec driver over
// netlink (kernel_backend.h), waits for SIGINT/SIGTERM, prints the driver's
// counters and deletes the device. Fails with a clear message where the kernel has no driver.
//
// Runs until SIGINT/SIGTERM and prints the statistics (802.1AE MIB, per SC
// and SA, link counters) as JSON at exit.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "layersec/base/hex.h"
#include "layersec/macsec/kernel_backend.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/sa_rotation.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/io.h"

namespace layersec::app {
namespace {

struct UpOptions {
  std::string link;
  std::string name;
  std::string config;
  std::string backend = "user";
  double stats_interval = 0;
};

// How often retirements and the "new SA needed" signal are checked.
constexpr Duration kHousekeeping = Duration::milliseconds(200);

std::string sci_text(macsec::Sci sci) {
  const auto b = sci.bytes();
  return to_hex(ByteSpan(b.data(), b.size()));
}

nlohmann::json report(const macsec::MacsecLink& link, const macsec::TapLink& tap, macsec::Sci sci,
                      const char* event) {
  nlohmann::json j = link.stats_json();
  j["event"] = event;
  j["interface"] = tap.name();
  j["lower"] = tap.lower();
  j["mtu"] = tap.mtu();
  j["sci"] = sci_text(sci);
  return j;
}

nlohmann::json actions_json(const std::vector<macsec::RotationAction>& actions) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : actions) {
    nlohmann::json j{{"action", std::string(macsec::to_string(x.kind))}, {"an", x.an}};
    using K = macsec::RotationAction::Kind;
    if (x.kind != K::kTxSaInstalled && x.kind != K::kTxSaRemoved && x.kind != K::kEncodingSaSwitched &&
        x.kind != K::kSettingChanged)
      j["sci"] = sci_text(x.sci);
    if (x.pn != 0) j["pn"] = x.pn;
    if (!x.detail.empty()) j[x.kind == K::kSettingChanged ? "setting" : (x.kind == K::kEncodingSaSwitched ? "previous" : "key_id")] = x.detail;
    a.push_back(std::move(j));
  }
  return a;
}

void print_sas(const macsec::LinkConfig& config) {
  for (const auto& sa : config.tx_sas) {
    std::cerr << "  tx an " << int{sa.an} << " pn " << sa.pn << " key id " << macsec::key_id(sa.sak)
              << (sa.an == config.encoding_an ? " (encoding)" : "") << "\n";
  }
  for (const auto& sc : config.rx_scs) {
    for (const auto& sa : sc.sas) {
      std::cerr << "  rx sci " << sci_text(sc.sci) << " an " << int{sa.an} << " pn " << sa.pn << " key id "
                << macsec::key_id(sa.sak) << "\n";
    }
  }
}

// SIGINT, SIGTERM and SIGHUP are read from a signalfd in the loop.
net::UniqueFd block_signals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) throw std::runtime_error("sigprocmask failed");
  net::UniqueFd sfd(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!sfd.valid()) throw std::runtime_error("signalfd: " + net::errno_text(errno));
  return sfd;
}

net::MacAddress link_mac(const macsec::LinkConfig& config, const std::string& lower) {
  if (config.mac) return *config.mac;
  auto m = net::interface_mac(lower);
  if (!m) throw std::runtime_error("lower interface " + lower + ": " + net::errno_text(errno));
  return *m;
}

void run_kernel(const UpOptions& o, const macsec::LinkConfig& config) {
  net::UniqueFd sfd = block_signals();
  const net::MacAddress mac = link_mac(config, o.link);
  const macsec::Sci sci = macsec::resolve_sci(config, mac);
  std::string why;
  auto backend = macsec::kernel::KernelBackend::open(&why);
  if (!backend) {
    throw std::runtime_error("kernel back end: " + std::string(macsec::kernel::to_string(backend.error())) + ": " +
                             why);
  }
  auto index = (*backend)->configure(config, sci, o.link, o.name);
  if (!index) {
    throw std::runtime_error("kernel back end: " + std::string(macsec::kernel::to_string(index.error())) + ": " +
                             (*backend)->last_error());
  }
  std::cerr << "macsec up (kernel): " << o.name << " ifindex " << *index << " on " << o.link << " sci "
            << sci_text(sci) << " suite " << macsec::to_string(config.secy.suite) << "\n";
  print_sas(config);
  MonotonicClock clock;
  net::EventLoop loop(clock);
  loop.watch(sfd.get(), POLLIN, [&](short) {
    signalfd_siginfo info{};
    while (::read(sfd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGHUP) {
        std::cout << nlohmann::json{{"event", "reload_refused"},
                                    {"error", "SA switching at run time is implemented for --backend user only"}}
                         .dump()
                  << std::endl;
        continue;
      }
      loop.stop();
    }
  });
  loop.run_until(loop.now() + Duration::seconds(100LL * 365 * 24 * 3600));
  // The driver's counters (802.1AE MIB names, per SC and SA) before the device goes.
  nlohmann::json exit_report{{"event", "exit"}, {"interface", o.name}, {"backend", "kernel"}};
  if (auto stats = (*backend)->read_stats(*index); stats) {
    exit_report["kernel"] = macsec::kernel::to_json(*stats);
  } else {
    exit_report["stats_error"] = (*backend)->last_error();
  }
  if (auto st = (*backend)->delete_link(*index); !st) {
    std::cerr << "macsec down: " << (*backend)->last_error() << "\n";
    set_exit_code(1);
  }
  std::cout << exit_report.dump(2) << std::endl;
}

void run_user(const UpOptions& o, macsec::LinkConfig config) {
  net::UniqueFd sfd = block_signals();
  // The SecY needs the TAP's MAC (for an SCI derived from it) before the TAP
  // exists: it is the configured MAC or the lower interface's.
  macsec::TapLinkOptions to;
  to.lower = o.link;
  to.name = o.name;
  to.mac = config.mac;
  const net::MacAddress mac = link_mac(config, o.link);
  macsec::MacsecLink link(macsec::make_secy(config, mac));
  const macsec::Sci sci = link.secy().config().sci;
  macsec::SaRotation rotation(config, sci);
  macsec::TapLink tap = macsec::TapLink::open(link, to);

  std::cerr << "macsec up: " << tap.name() << " on " << tap.lower() << " mtu " << tap.mtu() << " mac "
            << tap.mac().to_string() << " sci " << sci_text(sci) << " suite "
            << macsec::to_string(link.secy().config().suite) << " validate "
            << macsec::to_string(link.secy().config().validate_frames) << " (SIGHUP re-reads " << o.config
            << ")\n";
  print_sas(config);

  MonotonicClock clock;
  net::EventLoop loop(clock);
  tap.attach(loop);

  // Control-plane counters, printed with the exit statistics.
  std::uint64_t reloads = 0, reloads_refused = 0, sas_retired = 0, new_sa_signals = 0;
  auto reload = [&] {
    nlohmann::json j{{"event", "reload"}};
    try {
      macsec::LinkConfig next = macsec::load_link_config(o.config);
      const macsec::Sci next_sci = macsec::resolve_sci(next, next.mac.value_or(mac));
      auto actions = rotation.apply(link.secy(), next, next_sci, loop.now());
      j["actions"] = actions_json(actions);
      j["encoding_an"] = link.secy().encoding_an();
      ++reloads;
    } catch (const std::exception& e) {
      // Refused or unreadable: the running SecY is unchanged (key material
      // never appears in these messages, only paths and JSON pointers).
      j["event"] = "reload_refused";
      j["error"] = e.what();
      ++reloads_refused;
    }
    std::cout << j.dump() << std::endl;
  };
  loop.watch(sfd.get(), POLLIN, [&](short) {
    signalfd_siginfo info{};
    while (::read(sfd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGHUP) {
        reload();
      } else {
        loop.stop();
      }
    }
  });

  bool signalled_new_sa = false;
  std::function<void()> housekeeping = [&] {
    auto retired = rotation.poll(link.secy(), loop.now());
    sas_retired += retired.size();
    if (!retired.empty()) {
      std::cout << nlohmann::json{{"event", "sa_retired"}, {"actions", actions_json(retired)}}.dump() << std::endl;
    }
    const bool needed = link.secy().new_sa_needed();
    if (needed && !signalled_new_sa) {
      // The hook for key agreement: install an SA at another AN and SIGHUP.
      ++new_sa_signals;
      const auto st = link.secy().tx_sa_status(link.secy().encoding_an());
      std::cout << nlohmann::json{{"event", "new_sa_needed"},
                                  {"encoding_an", link.secy().encoding_an()},
                                  {"next_pn", st.next_pn},
                                  {"exhausted", st.exhausted}}
                       .dump()
                << std::endl;
    }
    signalled_new_sa = needed;
    loop.add_timer_in(kHousekeeping, housekeeping);
  };
  loop.add_timer_in(kHousekeeping, housekeeping);

  std::function<void()> periodic;
  if (o.stats_interval > 0) {
    const auto every = Duration::microseconds(static_cast<std::int64_t>(o.stats_interval * 1e6));
    periodic = [&, every] {
      std::cout << report(link, tap, sci, "stats").dump() << std::endl;
      loop.add_timer_in(every, periodic);
    };
    loop.add_timer_in(every, periodic);
  }
  // A far deadline: the loop ends on a signal.
  loop.run_until(loop.now() + Duration::seconds(100LL * 365 * 24 * 3600));
  tap.detach(loop);
  nlohmann::json exit_report = report(link, tap, sci, "exit");
  exit_report["control"] = {{"reloads", reloads},
                            {"reloads_refused", reloads_refused},
                            {"rx_sas_retired", sas_retired},
                            {"new_sa_needed_signals", new_sa_signals}};
  std::cout << exit_report.dump(2) << std::endl;
}

void run_up(const UpOptions& o) {
  macsec::LinkConfig config = macsec::load_link_config(o.config);
  if (o.backend == "kernel") {
    run_kernel(o, config);
  } else {
    run_user(o, std::move(config));
  }
}

const CommandRegistration reg(45, [](CLI::App& root) {
  CLI::App* group = nullptr;
  try {
    group = root.get_subcommand("macsec");
  } catch (const CLI::OptionNotFound&) {
    group = root.add_subcommand("macsec", "IEEE 802.1AE MACsec");
    group->require_subcommand(1);
  }
  auto o = std::make_shared<UpOptions>();
  auto* up = group->add_subcommand(
      "up", "create a MACsec interface on top of a link and run it until SIGINT/SIGTERM (SIGHUP: re-read the "
            "configuration and switch SAs)");
  up->add_option("--link", o->link, "lower interface (e.g. eth0)")->required();
  up->add_option("--name", o->name, "name of the MACsec interface to create (e.g. macsec0)")->required();
  up->add_option("--config", o->config, "JSON configuration (docs/macsec_link.md)")->required();
  up->add_option("--backend", o->backend, "user (TAP + AF_PACKET, default) or kernel (Linux macsec driver)")
      ->check(CLI::IsMember({"user", "kernel"}));
  up->add_option("--stats-interval", o->stats_interval, "also print statistics every S seconds")
      ->check(CLI::NonNegativeNumber);
  up->callback([o] { run_up(*o); });
});

}  // namespace
}  // namespace layersec::app
