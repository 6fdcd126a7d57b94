#include "layersec/harness/dtls_fanout.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "layersec/harness/results.h"
#include "layersec/net/io.h"
#include "layersec/net/udp_socket.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"

namespace layersec::harness {

namespace {
// CPU time (user + system) of the whole process, nanoseconds.
std::int64_t process_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1000000000LL +
         (static_cast<std::int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000LL;
}
}  // namespace

void fill_payload(std::uint64_t seq, MutableByteSpan out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = i < 8 ? static_cast<std::uint8_t>(seq >> (56 - 8 * i))
                   : static_cast<std::uint8_t>(seq * 31 + i * 7 + 0x5A);
  }
}

// --- OpenSSL helpers ---------------------------------------------------------------

namespace {

std::string openssl_errors() {
  std::string s;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!s.empty()) s += "; ";
    s += buf;
  }
  return s.empty() ? "no OpenSSL error queued" : s;
}

[[noreturn]] void ssl_fail(const std::string& what) {
  throw std::runtime_error("DTLS fan-out: " + what + ": " + openssl_errors());
}

struct SslCtxDeleter {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
struct SslDeleter {
  void operator()(SSL* p) const { SSL_free(p); }
};
struct X509Deleter {
  void operator()(X509* p) const { X509_free(p); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using SslPtr = std::unique_ptr<SSL, SslDeleter>;

constexpr const char* kCipher = "ECDHE-ECDSA-AES128-GCM-SHA256";
constexpr long kMtu = 1400;

}  // namespace

struct DtlsContext::Impl {
  std::unique_ptr<EVP_PKEY, PkeyDeleter> key;
  std::unique_ptr<X509, X509Deleter> cert;
  std::unique_ptr<SSL_CTX, SslCtxDeleter> server;
  std::unique_ptr<SSL_CTX, SslCtxDeleter> client;
};

DtlsContext::DtlsContext() : impl_(std::make_unique<Impl>()) {
  impl_->key.reset(EVP_EC_gen("P-256"));
  if (!impl_->key) ssl_fail("P-256 key generation");
  impl_->cert.reset(X509_new());
  X509* c = impl_->cert.get();
  if (c == nullptr) ssl_fail("X509_new");
  std::uint8_t serial[8];
  if (RAND_bytes(serial, sizeof serial) != 1) ssl_fail("RAND_bytes");
  std::uint64_t sn = 0;
  for (auto b : serial) sn = (sn << 8) | b;
  X509_NAME* name = X509_get_subject_name(c);
  if (X509_set_version(c, 2) != 1 ||
      ASN1_INTEGER_set_uint64(X509_get_serialNumber(c), sn >> 1) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(c), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(c), 24 * 3600) == nullptr ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>("layersec-dtls-fanout"), -1, -1,
                                 0) != 1 ||
      X509_set_issuer_name(c, name) != 1 || X509_set_pubkey(c, impl_->key.get()) != 1 ||
      X509_sign(c, impl_->key.get(), EVP_sha256()) <= 0)
    ssl_fail("self-signed certificate");

  impl_->server.reset(SSL_CTX_new(DTLS_server_method()));
  impl_->client.reset(SSL_CTX_new(DTLS_client_method()));
  if (!impl_->server || !impl_->client) ssl_fail("SSL_CTX_new");
  for (SSL_CTX* ctx : {impl_->server.get(), impl_->client.get()}) {
    if (SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, DTLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(ctx, kCipher) != 1)
      ssl_fail("DTLS 1.2 / cipher configuration");
  }
  if (SSL_CTX_use_certificate(impl_->server.get(), c) != 1 ||
      SSL_CTX_use_PrivateKey(impl_->server.get(), impl_->key.get()) != 1 ||
      SSL_CTX_check_private_key(impl_->server.get()) != 1)
    ssl_fail("server certificate");
  if (X509_STORE_add_cert(SSL_CTX_get_cert_store(impl_->client.get()), c) != 1) ssl_fail("trust store");
  SSL_CTX_set_verify(impl_->client.get(), SSL_VERIFY_PEER, nullptr);
}

DtlsContext::~DtlsContext() = default;

// --- in-process datagram BIO ------------------------------------------------------
//
// A source/sink BIO whose writes each become one queued datagram and whose
// reads each take one datagram (truncated to the caller's buffer, like
// recv(2) on a UDP socket). DTLS needs datagram boundaries; BIO_s_mem would
// merge records.

