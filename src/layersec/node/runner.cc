// `layersec node` (runner.h): the run of one node.
#include "layersec/node/runner.h"

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/macsec/link.h"
#include "layersec/macsec/link_runner_parts.h"
#include "layersec/macsec/link_tsn.h"
#include "layersec/macsec/pn_state_file.h"
#include "layersec/net/event_loop.h"
#include "layersec/node/node_config.h"
#include "layersec/node/printer.h"
#include "layersec/node/signal_watch.h"
#include "layersec/node/stack.h"
#include "layersec/node/test_traffic.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/counters_json.h"
#include "layersec/someip/raw_transport.h"
#include "layersec/someip/socket_transport.h"
#include "layersec/tsn/first_hop_stage.h"

namespace layersec::node {
namespace {

using nlohmann::json;

// This process's memory at the end of the run, in KiB: vm_hwm_kib / vm_rss_kib
// (/proc/self/status: the peak and current resident set of this program
// image, reset by exec) and maxrss_kib (getrusage: the peak across an exec,
// so it includes `layersec` itself when it handed `node` over to
// layersec-node); -1 where the kernel does not say. `program` is the file
// name of the running executable (layersec-node or layersec).
json process_memory_json() {
  long hwm = -1, rss = -1;
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::strtol(line.c_str() + 6, nullptr, 10);
    if (line.rfind("VmRSS:", 0) == 0) rss = std::strtol(line.c_str() + 6, nullptr, 10);
  }
  rusage ru{};
  const long maxrss = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
  std::array<char, 4096> exe{};
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  std::string program = n > 0 ? std::string(exe.data(), static_cast<std::size_t>(n)) : std::string();
  program = program.substr(program.rfind('/') + 1);
  return json{{"program", program}, {"vm_hwm_kib", hwm}, {"vm_rss_kib", rss}, {"maxrss_kib", maxrss}};
}

json engine_json(const secoc::VerifyCounters& v) {
  json rejected = json::object();
  for (std::size_t r = 0; r < secoc::kRejectionCount; ++r)
    if (v.rejected[r]) rejected[std::string(secoc::to_string(static_cast<secoc::Rejection>(r)))] = v.rejected[r];
  return {{"accepted", v.accepted},
          {"accepted_previous_key", v.accepted_previous_key},
          {"accepted_next_cycle", v.accepted_next_cycle},
          {"rejected", rejected}};
}

// The `macsec up --tsn` configuration as the raw path's first hop.
tsn::FirstHopSettings first_hop_settings(const macsec::LinkTsnConfig& c) {
  tsn::FirstHopSettings s;
  s.port_bps = c.port_bps;
  s.schedule = c.schedule;
  s.streams = c.streams;
  s.default_pcp = c.default_pcp;
  s.queue_limit_frames = c.queue_limit_frames;
  s.late_tolerance_ns = c.late_tolerance_ns;
  return s;
}

// One line for the started line (the MACsec link's describe() without the
// layout, which a node without a SecY does not have).
std::string describe_first_hop(const macsec::LinkTsnConfig& c) {
  return "port " + std::to_string(c.port_bps / 1'000'000) + " Mbit/s, " + std::to_string(c.schedule.num_tc) +
         " classes, " + std::to_string(c.schedule.gcl.entries.size()) + " gate entries, cycle " +
         std::to_string(tsn::cycle_time_of(c.schedule.gcl)) + " ns, " + std::to_string(c.streams.size()) +
         " stream rules";
}

json raw_json(const someip::RawTransportStats& t) {
  return {{"tx_frames", t.tx_frames},         {"tx_filter_refused", t.tx_filter_refused},
          {"tx_errors", t.tx_errors},         {"tx_unreachable", t.tx_unreachable},
          {"tx_too_large", t.tx_too_large},   {"tx_stage_refused", t.tx_stage_refused},
          {"rx_frames", t.rx_frames},         {"rx_filter_dropped", t.rx_filter_dropped},
          {"rx_not_udp", t.rx_not_udp},       {"rx_stage_dropped", t.rx_stage_dropped},
          {"rx_malformed", t.rx_malformed},   {"rx_not_for_us", t.rx_not_for_us},
          {"rx_datagrams", t.rx_datagrams},   {"rx_errors", t.rx_errors}};
}

// The first hop's counters: path (tags, drops by reason), shaper (per class:
// held, dropped, overruns; driver: late starts, ...).
json first_hop_json(const tsn::FirstHopStage& st, const macsec::LinkTsnConfig& c) {
  const tsn::FirstHopCounters& k = st.path().counters();
  return {{"config", describe_first_hop(c)},
          {"path",
           {{"tx_classified", k.tx_classified},
            {"tx_tagged", k.tx_tagged},
            {"tx_default_class", k.tx_default_class},
            {"tx_classify_errors", k.tx_classify_errors},
            {"tx_shaper_refused", st.shaper_refused()},
            {"tx_unconnected_drops", st.unconnected_drops()},
            {"rx_tag_popped", k.rx_tag_popped},
            {"rx_untagged", k.rx_untagged},
            {"rx_malformed", k.rx_malformed},
            {"rx_bad_tag", k.rx_bad_tag},
            {"rx_unknown_vid", k.rx_unknown_vid},
            {"rx_tag_mismatch", k.rx_tag_mismatch},
            {"rx_untagged_stream", k.rx_untagged_stream}}},
          {"shaper", macsec::shaper_json(st.shaper())}};
}

// Everything one node run owns, in construction order.
class NodeRun {
 public:
  NodeRun(NodeConfig cfg, const NodeRunOptions& opts, std::ostream& out, std::ostream& err)
      : cfg_(std::move(cfg)), opts_(opts), err_(err), loop_(clock_), printer_(out, opts.json, clock_) {}

