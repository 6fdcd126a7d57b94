// Group keys for SOME/IP eventgroups and SV groups: key ids, distribution to
// N members, rekey on join and on leave, an overlap window for the previous
// key, and a freshness-reset signal per rekey. The seed paper left group
// rekeying unimplemented (§4.1.1); this is ours, sans-I/O, time injected.
//
// CAVEAT — a group key authenticates the group, not the member. Every member
// holds the same MAC key, so ANY member can forge a PDU that every other
// member accepts as coming from the publisher. SecOC with a group key tells
// the group from outsiders, nothing more. Rekey on leave is what removes a
// member: after leave() the departed member's key is revoked at once (no
// overlap unless GroupKeyConfig::overlap_on_leave is set) and it never
// receives the new key. Where per-sender authenticity matters, use pairwise
// keys or signatures instead.
//
// Key ids: the key id of a group is its epoch counter. It starts at 1,
// increases by one on every rekey, never repeats and never wraps (rekey fails
// at UINT32_MAX). A receiver accepts a new key only with a larger key id, so
// a replayed old distribution message is rejected. Each rekey is a signal to
// reset the freshness state (SecOC freshness values / SV counters) of the
// group: RekeyEvent::reset_freshness with the new epoch.
//
// Distribution, one per member (O(N) messages and key operations):
//   - by a Mode B handshake: ModeBPublisher::deliver(handle, current_key(),
//     current_key_id(), now) for each subscriber (one KEM encapsulation each);
//     the member calls GroupKeyRing::install with the delivered key and id;
//   - or wrapped under each member's pairwise key (e.g. the key of an earlier
//     unicast Mode B session or a PSK): distribute() builds one
//     GroupKeyDistribution message per member (AES key wrap, RFC 3394, under
//     a KEK derived from the pairwise key, the member id and the message
//     header; layout in docs/pki.md), GroupMember::on_distribution opens it.
//
// Overlap: after a rekey the previous key is still accepted for RECEIVE
// until previous_expires (now + overlap), so PDUs in flight at the switch
// verify; senders use the new key at once. On leave the overlap is zero by
// default. Only the current and one previous key are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/crypto/mac.h"

namespace layersec::kex {

enum class GroupKeyError : std::uint8_t {
  kNotMember,        // leave / distribution for an unknown member
  kAlreadyMember,    // join of a member already in the group
  kNoPairwiseKey,    // wrap distribution for a member that has no pairwise key
  kUnknownKeyId,     // no key with this id in the ring
  kKeyExpired,       // the previous key's overlap window has ended
  kBadTag,           // the MAC did not verify
  kMalformed,        // distribution message does not parse
  kWrongGroup,       // distribution for another service / eventgroup
  kReplay,           // key id not newer than the installed one
  kUnwrapFailed,     // the wrapped key failed its integrity check (tampered / not for us)
  kExhausted,        // key id space used up
  kBadArgument,      // key size, empty member id
  kBackend,          // crypto failure
};
std::string_view to_string(GroupKeyError e);

struct GroupKeyConfig {
  std::uint16_t service_id = 0;     // SOME/IP service id, or the SV APPID
  std::uint16_t eventgroup_id = 0;  // SOME/IP eventgroup, or 0 for an SV group
  crypto::MacAlgorithm mac = crypto::MacAlgorithm::kCmacAes256;  // the group's SecOC MAC
  std::size_t key_size = 32;        // must suit `mac` (CMAC-AES-256: 32)
  Duration overlap = Duration::seconds(2);
  bool overlap_on_leave = false;
};

struct RekeyEvent {
  enum class Reason : std::uint8_t { kInitial, kJoin, kLeave, kManual, kDistribution };
  Reason reason = Reason::kInitial;
  std::uint32_t key_id = 0;         // == the new freshness epoch
  bool reset_freshness = true;      // always: a new key starts a new freshness state
  TimePoint previous_expires;       // end of the previous key's receive overlap
};

// Current and previous group key with their MAC contexts (built once per
// install). Used by the key server and by every member.
class GroupKeyRing {
 public:
  explicit GroupKeyRing(crypto::MacAlgorithm mac = crypto::MacAlgorithm::kCmacAes256) : mac_(mac) {}

  // Installs `key` as current; the old current becomes previous, accepted
  // until now + overlap (overlap zero: revoked at once). key_id must be
  // larger than the current one (kReplay otherwise).
  [[nodiscard]] Status<GroupKeyError> install(std::uint32_t key_id, const SecretBytes& key,
                                              TimePoint now, Duration overlap);
  // Tag with the current key (full tag; truncate for SecOC as configured).
  [[nodiscard]] Status<GroupKeyError> compute(std::span<const ByteSpan> parts, MutableByteSpan tag);
  // Verifies a tag of tag.size() bytes under the key `key_id` at `now`.
  [[nodiscard]] Status<GroupKeyError> verify(std::uint32_t key_id, std::span<const ByteSpan> parts,
                                             ByteSpan tag, TimePoint now);
  // Ends the previous key's overlap now.
  void revoke_previous();