namespace {

struct QueueEnds {
  DtlsMemorySession::Queue* rx = nullptr;
  DtlsMemorySession::Queue* tx = nullptr;
};

int qbio_write(BIO* b, const char* data, int len) {
  auto* q = static_cast<QueueEnds*>(BIO_get_data(b));
  if (q == nullptr || len < 0) return -1;
  q->tx->emplace_back(reinterpret_cast<const std::uint8_t*>(data),
                      reinterpret_cast<const std::uint8_t*>(data) + len);
  return len;
}

int qbio_read(BIO* b, char* out, int len) {
  auto* q = static_cast<QueueEnds*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  if (q == nullptr || len < 0) return -1;
  if (q->rx->empty()) {
    BIO_set_retry_read(b);
    return -1;
  }
  const auto& d = q->rx->front();
  const int n = std::min<int>(len, static_cast<int>(d.size()));
  std::memcpy(out, d.data(), static_cast<std::size_t>(n));
  q->rx->pop_front();
  return n;
}

long qbio_ctrl(BIO* b, int cmd, long /*num*/, void* /*ptr*/) {
  auto* q = static_cast<QueueEnds*>(BIO_get_data(b));
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_PENDING:
      return (q == nullptr || q->rx->empty()) ? 0 : static_cast<long>(q->rx->front().size());
    case BIO_CTRL_WPENDING:
      return 0;
    case BIO_CTRL_DGRAM_QUERY_MTU:
    case BIO_CTRL_DGRAM_GET_FALLBACK_MTU:
      return kMtu;
    case BIO_CTRL_DGRAM_GET_MTU_OVERHEAD:
      return 28;  // IPv4 + UDP headers
    default:
      return 0;
  }
}

int qbio_create(BIO* b) {
  BIO_set_data(b, nullptr);
  BIO_set_init(b, 1);
  return 1;
}

int qbio_destroy(BIO* b) {
  BIO_set_data(b, nullptr);
  return 1;
}

BIO_METHOD* queue_bio_method() {
  // Created once per process (function-local static: thread-safe init) and
  // intentionally kept for the process lifetime.
  static BIO_METHOD* m = [] {
    BIO_METHOD* meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "layersec-dgram-queue");
    if (meth == nullptr || BIO_meth_set_write(meth, qbio_write) != 1 ||
        BIO_meth_set_read(meth, qbio_read) != 1 || BIO_meth_set_ctrl(meth, qbio_ctrl) != 1 ||
        BIO_meth_set_create(meth, qbio_create) != 1 || BIO_meth_set_destroy(meth, qbio_destroy) != 1)
      ssl_fail("BIO_meth_new");
    return meth;
  }();
  return m;
}

void fix_mtu(SSL* ssl) {
  SSL_set_options(ssl, SSL_OP_NO_QUERY_MTU);
  SSL_set_mtu(ssl, kMtu - 28);
}

}  // namespace

struct DtlsMemorySession::Impl {
  QueueEnds pub_ends;
  QueueEnds sub_ends;
  SslPtr pub;
  SslPtr sub;
};

DtlsMemorySession::DtlsMemorySession(DtlsContext& ctx) : impl_(std::make_unique<Impl>()) {
  impl_->pub_ends = {&to_pub_, &to_sub_};
  impl_->sub_ends = {&to_sub_, &to_pub_};
  impl_->pub.reset(SSL_new(ctx.impl().server.get()));
  impl_->sub.reset(SSL_new(ctx.impl().client.get()));
  if (!impl_->pub || !impl_->sub) ssl_fail("SSL_new");
  for (auto [ssl, ends] : {std::pair{impl_->pub.get(), &impl_->pub_ends},
                           std::pair{impl_->sub.get(), &impl_->sub_ends}}) {
    BIO* bio = BIO_new(queue_bio_method());
    if (bio == nullptr) ssl_fail("BIO_new");
    BIO_set_data(bio, ends);
    SSL_set_bio(ssl, bio, bio);  // one BIO for both directions; the SSL owns it
    fix_mtu(ssl);
  }
  SSL_set_accept_state(impl_->pub.get());
  SSL_set_connect_state(impl_->sub.get());
}

DtlsMemorySession::~DtlsMemorySession() = default;

void DtlsMemorySession::handshake() {
  bool pub_done = false, sub_done = false;
  for (int round = 0; round < 64 && !(pub_done && sub_done); ++round) {
    for (auto [ssl, done] : {std::pair{impl_->sub.get(), &sub_done}, std::pair{impl_->pub.get(), &pub_done}}) {
      if (*done) continue;
      const int r = SSL_do_handshake(ssl);
      if (r == 1) {
        *done = true;
      } else {
        const int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) ssl_fail("memory handshake");
      }
    }
  }
  if (!(pub_done && sub_done)) throw std::runtime_error("DTLS fan-out: memory handshake did not finish");
}

