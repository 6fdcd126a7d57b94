// `layersec macsec up`: a user-space MACsec interface, the equivalent of the
// kernel's `ip link add link eth0 macsec0 type macsec ...` plus its SAs.
// Creates the TAP interface NAME on top of the lower interface (MTU 32 bytes
// smaller, MAC copied or configured), protects everything the kernel sends
// on it with the configured SecY (EtherType 0x88E5 on the lower interface)
// and delivers only verified frames back. Runs until SIGINT/SIGTERM and
// prints the statistics (802.1AE MIB + link counters) as JSON at exit.
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
#include "layersec/macsec/link.h"
#include "layersec/macsec/link_config.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/interface.h"
#include "layersec/net/io.h"

namespace layersec::app {
namespace {

struct UpOptions {
  std::string link;
  std::string name;
  std::string config;
  double stats_interval = 0;
};

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

void run_up(const UpOptions& o) {
  macsec::LinkConfig config = macsec::load_link_config(o.config);

  // Signals are read from a signalfd in the loop, so they end the loop
  // cleanly (the TAP disappears when the process exits either way).
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) throw std::runtime_error("sigprocmask failed");
  net::UniqueFd sfd(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!sfd.valid()) throw std::runtime_error("signalfd: " + net::errno_text(errno));

  // The SecY needs the TAP's MAC (for an SCI derived from it) before the TAP
  // exists: it is the configured MAC or the lower interface's.
  macsec::TapLinkOptions to;
  to.lower = o.link;
  to.name = o.name;
  to.mac = config.mac;
  net::MacAddress mac;
  if (config.mac) {
    mac = *config.mac;
  } else {
    auto m = net::interface_mac(o.link);
    if (!m) throw std::runtime_error("lower interface " + o.link + ": " + net::errno_text(errno));
    mac = *m;
  }
  macsec::MacsecLink link(macsec::make_secy(config, mac));
  const macsec::Sci sci = link.secy().config().sci;
  macsec::TapLink tap = macsec::TapLink::open(link, to);

  std::cerr << "macsec up: " << tap.name() << " on " << tap.lower() << " mtu " << tap.mtu() << " mac "
            << tap.mac().to_string() << " sci " << sci_text(sci) << " suite "
            << macsec::to_string(link.secy().config().suite) << " validate "
            << macsec::to_string(link.secy().config().validate_frames) << "\n";
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

  MonotonicClock clock;
  net::EventLoop loop(clock);
  tap.attach(loop);
  loop.watch(sfd.get(), POLLIN, [&](short) {
    signalfd_siginfo info{};
    while (::read(sfd.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    }
    loop.stop();
  });
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
  std::cout << report(link, tap, sci, "exit").dump(2) << std::endl;
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
      "up", "create a user-space MACsec interface (TAP) on top of a link and run it until SIGINT/SIGTERM");
  up->add_option("--link", o->link, "lower interface (e.g. eth0)")->required();
  up->add_option("--name", o->name, "name of the MACsec interface to create (e.g. macsec0)")->required();
  up->add_option("--config", o->config, "JSON configuration (docs/macsec_link.md)")->required();
  up->add_option("--stats-interval", o->stats_interval, "also print statistics every S seconds")
      ->check(CLI::NonNegativeNumber);
  up->callback([o] { run_up(*o); });
});

}  // namespace
}  // namespace layersec::app