  [[nodiscard]] bool has_key() const { return current_.mac != nullptr; }
  [[nodiscard]] std::uint32_t current_key_id() const { return current_.key_id; }
  [[nodiscard]] std::optional<std::uint32_t> previous_key_id() const;
  [[nodiscard]] std::size_t tag_size() const;

 private:
  struct Slot {
    std::uint32_t key_id = 0;
    std::unique_ptr<crypto::Mac> mac;
    TimePoint expires = TimePoint::max();
  };
  crypto::MacAlgorithm mac_;
  Slot current_;
  Slot previous_;
};

// The key server side of one group (the publisher of an eventgroup or the
// KDC of an SV group).
class GroupKeyManager {
 public:
  // Creates the group with a first random key (key id 1).
  static Result<std::unique_ptr<GroupKeyManager>, GroupKeyError> create(const GroupKeyConfig& config,
                                                                        TimePoint now);

  // Adds a member and rekeys. `pairwise_key` (16/24/32 bytes, may be empty
  // when the member is served by Mode B) wraps its distribution message.
  [[nodiscard]] Result<RekeyEvent, GroupKeyError> join(std::string member_id,
                                                       SecretBytes pairwise_key, TimePoint now);
  // Removes a member and rekeys; its key is revoked at once (see header).
  [[nodiscard]] Result<RekeyEvent, GroupKeyError> leave(std::string_view member_id, TimePoint now);
  // Periodic / manual rekey (previous key overlaps).
  [[nodiscard]] Result<RekeyEvent, GroupKeyError> rekey(TimePoint now);

  struct Distribution {
    std::string member_id;
    std::vector<std::uint8_t> message;
  };
  // One GroupKeyDistribution message per member holding a pairwise key.
  [[nodiscard]] Result<std::vector<Distribution>, GroupKeyError> distribute() const;
  [[nodiscard]] Result<std::vector<std::uint8_t>, GroupKeyError> distribution_for(
      std::string_view member_id) const;

  // The current key, for the publisher's own authenticator and for Mode B.
  [[nodiscard]] const SecretBytes& current_key() const { return key_; }
  [[nodiscard]] std::uint32_t current_key_id() const { return key_id_; }
  [[nodiscard]] std::size_t member_count() const { return members_.size(); }
  [[nodiscard]] bool is_member(std::string_view member_id) const;
  [[nodiscard]] const GroupKeyConfig& config() const { return config_; }
  // The server's own receive ring (it verifies members' PDUs too).
  [[nodiscard]] GroupKeyRing& ring() { return ring_; }

 private:
  struct Member {
    std::string id;
    SecretBytes pairwise_key;
  };
  GroupKeyManager() = default;
  Result<RekeyEvent, GroupKeyError> new_key(RekeyEvent::Reason reason, TimePoint now, Duration overlap);

  GroupKeyConfig config_;
  std::vector<Member> members_;
  SecretBytes key_;
  std::uint32_t key_id_ = 0;
  Duration last_overlap_;
  GroupKeyRing ring_;
};

// A member of one group.
class GroupMember {
 public:
  // `pairwise_key` may be empty when keys arrive by Mode B (install()).
  GroupMember(const GroupKeyConfig& config, std::string member_id, SecretBytes pairwise_key);

  // Opens a GroupKeyDistribution message and installs its key. Rejects
  // messages for other groups, tampered or foreign messages and replays of
  // older key ids, without changing state.
  [[nodiscard]] Result<RekeyEvent, GroupKeyError> on_distribution(ByteSpan msg, TimePoint now);
  // Installs a key delivered by Mode B. `overlap` for the previous key
  // defaults to the config's; pass Duration::zero() for a rekey on leave
  // (Mode B does not carry the overlap).
  [[nodiscard]] Result<RekeyEvent, GroupKeyError> install(std::uint32_t key_id, const SecretBytes& key,
                                                          TimePoint now,
                                                          std::optional<Duration> overlap = std::nullopt);
  [[nodiscard]] GroupKeyRing& ring() { return ring_; }
  [[nodiscard]] const std::string& id() const { return id_; }

 private:
  GroupKeyConfig config_;
  std::string id_;
  SecretBytes pairwise_key_;
  GroupKeyRing ring_;
};

// GroupKeyDistribution wire format (docs/pki.md).
inline constexpr std::uint8_t kGroupKeyVersion = 1;
inline constexpr std::uint8_t kGroupKeyDistributionType = 0x10;
struct GroupKeyDistributionView {
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::uint32_t key_id = 0;
  std::uint32_t overlap_ms = 0;
  ByteSpan wrapped_key;
  std::size_t header_length = 0;
};
[[nodiscard]] Result<GroupKeyDistributionView, GroupKeyError> parse_group_key_distribution(ByteSpan msg);

}  // namespace layersec::kex
