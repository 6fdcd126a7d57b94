// The IED side of the SV key distribution centre over UDP (`--kdc` of sv
// publish and sv subscribe): one datagram per KDC message (sv/kdc.h).
//
// connect() authenticates (AuthRequest -> AuthResponse) and collects the
// stream's first keys; later distributions (scheduled rekeys, membership
// changes) arrive on the same socket and are read with drain(). The KDC's
// times are wall-clock, read from the injected clock.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/kex/kem.h"
#include "layersec/net/frame.h"
#include "layersec/net/udp_socket.h"
#include "layersec/sv/kdc.h"

namespace layersec::sv_io {

// What an IED was provisioned with (files `sv kdc` writes).
struct KdcCredentials {
  SecretBytes identity;              // A_ID, from DIR/ID.id (hex, 0600)
  std::vector<std::uint8_t> kdc_public_key;  // ek_K, from DIR/kdc.pub
};

// Reads DIR/ID.id (a key file, keys.h) and DIR/kdc.pub (a regular file of at
// most 64 KiB: a FIFO or device there never blocks or exhausts memory).
// Throws std::runtime_error / FileError naming the path.
KdcCredentials load_kdc_credentials(const std::string& dir, const std::string& id);

struct KdcClientConfig {
  net::Ipv4Endpoint kdc;
  std::string kdc_text;  // the endpoint as the user gave it (messages)
  std::string id;
  kex::KemScheme kem = kex::KemScheme::kMlKem768;
  std::uint16_t appid = 0;  // the stream whose keys are kept
  std::string sv_id;
  std::ostream* log = nullptr;  // rejections, one line each; nullptr: std::cerr
};

class KdcClient {
 public:
  // Opens a UDP socket on an ephemeral port and authenticates: up to five
  // requests, each given 1 s for the confirmation and the first keys of the
  // stream, then 100 ms for the next key (the KDC sends a predecessor still
  // in use and the current key back to back). Stops retrying once a stop is
  // requested (stop_signal.h). `initial` receives this stream's keys. Throws
  // std::runtime_error when the client cannot be built or no key came.
  static KdcClient connect(const KdcClientConfig& config, KdcCredentials credentials, const Clock& wall,
                           std::vector<sv::kdc::GroupKeyUpdate>& initial);

  KdcClient(KdcClient&&) noexcept;
  KdcClient& operator=(KdcClient&&) noexcept;
  ~KdcClient();

  // The socket to poll for POLLIN.
  [[nodiscard]] int fd() const { return sock_->fd(); }
  // Opens every datagram waiting from the KDC; returns this stream's key
  // updates. Datagrams from elsewhere are ignored; those that fail to open
  // are counted (rejected()) and logged.
  std::vector<sv::kdc::GroupKeyUpdate> drain();
  // Distributions refused so far.
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  KdcClient() = default;
  // Handles one datagram of the authentication phase.
  void on_connect_datagram(ByteSpan msg, std::vector<sv::kdc::GroupKeyUpdate>& initial);
  std::ostream& log() const;

  KdcClientConfig config_;
  const Clock* wall_ = nullptr;
  std::unique_ptr<sv::kdc::IedClient> ied_;
  std::optional<net::UdpSocket> sock_;
  std::vector<std::uint8_t> buf_ = std::vector<std::uint8_t>(65536);
  std::uint64_t rejected_ = 0;
};

// The keys a stream starts with when they come from the KDC.
struct KdcStreamKeys {
  KdcClient client;
  sv::SecurityConfig security;  // the stream's scheme as the KDC has it
  sv::KeyMaterial current;
  std::optional<sv::kdc::GroupKeyUpdate> next;  // announced, not valid yet
};

// connect(), then sv::kdc::initial_keys() at the wall clock's now.
KdcStreamKeys fetch_stream_keys(const KdcClientConfig& config, KdcCredentials credentials, const Clock& wall);

}  // namespace layersec::sv_io
