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
//
// Static SAKs outlive the process, so their PN state is persisted
// (pn_state_file.h, docs/macsec.md "PN state across restarts"): the state
// file ("pn_state_file", default "<config>.pn-state") must exist unless
// --new-key (or "new_key" on every SA) says the keys were never used; a
// restart resumes every SA after its persisted PN and warns that the static
// SAK was used before. Before the interface comes up the lower interface is
// isolated ("lower_link", lower_guard.h) so that it carries only MACsec.
#include <net/if.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "command.h"
#include "layersec/base/hex.h"
#include "layersec/macsec/kernel_backend.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/lower_guard.h"
#include "layersec/macsec/pn_state_file.h"
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
  bool new_key = false;
};

// How often retirements and the "new SA needed" signal are checked.
constexpr Duration kHousekeeping = Duration::milliseconds(200);
// Housekeeping ticks between two saves of the exact PN state (1 s).
constexpr int kPnTightenTicks = 5;

using macsec::sci_text;

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

// The PN state file of `config`: opened, or created when it is missing and
// the operator said the keys are new (--new-key, or "new_key" on every SA).
macsec::FilePnStore open_pn_store(const macsec::LinkConfig& config, bool new_key) {
  const std::string& path = config.pn_state_file;
  std::string detail;
  auto store = macsec::FilePnStore::open(path, &detail);
  if (store) return std::move(*store);
  if (store.error() != macsec::PnFileError::kMissing) {
    throw std::runtime_error("/pn_state_file: " + std::string(macsec::to_string(store.error())) + ": " + detail);
  }
  bool all_new = new_key;
  if (!all_new) {
    all_new = std::all_of(config.tx_sas.begin(), config.tx_sas.end(), [](const auto& sa) { return sa.new_key; });
    for (const auto& sc : config.rx_scs) {
      all_new = all_new && std::all_of(sc.sas.begin(), sc.sas.end(), [](const auto& sa) { return sa.new_key; });
    }
  }
  if (!all_new) {
    throw std::runtime_error("/pn_state_file: PN state file " + path +
                             " is missing: it holds the PNs these static keys have used, and without it a restart "
                             "would send PNs (GCM nonces) again and accept recorded frames again. If every key "
                             "in the configuration is new, start once with --new-key; otherwise restore the "
                             "file or install new keys");
  }
  auto created = macsec::FilePnStore::create(path, &detail);
  if (!created) throw std::runtime_error("/pn_state_file: " + detail);
  std::cerr << "macsec up: new keys: created PN state file " << path << "\n";
  return std::move(*created);
}

// One line per SA on what its PN state said: a static SAK used before this
// start is warned about (key id only), a resumed receive SA says which PNs
// it now refuses.
void report_pn_state(const macsec::SecY& y, const macsec::LinkConfig& config, bool new_key) {
  for (const auto& sa : config.tx_sas) {
    const auto st = y.tx_sa_status(sa.an);
    if (st.pn_resumed && (new_key || sa.new_key)) {
      std::cerr << "macsec up: note: key id " << macsec::key_id(sa.sak)
                << " is not new (it has PN state); resuming instead of starting at its configured PN\n";
    }
    if (st.pn_resumed && st.pn_persisted > 0) {
      std::cerr << "macsec up: warning: static SAK key id " << macsec::key_id(sa.sak) << " (tx AN " << int{sa.an}
                << ") was used before this start (PNs up to " << st.pn_persisted << " may have been sent); "
                << "resuming at PN " << st.next_pn << ". Replace static SAKs regularly (or use MKA)\n";
    }
  }
  for (const auto& sc : config.rx_scs) {
    for (const auto& sa : sc.sas) {
      const auto st = y.rx_sa_status(sc.sci, sa.an);
      if (st.pn_resumed && st.pn_persisted > 0) {
        std::cerr << "macsec up: rx sci " << sci_text(sc.sci) << " an " << int{sa.an} << " key id "
                  << macsec::key_id(sa.sak) << ": PN state restored, frames with PN <= " << st.pn_persisted
                  << " (anything accepted before this start) are refused\n";
      }
    }
  }
}

