// KeyClient: the subscriber side of the key-management service (wire.h) on a
// someip::Runtime. For every protected (service, eventgroup) it runs a Mode B
// handshake (kex/mode_b.h) as SOME/IP method calls and installs the group key
// it receives into the node's secoc::Engine key group, so that events of the
// eventgroup verify under it.
//
// Per group:
//   kIdle --start()--> kHello --HelloResponse, publisher certificate valid and
//   authorised for the service--> kAwaitingDelivery --KeyDelivery verified
//   (Mode B checks; the delivery's certificate must be the Hello's)-->
//   kAwaitingAck --ConfirmAck for this key id--> kKeyed (key installed).
//   Any refusal, timeout or failed check --> kFailed (last_error(); start()
//   again to retry). The key is installed only after the publisher
//   acknowledged the confirmation, i.e. after it activated the key.
//
// RekeyNotice (signed by the publisher's certificate key, timestamp within
// max_skew, key id above every key id seen for the group): with the revoke
// flag the current and previous keys are retired from the engine at once (a
// member that left can no longer authenticate anything to us); then a new
// handshake fetches the new key (one at a time; a notice during a handshake
// queues one more). Invalid or replayed notices are ignored and counted.
//
// Single-threaded, on the runtime's thread. Nothing secret is logged; the
// delivered key lives in a SecretBytes until it is copied into the engine.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/keymgmt/key_server.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/runtime.h"

namespace layersec::keymgmt {

struct KeyClientConfig {
  ServiceIds ids;
  std::vector<kex::KemScheme> kems = {kex::KemScheme::kX25519};  // offered in Hello, preference order
  kex::ModeBConfig mode_b;                 // kem and confirm MAC are set from the Hello response
  std::vector<GroupBinding> groups;
  Duration request_timeout = Duration::seconds(2);
};

struct KeyClientCounters {
  std::uint64_t hellos = 0;
  std::uint64_t handshakes_started = 0;
  std::uint64_t keys_installed = 0;
  std::uint64_t notices_accepted = 0;
  std::uint64_t notices_ignored = 0;  // bad signature, stale, replayed, unknown group, malformed
  std::uint64_t keys_retired = 0;     // retired on a revoking notice
  std::array<std::uint64_t, kKeyMgmtErrorCount> failures{};
  [[nodiscard]] std::uint64_t failures_for(KeyMgmtError e) const { return failures[static_cast<std::size_t>(e)]; }
};

class KeyClient {
 public:
  enum class GroupState : std::uint8_t {
    kIdle,              // start() not called
    kHello,             // Hello sent, waiting for the publisher's certificate
    kAwaitingDelivery,  // KeyRequest sent
    kAwaitingAck,       // KeyConfirm sent; the delivered key is held, not installed
    kKeyed,             // key installed in the engine
    kFailed,            // see last_error()
  };
  // Observer of the Mode B messages sent (public bytes; for diagnostics and
  // the replay tests). kind: 1 KeyRequest, 3 KeyConfirm.
  using MessageObserver = std::function<void(std::uint8_t kind, ByteSpan message)>;

  // Everything passed by reference must outlive the client. The runtime must
  // require config.ids' service (client_config()). Registers the RekeyNotice
  // handler.
  static Result<std::unique_ptr<KeyClient>, KeyMgmtError> create(KeyClientConfig config, someip::Runtime& runtime,
                                                                 secoc::Engine& engine, const kex::Identity& identity,
                                                                 const kex::TrustStore& trust, const Clock& clock);
  ~KeyClient();
  KeyClient(const KeyClient&) = delete;
  KeyClient& operator=(const KeyClient&) = delete;

  // Sends Hello, then a handshake per group. kRuntime if the key service is
  // not available (no offer seen) or the request could not be sent.
  [[nodiscard]] Status<KeyMgmtError> start();

  [[nodiscard]] GroupState state(std::uint16_t service, std::uint16_t eventgroup) const;
  [[nodiscard]] std::uint32_t key_id(std::uint16_t service, std::uint16_t eventgroup) const;
  [[nodiscard]] std::optional<KeyMgmtError> last_error(std::uint16_t service, std::uint16_t eventgroup) const;
  [[nodiscard]] const KeyClientCounters& counters() const { return counters_; }
  // SHA-256 fingerprint of this node's certificate (how the server names it).
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }
  void set_observer(MessageObserver observer) { observer_ = std::move(observer); }

 private:
  struct Group {
    GroupBinding binding;
    GroupState state = GroupState::kIdle;
    std::unique_ptr<kex::ModeBSubscriber> subscriber;
    std::uint32_t key_id = 0;        // installed
    std::uint32_t previous_id = 0;   // installed before (may still be live in the engine)
    std::uint32_t wanted_id = 0;     // highest key id announced by a valid notice
    std::uint32_t pending_id = 0;
    SecretBytes pending_key;
    std::optional<KeyMgmtError> error;
  };
  KeyClient(KeyClientConfig config, someip::Runtime& runtime, secoc::Engine& engine, const kex::Identity& identity,
            const kex::TrustStore& trust, const Clock& clock);
  Group* find(std::uint16_t service, std::uint16_t eventgroup);
  [[nodiscard]] const Group* find(std::uint16_t service, std::uint16_t eventgroup) const;
  void fail(Group& g, KeyMgmtError e);
  void on_hello_response(const someip::ResponseResult& r);
  void handshake(Group& g);
  void on_delivery(std::size_t index, const someip::ResponseResult& r);
  void on_ack(std::size_t index, const someip::ResponseResult& r);
  void on_notice(const someip::Notification& n);

  KeyClientConfig config_;
  someip::Runtime& runtime_;
  secoc::Engine& engine_;
  const kex::Identity& identity_;
  const kex::TrustStore& trust_;
  const Clock& clock_;
  std::string fingerprint_;
  std::vector<std::uint8_t> publisher_cert_der_;
  kex::Certificate publisher_cert_;
  std::vector<Group> groups_;
  KeyClientCounters counters_;
  MessageObserver observer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace layersec::keymgmt