bool DtlsMemorySession::publisher_write(ByteSpan payload) {
  const int r = SSL_write(impl_->pub.get(), payload.data(), static_cast<int>(payload.size()));
  return r == static_cast<int>(payload.size());
}

std::optional<std::size_t> DtlsMemorySession::subscriber_read(MutableByteSpan out) {
  const int r = SSL_read(impl_->sub.get(), out.data(), static_cast<int>(out.size()));
  if (r <= 0) {
    ERR_clear_error();
    return std::nullopt;
  }
  return static_cast<std::size_t>(r);
}

std::string DtlsMemorySession::cipher() const { return SSL_get_cipher_name(impl_->pub.get()); }
std::string DtlsMemorySession::protocol() const { return SSL_get_version(impl_->pub.get()); }

// --- names -------------------------------------------------------------------

const char* to_string(FanoutTransport t) {
  return t == FanoutTransport::kMemory ? "memory" : "loopback";
}

const char* to_string(FanoutVariant v) {
  switch (v) {
    case FanoutVariant::kUnsecuredMulticast: return "multicast-unsecured";
    case FanoutVariant::kGroupSecoc: return "group-secoc";
    case FanoutVariant::kDtlsFanout: return "dtls-fanout";
  }
  return "?";
}

// --- group-keyed SecOC: one sender engine, one receiver engine per subscriber ----------

namespace {

class SecocGroup {
 public:
  explicit SecocGroup(std::size_t n) {
    secoc::LinkOptions o;  // vendor profile, tx/rx PDU 0, sync channel 0
    auto tx = secoc::Engine::start(secoc::link_sender_config(o), tx_store_);
    if (!tx.ok()) throw std::runtime_error("DTLS fan-out: SecOC sender start failed");
    tx_ = std::move(tx).value();
    SecretBytes pdu_key(secoc::key_size(o.profile.algorithm));
    SecretBytes sync_key(secoc::key_size(secoc::AuthAlgorithm::kCmacAes128));
    if (RAND_bytes(pdu_key.data(), static_cast<int>(pdu_key.size())) != 1 ||
        RAND_bytes(sync_key.data(), static_cast<int>(sync_key.size())) != 1)
      ssl_fail("RAND_bytes (SecOC group key)");
    install(*tx_, pdu_key, sync_key);
    std::vector<std::uint8_t> sync(tx_->sync_message_size());
    auto p = tx_->poll(TimePoint{}, sync);
    if (!p.ok() || p->sync_bytes == 0) throw std::runtime_error("DTLS fan-out: no SecOC sync message");
    rx_stores_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto rx = secoc::Engine::start(secoc::link_receiver_config(o), rx_stores_[i]);
      if (!rx.ok()) throw std::runtime_error("DTLS fan-out: SecOC receiver start failed");
      rx_.push_back(std::move(rx).value());
      install(*rx_.back(), pdu_key, sync_key);
      // Freshness time is frozen at the sync's (the fan-out measures CPU).
      if (!rx_.back()->handle_sync(0, ByteSpan(sync.data(), p->sync_bytes), TimePoint{}).ok())
        throw std::runtime_error("DTLS fan-out: SecOC sync rejected");
    }
    secured_size_ = o.profile.secured_size(0);
  }
  secoc::Engine& sender() { return *tx_; }
  secoc::Engine& receiver(std::size_t i) { return *rx_[i]; }
  // Verify input at the group's frozen freshness time (that of its sync).
  [[nodiscard]] secoc::RxInput at() const {
    secoc::RxInput in;
    in.now = TimePoint{};
    return in;
  }
  [[nodiscard]] std::size_t overhead() const { return secured_size_; }

 private:
  static void install(secoc::Engine& e, const SecretBytes& pdu, const SecretBytes& sync) {
    if (!e.install_key(0, 1, pdu, TimePoint{}).ok() || !e.install_key(1, 1, sync, TimePoint{}).ok())
      throw std::runtime_error("DTLS fan-out: SecOC key installation failed");
  }
  secoc::MemoryStateStore tx_store_;
  std::deque<secoc::MemoryStateStore> rx_stores_;  // stable addresses
  std::unique_ptr<secoc::Engine> tx_;
  std::vector<std::unique_ptr<secoc::Engine>> rx_;
  std::size_t secured_size_ = 0;
};