// The kernel driver owns its PNs and they are not read back, so a key handed
// to it can be used for this run only: each SA starts after its PN record
// and the record is then marked used up before the driver sees the key.
void consume_pn_state_for_kernel(macsec::LinkConfig& config, macsec::Sci sci, macsec::PnStore& store,
                                 bool new_key) {
  const std::uint64_t last = macsec::max_pn(config.secy.suite);
  auto take = [&](macsec::SaConfig& sa, macsec::PnDirection dir, macsec::Sci sa_sci) {
    const macsec::PnKey key{dir, sa_sci, macsec::pn_fingerprint(config.secy.suite, sa.keys())};
    auto record = store.load(key);
    if (!record) throw std::runtime_error(sa.pointer + ": PN state store failed");
    if (!*record && !(new_key || sa.new_key)) {
      throw std::runtime_error(sa.pointer + ": " + macsec::sa_error_text(macsec::SaError::kPnStateMissing, sa, config));
    }
    if (*record && **record >= last) {
      throw std::runtime_error(sa.pointer + ": " + macsec::sa_error_text(macsec::SaError::kPnStateUsedUp, sa, config) +
                               " (a key given to the kernel back end serves one run)");
    }
    if (*record) sa.pn = std::max(sa.pn, **record + 1);
    if (!store.save(key, sa.an, last)) throw std::runtime_error(sa.pointer + ": cannot write the PN state file");
  };
  for (auto& sa : config.tx_sas) take(sa, macsec::PnDirection::kTransmit, sci);
  for (auto& sc : config.rx_scs) {
    for (auto& sa : sc.sas) take(sa, macsec::PnDirection::kReceive, sc.sci);
  }
}

// Isolates the lower interface (lower_guard.h) and says what it did.
macsec::LowerLinkGuard guard_lower(const UpOptions& o, const macsec::LinkConfig& config) {
  macsec::LowerGuardOptions go;
  go.lower = o.link;
  go.policy = config.lower_link;
  go.allow_vlan_tags = config.secy.vlan_mode == macsec::VlanMode::kClearTag;
  macsec::LowerLinkGuard guard = macsec::LowerLinkGuard::apply(go);
  if (config.lower_link == macsec::LowerLinkPolicy::kUnchanged) {
    std::cerr << "macsec up: warning: \"lower_link\": \"unchanged\": plain frames on " << o.link
              << " reach this host's stack (ARP, IPv4 to the MACsec interface's addresses, IPv6)\n";
  }
  for (const auto& step : guard.steps()) std::cerr << "  lower " << step << "\n";
  return guard;
}

