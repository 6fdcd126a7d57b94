// KeyServer: the publisher side of the key-management service (wire.h) on a
// someip::Runtime. It runs the Mode B publisher (kex/mode_b.h) and one
// kex::GroupKeyManager per protected (service, eventgroup), and installs every
// group key it creates into the node's secoc::Engine key group, so the events
// the publisher sends on that eventgroup are protected with the current key.
//
//   Hello       -> the negotiated KEM / MAC and the publisher certificate
//   KeyRequest  -> Mode B checks (certificate chain, validity, service
//                  authorisation, timestamp, nonce, signature); a requester
//                  that is not a member joins, which REKEYS the group (the
//                  newcomer never holds a key of earlier traffic); the reply
//                  is the KeyDelivery of the current group key
//   KeyConfirm  -> Mode B confirmation check; the reply acknowledges the key id
//   evict()     -> the member leaves: rekey, the old key is retired from the
//                  engine at once, the member's certificate is refused from
//                  then on (kRevoked), and a signed RekeyNotice (revoke flag)
//                  goes to the key service's subscribers
//   rekey()     -> periodic rekey with overlap (signed RekeyNotice, no revoke)
// Members that see a RekeyNotice run a new Mode B handshake for the new key
// (one encapsulation per member: O(N) per rekey).
//
// Every refusal is a SOME/IP ERROR with a KeyReturnCode and is counted by
// reason; nothing changes state before the checks pass; no key material is
// logged. Single-threaded, on the runtime's thread; time comes from `clock`
// (Unix-epoch nanoseconds, as Mode B and certificate validity need).
//
// Group keys authenticate the group, not the member: any member can forge
// traffic every other member accepts. Eviction is what removes a member.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/keymgmt/wire.h"
#include "layersec/kex/group_keys.h"
#include "layersec/kex/mode_b.h"
#include "layersec/kex/pki.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/runtime.h"

namespace layersec::keymgmt {

// A protected eventgroup and the SecOC key group that carries its key.
struct GroupBinding {
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;  // non-zero
  std::uint32_t secoc_key_group = 0;  // index in the engine's key groups
};

struct KeyServerConfig {
  ServiceIds ids;
  kex::ModeBConfig mode_b;                 // KEM offered first, MAC, timeouts, limits
  std::vector<kex::KemScheme> allowed_kems;  // policy; empty: only mode_b.kem
  std::vector<GroupBinding> groups;
  kex::GroupKeyConfig group_template;      // mac, key size, overlap (service/eventgroup set per group)
};

struct KeyServerCounters {
  std::uint64_t hellos = 0;
  std::uint64_t requests_accepted = 0;
  std::uint64_t confirms_accepted = 0;
  std::uint64_t joins = 0;
  std::uint64_t evictions = 0;
  std::uint64_t rekeys = 0;
  std::uint64_t notices_sent = 0;
  std::uint64_t notices_failed = 0;  // the runtime refused to send (the rekey itself stands)
  std::array<std::uint64_t, kKeyMgmtErrorCount> refused{};
  [[nodiscard]] std::uint64_t refused_for(KeyMgmtError e) const { return refused[static_cast<std::size_t>(e)]; }
  [[nodiscard]] std::uint64_t refused_total() const;
};

class KeyServer {
 public:
  // Creates the Mode B publisher and a first key (id 1) per group, installs
  // it into `engine` and registers the method handlers on `runtime` (which
  // must offer config.ids' service: service_config()). Everything passed by
  // reference must outlive the server.
  static Result<std::unique_ptr<KeyServer>, KeyMgmtError> create(KeyServerConfig config, someip::Runtime& runtime,
                                                                 secoc::Engine& engine, const kex::Identity& identity,
                                                                 const kex::TrustStore& trust, const Clock& clock);
  ~KeyServer();
  KeyServer(const KeyServer&) = delete;
  KeyServer& operator=(const KeyServer&) = delete;

  // Removes the member whose certificate has this SHA-256 fingerprint (hex,
  // as in CertificateInfo) from the group and rekeys it (see the header).
  // kUnknownSession if it is not a member.
  [[nodiscard]] Status<KeyMgmtError> evict(std::uint16_t service, std::uint16_t eventgroup,
                                           const std::string& fingerprint);
  // Lets an evicted certificate join again (it gets a new key when it does).
  void readmit(std::uint16_t service, std::uint16_t eventgroup, const std::string& fingerprint);
  // Periodic rekey: new key with overlap, RekeyNotice without revoke.
  [[nodiscard]] Status<KeyMgmtError> rekey(std::uint16_t service, std::uint16_t eventgroup);

  [[nodiscard]] const KeyServerCounters& counters() const { return counters_; }
  [[nodiscard]] std::uint32_t current_key_id(std::uint16_t service, std::uint16_t eventgroup) const;
  [[nodiscard]] std::size_t member_count(std::uint16_t service, std::uint16_t eventgroup) const;
  // Members whose last accepted KeyConfirm was for the group's current key:
  // equal to member_count() once every member holds the current key (the
  // client installs it when the ConfirmAck for that confirmation arrives).
  [[nodiscard]] std::size_t members_on_current_key(std::uint16_t service, std::uint16_t eventgroup) const;

 private:
  struct Group {
    GroupBinding binding;
    std::unique_ptr<kex::GroupKeyManager> manager;
    std::set<std::string> revoked;  // certificate fingerprints
    std::map<std::string, std::uint32_t> confirmed;  // fingerprint -> key id of its last accepted KeyConfirm
  };
  KeyServer(KeyServerConfig config, someip::Runtime& runtime, secoc::Engine& engine, const kex::Identity& identity,
            const Clock& clock);
  Group* find(std::uint16_t service, std::uint16_t eventgroup);
  [[nodiscard]] const Group* find(std::uint16_t service, std::uint16_t eventgroup) const;
  void on_hello(const someip::Request& req, someip::Reply& reply);
  void on_key_request(const someip::Request& req, someip::Reply& reply);
  void on_key_confirm(const someip::Request& req, someip::Reply& reply);
  void refuse(someip::Reply& reply, KeyMgmtError e);
  // Installs the manager's current key into the engine; retires `retire_id`
  // (0: none) at once; sends the signed notice.
  [[nodiscard]] Status<KeyMgmtError> activate(Group& g, std::uint32_t retire_id, bool revoke);

  KeyServerConfig config_;
  someip::Runtime& runtime_;
  secoc::Engine& engine_;
  const kex::Identity& identity_;
  const Clock& clock_;
  std::unique_ptr<kex::ModeBPublisher> publisher_;
  std::vector<std::uint8_t> certificate_der_;
  std::vector<Group> groups_;
  KeyServerCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers outliving the server do nothing
};

}  // namespace layersec::keymgmt