// What a measurement loop produced.
struct Measured {
  std::vector<double> latency_us;
  std::vector<double> serial_latency_us;  // memory transport only
  std::int64_t publisher_cpu_ns = 0;  // summed over measured messages
  std::uint64_t crypto_ops = 0;       // over measured messages
  std::int64_t wall_ns = 0;
  std::int64_t process_cpu_ns = 0;
  std::uint64_t delivered = 0;
};

// --- memory transport ------------------------------------------------------------------

Measured run_memory(FanoutVariant v, std::size_t n, const FanoutOptions& o, FanoutRow& row) {
  const std::size_t total = o.warmup + o.iterations;
  std::vector<std::uint8_t> msg(o.payload_bytes), expect(o.payload_bytes);
  std::vector<std::uint8_t> wire(o.payload_bytes + 64), out(o.payload_bytes + 64);
  Measured m;
  m.latency_us.reserve(o.iterations);
  m.serial_latency_us.reserve(o.iterations);
  std::vector<std::int64_t> sent(n);

  std::unique_ptr<DtlsContext> ctx;
  std::vector<std::unique_ptr<DtlsMemorySession>> sessions;
  std::unique_ptr<SecocGroup> group;
  if (v == FanoutVariant::kDtlsFanout) {
    ctx = std::make_unique<DtlsContext>();
    const std::int64_t h0 = monotonic_ns();
    for (std::size_t i = 0; i < n; ++i) {
      sessions.push_back(std::make_unique<DtlsMemorySession>(*ctx));
      sessions.back()->handshake();
    }
    const double ms = static_cast<double>(monotonic_ns() - h0) / 1e6;
    row.handshake_ms_total = ms;
    row.handshake_ms_per_session = ms / static_cast<double>(n);
    row.cipher = sessions.front()->cipher();
    row.protocol = sessions.front()->protocol();
  } else if (v == FanoutVariant::kGroupSecoc) {
    group = std::make_unique<SecocGroup>(n);
  }

  std::int64_t u0 = 0;
  std::int64_t w0 = 0;
  for (std::size_t seq = 0; seq < total; ++seq) {
    const bool measured = seq >= o.warmup;
    if (seq == o.warmup) {
      u0 = process_cpu_ns();
      w0 = monotonic_ns();
    }
    fill_payload(seq, msg);
    expect = msg;
    // sent[i]: publisher time (ns since t0) when subscriber i's datagram was
    // available; a multicast datagram is available to all at once.
    std::fill(sent.begin(), sent.end(), 0);
    const std::int64_t t0 = monotonic_ns();
    const std::int64_t c0 = thread_cpu_ns();
    std::uint64_t ops = 0;
    std::size_t wire_len = msg.size();
    // Publish (serial on the publisher's CPU).
    if (v == FanoutVariant::kDtlsFanout) {
      for (std::size_t i = 0; i < n; ++i) {
        if (!sessions[i]->publisher_write(msg)) ssl_fail("SSL_write");
        sent[i] = monotonic_ns() - t0;
        ++ops;
      }
    } else {
      if (v == FanoutVariant::kGroupSecoc) {
        auto r = group->sender().protect(0, msg, wire);
        if (!r.ok()) throw std::runtime_error("DTLS fan-out: SecOC protect failed");
        wire_len = *r;
        ++ops;
      } else {
        std::memcpy(wire.data(), msg.data(), msg.size());
      }
      std::fill(sent.begin(), sent.end(), monotonic_ns() - t0);
    }
    const std::int64_t c1 = thread_cpu_ns();
    // Deliver to every subscriber, one after the other on this thread; each
    // one's processing is timed on its own (one clock read between two).
    std::uint64_t ok = 0;
    std::int64_t parallel_ns = 0;
    std::int64_t mark = monotonic_ns();
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t len = 0;
      bool got = true;
      if (v == FanoutVariant::kDtlsFanout) {
        auto r = sessions[i]->subscriber_read(out);
        got = r.has_value();
        if (got) len = *r;
      } else if (v == FanoutVariant::kGroupSecoc) {
        auto r = group->receiver(i).verify(0, ByteSpan(wire.data(), wire_len), out, group->at());
        got = r.ok();
        if (got) len = *r;
      } else {
        std::memcpy(out.data(), wire.data(), wire_len);
        len = wire_len;
      }
      if (got && len == expect.size() && std::memcmp(out.data(), expect.data(), len) == 0) ++ok;
      const std::int64_t done = monotonic_ns();
      // Subscriber i's own CPU starts when its datagram was sent.
      parallel_ns = std::max(parallel_ns, sent[i] + (done - mark));
      mark = done;
    }
    const std::int64_t t1 = mark;
    if (ok != n)
      throw std::runtime_error(std::string("DTLS fan-out: ") + to_string(v) + " message " + std::to_string(seq) +
                               " reached " + std::to_string(ok) + " of " + std::to_string(n) +
                               " subscribers intact");
    m.delivered += ok;
    if (measured) {
      m.latency_us.push_back(static_cast<double>(parallel_ns) / 1e3);
      m.serial_latency_us.push_back(static_cast<double>(t1 - t0) / 1e3);
      m.publisher_cpu_ns += c1 - c0;
      m.crypto_ops += ops;
    }
  }
  m.wall_ns = monotonic_ns() - w0;
  m.process_cpu_ns = process_cpu_ns() - u0;
  return m;
}