// Restores the lower interface at exit and records the outcome.
void unguard_lower(macsec::LowerLinkGuard& guard, nlohmann::json& exit_report) {
  const auto problems = guard.restore();
  for (const auto& p : problems) std::cerr << "macsec up: lower interface: " << p << "\n";
  exit_report["lower_link_restored"] = problems.empty();
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

void run_kernel(const UpOptions& o, macsec::LinkConfig config) {
  net::UniqueFd sfd = block_signals();
  const net::MacAddress mac = link_mac(config, o.link);
  const macsec::Sci sci = macsec::resolve_sci(config, mac);
  macsec::check_own_sci(config, sci);
  // Configuration and state errors come before anything on the system changes.
  macsec::FilePnStore store = open_pn_store(config, o.new_key);
  macsec::LowerLinkGuard guard = guard_lower(o, config);
  std::string why;
  auto backend = macsec::kernel::KernelBackend::open(&why);
  if (!backend) {
    throw std::runtime_error("kernel back end: " + std::string(macsec::kernel::to_string(backend.error())) + ": " +
                             why);
  }
  // Only a driver that exists may spend the keys' PN state (below).
  if (auto st = (*backend)->probe(o.link); !st) {
    throw std::runtime_error("kernel back end: " + std::string(macsec::kernel::to_string(st.error())) + ": " +
                             (*backend)->last_error());
  }
  consume_pn_state_for_kernel(config, sci, store, o.new_key);
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
  unguard_lower(guard, exit_report);
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
  macsec::check_own_sci(config, macsec::resolve_sci(config, mac));
  // Configuration and state errors come before anything on the system changes.
  macsec::FilePnStore store = open_pn_store(config, o.new_key);
  macsec::LowerLinkGuard guard = guard_lower(o, config);
  macsec::MacsecLink link(macsec::make_secy(config, mac, &store, o.new_key));
  const macsec::Sci sci = link.secy().config().sci;
  macsec::SaRotation rotation(config, sci);
  macsec::TapLink tap = macsec::TapLink::open(link, to);

  std::cerr << "macsec up: " << tap.name() << " on " << tap.lower() << " mtu " << tap.mtu() << " mac "
            << tap.mac().to_string() << " sci " << sci_text(sci) << " suite "
            << macsec::to_string(link.secy().config().suite) << " validate "
            << macsec::to_string(link.secy().config().validate_frames) << " (SIGHUP re-reads " << o.config
            << ")\n";
  print_sas(config);
  report_pn_state(link.secy(), config, o.new_key);
  std::cerr << "  pn state " << store.path() << " (a save every " << config.pn_reserve_block << " PNs)\n";

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
  // Every kPnTightenTicks ticks the PN reservations are resized to the
  // traffic and brought back to the exact PNs when they run ahead of it
  // (SecY::tick_pn_state): a crash then costs a restarted receiver at most
  // about two seconds of the peer's PNs (docs/macsec.md).
  int ticks = 0;
  bool pn_state_failing = false;
  std::uint64_t pn_state_failures = 0;
  std::function<void()> housekeeping = [&] {
    if (++ticks % kPnTightenTicks == 0) {
      const bool ok = link.secy().tick_pn_state().ok();
      if (!ok) ++pn_state_failures;
      if (!ok && !pn_state_failing) {
        // Not fatal: the reserved blocks stay in force, and frames beyond
        // them are dropped (Out/InPktsPnNotPersisted) until saves work again.
        std::cout << nlohmann::json{{"event", "pn_state_error"}, {"error", store.last_error()}}.dump() << std::endl;
      }
      pn_state_failing = !ok;
    }
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
  // Clean shutdown: the exact PNs, so a clean restart loses no PN space and
  // the receiver resumes exactly after the last frame it accepted.
  const bool persisted = link.secy().persist_pn_state().ok();
  exit_report["pn_state"] = {{"file", store.path()},
                             {"saves", store.saves()},
                             {"exact_saved", persisted},
                             {"periodic_save_failures", pn_state_failures}};
  if (!persisted) {
    std::cerr << "macsec up: " << store.last_error()
              << " (the reserved PN blocks stay in force: nothing is reused)\n";
    set_exit_code(1);
  }
  unguard_lower(guard, exit_report);
  std::cout << exit_report.dump(2) << std::endl;
}

void run_up(const UpOptions& o) {
  macsec::LinkConfig config = macsec::load_link_config(o.config);
  if (o.backend == "kernel") {
    run_kernel(o, std::move(config));
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
  const CLI::Validator ifname(
      [](std::string& s) -> std::string {
        if (s.empty() || s.size() >= IF_NAMESIZE || s.find_first_of("/ \t\n:") != std::string::npos || s == "." ||
            s == "..")
          return "'" + s + "' is not an interface name (1.." + std::to_string(IF_NAMESIZE - 1) +
                 " characters, no '/', ':' or whitespace)";
        return {};
      },
      "IFNAME");
  up->add_option("--link", o->link, "lower interface (e.g. eth0)")->required()->check(ifname);
  up->add_option("--name", o->name, "name of the MACsec interface to create (e.g. macsec0)")
      ->required()
      ->check(ifname);
  up->add_option("--config", o->config, "JSON configuration (docs/macsec_link.md)")->required()->check(kRegularFile);
  up->add_flag("--new-key", o->new_key,
               "the keys were never used: create the PN state file / records that are missing (never rewinds "
               "an existing record)");
  up->add_option("--backend", o->backend, "user (TAP + AF_PACKET, default) or kernel (Linux macsec driver)")
      ->check(CLI::IsMember({"user", "kernel"}));
  up->add_option("--stats-interval", o->stats_interval, "also print statistics every S seconds (0: off, else 0.1..86400)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            if (std::string e = check_finite_in(s, 0, 86400); !e.empty()) return e;
            const double v = std::strtod(s.c_str(), nullptr);
            if (v != 0 && v < 0.1) return "'" + s + "' is below 0.1 s (0 turns periodic statistics off)";
            return {};
          },
          "0 or 0.1..86400"));
  up->callback([o] { run_up(*o); });
});

}  // namespace
}  // namespace layersec::app
