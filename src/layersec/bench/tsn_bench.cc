#include "layersec/bench/tsn_bench.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

#include "layersec/base/bytes.h"
#include "layersec/bench/bench_env.h"
#include "layersec/bench/tsn_bench_link.h"
#include "layersec/bench/tsn_st_gen.h"
#include "layersec/harness/stats.h"
#include "layersec/macsec/link_tsn_config.h"
#include "layersec/net/io.h"
#include "layersec/net/netns.h"
#include "layersec/net/thread_timing.h"
#include "layersec/tsn/gate_analysis.h"
#include "layersec/tsn/st_stream.h"

namespace layersec::bench {
namespace {

constexpr const char* kShaped =
    "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 "
    "sched-entry S 02 600000 sched-entry S 01 400000 clockid CLOCK_TAI";
constexpr const char* kOpen =
    "taprio num_tc 2 map 0 0 0 0 0 1 1 1 0 0 0 0 0 0 0 0 queues 1@0 1@1 base-time 0 "
    "sched-entry S 03 1000000 clockid CLOCK_TAI";
constexpr double kStShare = 0.6;
constexpr double kBeShare = 0.4;
constexpr std::uint16_t kProbePort = 5000;
constexpr std::uint16_t kStPort = 5201;
constexpr std::uint16_t kBePort = 5202;
constexpr std::size_t kProbePayload = 200;
constexpr std::int64_t kProbePeriodNs = 997'000;
constexpr std::uint32_t kProbeMagic = 0x54534E50;  // "TSNP"
constexpr std::size_t kBeDatagram = 1400;
constexpr std::size_t kStDatagram = 1000;

const char* kIpA = "10.83.0.1";
const char* kIpB = "10.83.0.2";

std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

macsec::LinkTsnConfig tsn_config(bool shaper, std::uint64_t port_mbit, const char* peer_ip,
                                 const net::MacAddress& peer_mac, bool sender) {
  nlohmann::json streams = nlohmann::json::array();
  if (sender) {
    streams.push_back({{"match", "ip"}, {"handle", 1}, {"dst_ip", peer_ip}, {"protocol", "udp"},
                       {"dst_port", kStPort}, {"set_vid", 10}, {"set_pcp", 5}});
    streams.push_back({{"match", "ip"}, {"handle", 2}, {"dst_ip", peer_ip}, {"protocol", "udp"},
                       {"dst_port", kProbePort}, {"set_vid", 10}, {"set_pcp", 5}});
  } else {
    streams.push_back({{"match", "ip"}, {"handle", 1}, {"dst_ip", peer_ip}, {"protocol", "udp"},
                       {"src_port", kStPort}, {"set_vid", 10}, {"set_pcp", 5}});
  }
  streams.push_back({{"match", "null"}, {"handle", 3}, {"dst_mac", peer_mac.to_string()}, {"untagged_only", true},
                     {"set_vid", 20}, {"set_pcp", 0}});
  nlohmann::json j{{"port_mbit_s", port_mbit}, {"taprio", shaper ? kShaped : kOpen}, {"layout", "clear-tag"},
                   {"queue_limit_frames", 256}, {"streams", std::move(streams)}};
  return macsec::parse_link_tsn_config(j, {});
}

// The probe: 200-byte datagrams carrying (magic, seq, send time) on
// CLOCK_MONOTONIC; the receiver records one-way latency.
struct Probe {
  net::UniqueFd tx, rx;
  int realtime_priority = 0;     // > 0: both probe threads run SCHED_FIFO at it
  std::string realtime_error[2];  // sender, receiver: "" or why SCHED_FIFO was refused
  std::atomic<bool> stop{false};
  std::int64_t record_from_ns = 0;
  std::uint64_t sent = 0, received = 0;
  std::vector<double> latency_us;
};

void probe_send(Probe& p) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(kProbePort);
  ::inet_pton(AF_INET, kIpB, &to.sin_addr);
  if (p.realtime_priority > 0) p.realtime_error[0] = net::set_thread_fifo(p.realtime_priority);
  std::uint8_t buf[kProbePayload] = {};
  std::int64_t next = mono_ns();
  for (std::uint64_t seq = 0; !p.stop.load(); ++seq) {
    timespec ts{static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    const std::int64_t now = mono_ns();
    store_be32(buf, kProbeMagic);
    store_be64(buf + 4, seq);
    store_be64(buf + 12, static_cast<std::uint64_t>(now));
    if (::sendto(p.tx.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
            static_cast<ssize_t>(sizeof buf) &&
        now >= p.record_from_ns) {
      ++p.sent;
    }
    next += kProbePeriodNs;
  }
}

void probe_receive(Probe& p) {
  if (p.realtime_priority > 0) p.realtime_error[1] = net::set_thread_fifo(p.realtime_priority);
  std::uint8_t buf[2048];
  while (!p.stop.load()) {
    const ssize_t n = ::recv(p.rx.get(), buf, sizeof buf, 0);
    const std::int64_t now = mono_ns();
    if (n != static_cast<ssize_t>(kProbePayload) || load_be32(buf) != kProbeMagic) continue;
    const auto sent_at = static_cast<std::int64_t>(load_be64(buf + 12));
    if (sent_at < p.record_from_ns) continue;
    ++p.received;
    p.latency_us.push_back(static_cast<double>(now - sent_at) / 1e3);
  }
}

// The probe's sockets (the ST generator's too, on the ST port): tx in A,
// rx in B bound to `port`.
void open_probe(Probe& p, const net::NetnsTopology& topo, std::uint16_t port) {
  {
    net::NetnsScope scope(topo.node(0).netns);
    p.tx.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  }
  {
    net::NetnsScope scope(topo.node(1).netns);
    p.rx.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  }
  if (!p.tx.valid() || !p.rx.valid()) throw std::runtime_error("probe sockets: " + net::errno_text(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, kIpB, &a.sin_addr);
  if (::bind(p.rx.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error("probe bind " + std::string(kIpB) + ": " + net::errno_text(errno));
  }
  timeval tv{0, 100'000};
  (void)::setsockopt(p.rx.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const int buf = 4 * 1024 * 1024;
  (void)::setsockopt(p.rx.get(), SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

std::string mbit_arg(double mbit) { return std::to_string(static_cast<std::uint64_t>(std::llround(mbit * 1e6))); }

struct RunSpec {
  std::uint64_t port = 100;
  bool macsec = false, shaper = false;
  std::string be;
  bool realtime = false;
};

// Link threads above the probe's: the probe only measures.
constexpr int kLinkPriority = 50;
constexpr int kProbePriority = 40;
// The ST generator above the links: a release it misses becomes a burst of
// its own class at the port.
constexpr int kGenPriority = 60;
constexpr int kStAppPriority = 30;  // the ST iperf3 client and server

// Ethernet header + C-tag in front of an IPv4 packet, as the shaper queues it.
constexpr std::size_t kL2 = 14 + 4;

// iperf3 payload Mbit/s that the port model carries per class in this run
// (tsn::carried_load over 200 cycles): ST at its offered rate plus the
// probe (iperf3 runs only), BE saturating (UDP: 1400-byte datagrams; TCP:
// full-MTU segments with timestamps, 52 octets of IPv4 + TCP headers).
std::pair<double, double> ideal_rates(const RunSpec& r, const macsec::LinkTsnConfig& cfg, double st_offered_mbit,
                                      bool probe) {
  tsn::PortConfig pc;
  pc.link_bps = cfg.port_bps;
  pc.num_classes = cfg.schedule.num_tc;
  pc.queue_limit_frames = cfg.queue_limit_frames;
  pc.expansion_bytes = r.macsec ? 32 : 0;
  const std::size_t tap_mtu = 1500 - 4 - (r.macsec ? 32 : 0);
  const std::size_t be_payload = r.be == "udp" ? kBeDatagram : tap_mtu - 52;
  const std::size_t be_frame = r.be == "udp" ? kBeDatagram + 28 + kL2 : tap_mtu + kL2;
  const auto st_period = static_cast<std::int64_t>(std::llround(kStDatagram * 8 * 1e3 / st_offered_mbit));
  std::vector<tsn::OfferedStream> streams{{1, kStDatagram + 28 + kL2, st_period, 0}, {0, be_frame, 0, 0}};
  if (probe) streams.push_back({1, kProbePayload + 28 + kL2, kProbePeriodNs, 0});
  constexpr std::int64_t kDuration = 200'000'000;  // 200 cycles of 1 ms
  const auto c = tsn::carried_load(pc, cfg.schedule.gcl, streams, kDuration);
  const auto mbit = [&](std::uint64_t frames, std::size_t payload) {
    return static_cast<double>(frames * payload) * 8 * 1e3 / static_cast<double>(kDuration);
  };
  return {mbit(c[0].sent, kStDatagram), mbit(c[1].sent, be_payload)};
}

// The generator's frame for the release plan: 1000-byte datagrams, their
// Ethernet frame with the C-tag as the shaper queues it, offered bits per
// cycle at the ST offered rate.
tsn::StPlanInputs st_plan_inputs(const RunSpec& r, const macsec::LinkTsnConfig& cfg, double st_offered_mbit) {
  tsn::StPlanInputs in;
  in.traffic_class = 1;
  in.payload_bytes = kStDatagram;
  in.frame_bytes = kStDatagram + 28 + kL2;
  in.expansion_bytes = r.macsec ? 32 : 0;
  in.link_bps = cfg.port_bps;
  in.offered_bits_per_cycle = static_cast<std::uint64_t>(
      std::llround(st_offered_mbit * 1e6 * static_cast<double>(tsn::cycle_time_of(cfg.schedule.gcl)) / 1e9));
  return in;
}

void must(int status, const std::string& what) {
  if (status != 0) throw std::runtime_error(what + " failed (exit " + std::to_string(status) + ")");
}

// One run: links up, probe + ST iperf3 + BE iperf3 at once, links down.
std::vector<TsnBenchRow> run_one(const TsnBenchOptions& o, const RunSpec& r, const std::string& work) {
  net::NetnsTopology topo = net::NetnsTopology::pair("tsnb");
  const auto& na = topo.node(0);
  const auto& nb = topo.node(1);
  net::MacAddress tap_a = na.mac, tap_b = nb.mac;
  tap_a.bytes[5] ^= 0x80;
  tap_b.bytes[5] ^= 0x80;
  const std::vector<std::uint8_t> key_ab(16, 0xA5), key_ba(16, 0x5A);
  BenchLinkSpec sa;
  sa.netns = na.netns;
  sa.lower = na.interface;
  sa.tap = "tsn0";
  sa.tap_mac = tap_a;
  sa.macsec = r.macsec;
  sa.sci = macsec::Sci::from_parts(tap_a.bytes.data(), 1);
  sa.peer_sci = macsec::Sci::from_parts(tap_b.bytes.data(), 1);
  sa.tx_key = key_ab;
  sa.rx_key = key_ba;
  sa.tsn = tsn_config(r.shaper, r.port, kIpB, tap_b, true);
  sa.realtime_priority = r.realtime ? kLinkPriority : 0;
  BenchLinkSpec sb = sa;
  sb.netns = nb.netns;
  sb.lower = nb.interface;
  sb.tap_mac = tap_b;
  std::swap(sb.sci, sb.peer_sci);
  std::swap(sb.tx_key, sb.rx_key);
  sb.tsn = tsn_config(r.shaper, r.port, kIpA, tap_a, false);
  auto la = BenchLink::start(sa);
  auto lb = BenchLink::start(sb);
  must(topo.exec(0, {"ip", "addr", "add", std::string(kIpA) + "/24", "dev", "tsn0"}), "ip addr add (A)");
  must(topo.exec(1, {"ip", "addr", "add", std::string(kIpB) + "/24", "dev", "tsn0"}), "ip addr add (B)");
  must(topo.exec(0, {"ip", "neigh", "replace", kIpB, "lladdr", tap_b.to_string(), "dev", "tsn0", "nud", "permanent"}),
       "ip neigh (A)");
  must(topo.exec(1, {"ip", "neigh", "replace", kIpA, "lladdr", tap_a.to_string(), "dev", "tsn0", "nud", "permanent"}),
       "ip neigh (B)");

  const std::string tag = std::to_string(r.port) + (r.macsec ? "_macsec" : "_plain") + (r.shaper ? "_shaped" : "_open") +
                          "_be" + r.be + (r.realtime ? "_rt" : "");
  const std::string st_log = work + "/st_" + tag + ".json", be_log = work + "/be_" + tag + ".json";
  const std::string secs = std::to_string(o.seconds);
  // With --realtime the ST talker and listener are real-time applications
  // too (chrt -f): a paced sender that waits for a CPU sends its backlog in
  // one burst, and the probe queues behind it in the ST class.
  const std::vector<std::string> st_prefix =
      r.realtime ? std::vector<std::string>{"chrt", "-f", std::to_string(kStAppPriority)} : std::vector<std::string>{};
  const auto with_prefix = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), st_prefix.begin(), st_prefix.end());
    return argv;
  };
  const bool gen = o.st_source == "gen";
  const auto cfg = sa.tsn;
  const double st_offered = o.st_load * kStShare * static_cast<double>(r.port);
  std::optional<tsn::StPlan> plan;
  if (gen) {
    std::string why;
    plan = tsn::plan_st_releases(cfg.schedule.gcl, st_plan_inputs(r, cfg, st_offered), nullptr, &why);
    if (!plan) throw std::runtime_error("ST generator: " + why);
  }
  std::optional<net::ChildProcess> srv_st;
  if (!gen) {
    srv_st = topo.spawn(1, with_prefix({o.iperf3, "-s", "-1", "-B", kIpB, "-p", std::to_string(kStPort)}),
                        work + "/srv_st.log");
  }
  auto srv_be = topo.spawn(1, {o.iperf3, "-s", "-1", "-B", kIpB, "-p", std::to_string(kBePort)}, work + "/srv_be.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));

  Probe probe;
  probe.realtime_priority = r.realtime ? kProbePriority : 0;
  open_probe(probe, topo, gen ? kStPort : kProbePort);
  probe.record_from_ns = mono_ns() + 300'000'000;
  std::thread prx, ptx;
  if (!gen) {
    prx = std::thread([&] { probe_receive(probe); });
    ptx = std::thread([&] { probe_send(probe); });
  }
  std::vector<std::string> st_argv{o.iperf3, "-c", kIpB, "-p", std::to_string(kStPort), "-u", "-b", mbit_arg(st_offered),
                                   "-l", std::to_string(kStDatagram), "-t", secs, "--pacing-timer", "100", "-J",
                                   "--logfile", st_log};
  std::vector<std::string> be_argv{o.iperf3, "-c", kIpB, "-p", std::to_string(kBePort), "-t", secs, "-J",
                                   "--logfile", be_log};
  if (r.be == "udp") {
    for (const std::string& a : {std::string("-u"), std::string("-b"), mbit_arg(static_cast<double>(r.port)),
                                 std::string("-l"), std::to_string(kBeDatagram)}) {
      be_argv.push_back(a);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto be_client = topo.spawn(0, be_argv, work + "/be_client.log");
  int st_status = 0;
  StGenResult g;
  if (gen) {
    StGenSpec gs;
    gs.plan = *plan;
    gs.payload_bytes = kStDatagram;
    gs.run_id = static_cast<std::uint32_t>(mono_ns() ^ (mono_ns() >> 32)) | 1u;
    gs.seconds = o.seconds;
    gs.realtime_priority = r.realtime ? kGenPriority : 0;
    gs.dst_ip = kIpB;
    gs.dst_port = kStPort;
    g = run_st_generator(probe.tx, probe.rx, gs);
  } else {
    auto st_client = topo.spawn(0, with_prefix(st_argv), work + "/st_client.log");
    st_status = st_client.wait();
  }
  const int be_status = be_client.wait();
  probe.stop = true;
  if (ptx.joinable()) ptx.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (prx.joinable()) prx.join();
  if (srv_st) srv_st->terminate();
  srv_be.terminate();
  la->stop();
  lb->stop();
  if (st_status != 0) throw std::runtime_error("iperf3 ST client exited " + std::to_string(st_status) + " (" + st_log + ")");
  if (be_status != 0) throw std::runtime_error("iperf3 BE client exited " + std::to_string(be_status) + " (" + be_log + ")");

  const IperfResult st = gen ? IperfResult{} : read_iperf(st_log, true);
  const IperfResult be = read_iperf(be_log, r.be == "udp");
  tsn::BoundInputs in;
  in.frame_bytes = (gen ? kStDatagram : kProbePayload) + 8 + 20 + kL2;
  in.expansion_bytes = r.macsec ? 32 : 0;
  in.link_bps = cfg.port_bps;
  in.other_max_frame_bytes = 1500 + kL2;
  const tsn::LatencyBound bound = tsn::latency_bound(cfg.schedule.gcl, 1, in);
  const harness::Summary lat = harness::summarize(gen ? g.latency_us : probe.latency_us);
  const nlohmann::json sender_stats = la->stats();
  const nlohmann::json receiver_stats = lb->stats();

  const std::string base = "port" + std::to_string(r.port) + (r.macsec ? "/macsec" : "/plain") +
                           (r.shaper ? "/shaper" : "/no-shaper") + "/be-" + r.be + (r.realtime ? "/rt" : "");
  const auto [st_ideal, be_ideal] = ideal_rates(r, cfg, st_offered, !gen);
  // A refused SCHED_FIFO is a fact of the run, not a failure of it.
  std::string rt_refused;
  for (const std::string& e : {sender_stats.value("realtime", std::string()),
                               receiver_stats.value("realtime", std::string()), probe.realtime_error[0],
                               probe.realtime_error[1]}) {
    if (!e.empty()) rt_refused = e;
  }
  TsnBenchRow st_row;
  st_row.name = base + "/ST";
  st_row.cls = "ST";
  st_row.transport = "udp";
  st_row.macsec = r.macsec;
  st_row.shaper = r.shaper;
  st_row.port_mbit_s = r.port;
  st_row.be_transport = r.be;
  st_row.offered_mbit_s = st_offered;
  st_row.share_mbit_s = (r.shaper ? kStShare : 1.0) * static_cast<double>(r.port);
  st_row.ideal_mbit_s = st_ideal;
  st_row.realtime = r.realtime && rt_refused.empty();
  st_row.throughput_mbit_s = st.mbit_s;
  st_row.jitter_ms = st.jitter_ms;
  st_row.loss_pct = st.loss_pct;
  if (lat.count > 0) {
    st_row.latency_p50_us = lat.p50;
    st_row.latency_p99_us = lat.p99;
    st_row.latency_max_us = lat.max;
  }
  st_row.st_source = o.st_source;
  // The processing term, measured in this run: the ST frames' pass-through
  // p99 of each leg they cross (tsn/pass_through.h).
  using Leg = tsn::PassThroughTimes::Leg;
  const auto leg_p99 = [](const tsn::PassThroughTimes& t, Leg leg) -> std::optional<double> {
    if (t.us(leg).empty()) return std::nullopt;
    return harness::summarize(t.us(leg)).p99;
  };
  const auto in_p99 = leg_p99(la->times(), Leg::kEgressIn);
  const auto out_p99 = leg_p99(la->times(), Leg::kEgressOut);
  const auto rx_p99 = leg_p99(lb->times(), Leg::kIngress);
  if (in_p99 && out_p99 && rx_p99) st_row.processing_p99_us = *in_p99 + *out_p99 + *rx_p99;
  if (bound.feasible) {
    double network = static_cast<double>(bound.total_ns) / 1e3;
    if (gen) {
      st_row.own_class_ahead = plan->planned_max_ahead;
      network += static_cast<double>(plan->planned_max_ahead * plan->wire_ns) / 1e3;
    }
    st_row.bound_network_us = network;
    if (st_row.processing_p99_us) st_row.bound_us = network + *st_row.processing_p99_us;
  }
  if (gen) {
    st_row.throughput_mbit_s = g.throughput_mbit_s;
    st_row.jitter_ms = g.jitter_ms;
    st_row.loss_pct = g.sent > 0 ? static_cast<double>(g.lost) * 100.0 / static_cast<double>(g.sent) : 0.0;
    StGenCounts gc;
    gc.sent = g.sent;
    gc.received = g.rx.received;
    gc.lost = g.lost;
    gc.duplicates = g.rx.duplicates;
    gc.reordered = g.rx.reordered;
    gc.refused = g.refused_total;
    gc.send_errors = g.send_errors;
    gc.latency_samples = g.latency_us.size();
    gc.planned_max_ahead = plan->planned_max_ahead;
    gc.spacing_us = static_cast<double>(plan->spacing_ns) / 1e3;
    gc.wire_us = static_cast<double>(plan->wire_ns) / 1e3;
    gc.tail_slack_us = static_cast<double>(plan->tail_slack_ns) / 1e3;
    if (!g.release_late_us.empty()) {
      const harness::Summary late = harness::summarize(g.release_late_us);
      gc.release_late_p99_us = late.p99;
      gc.release_late_max_us = late.max;
    }
    std::vector<double> on_time;
    const double slot_us = gc.spacing_us;
    for (std::size_t i = 0; i < g.latency_us.size(); ++i) {
      const std::uint64_t seq = g.sample_seqs[i];
      if (seq < g.release_late_us.size() && g.release_late_us[seq] < slot_us) on_time.push_back(g.latency_us[i]);
    }
    gc.on_time_received = on_time.size();
    if (!on_time.empty()) gc.on_time_latency_p99_us = harness::summarize(on_time).p99;
    gc.refused_by_reason = nlohmann::json::object();
    for (int i = 0; i < tsn::kStRefusalCount; ++i) {
      gc.refused_by_reason[tsn::to_string(static_cast<tsn::StRefusal>(i))] = g.rx.refused[i];
    }
    st_row.gen = gc;
    for (const std::string& e : {g.realtime_error[0], g.realtime_error[1]}) {
      if (!e.empty()) rt_refused = e;
    }
    st_row.realtime = r.realtime && rt_refused.empty();
  }
  st_row.probe_sent = probe.sent;
  st_row.probe_received = probe.received;
  st_row.link_stats = {{"sender", sender_stats}, {"receiver", receiver_stats}};
  TsnBenchRow be_row;
  be_row.name = base + "/BE";
  be_row.cls = "BE";
  be_row.transport = r.be;
  be_row.macsec = r.macsec;
  be_row.shaper = r.shaper;
  be_row.port_mbit_s = r.port;
  be_row.be_transport = r.be;
  be_row.offered_mbit_s = r.be == "udp" ? static_cast<double>(r.port) : 0;
  be_row.share_mbit_s = (r.shaper ? kBeShare : 1.0) * static_cast<double>(r.port);
  be_row.ideal_mbit_s = be_ideal;
  be_row.realtime = st_row.realtime;
  if (!rt_refused.empty()) st_row.realtime_refused = rt_refused;
  be_row.throughput_mbit_s = be.mbit_s;
  be_row.jitter_ms = be.jitter_ms;
  be_row.loss_pct = be.loss_pct;
  return {st_row, be_row};
}

}  // namespace

TsnBenchReport run_tsn_bench(const TsnBenchOptions& o) {
  std::string why;
  if (!net::netns_available(&why)) throw std::runtime_error("bench tsn needs network namespaces: " + why);
  if (net::run_command({o.iperf3, "--version"}) != 0) throw std::runtime_error("bench tsn needs iperf3 (" + o.iperf3 + ")");
  if (!(o.seconds >= 1 && o.seconds <= 600)) throw std::runtime_error("--seconds must be in 1..600");
  if (!(o.st_load > 0 && o.st_load <= 1)) throw std::runtime_error("--st-load must be in (0, 1]");
  if (o.st_source != "gen" && o.st_source != "iperf3") {
    throw std::runtime_error("--st-source must be gen or iperf3, not '" + o.st_source + "'");
  }
  if (std::find(o.realtime.begin(), o.realtime.end(), true) != o.realtime.end() &&
      net::run_command({"chrt", "-f", std::to_string(kStAppPriority), "true"}) != 0) {
    throw std::runtime_error("--realtime needs chrt and SCHED_FIFO (CAP_SYS_NICE): `chrt -f " +
                             std::to_string(kStAppPriority) + " true` failed");
  }
  char tmpl[] = "/tmp/layersec-bench-tsn.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp: " + net::errno_text(errno));
  const std::string work = tmpl;
  TsnBenchReport rep;
  try {
    for (std::uint64_t port : o.ports_mbit) {
      for (const std::string& be : o.be_transports) {
        for (bool shaper : o.shaper) {
          for (bool m : o.macsec) {
            for (bool rt : o.realtime) {
              // A run whose iperf3 fails (a control connection lost under the
              // BE flood) is reported as a note; the others still run.
              try {
                auto rows = run_one(o, RunSpec{port, m, shaper, be, rt}, work);
                if (!rows[0].realtime_refused.empty()) {
                  rep.notes.push_back(rows[0].name + ": SCHED_FIFO refused (" + rows[0].realtime_refused +
                                      "): ran at normal priority");
                }
                for (auto& row : rows) rep.rows.push_back(std::move(row));
              } catch (const std::runtime_error& e) {
                rep.notes.push_back("run port " + std::to_string(port) + (m ? " macsec" : " plain") +
                                    (shaper ? " shaper" : " no-shaper") + " be-" + be + (rt ? " rt" : "") +
                                    " FAILED: " + e.what());
              }
            }
          }
        }
      }
    }
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
    throw;
  }
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
  rep.notes.push_back("veth pair between two network namespaces on one host; the port speed is emulated by the shaper "
                      "(pacing to serialisation time), the veth itself is not rate-limited");
  rep.notes.push_back("no-shaper rows: the same emulated port (speed, strict priority, queues) with every gate open");
  rep.notes.push_back("ideal: iperf3 payload Mbit/s the port model carries (tsn::carried_load: whole frames per window "
                      "with the guard band, headers, preamble and gap); the share is the gate's fraction of the port");
  rep.notes.push_back("every shaper thread runs with 1 ns timer slack; /rt rows: both links' threads, the probe's and "
                      "the ST iperf3 client and server in SCHED_FIFO (BE iperf3 at normal priority)");
  rep.notes.push_back(
      "bound_us = bound_network_us + processing_p99_us. bound_network_us: tsn::latency_bound of the ST frame "
      "(worst gate wait over any arrival instant, one blocking frame of another class where gates overlap, "
      "serialisation) plus own-class frames ahead x their wire time (gen: computed from the release plan; iperf3: "
      "its bursts are unbounded, not counted). processing_p99_us: measured in the same run, the sum of the p99s of "
      "the ST frames' legs through both links (sender TAP -> shaper, model start -> send returned; receiver lower "
      "-> TAP); the kernel's UDP/TAP paths and the listener's wake-up are in neither term");
  if (o.st_source == "gen") {
    rep.notes.push_back(
        "ST from our generator (st_source gen): 1000-byte UDP datagrams released on CLOCK_TAI phase-locked to the "
        "ST window (tsn::plan_st_releases), every frame a latency sample; throughput = received payload over the "
        "run's cycles, jitter RFC 3550 as iperf3 computes it, loss by sequence number");
  } else {
    rep.notes.push_back("ST from iperf3 UDP (st_source iperf3); latency from the 200-byte probe sharing its class");
  }
  return rep;
}

}  // namespace layersec::bench