  int run() {
    // Blocked from here on, so a signal during start-up still ends the run
    // cleanly (it is read once the loop runs).
    SignalWatch signals;
    if (const int rc = build(); rc != kNodeExitOk) return rc;
    if (stack_->macsec_link()) tick_pn_state();
    someip::Runtime& runtime = stack_->runtime();
    traffic_ = std::make_unique<TestTraffic>(cfg_, runtime, loop_, printer_);
    traffic_->install_handlers();
    if (auto st = runtime.start(); !st.ok()) {
      const int e = stack_->raw_transport() ? stack_->raw_transport()->last_errno()
                                            : stack_->socket_transport()->last_errno();
      err_ << "layersec node: cannot start: " << to_string(st.error()) << " (transport errno " << e << ")\n";
      return kNodeExitStart;
    }
    print_started();
    traffic_->start();

    int stop_signal = 0;
    loop_.watch(signals.fd(), POLLIN, [&](short) {
      stop_signal = signals.drain();
      if (stop_signal != 0) loop_.stop();
    });
    const TimePoint deadline =
        opts_.duration_s > 0
            ? clock_.now() + Duration::nanoseconds(static_cast<std::int64_t>(opts_.duration_s * 1e9))
            : TimePoint::max();
    loop_.run_until(deadline);
    loop_.unwatch(signals.fd());
    runtime.stop();
    print_final(stop_signal);
    return kNodeExitOk;
  }

 private:
  // The node's parts through the builder; the configuration's keys move into
  // the engine (and are wiped there). Returns an exit status.
  int build() {
    const someip::IpAddress& u = cfg_.unicast;
    StackSpec spec;
    spec.runtime = cfg_.runtime;
    spec.seed = opts_.seed ? *opts_.seed : std::random_device{}();
    const net::Ipv4Address address = net::Ipv4Address::from_octets(u.bytes[0], u.bytes[1], u.bytes[2], u.bytes[3]);
    if (cfg_.raw) {
      RawTransportSpec raw;
      raw.loop = &loop_;
      raw.config.interface = cfg_.raw->interface;
      raw.config.address = address;
      raw.config.neighbours = cfg_.raw->neighbours;
      raw.config.mtu = cfg_.raw->mtu;
      if (cfg_.tsn) {
        raw.tsn = first_hop_settings(*cfg_.tsn);
        raw.tsn_clock = &tai_;
        // The shaper's timer (tsn::LoopShaperTimer, built on this thread
        // with the stage) sets this thread's timer slack to 1 ns.
      }
      spec.transport = std::move(raw);
      if (cfg_.macsec) {
        if (const int rc = build_secy(spec); rc != kNodeExitOk) return rc;
      }
    } else {
      spec.transport = SocketTransportSpec{&loop_, address, cfg_.device};
    }
    if (cfg_.secoc) {
      NodeSecoc& s = *cfg_.secoc;
      SecocSpec sc;
      sc.engine = s.engine;
      sc.bindings = s.bindings;
      sc.state_file = s.state_file;
      sc.first_start = opts_.first_start;
      for (NodeKey& k : s.keys) sc.keys.push_back({k.group, k.key_id, std::move(k.key)});
      // Freshness (sync time bound, timestamp freshness of SD, key rollover
      // expiry) runs on the host's synchronised time, shared by every node
      // (docs/node.md).
      sc.freshness_clock = &freshness_clock_;
      sc.on_started = [this](const secoc::Engine& e) {
        err_ << "layersec node: SecOC trip counter " << e.trip() << " (state file " << cfg_.secoc->state_file
             << ")\n";
      };
      spec.secoc = std::move(sc);
    }
    try {
      stack_ = build_stack(std::move(spec));
    } catch (const BuildError& e) {
      return report(e);
    }
    // Forgery probability of every PDU in use (never key material).
    if (const secoc::Engine* e = stack_->engine()) err_ << e->config().describe();
    return kNodeExitOk;
  }

