// The NTRU paper's 4-step session-key negotiation (kex/negotiation.h) as two
// methods of the key-management service (wire.h):
//
//   0x0010 NegotiateHello     Hello frame               -> u32 session || PublicKey frame
//   0x0011 NegotiateExchange  u32 session || KeyExchange -> Finished frame
//
// NegotiationServer keeps one long-term KEM key pair per offered scheme (as
// the certificate key in TLS-RSA) and at most `max_sessions` half-open
// sessions (oldest dropped first; each expires after `session_timeout`); a
// session is used once. NegotiationClient runs one negotiation at a time and
// releases the key only after Finished verifies.
//
// Like the paper's protocol this negotiation is UNAUTHENTICATED: it protects
// against passive eavesdroppers only; an active attacker can sit in the
// middle. Use Mode B (KeyServer / KeyClient) where peers must be
// authenticated. Refusals are ERROR messages with KeyReturnCodes (unknown
// scheme 0x22, malformed or failed step 0x20, unknown session 0x29, busy
// 0x2C) and are counted. Single-threaded on the runtime's thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/negotiation.h"
#include "layersec/someip/runtime.h"

namespace layersec::keymgmt {

struct NegotiationServerConfig {
  ServiceIds ids;
  std::vector<kex::KemScheme> schemes = {kex::KemScheme::kMlKem768};
  std::size_t max_sessions = 32;
  Duration session_timeout = Duration::seconds(5);
};

struct NegotiationCounters {
  std::uint64_t started = 0;
  std::uint64_t completed = 0;
  std::array<std::uint64_t, kKeyMgmtErrorCount> refused{};
  [[nodiscard]] std::uint64_t refused_for(KeyMgmtError e) const { return refused[static_cast<std::size_t>(e)]; }
};

class NegotiationServer {
 public:
  // Called with every established session key (the server's copy) and the
  // requester's endpoint; what to do with it (e.g. Engine::install_key) is
  // the application's decision.
  using KeyHandler = std::function<void(const someip::Endpoint& peer, kex::KemScheme scheme, const SecretBytes& key)>;

  // Generates the key pairs and registers the two methods on `runtime`
  // (which must offer the key service). Everything by reference must outlive
  // the server.
  static Result<std::unique_ptr<NegotiationServer>, KeyMgmtError> create(NegotiationServerConfig config,
                                                                         someip::Runtime& runtime, const Clock& clock,
                                                                         KeyHandler on_key);
  ~NegotiationServer();
  NegotiationServer(const NegotiationServer&) = delete;
  NegotiationServer& operator=(const NegotiationServer&) = delete;

  [[nodiscard]] const NegotiationCounters& counters() const { return counters_; }
  [[nodiscard]] std::size_t open_sessions() const { return sessions_.size(); }

 private:
  struct Scheme {
    kex::KemScheme scheme{};
    std::unique_ptr<kex::Kem> kem;
    kex::KemKeyPair key_pair;
    std::unique_ptr<kex::KemPrivateKey> private_key;
  };
  struct Session {
    std::uint32_t id = 0;
    TimePoint expires;
    Scheme* scheme = nullptr;
    std::unique_ptr<kex::NegotiationResponder> responder;
  };
  NegotiationServer(NegotiationServerConfig config, const Clock& clock, KeyHandler on_key);
  void on_hello(const someip::Request& req, someip::Reply& reply);
  void on_exchange(const someip::Request& req, someip::Reply& reply);
  void refuse(someip::Reply& reply, KeyMgmtError e);

  NegotiationServerConfig config_;
  const Clock& clock_;
  KeyHandler on_key_;
  std::vector<std::unique_ptr<Scheme>> schemes_;
  std::vector<Session> sessions_;
  std::uint32_t next_session_ = 1;
  NegotiationCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class NegotiationClient {
 public:
  // kOk with the key, or the reason. The key is valid during the call.
  using Done = std::function<void(Result<const SecretBytes*, KeyMgmtError> result)>;

  NegotiationClient(ServiceIds ids, someip::Runtime& runtime);
  ~NegotiationClient();
  NegotiationClient(const NegotiationClient&) = delete;
  NegotiationClient& operator=(const NegotiationClient&) = delete;

  // Starts a negotiation with `scheme`; `done` runs once. kRuntime if the
  // service is not available or a negotiation is already running.
  [[nodiscard]] Status<KeyMgmtError> start(kex::KemScheme scheme, Done done);
  [[nodiscard]] bool busy() const { return initiator_ != nullptr; }
  [[nodiscard]] const NegotiationCounters& counters() const { return counters_; }

 private:
  void finish(Result<const SecretBytes*, KeyMgmtError> r);
  void on_public_key(const someip::ResponseResult& r);
  void on_finished(const someip::ResponseResult& r);

  ServiceIds ids_;
  someip::Runtime& runtime_;
  std::unique_ptr<kex::Kem> kem_;
  std::unique_ptr<kex::NegotiationInitiator> initiator_;
  Done done_;
  NegotiationCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::keymgmt
