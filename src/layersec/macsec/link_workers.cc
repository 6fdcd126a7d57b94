#include "layersec/macsec/link_workers.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "layersec/base/time.h"
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_report.h"
#include "layersec/macsec/link_runner_parts.h"
#include "layersec/macsec/lower_guard.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/macsec/shared_pn_state.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/io.h"

namespace layersec::macsec::runner {
namespace {

constexpr Duration kHousekeeping = Duration::milliseconds(200);
constexpr int kPnTightenTicks = 5;
const Duration kForever = Duration::seconds(100LL * 365 * 24 * 3600);

// Fields that are not counters: taken from the first worker, never summed
// (the PN fields are then replaced by the shared state's).
bool not_a_counter(const std::string& key) {
  return key == "an" || key == "sci" || key == "encoding" || key == "enabled" || key == "next_pn" ||
         key == "lowest_pn" || key == "pn_persisted" || key == "exhausted" || key == "encoding_an";
}

void add_counters(nlohmann::json& into, const nlohmann::json& from) {
  if (into.is_object() && from.is_object()) {
    for (auto it = from.begin(); it != from.end(); ++it) {
      if (not_a_counter(it.key()) || !into.contains(it.key())) continue;
      nlohmann::json& dst = into[it.key()];
      if (dst.is_number_integer() && it->is_number_integer()) {
        dst = dst.get<std::uint64_t>() + it->get<std::uint64_t>();
      } else {
        add_counters(dst, *it);
      }
    }
  } else if (into.is_array() && from.is_array()) {
    for (std::size_t i = 0; i < into.size() && i < from.size(); ++i) add_counters(into[i], from[i]);
  }
}

// One worker's counters, taken on its own thread.
nlohmann::json worker_counters(const MacsecLink& link) {
  return nlohmann::json{{"secy", to_json(link.secy().stats())},
                        {"link", to_json(link.stats())},
                        {"per_sc", per_sc_json(link.secy())}};
}

struct Worker {
  explicit Worker(SecY secy) : link(std::move(secy)) {}
  MacsecLink link;
  std::optional<TapLink> tap;
  net::UniqueFd wake;  // eventfd: stop
  std::thread thread;
  std::mutex snapshot_mu;
  nlohmann::json snapshot;  // worker_counters(), under snapshot_mu
  std::string error;        // set by the thread when its loop threw

  void publish() {
    nlohmann::json s = worker_counters(link);
    std::lock_guard lock(snapshot_mu);
    snapshot = std::move(s);
  }
  nlohmann::json last_snapshot() {
    std::lock_guard lock(snapshot_mu);
    return snapshot;
  }
};

void run_worker(Worker& w, double stats_interval_s) {
  try {
    MonotonicClock clock;
    net::EventLoop loop(clock);
    w.tap->attach(loop);
    loop.watch(w.wake.get(), POLLIN, [&](short) {
      std::uint64_t v = 0;
      (void)::read(w.wake.get(), &v, sizeof v);
      loop.stop();
    });
    std::function<void()> periodic;
    if (stats_interval_s > 0) {
      const auto every = Duration::microseconds(static_cast<std::int64_t>(stats_interval_s * 1e6 / 2));
      periodic = [&, every] {
        w.publish();
        loop.add_timer_in(every, periodic);
      };
      loop.add_timer_in(every, periodic);
    }
    loop.run_until(loop.now() + kForever);
    w.tap->detach(loop);
    loop.unwatch(w.wake.get());
  } catch (const std::exception& e) {
    w.error = e.what();
    ::kill(::getpid(), SIGTERM);  // the main loop stops the others
  }
}

net::PacketSocket::Fanout fanout_mode(const std::string& s) {
  if (s == "lb") return net::PacketSocket::Fanout::kLb;
  if (s == "hash") return net::PacketSocket::Fanout::kHash;
  return net::PacketSocket::Fanout::kCpu;
}

// The shared state's PN fields over the summed per-SC tables.
void apply_shared_pn(nlohmann::json& j, const WorkerPnState& pn, const SecY& secy) {
  for (auto& sa : j["tx_sc"]["sas"]) {
    const auto st = pn.tx_sa_status(sa["an"].get<std::uint8_t>());
    sa["next_pn"] = st.next_pn;
    sa["exhausted"] = st.exhausted;
    if (secy.has_pn_store()) sa["pn_persisted"] = st.pn_persisted;
  }
  const std::vector<Sci> scis = secy.rx_scis();
  auto& rx = j["rx_scs"];
  for (std::size_t i = 0; i < rx.size() && i < scis.size(); ++i) {
    for (auto& sa : rx[i]["sas"]) {
      const auto st = pn.rx_sa_status(scis[i], sa["an"].get<std::uint8_t>());
      sa["next_pn"] = st.next_pn;
      sa["lowest_pn"] = st.lowest_pn;
      if (secy.has_pn_store()) sa["pn_persisted"] = st.pn_persisted;
    }
  }
}

nlohmann::json workers_report(const std::vector<nlohmann::json>& snapshots, const WorkerPnState& pn,
                              const SecY& secy0, const TapLink& tap, Sci sci, const char* event,
                              const std::string& fanout) {
  nlohmann::json j = sum_worker_counters(snapshots);
  apply_shared_pn(j, pn, secy0);
  const std::uint8_t an = secy0.encoding_an();
  const auto st = pn.tx_sa_status(an);
  j["tx_sa"] = {{"encoding_an", an},
                {"next_pn", st.next_pn},
                {"exhausted", st.exhausted},
                {"new_sa_needed", pn.new_sa_needed(an)}};
  j["event"] = event;
  j["interface"] = tap.name();
  j["lower"] = tap.lower();
  j["mtu"] = tap.mtu();
  j["sci"] = sci_text(sci);
  j["fanout"] = fanout;
  return j;
}

}  // namespace

nlohmann::json sum_worker_counters(const std::vector<nlohmann::json>& snapshots) {
  nlohmann::json j = nlohmann::json::object();
  if (snapshots.empty()) return j;
  nlohmann::json secy = snapshots[0].at("secy");
  nlohmann::json link = snapshots[0].at("link");
  nlohmann::json per_sc = snapshots[0].at("per_sc");
  nlohmann::json workers = nlohmann::json::array();
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    const auto& s = snapshots[i];
    if (i > 0) {
      add_counters(secy, s.at("secy"));
      add_counters(link, s.at("link"));
      add_counters(per_sc, s.at("per_sc"));
    }
    workers.push_back({{"worker", i}, {"secy", s.at("secy")}, {"link", s.at("link")}});
  }
  j["secy"] = std::move(secy);
  j["link"] = std::move(link);
  j["tx_sc"] = std::move(per_sc["tx_sc"]);
  j["rx_scs"] = std::move(per_sc["rx_scs"]);
  j["workers"] = std::move(workers);
  return j;
}