  // The raw transport's SecY from the `macsec up --config` file, on its PN
  // state file (created only for new keys); the TSN layout decides where the
  // tag goes, as with `macsec up --tsn`.
  int build_secy(StackSpec& spec) {
    NodeMacsec& m = *cfg_.macsec;
    if (cfg_.tsn) {
      m.link.secy.vlan_mode = cfg_.tsn->layout;
      m.link.secy.clear_tags_in_icv = cfg_.tsn->clear_tags_in_icv;
    }
    try {
      // --first-start vouches that the keys are new, as `macsec up --new-key`.
      pn_store_.emplace(macsec::runner::open_pn_store(m.link, opts_.first_start));
      const net::MacAddress mac = macsec::runner::link_mac(m.link, cfg_.raw->interface);
      spec.secy.emplace(macsec::make_secy(m.link, mac, &*pn_store_, opts_.first_start));
    } catch (const std::exception& e) {
      err_ << "layersec node: $.macsec: " << m.path << ": " << e.what() << "\n";
      return kNodeExitStart;
    }
    err_ << "layersec node: MACsec SecY " << macsec::sci_text(spec.secy->config().sci) << ", "
         << (m.link.secy.vlan_mode == macsec::VlanMode::kClearTag ? "clear-tag" : "standard")
         << " layout, PN state " << m.link.pn_state_file << "\n";
    return kNodeExitOk;
  }

  // Saves the exact PN state once a second (SecY::tick_pn_state, as `macsec
  // up` does): a restart then resumes close to the PNs really used.
  void tick_pn_state() {
    if (!stack_->macsec_link()->secy().tick_pn_state().ok()) ++pn_state_failures_;
    loop_.add_timer_in(Duration::seconds(1), [this] { tick_pn_state(); });
  }

  int report(const BuildError& e) {
    const BuildFailure& f = e.failure();
    switch (f.stage) {
      case BuildStage::kRuntime:
        err_ << "layersec node: " << opts_.config << ": " << e.what() << "\n";
        return kNodeExitConfig;
      case BuildStage::kSecocBindings:
        err_ << "layersec node: " << opts_.config << ": $.secoc: " << e.what() << "\n";
        return kNodeExitConfig;
      case BuildStage::kSecocStart:
        report_start_error(f);
        return kNodeExitStart;
      case BuildStage::kSecocKey: {
        const NodeKey& k = cfg_.secoc->keys[f.key_index];
        err_ << "layersec node: key group '" << k.group_name << "' key id " << k.key_id << ": "
             << secoc::to_string(*f.key_error) << "\n";
        return kNodeExitStart;
      }
      case BuildStage::kMacsec:
      case BuildStage::kTransport:
        break;
    }
    err_ << "layersec node: " << e.what() << "\n";
    return kNodeExitStart;
  }

  void report_start_error(const BuildFailure& f) {
    const std::string& file = cfg_.secoc->state_file;
    err_ << "layersec node: SecOC engine cannot start: ";
    switch (*f.start_error) {
      case secoc::StartError::kStateMissing:
        err_ << "state file " << file
             << " is missing: a new trip counter would reuse freshness values under the same "
                "keys. If this is the node's first provisioning (new keys), start it once with "
                "--first-start";
        break;
      case secoc::StartError::kStateCorrupt:
        err_ << "state file " << file << " is corrupt (" << f.store_error << "): restore it or provision new keys";
        break;
      case secoc::StartError::kStateStore:
        err_ << f.store_error;
        break;
      case secoc::StartError::kTripExhausted:
        err_ << "the trip counter is exhausted: install a new key";
        break;
    }
    err_ << "\n";
  }

  void print_started() {
    json keys = json::array();
    if (cfg_.secoc)
      for (const NodeKey& k : cfg_.secoc->keys) keys.push_back({{"key_group", k.group_name}, {"key_id", k.key_id}});
    json services = json::array();
    for (const auto& s : cfg_.runtime.services)
      services.push_back({{"service", s.service_id}, {"instance", s.instance_id}, {"port", s.udp_port}});
    json clients = json::array();
    for (const auto& c : cfg_.runtime.clients) clients.push_back({{"service", c.service_id}, {"instance", c.instance_id}});
    json ignored = cfg_.ignored;
    printer_.emit({{"type", "started"},
                   {"name", cfg_.runtime.name},
                   {"unicast", cfg_.unicast.to_string()},
                   {"services", services},
                   {"clients", clients},
                   {"secoc", cfg_.secoc.has_value()},
                   {"transport", cfg_.raw ? "raw" : "udp"},
                   {"interface", cfg_.raw ? cfg_.raw->interface : cfg_.device},
                   {"tsn", cfg_.tsn ? json(describe_first_hop(*cfg_.tsn)) : json(nullptr)},
                   {"macsec", stack_->macsec_link() ? json(macsec::sci_text(stack_->macsec_link()->secy().config().sci))
                                                    : json(nullptr)},
                   {"keys", keys},
                   {"ignored", ignored}},
                  "node '" + cfg_.runtime.name + "' started on " + cfg_.unicast.to_string() + ": " +
                      std::to_string(services.size()) + " offered, " + std::to_string(clients.size()) +
                      " required" + (cfg_.secoc ? ", SecOC on" : ", SecOC off") +
                      (cfg_.raw ? ", raw on " + cfg_.raw->interface : std::string()) +
                      (cfg_.tsn ? ", TSN " + describe_first_hop(*cfg_.tsn) : std::string()));
    for (const auto& i : cfg_.ignored) err_ << "layersec node: ignoring vsomeip setting " << i << "\n";
  }

