// `sv kdc`: sv::kdc::Kdc (sans-I/O) behind a UDP socket on a net::EventLoop,
// one datagram per KDC message (sv/kdc.h; docs/sv.md "Key distribution
// centre").
//
// create() makes a KDC with a fresh key pair; provision() does the offline
// part: every IED of the streams registered, and the provisioning files an
// offline registration would hand out, DIR/kdc.pub (the KDC's ML-KEM
// encapsulation key, 0644) and DIR/<ID>.id (the IED's identity value A_ID,
// hex, 0600). run() then answers
// AuthRequests, sends the distributions the KDC produces (the current keys
// after a session, scheduled rekeys, rekeys after a removal) to the address
// each IED last authenticated from, and prints one JSON line per event:
//   {"type":"rejected","from","reason"}   a request that failed
//   {"type":"session","id","from","keys"} an IED authenticated
//   {"type":"rekey","reason":"scheduled","distributions"}
//   {"type":"rekey","reason":"removed ID","stream","key_id","distributions"}
//   {"type":"final","requests","sessions","distributions","rekeys","unsent","rejected":{reason: n}}
// The KDC's times are wall-clock (the injected clock); timers run on the
// loop's (monotonic) clock.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/net/event_loop.h"
#include "layersec/net/frame.h"
#include "layersec/net/udp_socket.h"
#include "layersec/sv/kdc.h"

namespace layersec::sv_io {

class KdcServer {
 public:
  // A KDC with a fresh key pair. Throws std::runtime_error "KDC: ... (lead
  // must be below lifetime)" when `config` is refused. `wall` and `out` are
  // not owned.
  static std::unique_ptr<KdcServer> create(const sv::kdc::KdcConfig& config, const Clock& wall, std::ostream& out);

  // The offline part (file comment): registers every IED of `groups`,
  // writes the provisioning files into `dir` (which must exist) and adds the
  // streams. IED ids must be non-empty, contain no '/' and not start with
  // '.'. Throws std::runtime_error naming what failed ("bad IED id ...",
  // "cannot register ...", "cannot write PATH: ...", "stream SVID: ...").
  void provision(const std::vector<sv::kdc::StreamGroupConfig>& groups, const std::string& dir);

  // Every IED registered, sorted.
  [[nodiscard]] const std::vector<std::string>& ieds() const { return ieds_; }
  [[nodiscard]] sv::kdc::Kdc& kdc() { return *kdc_; }

  // Binds the UDP socket (port 0: an ephemeral one). Throws
  // std::runtime_error "cannot listen on TEXT: errno text".
  void listen(net::Ipv4Endpoint at, const std::string& text);
  // The bound address (after listen()).
  [[nodiscard]] net::Ipv4Endpoint local_endpoint() const { return sock_->local_endpoint(); }

  // Removes `id` from every stream it belongs to (a rekey without it)
  // `after` the start of run().
  void schedule_removal(std::string id, Duration after);

  // Serves on `loop` until `duration` has passed (Duration::zero(): no
  // limit) or a stop is requested (stop_signal.h), then prints the final
  // line. Needs listen() first.
  void run(net::EventLoop& loop, Duration duration);

  // Datagrams that could not be sent (no address known for the recipient,
  // or the send failed).
  [[nodiscard]] std::uint64_t unsent() const { return unsent_; }
  // The final line's object.
  [[nodiscard]] nlohmann::json final_report() const;

 private:
  KdcServer(std::unique_ptr<sv::kdc::Kdc> kdc, const Clock& wall, std::ostream& out);
  void on_readable();
  void poll_scheduled();
  void remove(const std::string& id);
  void send_all(const std::vector<sv::kdc::Outgoing>& out);
  // Re-arms the timer for the KDC's next deadline (at most 1 s ahead).
  void arm(net::EventLoop& loop);
  void line(const nlohmann::json& j);

  std::unique_ptr<sv::kdc::Kdc> kdc_;
  const Clock* wall_;
  std::ostream* out_;
  std::vector<std::string> ieds_;
  std::optional<net::UdpSocket> sock_;
  std::map<std::string, net::Ipv4Endpoint> where_;
  std::vector<std::pair<std::string, Duration>> removals_;
  std::optional<net::EventLoop::TimerId> tick_;
  std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(65536);
  std::uint64_t unsent_ = 0;
};

}  // namespace layersec::sv_io
