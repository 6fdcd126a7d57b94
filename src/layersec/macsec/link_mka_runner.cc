// `layersec macsec up --mka FILE` (link_runner.h run_mka_link): the TAP link
// of link_runner.cc with MKA in place of static SAKs. The SecY starts with no
// SA: until the participant installs and enables a transmit SA every frame
// from the TAP is refused (tx_protect_errors) and nothing reaches the lower
// link; until it installs receive SAs every MACsec frame is dropped. With
// --ptp the gPTP port runs beside it as with static SAKs (link_runner_time.h):
// protected gPTP is dropped and counted (ptp.tx_no_sa) until the first SAK,
// then travels with whatever SAK the SecY transmits with.
#include <iostream>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link.h"
#include "layersec/macsec/link_mka.h"
#include "layersec/macsec/link_mka_config.h"
#include "layersec/macsec/link_ptp.h"
#include "layersec/macsec/link_runner.h"
#include "layersec/macsec/link_runner_parts.h"
#include "layersec/macsec/link_runner_time.h"
#include "layersec/net/event_loop.h"

namespace layersec::macsec {
namespace {

// A far deadline: the loop ends on a signal.
const Duration kForever = Duration::seconds(100LL * 365 * 24 * 3600);

}  // namespace

int run_mka_link(const LinkRunOptions& o, const std::optional<LinkTsnConfig>& tsn_config,
                 const std::optional<LinkPtpConfig>& ptp_config) {
  using namespace runner;
  // Configuration errors (the CAK file included) before anything changes.
  const LinkMkaConfig mc = load_link_mka_config(o.mka_path);
  LinkConfig config = link_config_for_mka(mc);
  net::UniqueFd sfd = block_signals();
  TapLinkOptions to;
  to.lower = o.lower;
  to.name = o.name;
  to.mac = config.mac;
  to.control_ether_types = {mka::kEapolEtherType};
  to.offload = o.offload;
  to.rx_ring = o.rx_ring;
  apply_tsn_layout(tsn_config, config.secy, to);
  const net::MacAddress mac = link_mac(config, o.lower);
  SecYConfig sc = config.secy;
  sc.sci = resolve_sci(config, mac);
  MacsecLink link{SecY(sc)};
  // The loop outlives everything that registers callbacks on it.
  MonotonicClock clock;
  net::EventLoop loop(clock);
  auto print = [](const nlohmann::json& j) { std::cout << j.dump() << std::endl; };
  std::unique_ptr<LinkMka> mka = LinkMka::open(link, mc, o.lower, print);
  LowerLinkGuard guard = guard_lower(o, config, /*allow_mka=*/true);
  TapLink tap = TapLink::open(link, to);
  LinkTime link_time(link, tap, o, tsn_config, ptp_config);

  std::cerr << "macsec up: " << tap.name() << " on " << tap.lower() << " mtu " << tap.mtu() << " mac "
            << tap.mac().to_string() << " sci " << sci_text(sc.sci) << " suite " << to_string(sc.suite)
            << " validate " << to_string(sc.validate_frames) << "\n"
            << "  " << describe(mc) << " (" << o.mka_path << ")\n"
            << "  no SA until MKA installs one: nothing is sent or delivered before (SAKs are JSON lines on "
               "stdout, fingerprints only)\n";
  link_time.describe(std::cerr);

  enter_link_realtime(o);
  tap.attach(loop);
  link_time.attach(loop);
  // SIGHUP: a new SAK now, from the key server (there is no configuration
  // to re-read); another member refuses and says who the key server is.
  std::uint64_t rekeys_requested = 0, rekeys_refused = 0;
  watch_signals(loop, sfd, [&] {
    if (mka->rekey_now()) {
      ++rekeys_requested;
      print(nlohmann::json{{"event", "rekey_requested"}, {"t_ns", loop.now().ns()}});
      return;
    }
    ++rekeys_refused;
    const auto ks = mka->participant().key_server_sci();
    print(nlohmann::json{{"event", "rekey_refused"},
                         {"t_ns", loop.now().ns()},
                         {"error", "SIGHUP asks for a new SAK, and only the key server distributes SAKs; the key server "
                                   "is " + (ks ? sci_text(Sci{*ks}) : std::string("not elected yet"))}});
  });
  std::cout << nlohmann::json{{"event", "mka_started"},
                              {"t_ns", loop.now().ns()},
                              {"interface", tap.name()},
                              {"sci", sci_text(sc.sci)},
                              {"cipher_suite", std::string(to_string(mc.participant.cipher_suite))},
                              {"priority", mc.participant.key_server_priority}}
                   .dump()
            << std::endl;
  mka->start(loop);

  auto full_report = [&](const char* event) {
    nlohmann::json j = report(link, tap, sc.sci, event, link_time.ptp());
    j["mka"] = mka->stats_json();
    return j;
  };
  std::function<void()> periodic;
  if (o.stats_interval_s > 0) {
    const auto every = Duration::microseconds(static_cast<std::int64_t>(o.stats_interval_s * 1e6));
    periodic = [&, every] {
      print(full_report("stats"));
      loop.add_timer_in(every, periodic);
    };
    loop.add_timer_in(every, periodic);
  }
  loop.run_until(loop.now() + kForever);
  // The exit statistics as the CA was (peers, SAKs), then leave it: every SA
  // goes, so nothing more is protected; the peers notice after their MKA
  // life time.
  nlohmann::json exit_report = full_report("exit");
  mka->stop();
  tap.detach(loop);
  link_time.detach();
  exit_report["control"] = {{"rekeys_requested", rekeys_requested}, {"rekeys_refused", rekeys_refused}};
  unguard_lower(guard, exit_report);
  std::cout << exit_report.dump(2) << std::endl;
  return 0;
}

}  // namespace layersec::macsec
