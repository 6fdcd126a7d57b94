#include "layersec/sv_io/subscriber_loop.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "layersec/base/bytes.h"
#include "layersec/net/io.h"
#include "layersec/net/thread_timing.h"
#include "layersec/sv_io/floor_file.h"
#include "layersec/sv_io/host.h"
#include "layersec/sv_io/report_json.h"
#include "layersec/sv_io/stop_signal.h"

namespace layersec::sv_io {

bool is_sv_frame(ByteSpan f) {
  if (f.size() < 14) return false;
  std::uint16_t et = load_be16(f.data() + 12);
  if (et == 0x8100 && f.size() >= 18) et = load_be16(f.data() + 16);
  return et == 0x88BA;
}

SubscriberLoop::SubscriberLoop(sv::Subscriber& sub, std::size_t stream, KdcClient* kdc,
                               const SubscriberLoopOptions& options, std::ostream& out, std::ostream* log)
    : sub_(&sub),
      stream_(stream),
      kdc_(kdc),
      options_(options),
      out_(&out),
      log_(log ? log : &std::cerr),
      keys_(options.current_key_id) {}

void SubscriberLoop::take_key(sv::kdc::GroupKeyUpdate u) {
  if (!keys_.accept(u.key.key_id)) return;
  if (auto st = sub_->set_next_key(stream_, std::move(u.key)); !st) {
    *log_ << "kdc: key " << keys_.newest() << " refused: " << to_string(st.error()) << "\n";
  }
}

void SubscriberLoop::on_frames() {
  for (;;) {
    auto r = source_->receive(buf_);
    if (!r) {
      if (r.error() == net::IoError::kWouldBlock) break;
      if (r.error() == net::IoError::kTruncated) {
        ++truncated_;
        continue;
      }
      ++rx_errors_;
      break;
    }
    const ByteSpan frame(buf_.data(), *r);
    if (!is_sv_frame(frame)) {
      ++non_sv_;
      continue;
    }
    auto d = sub_->on_frame(frame, loop_->now());
    if (!d) ++drops_[static_cast<std::size_t>(d.error()) % drops_.size()];
  }
}

nlohmann::json SubscriberLoop::report(bool final, TimePoint now) {
  if (source_) socket_drops_ += source_->take_kernel_drops();
  const sv::SubscriptionConfig& s = sub_->config(stream_);
  nlohmann::json stream = counters_json(sub_->counters(stream_));
  stream["appid"] = s.appid;
  stream["svID"] = s.sv_id;
  stream["auth"] = sv::scheme_name(s.security);
  if (s.security.scheme != sv::Scheme::kNone) stream["key_id"] = kdc_ ? keys_.newest() : options_.key_id_shown;
  if (const auto floor = sub_->persisted_floor(stream_)) stream["floor_resume"] = *floor;
  stream["timed_out"] = sub_->timed_out(stream_);
  nlohmann::json rejections = nlohmann::json::object();
  for (std::size_t r = 0; r < drops_.size(); ++r) {
    if (drops_[r] != 0) rejections[std::string(to_string(static_cast<sv::DropReason>(r)))] = drops_[r];
  }
  nlohmann::json line{{"type", final ? "final" : "stats"},
                      {"iface", options_.iface},
                      {"elapsed_s", static_cast<double>(now.ns() - start_.ns()) / 1e9},
                      {"streams", nlohmann::json::array({stream})},
                      {"rejections", rejections},
                      {"malformed", sub_->malformed_total()},
                      {"unknown_appid", sub_->unknown_appid()},
                      {"non_sv_frames", non_sv_},
                      {"rx_errors", rx_errors_},
                      {"truncated", truncated_},
                      {"socket_drops", socket_drops_}};
  if (kdc_) line["kdc_rejected"] = kdc_->rejected();
  return line;
}

void SubscriberLoop::print(bool final, TimePoint now) {
  const nlohmann::json line = report(final, now);
  if (options_.json) {
    *out_ << line.dump() << std::endl;
    return;
  }
  const sv::SubscriptionConfig& s = sub_->config(stream_);
  const auto& c = sub_->counters(stream_);
  char text[512];
  std::snprintf(text, sizeof text,
                "%s %.1fs appid 0x%04x %s: received %llu delivered %llu gaps %llu bad_tag %llu unknown_key %llu "
                "bad_ext %llu replays %llu timeouts %llu | malformed %llu unknown_appid %llu\n",
                final ? "final" : "stats", line["elapsed_s"].get<double>(), s.appid, s.sv_id.c_str(),
                static_cast<unsigned long long>(c.received), static_cast<unsigned long long>(c.delivered),
                static_cast<unsigned long long>(c.gaps), static_cast<unsigned long long>(c.bad_tag),
                static_cast<unsigned long long>(c.unknown_key), static_cast<unsigned long long>(c.bad_extension),
                static_cast<unsigned long long>(c.replays), static_cast<unsigned long long>(c.timeouts),
                static_cast<unsigned long long>(sub_->malformed_total()),
                static_cast<unsigned long long>(sub_->unknown_appid()));
  *out_ << text << std::flush;
}

void SubscriberLoop::run(net::EventLoop& loop, FrameSource& source) {
  loop_ = &loop;
  source_ = &source;
  const sv::SubscriptionConfig& s = sub_->config(stream_);
  if (options_.json) {
    // Scripts wait for this line: the socket is open and bound.
    *out_ << nlohmann::json{{"type", "ready"}, {"iface", options_.iface}}.dump() << std::endl;
  } else {
    *out_ << "subscribing to appid 0x" << std::hex << s.appid << std::dec << " " << s.sv_id << " ("
          << options_.profile_name << ", auth " << sv::scheme_name(s.security) << ") on " << options_.iface
          << std::endl;
  }
  // The KDC socket was opened first, so its lower descriptor is served
  // first in a round, as keys should be before the frames they protect.
  if (kdc_) {
    loop.watch(kdc_->fd(), POLLIN, [this](short) {
      for (auto& u : kdc_->drain()) take_key(std::move(u));
    });
  }
  loop.watch(source_->fd(), POLLIN, [this](short) { on_frames(); });
  start_ = loop.now();
  const TimePoint end = options_.duration > Duration::zero() ? start_ + options_.duration : TimePoint::max();
  TimePoint next_report = start_ + options_.interval;
  while (!stop_requested()) {
    TimePoint now = loop.now();
    if (now >= end) break;
    // At most 1 s asleep: a stop request that lands just before the wait
    // is seen within a second.
    TimePoint wake = std::min({end, next_report, sub_->next_timeout(), now + Duration::seconds(1)});
    loop.run_once(wake);
    now = loop.now();
    (void)sub_->poll(now);
    if (now >= next_report) {
      print(false, now);
      while (next_report <= now) next_report += options_.interval;
    }
  }
  loop.unwatch(source_->fd());
  if (kdc_) loop.unwatch(kdc_->fd());
  print(true, loop.now());
  source_ = nullptr;
  loop_ = nullptr;
}

void subscribe_on_interface(SubscribeRun run, std::ostream& out) {
  sv::Subscriber sub;
  const std::uint32_t current = run.key ? run.key->key_id : 0;
  const auto id = sub.add_stream(run.subscription, std::move(run.key));
  SubscriberLoopOptions lo;
  lo.iface = run.iface;
  lo.profile_name = run.profile_name;
  lo.duration = run.duration;
  lo.interval = run.interval;
  lo.json = run.json;
  lo.current_key_id = current;
  lo.key_id_shown = run.key_id_shown;
  std::optional<FileFloorStore> floor;
  if (!run.state_path.empty()) {
    std::string detail;
    auto f = FileFloorStore::open(run.state_path, &detail);
    if (!f && f.error() == FloorFileError::kMissing && !run.first_start) {
      throw std::runtime_error("--state " + detail +
                               " (a deleted floor file fails closed; give --first-start on the very first run only)");
    }
    if (!f && f.error() == FloorFileError::kMissing) f = FileFloorStore::create(run.state_path, &detail);
    if (!f) throw std::runtime_error("--state " + detail);
    floor.emplace(std::move(f).value());
    auto st = sub.set_floor_store(&*floor, run.floor_reserve,
                                  run.first_start ? sv::FloorStart::kFirstStart : sv::FloorStart::kResume);
    if (!st) {
      throw std::runtime_error("--state " + run.state_path + ": " + std::string(sv::to_string(st.error())) +
                               (floor->last_error().empty() ? "" : ": " + floor->last_error()) +
                               (st.error() == sv::FloorError::kMissing ? " (give --first-start on the very first run only)"
                                                                       : ""));
    }
  }
  SubscriberLoop loop(sub, id, run.kdc ? &*run.kdc : nullptr, lo, out);
  if (run.announced) loop.take_key(std::move(*run.announced));
  net::PacketSocket sock = open_packet_socket(run.iface, net::kEtherTypeAll, true);
  PacketPort port(sock);
  if (!sock.set_promiscuous(true)) {
    throw std::runtime_error("cannot set " + run.iface + " promiscuous: " + net::errno_text(sock.last_errno()));
  }
  // A large receive buffer rides out scheduling gaps at 96 kHz.
  sock.set_receive_buffer(16 << 20);
  const std::string rt_failure = run.realtime ? net::enter_realtime(70) : std::string();
  if (!rt_failure.empty()) std::cerr << "warning: --realtime not in effect: " << rt_failure << "\n";
  install_stop_handlers();
  MonotonicClock clock;
  net::EventLoop events(clock);
  loop.run(events, port);
  // Clean shutdown: the exact floor, so a clean restart loses no genuine frame.
  if (floor && !sub.persist_floors()) {
    std::cerr << "warning: --state: the exact counter floor was not written (" << floor->last_error()
              << "); the reservation on disk stays in force\n";
  }
}

}  // namespace layersec::sv_io