// --- loopback transport ------------------------------------------------------------------

// Closed-loop rendezvous between the publisher and N subscriber threads.
class Round {
 public:
  explicit Round(std::size_t n) : n_(n) {}
  // Publisher: arms the round for message `seq` sent at t0.
  void arm() {
    std::lock_guard<std::mutex> l(mu_);
    received_ = 0;
    last_ns_ = 0;
  }
  // Subscriber: message received intact at `t`.
  void received(std::int64_t t) {
    std::lock_guard<std::mutex> l(mu_);
    last_ns_ = std::max(last_ns_, t);
    if (++received_ == n_) cv_.notify_one();
  }
  // Publisher: waits for all N; returns the last receive time or nullopt on timeout.
  std::optional<std::int64_t> wait(Duration timeout, std::size_t* got) {
    std::unique_lock<std::mutex> l(mu_);
    const bool all = cv_.wait_for(l, std::chrono::nanoseconds(timeout.ns()), [&] { return received_ == n_; });
    *got = received_;
    if (!all) return std::nullopt;
    return last_ns_;
  }

 private:
  std::size_t n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t received_ = 0;
  std::int64_t last_ns_ = 0;
};

constexpr int kStopPollMs = 100;

void set_receive_timeout(int fd, int ms) {
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
    throw std::runtime_error("DTLS fan-out: SO_RCVTIMEO: " + net::errno_text(errno));
}

sockaddr_in to_sockaddr(net::Ipv4Endpoint e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr.s_addr = htonl(e.address.value);
  return a;
}

net::UdpSocket open_udp(net::Ipv4Endpoint local, const net::UdpSocketOptions& opt) {
  int err = 0;
  auto s = net::UdpSocket::open(local, opt, &err);
  if (!s.ok()) throw std::runtime_error("DTLS fan-out: UDP socket on " + local.to_string() + ": " + net::errno_text(err));
  return std::move(s).value();
}