  void print_final(int stop_signal) {
    const std::string stopped_by = stop_signal == SIGINT    ? "SIGINT"
                                   : stop_signal == SIGTERM ? "SIGTERM"
                                                            : "duration";
    json j{{"type", "counters"},
           {"stopped_by", stopped_by},
           {"runtime", someip::to_json(stack_->runtime().counters())},
           {"test", to_json(traffic_->counters())}};
    if (const someip::RawTransport* raw = stack_->raw_transport()) {
      j["transport"] = raw_json(raw->stats());
    } else {
      const someip::SocketTransport& transport = *stack_->socket_transport();
      j["transport"] = {{"rx_datagrams", transport.stats().rx_datagrams},
                        {"rx_truncated", transport.stats().rx_truncated},
                        {"rx_not_joined", transport.stats().rx_not_joined},
                        {"rx_errors", transport.stats().rx_errors},
                        {"tx_errors", transport.stats().tx_errors}};
    }
    if (const tsn::FirstHopStage* st = stack_->first_hop()) j["tsn"] = first_hop_json(*st, *cfg_.tsn);
    if (const macsec::MacsecLink* l = stack_->macsec_link()) {
      j["macsec"] = l->stats_json();
      j["macsec"]["pn_state_failures"] = pn_state_failures_;
    }
    if (const secoc::Engine* e = stack_->engine()) j["secoc"] = engine_json(e->counters());
    j["process"] = process_memory_json();
    const auto& c = stack_->runtime().counters();
    std::string human = "stopped (" + stopped_by + "); counters: served " + std::to_string(c.requests_served) + ", responses " +
                        std::to_string(c.responses_received) + ", timeouts " + std::to_string(c.request_timeouts) +
                        ", notifications sent " + std::to_string(c.notifications_sent) + " received " +
                        std::to_string(c.notifications_received) + ", secoc protected " +
                        std::to_string(c.secoc_protected) + " verified " + std::to_string(c.secoc_verified) +
                        " rejected " + std::to_string(c.secoc_rejected) + ", transport errors " +
                        std::to_string(c.transport_errors);
    if (const tsn::FirstHopStage* st = stack_->first_hop()) {
      const tsn::FirstHopCounters& k = st->path().counters();
      human += ", tsn tagged " + std::to_string(k.tx_tagged) + " popped " + std::to_string(k.rx_tag_popped) +
               " unknown-vid " + std::to_string(k.rx_unknown_vid) + " shaper-refused " +
               std::to_string(st->shaper_refused()) + " late " + std::to_string(st->shaper().counters().late_starts);
    }
    printer_.emit(j, human);
  }

  NodeConfig cfg_;
  NodeRunOptions opts_;
  std::ostream& err_;
  MonotonicClock clock_;
  RealtimeClock freshness_clock_;
  tsn::TaiClock tai_;  // the TSN first hop's schedule clock (taprio's default)
  net::EventLoop loop_;
  Printer printer_;
  // The runtime (in the stack) goes first: stopping it may still call the
  // test application's handlers.
  std::optional<macsec::FilePnStore> pn_store_;  // outlives the SecY in the stack
  std::uint64_t pn_state_failures_ = 0;
  std::unique_ptr<TestTraffic> traffic_;
  std::unique_ptr<Stack> stack_;
};

}  // namespace

int run_node(const NodeRunOptions& opts, std::ostream& out, std::ostream& err) {
  NodeConfig cfg;
  try {
    cfg = load_node_config(opts.config);
  } catch (const NodeConfigError& e) {
    err << "layersec node: " << (e.path().rfind('$', 0) == 0 ? opts.config + ": " : std::string()) << e.what()
        << "\n";
    return kNodeExitConfig;
  }
  try {
    NodeRun node(std::move(cfg), opts, out, err);
    return node.run();
  } catch (const std::exception& e) {
    err << "layersec node: " << e.what() << "\n";
    return kNodeExitStart;
  }
}

}  // namespace layersec::node
