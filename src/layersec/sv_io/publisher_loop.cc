#include "layersec/sv_io/publisher_loop.h"

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "layersec/net/io.h"
#include "layersec/net/thread_timing.h"
#include "layersec/sv_io/host.h"
#include "layersec/sv_io/latency_stats.h"
#include "layersec/sv_io/samples.h"
#include "layersec/sv_io/stop_signal.h"

namespace layersec::sv_io {

PacedPublisher::PacedPublisher(sv::Publisher& publisher, FrameSink& sink, const Clock& wall)
    : pub_(&publisher),
      sink_(&sink),
      wall_(&wall),
      keys_(publisher.signer() ? publisher.signer()->key_id() : 0) {}

void PacedPublisher::take_key(sv::kdc::GroupKeyUpdate u) {
  if (!keys_.accept(u.key.key_id)) return;  // re-delivery of a key already in use or scheduled
  pub_->schedule_rekey(std::move(u.key),
                       monotonic_of_wall(u.valid_from, TimePoint::from_ns(mono_ns()), wall_->now()));
}

PacedRunResult PacedPublisher::run(const PacingLimits& limits, JitterRecorder& jitter) {
  const sv::Profile& p = pub_->profile();
  const std::uint64_t kdc_check_every = frames_between_key_checks(p.frames_per_second());
  std::vector<sv::Sample> samples(p.asdus_per_frame * 8);
  PacedRunResult r;
  // The frame for the next slot is patched and signed in the slack after the
  // previous send, so at its deadline only send() is left. send() copies the
  // frame into the kernel, so one template patched in place is the whole
  // ring. Nothing in the loop allocates (publisher_loop_test.cc checks it);
  // only a KDC key delivery does.
  TimePoint dl = pub_->next_deadline();
  ByteSpan frame = build(samples);
  while (!stop_requested() && r.sent + r.send_errors < limits.max_frames) {
    if (dl >= limits.end) break;
    const auto start = wait_for_deadline(dl, limits.spin);
    if (!start) break;
    auto s = sink_->send(frame);
    const TimePoint done = TimePoint::from_ns(mono_ns());
    if (s) {
      ++r.sent;
    } else {
      ++r.send_errors;
      r.last_errno = sink_->last_errno();
    }
    jitter.record(dl, *start, done);
    if (kdc_ && pub_->frame_index() % kdc_check_every == 0) {
      for (auto& u : kdc_->drain()) take_key(std::move(u));
    }
    const std::uint64_t before = pub_->counters().skipped_frames;
    pub_->skip_to(TimePoint::from_ns(mono_ns()));
    if (pub_->counters().skipped_frames != before) jitter.break_period();  // a skip is not a period sample
    if (r.sent + r.send_errors >= limits.max_frames) break;
    dl = pub_->next_deadline();
    frame = build(samples);
  }
  return r;
}

ByteSpan PacedPublisher::build(std::vector<sv::Sample>& samples) {
  const sv::Profile& p = pub_->profile();
  fill_samples(samples, p.asdus_per_frame, pub_->frame_index() * p.asdus_per_frame, p.sample_rate_hz);
  auto f = pub_->build_next(samples);
  if (!f) throw std::runtime_error("publisher failed: " + std::string(to_string(pub_->last_security_error())));
  return *f;
}

void publish_on_interface(PublishRun run, std::ostream& out) {
  const sv::Profile& p = run.profile;
  sv::StreamConfig& c = run.stream;
  // The frame counter (every scheme; AES-GMAC's IV) starts at the wall-clock
  // time in ns, so a restarted publisher never repeats one under the same
  // key (docs/sv.md, "Freshness across restarts"). Keys the KDC sends later
  // continue the same sequence (FrameSigner never goes back).
  if (run.key) run.key->initial_counter = publisher_counter_base();
  net::PacketSocket sock = open_packet_socket(run.iface, 0x88BA, false);
  PacketPort port(sock);
  c.eth.src = sock.interface_mac().bytes;
  (void)net::set_fine_timer_slack();
  const std::string rt_failure = run.realtime ? net::enter_realtime(80) : std::string();
  if (!rt_failure.empty()) std::cerr << "warning: --realtime not in effect: " << rt_failure << "\n";
  const auto throttle = net::rt_throttle();
  if (run.realtime && rt_failure.empty() && throttle && !throttle->unlimited() &&
      p.interarrival_us() <= run.spin_us) {
    // The slot is shorter than the spin: the publisher never sleeps, and the
    // kernel's real-time throttle takes the CPU away for the rest of every
    // period whenever something else is runnable there (docs/sv.md).
    std::cerr << "note: kernel.sched_rt_runtime_us is " << throttle->runtime_us << " of every "
              << throttle->period_us << " us: a SCHED_FIFO publisher that never sleeps (interarrival "
              << p.interarrival_us() << " us, spin " << run.spin_us
              << " us) is held off its CPU for the rest of each period while other work is runnable\n";
  }
  install_stop_handlers();

  const TimePoint start = TimePoint::from_ns(mono_ns() + 20'000'000);
  sv::Publisher pub = run.key ? sv::Publisher(c, p, start, std::move(*run.key)) : sv::Publisher(c, p, start);
  PacedPublisher paced(pub, port, wall_clock());
  if (run.kdc) paced.set_kdc(&*run.kdc);
  if (run.announced) paced.take_key(std::move(*run.announced));
  PacingLimits limits;
  limits.max_frames = run.count ? run.count : UINT64_MAX;
  limits.end = run.duration_s > 0 ? start + Duration::nanoseconds(static_cast<std::int64_t>(run.duration_s * 1e9))
                                  : TimePoint::max();
  limits.spin = Duration::nanoseconds(static_cast<std::int64_t>(run.spin_us * 1000));
  JitterRecorder jitter(nominal_period(p.frames_per_second()),
                        expected_frames(run.count, run.duration_s, p.frames_per_second()));
  if (!run.json) {
    out << "publishing " << p.name << " (" << p.sample_rate_hz << "/" << p.asdus_per_frame << ", "
        << p.frames_per_second() << " frames/s, " << pub.frame_template().size() << " bytes, auth "
        << sv::scheme_name(c.security);
    if (c.security.scheme != sv::Scheme::kNone) out << ", key id " << run.key_id_shown;
    out << ") on " << run.iface << std::endl;
  }
  const ThreadSchedStats sched_before = thread_sched_stats();
  const PacedRunResult r = paced.run(limits, jitter);
  const double elapsed = static_cast<double>(mono_ns() - start.ns()) / 1e9;
  const ThreadSchedStats sched_after = thread_sched_stats();
  // Frames due = every slot the run covered: sent, failed, or skipped
  // because the publisher was late past it.
  const std::uint64_t due = r.sent + r.send_errors + pub.counters().skipped_frames;
  const auto share = [due](std::uint64_t n) { return due ? static_cast<double>(n) / static_cast<double>(due) : 0.0; };
  nlohmann::json j{{"type", "publisher"},
                   {"iface", run.iface},
                   {"profile", std::string(p.name)},
                   {"rate", std::to_string(p.sample_rate_hz) + "/" + std::to_string(p.asdus_per_frame)},
                   {"auth", sv::scheme_name(c.security)},
                   {"frame_bytes", pub.frame_template().size()},
                   {"interarrival_us", p.interarrival_us()},
                   {"frames_sent", r.sent},
                   {"frames_skipped", pub.counters().skipped_frames},
                   {"send_errors", r.send_errors},
                   {"frames_due", due},
                   {"on_time_frames", jitter.on_time()},
                   {"on_time_share", share(jitter.on_time())},
                   {"returned_on_time_frames", jitter.returned_on_time()},
                   {"returned_on_time_share", share(jitter.returned_on_time())},
                   {"elapsed_s", elapsed},
                   {"load_average", loadavg()},
                   {"method", "frame built + signed after the previous send; clock_nanosleep(CLOCK_MONOTONIC, "
                              "TIMER_ABSTIME) to deadline - spin_us, spin, send() on AF_PACKET; on time = send "
                              "started (returned) less than one interarrival after the deadline, share of "
                              "frames_due = sent + send_errors + skipped; times in us"},
                   {"spin_us", run.spin_us},
                   {"realtime", run.realtime && rt_failure.empty()}};
  if (c.security.scheme != sv::Scheme::kNone) j["key_id"] = pub.signer()->key_id();
  j["rekeys"] = pub.counters().rekeys;
  if (run.kdc) j["kdc_rejected"] = run.kdc->rejected();
  if (r.send_errors != 0) j["last_send_error"] = net::errno_text(r.last_errno);
  // How long the kernel kept the sending thread from its CPU during the run
  // (run queue wait while runnable, involuntary switches): what the
  // scheduler, not the publisher, made late.
  j["sched"] = nlohmann::json{
      {"runqueue_wait_ms", sched_after.wait_ns >= 0 && sched_before.wait_ns >= 0
                               ? static_cast<double>(sched_after.wait_ns - sched_before.wait_ns) / 1e6
                               : -1.0},
      {"cpu_ms", sched_after.run_ns >= 0 && sched_before.run_ns >= 0
                     ? static_cast<double>(sched_after.run_ns - sched_before.run_ns) / 1e6
                     : -1.0},
      {"involuntary_switches", sched_after.involuntary_switches - sched_before.involuntary_switches},
      {"rt_runtime_us", throttle ? nlohmann::json(throttle->runtime_us) : nlohmann::json()},
      {"rt_period_us", throttle ? nlohmann::json(throttle->period_us) : nlohmann::json()}};
  j["jitter_us"] = nlohmann::json{{"lateness", stats_json(jitter.lateness())},
                                  {"send_done", stats_json(jitter.send_done())},
                                  {"period_dev", stats_json(jitter.period_dev())}};
  if (run.json) {
    out << j.dump() << std::endl;
    return;
  }
  const auto& jj = j["jitter_us"];
  char line[256];
  std::snprintf(line, sizeof line, "sent %llu frames in %.3f s (skipped %llu late deadlines, %llu send errors)\n",
                static_cast<unsigned long long>(r.sent), elapsed,
                static_cast<unsigned long long>(pub.counters().skipped_frames),
                static_cast<unsigned long long>(r.send_errors));
  out << line;
  std::snprintf(line, sizeof line, "on time: %llu of %llu frames due (%.4f %%) sent within one interarrival "
                "(%.2f us) of their slot\n",
                static_cast<unsigned long long>(jitter.on_time()), static_cast<unsigned long long>(due),
                100.0 * share(jitter.on_time()), p.interarrival_us());
  out << line;
  for (const char* k : {"lateness", "send_done", "period_dev"}) {
    std::snprintf(line, sizeof line, "  %-10s mean %8.2f us  p50 %8.2f us  p99 %8.2f us  p99.9 %8.2f us  max %9.2f us\n",
                  k, jj[k]["mean"].get<double>(), jj[k]["p50"].get<double>(), jj[k]["p99"].get<double>(),
                  jj[k]["p999"].get<double>(), jj[k]["max"].get<double>());
    out << line;
  }
  out << std::flush;
}

}  // namespace layersec::sv_io