int run_user_workers(const LinkRunOptions& o, LinkConfig config) {
  const int n = o.workers;
  const std::string fanout = o.fanout.empty() ? "cpu" : o.fanout;
  net::UniqueFd sfd = block_signals();  // before the threads: they inherit the mask
  const net::MacAddress mac = link_mac(config, o.lower);
  check_own_sci(config, resolve_sci(config, mac));
  // Configuration and state errors come before anything on the system changes.
  FilePnStore store = open_pn_store(config, o.new_key);
  LowerLinkGuard guard = guard_lower(o, config);
  // Worker 0's SecY opens the PN records (resumes after them, or creates
  // them for new keys); the shared state takes them over, and every SecY
  // (the others without a store) takes its PNs from it.
  std::vector<std::unique_ptr<Worker>> workers;
  workers.push_back(std::make_unique<Worker>(make_secy(config, mac, &store, o.new_key)));
  for (int i = 1; i < n; ++i) workers.push_back(std::make_unique<Worker>(make_secy(config, mac, nullptr, false)));
  WorkerPnState shared(workers[0]->link.secy(), &store, config.pn_reserve_block);
  for (auto& w : workers) w->link.secy().set_shared_pn_state(&shared);
  const SecY& secy0 = workers[0]->link.secy();
  const Sci sci = secy0.config().sci;

  const auto group = static_cast<std::uint16_t>((::getpid() & 0x7FFF) | 0x8000);
  for (int i = 0; i < n; ++i) {
    TapLinkOptions to;
    to.lower = o.lower;
    to.name = o.name;
    to.mac = config.mac;
    to.offload = o.offload;
    to.multi_queue = true;
    to.bring_up = i == n - 1;  // once every queue exists
    to.fanout_group = group;
    to.fanout = fanout_mode(fanout);
    Worker& w = *workers[static_cast<std::size_t>(i)];
    w.tap.emplace(TapLink::open(w.link, to));
    w.wake = net::UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!w.wake.valid()) throw std::runtime_error("eventfd: " + net::errno_text(errno));
  }
  const TapLink& tap0 = *workers[0]->tap;
  std::cerr << "macsec up: " << tap0.name() << " on " << tap0.lower() << " mtu " << tap0.mtu() << " mac "
            << tap0.mac().to_string() << " sci " << sci_text(sci) << " suite " << to_string(secy0.config().suite)
            << " validate " << to_string(secy0.config().validate_frames) << " offload "
            << (tap0.tcp_offload() ? "on" : "off") << " workers " << n << " (multi-queue TAP, PACKET_FANOUT "
            << fanout << ", replay window " << secy0.config().replay_window << ")\n";
  print_link_sas(std::cerr, config);
  report_pn_resumption(std::cerr, secy0, config, o.new_key);
  std::cerr << "  pn state " << store.path() << " (a save every " << config.pn_reserve_block
            << " PNs, shared by the workers)\n";
  if (secy0.config().replay_protect && secy0.config().replay_window < ReplayWindow::kMaxTracked) {
    std::cerr << "macsec up: warning: --workers " << n << " with replay_window " << secy0.config().replay_window
              << ": frames the workers (here and at the peer) finish further out of order than that are dropped "
                 "(InPktsLate); docs/macsec_link.md recommends replay_window "
              << ReplayWindow::kMaxTracked << " with workers\n";
  }

  // Every started thread is stopped and joined however this function ends.
  struct JoinAll {
    std::vector<std::unique_ptr<Worker>>& workers;
    ~JoinAll() {
      for (auto& w : workers) {
        if (!w->thread.joinable()) continue;
        const std::uint64_t one = 1;
        (void)::write(w->wake.get(), &one, sizeof one);
        w->thread.join();
      }
    }
  } join_all{workers};
  for (auto& w : workers) {
    w->publish();
    Worker* wp = w.get();
    w->thread = std::thread([wp, &o] { run_worker(*wp, o.stats_interval_s); });
  }

  MonotonicClock clock;
  net::EventLoop loop(clock);
  std::uint64_t reloads_refused = 0, new_sa_signals = 0, pn_state_failures = 0;
  watch_signals(loop, sfd, [&] {
    ++reloads_refused;
    std::cout << nlohmann::json{{"event", "reload_refused"},
                                {"error", "--workers " + std::to_string(n) +
                                              ": SA switching at run time (SIGHUP) is not implemented with "
                                              "more than one worker; restart with --workers 1 to switch SAs"}}
                     .dump()
              << std::endl;
  });
  int ticks = 0;
  bool pn_state_failing = false, signalled_new_sa = false;
  std::function<void()> housekeeping = [&] {
    if (++ticks % kPnTightenTicks == 0) {
      const bool ok = shared.tick().ok();
      if (!ok) ++pn_state_failures;
      if (!ok && !pn_state_failing) {
        std::cout << nlohmann::json{{"event", "pn_state_error"}, {"error", store.last_error()}}.dump() << std::endl;
      }
      pn_state_failing = !ok;
    }
    const std::uint8_t an = secy0.encoding_an();
    const bool needed = shared.new_sa_needed(an);
    if (needed && !signalled_new_sa) {
      ++new_sa_signals;
      print_new_sa_needed(an, shared.tx_sa_status(an));
    }
    signalled_new_sa = needed;
    loop.add_timer_in(kHousekeeping, housekeeping);
  };
  loop.add_timer_in(kHousekeeping, housekeeping);
  const auto snapshots = [&] {
    std::vector<nlohmann::json> s;
    for (auto& w : workers) s.push_back(w->last_snapshot());
    return s;
  };
  std::function<void()> periodic;
  if (o.stats_interval_s > 0) {
    const auto every = Duration::microseconds(static_cast<std::int64_t>(o.stats_interval_s * 1e6));
    periodic = [&, every] {
      std::cout << workers_report(snapshots(), shared, secy0, tap0, sci, "stats", fanout).dump() << std::endl;
      loop.add_timer_in(every, periodic);
    };
    loop.add_timer_in(every, periodic);
  }
  loop.run_until(loop.now() + kForever);

  for (auto& w : workers) {
    const std::uint64_t one = 1;
    (void)::write(w->wake.get(), &one, sizeof one);
  }
  for (auto& w : workers) w->thread.join();
  int exit_status = 0;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (!workers[i]->error.empty()) {
      std::cerr << "macsec up: worker " << i << ": " << workers[i]->error << "\n";
      exit_status = 1;
    }
    workers[i]->publish();  // the threads are gone: the final counters
  }
  nlohmann::json exit_report = workers_report(snapshots(), shared, secy0, tap0, sci, "exit", fanout);
  exit_report["control"] = {{"reloads", 0},
                            {"reloads_refused", reloads_refused},
                            {"rx_sas_retired", 0},
                            {"new_sa_needed_signals", new_sa_signals}};
  // Clean shutdown: the exact PNs (every worker has stopped).
  const bool persisted = shared.persist().ok();
  exit_report["pn_state"] = {{"file", store.path()},
                             {"saves", store.saves()},
                             {"exact_saved", persisted},
                             {"periodic_save_failures", pn_state_failures}};
  if (!persisted) {
    std::cerr << "macsec up: " << store.last_error() << " (the reserved PN blocks stay in force: nothing is reused)\n";
    exit_status = 1;
  }
  unguard_lower(guard, exit_report);
  std::cout << exit_report.dump(2) << std::endl;
  return exit_status;
}

}  // namespace layersec::macsec::runner