void connect_udp(const net::UdpSocket& s, net::Ipv4Endpoint peer) {
  sockaddr_in a = to_sockaddr(peer);
  if (::connect(s.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("DTLS fan-out: connect: " + net::errno_text(errno));
}

// Subscriber bookkeeping shared with the publisher thread.
struct SubscriberState {
  std::atomic<std::uint64_t> intact{0};
  std::atomic<std::uint64_t> bad{0};

  // Set by the subscriber thread before it exits on failure; read by the
  // publisher for diagnostics (possibly while the thread still runs).
  void fail(std::string why) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = std::move(why);
  }
  [[nodiscard]] std::string error() const {
    std::lock_guard<std::mutex> l(mu_);
    return error_;
  }

 private:
  mutable std::mutex mu_;
  std::string error_;
};

constexpr auto kLoopback = net::Ipv4Address::from_octets(127, 0, 0, 1);

Measured run_loopback(FanoutVariant v, std::size_t n, const FanoutOptions& o, FanoutRow& row) {
  const std::size_t total = o.warmup + o.iterations;
  const std::size_t payload_bytes = o.payload_bytes;
  Round round(n);
  std::atomic<bool> stop{false};
  std::vector<SubscriberState> subs(n);
  std::vector<std::thread> threads;
  Measured m;
  m.latency_us.reserve(o.iterations);

  // Set up the publisher side and the subscriber sockets.
  std::unique_ptr<DtlsContext> ctx;
  std::vector<net::UdpSocket> pub_socks;  // DTLS: one per session
  std::vector<SslPtr> pub_ssl;
  std::unique_ptr<SecocGroup> group;
  std::optional<net::UdpSocket> mcast_tx;
  net::Ipv4Endpoint group_ep;

  auto join_all = [&] {
    stop = true;
    for (auto& t : threads)
      if (t.joinable()) t.join();
  };

  try {
    if (v == FanoutVariant::kDtlsFanout) {
      ctx = std::make_unique<DtlsContext>();
      net::UdpSocketOptions opt;
      opt.nonblocking = false;
      std::vector<net::UdpSocket> sub_socks;
      for (std::size_t i = 0; i < n; ++i) {
        pub_socks.push_back(open_udp({kLoopback, 0}, opt));
        sub_socks.push_back(open_udp({kLoopback, 0}, opt));
      }
      for (std::size_t i = 0; i < n; ++i) {
        connect_udp(pub_socks[i], sub_socks[i].local_endpoint());
        connect_udp(sub_socks[i], pub_socks[i].local_endpoint());
        set_receive_timeout(sub_socks[i].fd(), kStopPollMs);
      }
      // Subscribers: DTLS clients, each on its own thread and socket.
      SSL_CTX* client_ctx = ctx->impl().client.get();
      for (std::size_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i, sock = std::move(sub_socks[i]), client_ctx]() mutable {
          SubscriberState& st = subs[i];
          SslPtr ssl(SSL_new(client_ctx));
          BIO* bio = ssl ? BIO_new_dgram(sock.fd(), BIO_NOCLOSE) : nullptr;
          if (!ssl || bio == nullptr) {
            st.fail("SSL_new/BIO_new_dgram");
            return;
          }
          sockaddr_in peer = to_sockaddr(pub_socks[i].local_endpoint());
          BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, &peer);
          SSL_set_bio(ssl.get(), bio, bio);
          fix_mtu(ssl.get());
          for (;;) {
            const int r = SSL_connect(ssl.get());
            if (r == 1) break;
            const int e = SSL_get_error(ssl.get(), r);
            if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && !stop) {
              DTLSv1_handle_timeout(ssl.get());
              continue;
            }
            st.fail(stop ? "stopped during handshake" : "handshake: " + openssl_errors());
            return;
          }
          std::vector<std::uint8_t> buf(payload_bytes + 256), expect(payload_bytes);
          std::uint64_t seq = 0;
          while (seq < total && !stop) {
            const int r = SSL_read(ssl.get(), buf.data(), static_cast<int>(buf.size()));
            if (r <= 0) {
              const int e = SSL_get_error(ssl.get(), r);
              ERR_clear_error();
              if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
              st.fail("SSL_read failed");
              return;
            }
            const std::int64_t t = monotonic_ns();
            fill_payload(seq, expect);
            if (static_cast<std::size_t>(r) == expect.size() &&
                std::memcmp(buf.data(), expect.data(), expect.size()) == 0) {
              st.intact.fetch_add(1, std::memory_order_relaxed);
              ++seq;
              round.received(t);
            } else {
              st.bad.fetch_add(1, std::memory_order_relaxed);
            }
          }
        });
      }
      // Publisher: DTLS server per session, handshakes one after the other.
      const std::int64_t h0 = monotonic_ns();
      for (std::size_t i = 0; i < n; ++i) {
        SslPtr ssl(SSL_new(ctx->impl().server.get()));
        BIO* bio = ssl ? BIO_new_dgram(pub_socks[i].fd(), BIO_NOCLOSE) : nullptr;
        if (!ssl || bio == nullptr) ssl_fail("SSL_new/BIO_new_dgram");
        set_receive_timeout(pub_socks[i].fd(), kStopPollMs);
        sockaddr_in peer{};
        socklen_t plen = sizeof peer;
        // The subscriber socket this one is connected to.
        if (::getpeername(pub_socks[i].fd(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0)
          throw std::runtime_error("DTLS fan-out: getpeername: " + net::errno_text(errno));
        BIO_ctrl(bio, BIO_CTRL_DGRAM_SET_CONNECTED, 0, &peer);
        SSL_set_bio(ssl.get(), bio, bio);
        fix_mtu(ssl.get());
        const std::int64_t deadline = monotonic_ns() + o.receive_timeout.ns() * 5;
        for (;;) {
          const int r = SSL_accept(ssl.get());
          if (r == 1) break;
          const int e = SSL_get_error(ssl.get(), r);
          if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && monotonic_ns() < deadline) {
            DTLSv1_handle_timeout(ssl.get());
            continue;
          }
          ssl_fail("loopback handshake with subscriber " + std::to_string(i) +
                   (subs[i].error().empty() ? "" : " (" + subs[i].error() + ")"));
        }
        pub_ssl.push_back(std::move(ssl));
      }
      const double ms = static_cast<double>(monotonic_ns() - h0) / 1e6;
      row.handshake_ms_total = ms;
      row.handshake_ms_per_session = ms / static_cast<double>(n);
      row.cipher = SSL_get_cipher_name(pub_ssl.front().get());
      row.protocol = SSL_get_version(pub_ssl.front().get());
    } else {
      if (v == FanoutVariant::kGroupSecoc) group = std::make_unique<SecocGroup>(n);
      // Group 239.255.77.x (organisation-local scope); the port is the
      // ephemeral one the first subscriber got, so parallel runs never share.
      const auto gaddr = net::Ipv4Address::from_octets(239, 255, 77, static_cast<std::uint8_t>(1 + getpid() % 250));
      net::UdpSocketOptions ropt;
      ropt.nonblocking = false;
      ropt.reuse_address = true;
      std::vector<net::UdpSocket> sub_socks;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t port = i == 0 ? 0 : sub_socks.front().local_endpoint().port;
        sub_socks.push_back(open_udp({net::Ipv4Address::any(), port}, ropt));
        if (!sub_socks.back().join_group(gaddr, kLoopback).ok())
          throw std::runtime_error("DTLS fan-out: IP_ADD_MEMBERSHIP on lo: " +
                                   net::errno_text(sub_socks.back().last_errno()));
        set_receive_timeout(sub_socks.back().fd(), kStopPollMs);
      }
      group_ep = {gaddr, sub_socks.front().local_endpoint().port};
      net::UdpSocketOptions topt;
      topt.nonblocking = false;
      topt.multicast_interface = kLoopback;
      topt.multicast_loop = true;
      mcast_tx = open_udp({kLoopback, 0}, topt);
      for (std::size_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i, sock = std::move(sub_socks[i])]() mutable {
          SubscriberState& st = subs[i];
          std::vector<std::uint8_t> buf(payload_bytes + 256), out(payload_bytes + 256), expect(payload_bytes);
          std::uint64_t seq = 0;
          while (seq < total && !stop) {
            auto r = sock.receive(buf);
            if (!r.ok()) {
              if (r.error() == net::IoError::kWouldBlock || (r.error() == net::IoError::kSystem &&
                                                             (sock.last_errno() == EAGAIN || sock.last_errno() == EINTR)))
                continue;
              st.fail("receive failed");
              return;
            }
            const std::int64_t t_rx = monotonic_ns();
            ByteSpan got(buf.data(), r->size);
            if (group) {
              auto ver = group->receiver(i).verify(0, got, out, group->at());
              if (!ver.ok()) {
                st.bad.fetch_add(1, std::memory_order_relaxed);
                continue;
              }
              got = ByteSpan(out.data(), *ver);
            }
            const std::int64_t t = group ? monotonic_ns() : t_rx;
            fill_payload(seq, expect);
            if (got.size() == expect.size() && std::memcmp(got.data(), expect.data(), expect.size()) == 0) {
              st.intact.fetch_add(1, std::memory_order_relaxed);
              ++seq;
              round.received(t);
            } else {
              st.bad.fetch_add(1, std::memory_order_relaxed);
            }
          }
        });
      }
    }

    // Measurement loop (publisher thread).
    std::vector<std::uint8_t> msg(payload_bytes), wire(payload_bytes + 64);
    std::int64_t u0 = 0;
    std::int64_t w0 = 0;
    for (std::size_t seq = 0; seq < total; ++seq) {
      const bool measured = seq >= o.warmup;
      if (seq == o.warmup) {
        u0 = process_cpu_ns();
        w0 = monotonic_ns();
      }
      fill_payload(seq, msg);
      round.arm();
      const std::int64_t t0 = monotonic_ns();
      const std::int64_t c0 = thread_cpu_ns();
      std::uint64_t ops = 0;
      if (v == FanoutVariant::kDtlsFanout) {
        for (auto& s : pub_ssl) {
          if (SSL_write(s.get(), msg.data(), static_cast<int>(msg.size())) != static_cast<int>(msg.size()))
            ssl_fail("SSL_write");
          ++ops;
        }
      } else {
        ByteSpan send(msg);
        if (group) {
          auto r = group->sender().protect(0, msg, wire);
          if (!r.ok()) throw std::runtime_error("DTLS fan-out: SecOC protect failed");
          send = ByteSpan(wire.data(), *r);
          ++ops;
        }
        auto s = mcast_tx->send_to(group_ep, send);
        if (!s.ok()) throw std::runtime_error("DTLS fan-out: multicast send: " + net::errno_text(mcast_tx->last_errno()));
      }
      const std::int64_t c1 = thread_cpu_ns();
      std::size_t got = 0;
      auto last = round.wait(o.receive_timeout, &got);
      if (!last) {
        std::string detail;
        for (std::size_t i = 0; i < n; ++i)
          if (!subs[i].error().empty() || subs[i].bad > 0)
            detail += " [sub " + std::to_string(i) + ": " + subs[i].error() + " bad=" + std::to_string(subs[i].bad) +
                      "]";
        throw std::runtime_error(std::string("DTLS fan-out: ") + to_string(v) + " loopback message " +
                                 std::to_string(seq) + " reached " + std::to_string(got) + " of " +
                                 std::to_string(n) + " subscribers within the timeout" + detail);
      }
      if (measured) {
        m.latency_us.push_back(static_cast<double>(*last - t0) / 1e3);
        m.publisher_cpu_ns += c1 - c0;
        m.crypto_ops += ops;
      }
    }
    m.wall_ns = monotonic_ns() - w0;
    m.process_cpu_ns = process_cpu_ns() - u0;
  } catch (...) {
    join_all();
    throw;
  }
  join_all();
  for (auto& s : subs) {
    m.delivered += s.intact;
    if (s.bad > 0)
      throw std::runtime_error(std::string("DTLS fan-out: ") + to_string(v) +
                               ": a subscriber received a corrupted or unverifiable message");
  }
  return m;
}

}  // namespace

