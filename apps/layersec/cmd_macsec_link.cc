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
//
// --ptp FILE runs a gPTP port on the lower interface in the same process
// (macsec/link_ptp.h): inside this link's SecY ("protect": true) or as plain
// 0x88F7; with --tsn the shaper then follows the grandmaster's time.
//
// --mka FILE (instead of --config): no static SAK; MKA (IEEE 802.1X-2020)
// over EAPOL on the lower interface agrees SAKs with the peers and installs
// them (link_mka.h, docs/mka.md); nothing is sent before the first one.
#include <net/if.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli_checks.h"
#include "command.h"
#include "layersec/macsec/link_runner.h"

namespace layersec::app {
namespace {

struct UpOptions {
  std::string link;
  std::string name;
  std::string config;
  std::string backend = "user";
  double stats_interval = 0;
  bool new_key = false;
  std::string tsn;
  std::string ptp;
  std::string mka;
  bool no_offload = false;
  bool rx_ring = false;
  bool realtime = false;
  int workers = 1;
  std::string fanout;
};

// Hands the options to macsec::run_link (link_runner.h), which does the work.
void run_up(const UpOptions& o) {
  macsec::LinkRunOptions ro;
  ro.lower = o.link;
  ro.name = o.name;
  ro.config_path = o.config;
  ro.backend = o.backend == "kernel" ? macsec::LinkBackend::kKernel : macsec::LinkBackend::kUser;
  ro.stats_interval_s = o.stats_interval;
  ro.new_key = o.new_key;
  ro.tsn_path = o.tsn;
  ro.ptp_path = o.ptp;
  ro.mka_path = o.mka;
  ro.offload = !o.no_offload;
  ro.rx_ring = o.rx_ring;
  ro.realtime_priority = o.realtime ? 60 : 0;
  ro.workers = o.workers;
  ro.fanout = o.fanout;
  if (o.config.empty() == o.mka.empty()) {
    throw std::invalid_argument("macsec up: give exactly one of --config (static SAKs) and --mka (MKA)");
  }
  if (const int status = macsec::run_link(ro); status != 0) set_exit_code(status);
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
  auto* config = up->add_option("--config", o->config, "JSON configuration with static SAKs (docs/macsec_link.md)")
                     ->check(kRegularFile);
  up->add_option("--mka", o->mka,
                 "MKA instead of static SAKs (JSON: cak_file, ckn, priority, cipher_suite, timers; docs/mka.md)")
      ->check(kRegularFile)
      ->excludes(config);
  up->add_flag("--new-key", o->new_key,
               "the keys were never used: create the PN state file / records that are missing (never rewinds "
               "an existing record)");
  up->add_option("--tsn", o->tsn,
                 "TSN first hop (JSON, docs/tsn.md): port speed, taprio schedule, stream rules -> VID/PCP, "
                 "layout clear-tag or standard; frames are shaped on CLOCK_TAI (user back end)")
      ->check(kRegularFile);
  up->add_option("--ptp", o->ptp,
                 "gPTP (IEEE 802.1AS) on the lower interface in this process (JSON, docs/ptp.md): \"protect\": true "
                 "carries it inside this link's MACsec, false as plain 0x88F7; with --tsn the shaper runs on its "
                 "clock (user back end)")
      ->check(kRegularFile);
  up->add_flag("--no-offload", o->no_offload,
               "user back end: a TAP without IFF_VNET_HDR offloads (one read per frame sent, one write per frame "
               "received) instead of 64 KiB TCP segments split and joined here");
  up->add_flag("--rx-ring", o->rx_ring,
               "user back end: receive on the lower interface through a PACKET_MMAP receive ring instead of "
               "recvmmsg batches (recvmmsg where the kernel refuses the ring)");
  up->add_flag("--realtime", o->realtime,
               "user back end: lock memory and run the link in SCHED_FIFO priority 60 (root or CAP_SYS_NICE; warns "
               "and goes on without when refused), so a frame in the TAP or the shaper waits for no other work");
  up->add_option("--workers", o->workers,
                 "user back end, static SAKs: N threads (1..4, default 1), each with a queue of a multi-queue TAP, a "
                 "lower socket in one PACKET_FANOUT group and its own cipher contexts, sharing each SA's PN "
                 "allocation and replay state (docs/macsec_link.md, \"Workers\")")
      ->check(whole_in(1, 4));
  up->add_option("--fanout", o->fanout,
                 "with --workers > 1: how received frames are spread over the workers: cpu (default: by the CPU "
                 "that received the frame), lb (round robin) or hash (the kernel's flow hash)")
      ->check(CLI::IsMember({"cpu", "lb", "hash"}));
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
