#include "layersec/macsec/link_runner.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "layersec/macsec/kernel_backend.h"
#include "layersec/macsec/kernel_pn_handoff.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_ptp.h"
#include "layersec/macsec/link_ptp_config.h"
#include "layersec/macsec/link_report.h"
#include "layersec/macsec/link_runner_parts.h"
#include "layersec/macsec/link_runner_time.h"
#include "layersec/macsec/link_tsn_config.h"
#include "layersec/macsec/link_workers.h"
#include "layersec/macsec/lower_guard.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/macsec/sa_rotation.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/io.h"
#include "layersec/net/thread_timing.h"

namespace layersec::macsec {
namespace {

// How often retirements and the "new SA needed" signal are checked.
constexpr Duration kHousekeeping = Duration::milliseconds(200);
// Housekeeping ticks between two saves of the exact PN state (1 s).
constexpr int kPnTightenTicks = 5;
// A far deadline: the loop ends on a signal.
const Duration kForever = Duration::seconds(100LL * 365 * 24 * 3600);

}  // namespace

namespace runner {

nlohmann::json report(const MacsecLink& link, const TapLink& tap, Sci sci, const char* event, const LinkPtp* ptp) {
  nlohmann::json j = link.stats_json();
  j["event"] = event;
  j["interface"] = tap.name();
  j["lower"] = tap.lower();
  j["mtu"] = tap.mtu();
  j["sci"] = sci_text(sci);
  if (tap.tsn()) j["tsn"] = tap.tsn_json();
  if (ptp) j["ptp"] = ptp->counters_json();
  return j;
}

FilePnStore open_pn_store(const LinkConfig& config, bool new_key) {
  const std::string& path = config.pn_state_file;
  std::string detail;
  auto store = FilePnStore::open(path, &detail);
  if (store) return std::move(*store);
  if (store.error() != PnFileError::kMissing) {
    throw std::runtime_error("/pn_state_file: " + std::string(to_string(store.error())) + ": " + detail);
  }
  if (!every_key_new(config, new_key)) {
    throw std::runtime_error("/pn_state_file: PN state file " + path +
                             " is missing: it holds the PNs these static keys have used, and without it a restart "
                             "would send PNs (GCM nonces) again and accept recorded frames again. If every key "
                             "in the configuration is new, start once with --new-key (layersec node: --first-start); "
                             "otherwise restore the file or install new keys");
  }
  auto created = FilePnStore::create(path, &detail);
  if (!created) throw std::runtime_error("/pn_state_file: " + detail);
  std::cerr << "new keys: created PN state file " << path << "\n";
  return std::move(*created);
}

LowerLinkGuard guard_lower(const LinkRunOptions& o, const LinkConfig& config, bool allow_mka) {
  LowerGuardOptions go;
  go.lower = o.lower;
  go.policy = config.lower_link;
  go.allow_vlan_tags = config.secy.vlan_mode == VlanMode::kClearTag;
  go.allow_mka = allow_mka;
  LowerLinkGuard guard = LowerLinkGuard::apply(go);
  if (config.lower_link == LowerLinkPolicy::kUnchanged) {
    std::cerr << "macsec up: warning: \"lower_link\": \"unchanged\": plain frames on " << o.lower
              << " reach this host's stack (ARP, IPv4 to the MACsec interface's addresses, IPv6)\n";
  }
  for (const auto& step : guard.steps()) std::cerr << "  lower " << step << "\n";
  return guard;
}

void print_new_sa_needed(std::uint8_t encoding_an, const TxSaStatus& st) {
  std::cout << nlohmann::json{{"event", "new_sa_needed"},
                              {"encoding_an", encoding_an},
                              {"next_pn", st.next_pn},
                              {"exhausted", st.exhausted}}
                   .dump()
            << std::endl;
}

void unguard_lower(LowerLinkGuard& guard, nlohmann::json& exit_report) {
  const auto problems = guard.restore();
  for (const auto& p : problems) std::cerr << "macsec up: lower interface: " << p << "\n";
  exit_report["lower_link_restored"] = problems.empty();
}

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

void watch_signals(net::EventLoop& loop, const net::UniqueFd& sfd, std::function<void()> on_hup) {
  loop.watch(sfd.get(), POLLIN, [&loop, &sfd, on_hup = std::move(on_hup)](short) {
    signalfd_siginfo info{};
    while (::read(sfd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGHUP) {
        on_hup();
      } else {
        loop.stop();
      }
    }
  });
}

void enter_link_realtime(const LinkRunOptions& o) {
  if (o.realtime_priority <= 0) return;
  if (const std::string why = net::enter_realtime(o.realtime_priority); !why.empty()) {
    std::cerr << "warning: --realtime not in effect: " << why << "\n";
  } else {
    std::cerr << "  realtime: SCHED_FIFO priority " << o.realtime_priority << ", memory locked\n";
  }
}

net::MacAddress link_mac(const LinkConfig& config, const std::string& lower) {
  if (config.mac) return *config.mac;
  auto m = net::interface_mac(lower);
  if (!m) throw std::runtime_error("lower interface " + lower + ": " + net::errno_text(errno));
  return *m;
}

}  // namespace runner

namespace {

using namespace runner;

int run_kernel(const LinkRunOptions& o, LinkConfig config) {
  net::UniqueFd sfd = block_signals();
  const net::MacAddress mac = link_mac(config, o.lower);
  const Sci sci = resolve_sci(config, mac);
  check_own_sci(config, sci);
  // Configuration and state errors come before anything on the system changes.
  FilePnStore store = open_pn_store(config, o.new_key);
  LowerLinkGuard guard = guard_lower(o, config);
  std::string why;
  auto backend = kernel::KernelBackend::open(&why);
  if (!backend) {
    throw std::runtime_error("kernel back end: " + std::string(kernel::to_string(backend.error())) + ": " + why);
  }
  // Only a driver that exists may spend the keys' PN state (below).
  if (auto st = (*backend)->probe(o.lower); !st) {
    throw std::runtime_error("kernel back end: " + std::string(kernel::to_string(st.error())) + ": " +
                             (*backend)->last_error());
  }
  consume_pn_state_for_kernel(config, sci, store, o.new_key);
  auto index = (*backend)->configure(config, sci, o.lower, o.name);
  if (!index) {
    throw std::runtime_error("kernel back end: " + std::string(kernel::to_string(index.error())) + ": " +
                             (*backend)->last_error());
  }
  std::cerr << "macsec up (kernel): " << o.name << " ifindex " << *index << " on " << o.lower << " sci "
            << sci_text(sci) << " suite " << to_string(config.secy.suite) << "\n";
  print_link_sas(std::cerr, config);
  MonotonicClock clock;
  net::EventLoop loop(clock);
  watch_signals(loop, sfd, [] {
    std::cout << nlohmann::json{{"event", "reload_refused"},
                                {"error", "SA switching at run time is implemented for --backend user only"}}
                     .dump()
              << std::endl;
  });
  loop.run_until(loop.now() + kForever);
  // The driver's counters (802.1AE MIB names, per SC and SA) before the device goes.
  int exit_status = 0;
  nlohmann::json exit_report{{"event", "exit"}, {"interface", o.name}, {"backend", "kernel"}};
  if (auto stats = (*backend)->read_stats(*index); stats) {
    exit_report["kernel"] = kernel::to_json(*stats);
  } else {
    exit_report["stats_error"] = (*backend)->last_error();
  }
  if (auto st = (*backend)->delete_link(*index); !st) {
    std::cerr << "macsec down: " << (*backend)->last_error() << "\n";
    exit_status = 1;
  }
  unguard_lower(guard, exit_report);
  std::cout << exit_report.dump(2) << std::endl;
  return exit_status;
}

int run_user(const LinkRunOptions& o, LinkConfig config, const std::optional<LinkTsnConfig>& tsn_config,
             const std::optional<LinkPtpConfig>& ptp_config) {
  net::UniqueFd sfd = block_signals();
  // The SecY needs the TAP's MAC (for an SCI derived from it) before the TAP
  // exists: it is the configured MAC or the lower interface's.
  TapLinkOptions to;
  to.lower = o.lower;
  to.name = o.name;
  to.mac = config.mac;
  to.offload = o.offload;
  to.rx_ring = o.rx_ring;
  apply_tsn_layout(tsn_config, config.secy, to);
  const net::MacAddress mac = link_mac(config, o.lower);
  check_own_sci(config, resolve_sci(config, mac));
  // Configuration and state errors come before anything on the system changes.
  FilePnStore store = open_pn_store(config, o.new_key);
  LowerLinkGuard guard = guard_lower(o, config);
  MacsecLink link(make_secy(config, mac, &store, o.new_key));
  const Sci sci = link.secy().config().sci;
  SaRotation rotation(config, sci);
  TapLink tap = TapLink::open(link, to);
  MonotonicClock clock;
  net::EventLoop loop(clock);  // before the gPTP port, whose timers it holds
  LinkTime link_time(link, tap, o, tsn_config, ptp_config);

  std::cerr << "macsec up: " << tap.name() << " on " << tap.lower() << " mtu " << tap.mtu() << " mac "
            << tap.mac().to_string() << " sci " << sci_text(sci) << " suite "
            << to_string(link.secy().config().suite) << " validate "
            << to_string(link.secy().config().validate_frames) << " offload " << (tap.tcp_offload() ? "on" : "off")
            << " rx-ring " << (tap.rx_ring() ? "on" : "off")
            << " (SIGHUP re-reads " << o.config_path << ")\n";
  print_link_sas(std::cerr, config);
  link_time.describe(std::cerr);
  report_pn_resumption(std::cerr, link.secy(), config, o.new_key);
  std::cerr << "  pn state " << store.path() << " (a save every " << config.pn_reserve_block << " PNs)\n";

  enter_link_realtime(o);
  tap.attach(loop);
  link_time.attach(loop);

  // Control-plane counters, printed with the exit statistics.
  std::uint64_t reloads = 0, reloads_refused = 0, sas_retired = 0, new_sa_signals = 0;
  watch_signals(loop, sfd, [&] {
    nlohmann::json j{{"event", "reload"}};
    try {
      LinkConfig next = load_link_config(o.config_path);
      const Sci next_sci = resolve_sci(next, next.mac.value_or(mac));
      auto actions = rotation.apply(link.secy(), next, next_sci, loop.now());
      j["actions"] = rotation_actions_json(actions);
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
      std::cout << nlohmann::json{{"event", "sa_retired"}, {"actions", rotation_actions_json(retired)}}.dump()
                << std::endl;
    }
    const bool needed = link.secy().new_sa_needed();
    if (needed && !signalled_new_sa) {
      ++new_sa_signals;
      print_new_sa_needed(link.secy().encoding_an(), link.secy().tx_sa_status(link.secy().encoding_an()));
    }
    signalled_new_sa = needed;
    loop.add_timer_in(kHousekeeping, housekeeping);
  };
  loop.add_timer_in(kHousekeeping, housekeeping);

  std::function<void()> periodic;
  if (o.stats_interval_s > 0) {
    const auto every = Duration::microseconds(static_cast<std::int64_t>(o.stats_interval_s * 1e6));
    periodic = [&, every] {
      std::cout << report(link, tap, sci, "stats", link_time.ptp()).dump() << std::endl;
      loop.add_timer_in(every, periodic);
    };
    loop.add_timer_in(every, periodic);
  }
  loop.run_until(loop.now() + kForever);
  tap.detach(loop);
  link_time.detach();
  nlohmann::json exit_report = report(link, tap, sci, "exit", link_time.ptp());
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
  int exit_status = 0;
  if (!persisted) {
    std::cerr << "macsec up: " << store.last_error() << " (the reserved PN blocks stay in force: nothing is reused)\n";
    exit_status = 1;
  }
  unguard_lower(guard, exit_report);
  std::cout << exit_report.dump(2) << std::endl;
  return exit_status;
}

}  // namespace

int run_link(const LinkRunOptions& options) {
  if (options.workers < 1 || options.workers > 4) {
    throw std::runtime_error("--workers: " + std::to_string(options.workers) + " is outside 1..4");
  }
  if (!options.fanout.empty()) {
    if (options.fanout != "cpu" && options.fanout != "lb" && options.fanout != "hash") {
      throw std::runtime_error("--fanout: '" + options.fanout + "' is not cpu, lb or hash");
    }
    if (options.workers == 1) throw std::runtime_error("--fanout: spreads frames over workers: needs --workers 2..4");
  }
  if (options.workers > 1) {
    // What runs in one thread only (docs/macsec_link.md, "Workers").
    const std::string w = "--workers " + std::to_string(options.workers);
    const auto refuse = [&w](const std::string& other, const std::string& why) {
      throw std::runtime_error(w + " with " + other + ": " + why + " (use --workers 1)");
    };
    if (options.backend == LinkBackend::kKernel) refuse("--backend kernel", "the kernel driver has no workers of ours");
    if (!options.mka_path.empty()) refuse("--mka", "MKA installs SAs at run time, which the workers do not support");
    if (!options.tsn_path.empty()) refuse("--tsn", "the time-aware shaper runs in one thread");
    if (!options.ptp_path.empty()) refuse("--ptp", "the gPTP port runs in one thread");
    if (options.rx_ring) refuse("--rx-ring", "the receive ring is not supported with a fanout group");
    if (options.realtime_priority != 0) refuse("--realtime", "SCHED_FIFO is set up for one link thread");
    return runner::run_user_workers(options, load_link_config(options.config_path));
  }
  if (options.realtime_priority != 0) {
    if (options.realtime_priority < 1 || options.realtime_priority > 99) {
      throw std::runtime_error("--realtime: priority " + std::to_string(options.realtime_priority) +
                               " is outside 1..99");
    }
    if (options.backend == LinkBackend::kKernel) {
      throw std::runtime_error("--realtime: the kernel back end has no thread of ours to schedule (--backend user)");
    }
  }
  std::optional<LinkTsnConfig> tsn_config;
  if (!options.tsn_path.empty()) {
    if (options.backend == LinkBackend::kKernel) {
      throw std::runtime_error("--tsn: the time-aware shaper runs in the user back end only (--backend user)");
    }
    tsn_config = load_link_tsn_config(options.tsn_path);
  }
  const auto load_ptp = [&options]() -> std::optional<LinkPtpConfig> {
    if (options.ptp_path.empty()) return std::nullopt;
    if (options.backend == LinkBackend::kKernel) {
      throw std::runtime_error("--ptp: gPTP beside the SecY runs in the user back end only (--backend user)");
    }
    return load_link_ptp_config(options.ptp_path);
  };
  if (!options.mka_path.empty()) {
    if (options.backend == LinkBackend::kKernel) {
      throw std::runtime_error("--mka: MKA drives the user-space SecY only (--backend user)");
    }
    return run_mka_link(options, tsn_config, load_ptp());
  }
  LinkConfig config = load_link_config(options.config_path);
  const std::optional<LinkPtpConfig> ptp_config = load_ptp();
  if (options.backend == LinkBackend::kKernel) return run_kernel(options, std::move(config));
  return run_user(options, std::move(config), tsn_config, ptp_config);
}

}  // namespace layersec::macsec