FanoutRow run_fanout(FanoutVariant variant, FanoutTransport transport, std::size_t n, const FanoutOptions& o) {
  if (n == 0) throw std::invalid_argument("DTLS fan-out: N must be at least 1");
  if (o.payload_bytes < 8 || o.payload_bytes > 1200)
    throw std::invalid_argument("DTLS fan-out: payload must be 8..1200 bytes");
  if (o.iterations == 0) throw std::invalid_argument("DTLS fan-out: iterations must be at least 1");
  FanoutRow row;
  row.variant = variant;
  row.transport = transport;
  row.n = n;
  row.iterations = o.iterations;
  row.payload_bytes = o.payload_bytes;
  row.expected = static_cast<std::uint64_t>(n) * (o.warmup + o.iterations);
  reset_peak_rss();
  Measured m = transport == FanoutTransport::kMemory ? run_memory(variant, n, o, row)
                                                     : run_loopback(variant, n, o, row);
  row.timing_model = transport == FanoutTransport::kMemory ? kParallelEcus : "real-threads";
  row.latency = summarize(m.latency_us);
  if (!m.serial_latency_us.empty()) row.latency_serial = summarize(m.serial_latency_us);
  row.publisher_cpu_us_per_msg = static_cast<double>(m.publisher_cpu_ns) / 1e3 / static_cast<double>(o.iterations);
  row.crypto_ops_per_msg = static_cast<double>(m.crypto_ops) / static_cast<double>(o.iterations);
  row.cpu_pct = m.wall_ns > 0 ? 100.0 * static_cast<double>(m.process_cpu_ns) / static_cast<double>(m.wall_ns) : 0;
  if (auto mem = memory_usage()) row.rss_kib = mem->peak_kib;
  row.delivered = m.delivered;
  if (row.delivered != row.expected)
    throw std::runtime_error(std::string("DTLS fan-out: ") + to_string(variant) + " delivered " +
                             std::to_string(row.delivered) + " of " + std::to_string(row.expected));
  return row;
}

std::vector<FanoutRow> run_fanout_table(const FanoutOptions& o, const std::function<void(const FanoutRow&)>& progress) {
  std::vector<FanoutRow> rows;
  for (FanoutTransport t : o.transports) {
    for (std::size_t n : o.group_sizes) {
      FanoutRow base = run_fanout(FanoutVariant::kUnsecuredMulticast, t, n, o);
      FanoutRow grp = run_fanout(FanoutVariant::kGroupSecoc, t, n, o);
      FanoutRow dtls = run_fanout(FanoutVariant::kDtlsFanout, t, n, o);
      for (FanoutRow* r : {&base, &grp, &dtls}) {
        r->baseline_p99_us = base.latency.p99;
        r->ratio_p99 = base.latency.p99 > 0 ? r->latency.p99 / base.latency.p99 : 0;
      }
      dtls.group_p99_us = grp.latency.p99;
      dtls.ratio_p99_vs_group = grp.latency.p99 > 0 ? dtls.latency.p99 / grp.latency.p99 : 0;
      for (FanoutRow* r : {&base, &grp, &dtls}) {
        if (progress) progress(*r);
        rows.push_back(std::move(*r));
      }
    }
  }
  return rows;
}

}  // namespace layersec::harness
