#include "layersec/sv_io/kdc_client.h"

#include <iostream>
#include <stdexcept>
#include <utility>

#include "layersec/base/file.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/io.h"
#include "layersec/sv_io/keys.h"
#include "layersec/sv_io/stop_signal.h"

namespace layersec::sv_io {

KdcCredentials load_kdc_credentials(const std::string& dir, const std::string& id) {
  KdcCredentials c;
  c.identity = load_key_file(dir + "/" + id + ".id");
  // Regular file only, bounded (an ML-KEM-1024 key is 1,568 bytes); FileError names the path.
  const std::string pub = read_regular_file(dir + "/kdc.pub", 64 * 1024);
  c.kdc_public_key.assign(pub.begin(), pub.end());
  return c;
}

KdcClient::KdcClient(KdcClient&&) noexcept = default;
KdcClient& KdcClient::operator=(KdcClient&&) noexcept = default;
KdcClient::~KdcClient() = default;

std::ostream& KdcClient::log() const { return config_.log ? *config_.log : std::cerr; }

KdcClient KdcClient::connect(const KdcClientConfig& config, KdcCredentials credentials, const Clock& wall,
                             std::vector<sv::kdc::GroupKeyUpdate>& initial) {
  KdcClient c;
  c.config_ = config;
  c.wall_ = &wall;
  auto ied = sv::kdc::IedClient::create(config.id, config.kem, std::move(credentials.identity),
                                        std::move(credentials.kdc_public_key));
  if (!ied) {
    throw std::runtime_error("IED " + config.id + ": " + std::string(to_string(ied.error())) +
                             " (identity file, kdc.pub and --kem must match the KDC's)");
  }
  c.ied_ = std::move(ied).value();
  int err = 0;
  auto s = net::UdpSocket::open(net::Ipv4Endpoint{net::Ipv4Address::any(), 0}, {}, &err);
  if (!s) throw std::runtime_error("UDP socket: " + net::errno_text(err));
  c.sock_.emplace(std::move(s).value());

  MonotonicClock mono;
  net::EventLoop loop(mono);
  bool settling = false;
  loop.watch(c.sock_->fd(), POLLIN, [&](short) {
    if (settling) {
      for (auto& u : c.drain()) initial.push_back(std::move(u));
      return;
    }
    for (;;) {
      auto r = c.sock_->receive(c.buf_);
      if (!r) break;
      if (r->src != config.kdc) continue;
      c.on_connect_datagram(ByteSpan(c.buf_.data(), r->size), initial);
    }
  });
  for (int attempt = 0; attempt < 5 && initial.empty() && !stop_requested(); ++attempt) {
    auto req = c.ied_->start(wall.now());
    if (!req) throw std::runtime_error("cannot build the KDC request");
    if (!c.sock_->send_to(config.kdc, *req)) throw std::runtime_error("cannot send to the KDC " + config.kdc_text);
    settling = false;
    loop.run_until([&] { return !initial.empty(); }, loop.now() + Duration::seconds(1));
    if (initial.empty()) continue;  // no answer within 1 s: a new request
    // The predecessor (while still in use) and the current key come back to
    // back; give the second one a moment to arrive.
    settling = true;
    loop.run_until(loop.now() + Duration::milliseconds(100));
  }
  if (initial.empty()) {
    throw std::runtime_error("no key for appid " + std::to_string(config.appid) + " " + config.sv_id +
                             " from the KDC at " + config.kdc_text +
                             " (not authenticated, or not a member of the stream)");
  }
  return c;
}

void KdcClient::on_connect_datagram(ByteSpan msg, std::vector<sv::kdc::GroupKeyUpdate>& initial) {
  auto t = sv::kdc::peek_type(msg);
  if (t && *t == sv::kdc::MessageType::kAuthResponse) {
    if (auto ok = ied_->on_auth_response(msg, wall_->now()); !ok) {
      log() << "kdc: confirmation rejected: " << to_string(ok.error()) << "\n";
    }
    return;
  }
  auto u = ied_->on_key_distribution(msg, wall_->now());
  if (!u) {
    log() << "kdc: distribution rejected: " << to_string(u.error()) << "\n";
    return;
  }
  if (u->appid == config_.appid && u->sv_id == config_.sv_id) initial.push_back(std::move(u).value());
}

std::vector<sv::kdc::GroupKeyUpdate> KdcClient::drain() {
  std::vector<sv::kdc::GroupKeyUpdate> out;
  for (;;) {
    auto r = sock_->receive(buf_);
    if (!r) break;
    if (r->src != config_.kdc) continue;
    auto u = ied_->on_key_distribution(ByteSpan(buf_.data(), r->size), wall_->now());
    if (!u) {
      ++rejected_;
      log() << "kdc: distribution rejected: " << to_string(u.error()) << "\n";
      continue;
    }
    if (u->appid == config_.appid && u->sv_id == config_.sv_id) out.push_back(std::move(u).value());
  }
  return out;
}

KdcStreamKeys fetch_stream_keys(const KdcClientConfig& config, KdcCredentials credentials, const Clock& wall) {
  std::vector<sv::kdc::GroupKeyUpdate> init;
  KdcClient client = KdcClient::connect(config, std::move(credentials), wall, init);
  auto keys = sv::kdc::initial_keys(std::move(init), wall.now());
  KdcStreamKeys out{std::move(client), keys.current->security, std::move(keys.current->key), std::move(keys.next)};
  return out;
}

}  // namespace layersec::sv_io
