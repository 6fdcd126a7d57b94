#include "layersec/sv_io/bench_rows.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "layersec/crypto/kdf.h"
#include "layersec/net/thread_timing.h"
#include "layersec/sv/kdc.h"
#include "layersec/sv/publisher.h"
#include "layersec/sv/subscriber.h"
#include "layersec/sv_io/host.h"
#include "layersec/sv_io/keys.h"
#include "layersec/sv_io/latency_stats.h"
#include "layersec/sv_io/lookup.h"
#include "layersec/sv_io/pacing.h"
#include "layersec/sv_io/samples.h"

namespace layersec::sv_io {

using namespace layersec::sv;

namespace {

// A sink standing in for the NIC's TX ring: the frame is copied into the
// next slot, as an AF_PACKET TX_RING or a sendto() would copy it.
class RingSink {
 public:
  RingSink() : slots_(kSlots * kSlotBytes) {}
  ByteSpan put(ByteSpan frame) {
    std::uint8_t* slot = slots_.data() + (next_++ % kSlots) * kSlotBytes;
    std::memcpy(slot, frame.data(), std::min(frame.size(), kSlotBytes));
    return ByteSpan(slot, frame.size());
  }

 private:
  static constexpr std::size_t kSlots = 64;
  static constexpr std::size_t kSlotBytes = 2048;
  std::vector<std::uint8_t> slots_;
  std::size_t next_ = 0;
};

// Wake-up latency budget before a paced deadline.
constexpr Duration kSpin = Duration::microseconds(60);

}  // namespace
nlohmann::json bench_row(const Profile& p, const std::string& scheme, std::size_t frames, std::size_t mac_iters) {
  StreamConfig c;
  c.sv_id = "TESTMU0101";
  c.asdus_per_frame = p.asdus_per_frame;
  c.security = need_scheme(scheme);
  c.security.sender_id = c.appid;
  SubscriptionConfig sc;
  sc.sv_id = c.sv_id;
  sc.asdus_per_frame = p.asdus_per_frame;
  sc.smp_cnt_wrap = p.smp_cnt_wrap();
  sc.security = c.security;
  sc.timeout = Duration::seconds(3600);

  std::unique_ptr<Publisher> pub;
  Subscriber sub;
  std::unique_ptr<MacEngine> mac_engine;
  if (c.security.scheme == Scheme::kNone) {
    pub = std::make_unique<Publisher>(c, p, TimePoint{});
    sub.add_stream(sc);
  } else {
    SecretBytes key = crypto::random_key(key_bytes_for(c.security.scheme));
    auto e = MacEngine::create(c.security, key.span());
    if (!e) throw std::runtime_error("MAC engine: " + std::string(to_string(e.error())));
    mac_engine = std::move(e).value();
    pub = std::make_unique<Publisher>(c, p, TimePoint{}, key_material(key.clone(), 1));
    sub.add_stream(sc, key_material(std::move(key), 1));
  }

  std::vector<Sample> samples(p.asdus_per_frame * 8);
  fill_samples(samples, p.asdus_per_frame, 0, p.sample_rate_hz);
  RingSink sink;
  // Warm-up (caches, branch predictors, lazy OpenSSL init).
  for (int i = 0; i < 200; ++i) {
    auto f = pub->build_next(samples);
    if (!f) throw std::runtime_error("publisher failed in warm-up");
    auto d = sub.on_frame(sink.put(*f), TimePoint{});
    if (!d) throw std::runtime_error("subscriber dropped a warm-up frame: " + std::string(to_string(d.error())));
  }

  // 1. MAC alone over this profile's frame: mean of mac_iters calls, as
  // thread CPU time (robust against preemption) and as wall time.
  double mac_ns = 0;
  double mac_wall_ns = 0;
  std::size_t mac_input = 0;
  if (mac_engine) {
    std::vector<std::uint8_t> frame(pub->frame_template().bytes().begin(), pub->frame_template().bytes().end());
    const auto& r = pub->frame_template().regions();
    const auto l = extension_layout(c.security);
    mac_input = mac_engine->mac_input_size(r, l);
    std::array<std::uint8_t, 32> tag{};
    const auto c0 = thread_cpu_ns();
    const auto t0 = mono_ns();
    for (std::size_t i = 0; i < mac_iters; ++i) {
      frame[r.smp_cnt_offset[0] + 1] = static_cast<std::uint8_t>(i);  // defeat any caching
      auto st = mac_engine->compute_frame(frame, r, l, MutableByteSpan(tag.data(), l.tag_len));
      if (!st) throw std::runtime_error("MAC failed");
    }
    mac_wall_ns = static_cast<double>(mono_ns() - t0) / static_cast<double>(mac_iters);
    mac_ns = static_cast<double>(thread_cpu_ns() - c0) / static_cast<double>(mac_iters);
  }

  // 2. Publisher per frame (patch + MAC + hand-off) and 3. subscriber verify.
  std::vector<std::int64_t> pub_ns(frames), sub_ns(frames);
  std::size_t delivered = 0;
  for (std::size_t k = 0; k < frames; ++k) {
    samples[0].value = static_cast<std::int32_t>(k);  // new values every frame
    const auto t0 = mono_ns();
    auto f = pub->build_next(samples);
    ByteSpan sent;
    if (f) sent = sink.put(*f);
    const auto t1 = mono_ns();
    if (!f) throw std::runtime_error("publisher failed");
    auto d = sub.on_frame(sent, TimePoint{});
    const auto t2 = mono_ns();
    if (d) ++delivered;
    pub_ns[k] = t1 - t0;
    sub_ns[k] = t2 - t1;
  }
  if (delivered != frames) throw std::runtime_error("subscriber dropped frames during the benchmark");
  const auto pp = percentiles(pub_ns);
  const auto sp = percentiles(sub_ns);
  const double ia = p.interarrival_us();
  return nlohmann::json{{"profile", std::string(p.name)},
                        {"rate", std::to_string(p.sample_rate_hz) + "/" + std::to_string(p.asdus_per_frame)},
                        {"scheme", scheme},
                        {"frame_bytes", pub->frame_template().size()},
                        {"mac_input_bytes", mac_input},
                        {"mac_ns", mac_ns},
                        {"mac_wall_ns", mac_wall_ns},
                        {"mac_iterations", mac_engine ? mac_iters : 0},
                        {"interarrival_us", ia},
                        {"frames", frames},
                        {"p50_us", pp.p50},
                        {"p99_us", pp.p99},
                        {"max_us", pp.max},
                        {"mean_us", pp.mean},
                        {"margin_p99", ia / pp.p99},
                        {"within_budget_p99", pp.p99 < ia},
                        {"sub_p50_us", sp.p50},
                        {"sub_p99_us", sp.p99},
                        {"sub_max_us", sp.max},
                        {"sub_margin_p99", ia / sp.p99},
                        {"rss_kib", rss_kib()}};
}

nlohmann::json pacing_row(const Profile& p, double seconds) {
  (void)net::set_fine_timer_slack();
  StreamConfig c;
  c.sv_id = "TESTMU0101";
  c.asdus_per_frame = p.asdus_per_frame;
  c.security = need_scheme("chaskey12-selective");
  SecretBytes key = crypto::random_key(16);
  const TimePoint start = TimePoint::from_ns(mono_ns() + 1'000'000);
  Publisher pub(c, p, start, key_material(std::move(key), 1));
  std::vector<Sample> samples(p.asdus_per_frame * 8);
  fill_samples(samples, p.asdus_per_frame, 0, p.sample_rate_hz);
  RingSink sink;
  const auto frames = static_cast<std::size_t>(seconds * p.frames_per_second());
  std::vector<std::int64_t> late;
  late.reserve(frames);
  std::size_t sent = 0;
  while (pub.frame_index() < frames) {
    const TimePoint dl = pub.next_deadline();
    const auto now = wait_for_deadline(dl, kSpin);
    if (!now) throw std::runtime_error("stopped while pacing");  // bench sv installs no stop handlers
    late.push_back(now->ns() - dl.ns());
    auto f = pub.build_next(samples);
    if (!f) throw std::runtime_error("publisher failed while pacing");
    sink.put(*f);
    ++sent;
    pub.skip_to(TimePoint::from_ns(mono_ns()));
  }
  const auto lp = percentiles(late);
  return nlohmann::json{{"profile", std::string(p.name)},
                        {"scheme", "chaskey12-selective"},
                        {"interarrival_us", p.interarrival_us()},
                        {"frames_due", frames},
                        {"frames_sent", sent},
                        {"frames_skipped", pub.counters().skipped_frames},
                        {"lateness_p50_us", lp.p50},
                        {"lateness_p99_us", lp.p99},
                        {"lateness_max_us", lp.max},
                        {"method", "clock_nanosleep(TIMER_ABSTIME) to deadline-60us, then spin; timer slack 1 ns"}};
}

nlohmann::json kdc_row(kex::KemScheme kem, std::size_t iterations) {
  using namespace layersec::sv::kdc;
  KdcConfig cfg;
  cfg.kem = kem;
  auto kdc = Kdc::create(cfg);
  if (!kdc) throw std::runtime_error("KDC: " + std::string(to_string(kdc.error())));
  auto a = (*kdc)->register_ied("MU01");
  auto b = (*kdc)->register_ied("P101");
  if (!a || !b) throw std::runtime_error("KDC registration failed");
  const std::vector<std::uint8_t> ek((*kdc)->public_key().begin(), (*kdc)->public_key().end());
  auto ied = IedClient::create("MU01", kem, std::move(a).value(), ek);
  if (!ied) throw std::runtime_error("IED: " + std::string(to_string(ied.error())));
  StreamGroupConfig g;
  g.security = need_scheme("chaskey12-selective");
  g.publisher = "P101";  // MU01 joins below, so handshakes time authentication alone
  auto stream = (*kdc)->add_stream(g, TimePoint::from_ns(wall_ns()));
  if (!stream) throw std::runtime_error("KDC stream: " + std::string(to_string(stream.error())));
  std::vector<std::int64_t> req_ns, verify_ns, confirm_ns, seal_ns, open_ns, total_ns;
  std::size_t req_bytes = 0, res_bytes = 0, dist_bytes = 0;
  std::int64_t t = wall_ns();
  bool joined = false;
  for (std::size_t i = 0; i < iterations; ++i) {
    const TimePoint now = TimePoint::from_ns(t += 1'000'000);
    const auto t0 = mono_ns();
    auto req = (*ied)->start(now);
    const auto t1 = mono_ns();
    if (!req) throw std::runtime_error("IED request failed");
    auto res = (*kdc)->on_auth_request(*req, now);
    const auto t2 = mono_ns();
    if (!res) throw std::runtime_error("KDC refused a request: " + std::string(to_string(res.error())));
    auto ok = (*ied)->on_auth_response(res->response, now);
    const auto t3 = mono_ns();
    if (!ok) throw std::runtime_error("IED refused the confirmation");
    if (!joined) {  // join after the first handshake; later handshakes also deliver the key
      auto j = (*kdc)->add_member(*stream, "MU01", Role::kSubscriber, now);
      if (!j) throw std::runtime_error("KDC join failed");
      joined = true;
      continue;
    }
    for (const auto& d : res->distributions) {
      auto u = (*ied)->on_key_distribution(d.message, now);
      if (!u) throw std::runtime_error("IED refused a distribution: " + std::string(to_string(u.error())));
    }
    // One rekey sealed for the two members, opened by this IED.
    const auto t4 = mono_ns();
    auto out = (*kdc)->rekey(*stream, now);
    const auto t5 = mono_ns();
    if (!out) throw std::runtime_error("KDC rekey failed");
    std::int64_t open = 0;
    for (const auto& d : *out) {
      if (d.recipient != "MU01") continue;
      dist_bytes = d.message.size();
      const auto o0 = mono_ns();
      auto u = (*ied)->on_key_distribution(d.message, now);
      open = mono_ns() - o0;
      if (!u) throw std::runtime_error("IED refused a rekey: " + std::string(to_string(u.error())));
    }
    req_bytes = req->size();
    res_bytes = res->response.size();
    req_ns.push_back(t1 - t0);
    verify_ns.push_back(t2 - t1);
    confirm_ns.push_back(t3 - t2);
    total_ns.push_back(t3 - t0);
    seal_ns.push_back((t5 - t4) / static_cast<std::int64_t>(std::max<std::size_t>(out->size(), 1)));
    open_ns.push_back(open);
  }
  return nlohmann::json{{"kem", std::string(kex::scheme_name(kem))},
                        {"iterations", total_ns.size()},
                        {"handshake_us", stats_json(total_ns)},
                        {"ied_request_us", stats_json(req_ns)},
                        {"kdc_verify_us", stats_json(verify_ns)},
                        {"ied_confirm_us", stats_json(confirm_ns)},
                        {"distribution_seal_us_per_member", stats_json(seal_ns)},
                        {"distribution_open_us", stats_json(open_ns)},
                        {"request_bytes", req_bytes},
                        {"response_bytes", res_bytes},
                        {"distribution_bytes", dist_bytes}};
}

}  // namespace layersec::sv_io
