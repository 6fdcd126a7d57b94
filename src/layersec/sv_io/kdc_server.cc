#include "layersec/sv_io/kdc_server.h"

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "layersec/base/keyfile.h"
#include "layersec/net/io.h"
#include "layersec/sv_io/host.h"
#include "layersec/sv_io/stop_signal.h"

namespace layersec::sv_io {

namespace kdc = sv::kdc;

KdcServer::KdcServer(std::unique_ptr<kdc::Kdc> k, const Clock& wall, std::ostream& out)
    : kdc_(std::move(k)), wall_(&wall), out_(&out) {}

std::unique_ptr<KdcServer> KdcServer::create(const kdc::KdcConfig& config, const Clock& wall, std::ostream& out) {
  auto created = kdc::Kdc::create(config);
  if (!created) {
    throw std::runtime_error("KDC: " + std::string(to_string(created.error())) + " (lead must be below lifetime)");
  }
  return std::unique_ptr<KdcServer>(new KdcServer(std::move(created).value(), wall, out));
}

void KdcServer::provision(const std::vector<kdc::StreamGroupConfig>& groups, const std::string& dir) {
  kdc::Kdc& k = *kdc_;
  std::vector<std::string>& ids = ieds_;
  for (const auto& g : groups) {
    ids.push_back(g.publisher);
    for (const auto& sub : g.subscribers) ids.push_back(sub);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const auto& id : ids) {
    if (id.empty() || id.find('/') != std::string::npos || id[0] == '.') throw std::runtime_error("bad IED id " + id);
    auto a = k.register_ied(id);
    if (!a) throw std::runtime_error("cannot register " + id + ": " + std::string(to_string(a.error())));
    const std::string path = dir + "/" + id + ".id";
    if (auto w = write_key_file_hex(path, a->span(), true); !w) {
      throw std::runtime_error("cannot write " + path + ": " + std::string(to_string(w.error())));
    }
  }
  if (auto w = write_public_file(dir + "/kdc.pub", k.public_key(), true); !w) {
    throw std::runtime_error("cannot write " + dir + "/kdc.pub: " + std::string(to_string(w.error())));
  }
  for (const auto& g : groups) {
    auto st = k.add_stream(g, wall_->now());
    if (!st) throw std::runtime_error("stream " + g.sv_id + ": " + std::string(to_string(st.error())));
  }
}

void KdcServer::listen(net::Ipv4Endpoint at, const std::string& text) {
  int err = 0;
  auto opened = net::UdpSocket::open(at, {}, &err);
  if (!opened) throw std::runtime_error("cannot listen on " + text + ": " + net::errno_text(err));
  sock_.emplace(std::move(opened).value());
}

void KdcServer::schedule_removal(std::string id, Duration after) { removals_.emplace_back(std::move(id), after); }

void KdcServer::line(const nlohmann::json& j) { *out_ << j.dump() << std::endl; }

void KdcServer::send_all(const std::vector<kdc::Outgoing>& out) {
  for (const auto& o : out) {
    auto it = where_.find(o.recipient);
    if (it == where_.end() || !sock_->send_to(it->second, o.message)) ++unsent_;
  }
}

void KdcServer::on_readable() {
  for (;;) {
    auto r = sock_->receive(buf_);
    if (!r) break;
    const ByteSpan msg(buf_.data(), r->size);
    auto res = kdc_->on_auth_request(msg, wall_->now());
    if (!res) {
      line({{"type", "rejected"}, {"from", r->src.to_string()}, {"reason", std::string(to_string(res.error()))}});
      continue;
    }
    auto req = kdc::parse_auth_request(msg);  // parsed fine a moment ago
    if (!req) continue;
    const std::string id(reinterpret_cast<const char*>(req->id.data()), req->id.size());
    where_[id] = r->src;
    if (!sock_->send_to(r->src, res->response)) ++unsent_;
    send_all(res->distributions);
    line({{"type", "session"}, {"id", id}, {"from", r->src.to_string()}, {"keys", res->distributions.size()}});
  }
}

void KdcServer::poll_scheduled() {
  auto out = kdc_->poll(wall_->now());
  if (out.empty()) return;
  send_all(out);
  line({{"type", "rekey"}, {"reason", "scheduled"}, {"distributions", out.size()}});
}

void KdcServer::remove(const std::string& id) {
  for (std::size_t s = 0; s < kdc_->stream_count(); ++s) {
    auto rm = kdc_->remove_member(s, id, wall_->now());
    if (!rm) continue;  // not a member of this stream
    send_all(*rm);
    line({{"type", "rekey"},
          {"reason", "removed " + id},
          {"stream", s},
          {"key_id", kdc_->current_key_id(s)},
          {"distributions", rm->size()}});
  }
}

void KdcServer::arm(net::EventLoop& loop) {
  if (tick_) loop.cancel_timer(*tick_);
  TimePoint at = loop.now() + Duration::seconds(1);
  const TimePoint due = kdc_->next_deadline();
  if (due != TimePoint::max()) at = std::min(at, monotonic_of_wall(due, loop.now(), wall_->now()));
  tick_ = loop.add_timer(at, [this, &loop] {
    tick_.reset();
    poll_scheduled();
    arm(loop);
  });
}

void KdcServer::run(net::EventLoop& loop, Duration duration) {
  const TimePoint start = loop.now();
  const TimePoint end = duration > Duration::zero() ? start + duration : TimePoint::max();
  std::vector<net::EventLoop::TimerId> timers;
  for (const auto& [id, after] : removals_) {
    timers.push_back(loop.add_timer(start + after, [this, id = id] { remove(id); }));
  }
  loop.watch(sock_->fd(), POLLIN, [this, &loop](short) {
    on_readable();
    poll_scheduled();
    arm(loop);
  });
  arm(loop);
  loop.run_until([] { return stop_requested(); }, end);
  loop.unwatch(sock_->fd());
  for (const auto& t : timers) loop.cancel_timer(t);
  if (tick_) loop.cancel_timer(*tick_);
  tick_.reset();
  line(final_report());
}

nlohmann::json KdcServer::final_report() const {
  const auto& c = kdc_->counters();
  nlohmann::json rejected = nlohmann::json::object();
  for (std::size_t i = 0; i < kdc::kKdcErrorCount; ++i) {
    if (c.rejected[i] != 0) rejected[std::string(to_string(static_cast<kdc::KdcError>(i)))] = c.rejected[i];
  }
  return nlohmann::json{{"type", "final"},         {"requests", c.requests}, {"sessions", c.sessions},
                        {"distributions", c.distributions}, {"rekeys", c.rekeys},     {"unsent", unsent_},
                        {"rejected", rejected}};
}

}  // namespace layersec::sv_io
