#include "layersec/kex/group_keys.h"

#include <algorithm>
#include <limits>

#include "layersec/crypto/kdf.h"

namespace layersec::kex {

namespace {

constexpr std::string_view kLabelWrap = "layersec group-key v1 wrap";
constexpr std::size_t kHeaderSize = 14;
constexpr std::size_t kKekSize = 32;

bool valid_key_size(std::size_t n) { return n == 16 || n == 24 || n == 32; }

// KEK = HKDF-SHA256(salt = message header, ikm = pairwise key,
//                   info = label || member id), 32 bytes (AES-256 key wrap).
Status<GroupKeyError> derive_kek(ByteSpan header, const SecretBytes& pairwise,
                                 std::string_view member_id, SecretBytes& out) {
  std::vector<std::uint8_t> info(kLabelWrap.begin(), kLabelWrap.end());
  info.insert(info.end(), member_id.begin(), member_id.end());
  out = SecretBytes(kKekSize);
  if (!crypto::hkdf_sha256(header, pairwise.span(), info, out.mutable_span()).ok()) {
    return Err(GroupKeyError::kBackend);
  }
  return {};
}

std::uint32_t overlap_ms(Duration d) {
  const std::int64_t ms = d.ns() / 1'000'000;
  if (ms <= 0) return 0;
  return ms > std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                                                        : static_cast<std::uint32_t>(ms);
}

}  // namespace

std::string_view to_string(GroupKeyError e) {
  switch (e) {
    case GroupKeyError::kNotMember: return "not a member of the group";
    case GroupKeyError::kAlreadyMember: return "already a member of the group";
    case GroupKeyError::kNoPairwiseKey: return "member has no pairwise key";
    case GroupKeyError::kUnknownKeyId: return "unknown key id";
    case GroupKeyError::kKeyExpired: return "previous key no longer accepted";
    case GroupKeyError::kBadTag: return "MAC did not verify";
    case GroupKeyError::kMalformed: return "malformed group key message";
    case GroupKeyError::kWrongGroup: return "message for another group";
    case GroupKeyError::kReplay: return "key id not newer than the installed key";
    case GroupKeyError::kUnwrapFailed: return "wrapped group key failed its integrity check";
    case GroupKeyError::kExhausted: return "key id space exhausted";
    case GroupKeyError::kBadArgument: return "bad argument";
    case GroupKeyError::kBackend: return "crypto backend failure";
  }
  return "unknown group key error";
}

// ---------------------------------------------------------------- ring

Status<GroupKeyError> GroupKeyRing::install(std::uint32_t key_id, const SecretBytes& key,
                                            TimePoint now, Duration overlap) {
  if (key_id == 0) return Err(GroupKeyError::kBadArgument);
  if (current_.mac && key_id <= current_.key_id) return Err(GroupKeyError::kReplay);
  auto mac = crypto::make_mac(mac_, key.span());
  if (!mac.ok()) return Err(GroupKeyError::kBadArgument);
  if (current_.mac && overlap > Duration::zero()) {
    previous_ = std::move(current_);
    previous_.expires = now + overlap;
  } else {
    previous_ = Slot{};
  }
  current_.key_id = key_id;
  current_.mac = std::move(mac).value();
  current_.expires = TimePoint::max();
  return {};
}

Status<GroupKeyError> GroupKeyRing::compute(std::span<const ByteSpan> parts, MutableByteSpan tag) {
  if (!current_.mac) return Err(GroupKeyError::kUnknownKeyId);
  if (!current_.mac->compute(parts, tag).ok()) return Err(GroupKeyError::kBadArgument);
  return {};
}

Status<GroupKeyError> GroupKeyRing::verify(std::uint32_t key_id, std::span<const ByteSpan> parts,
                                           ByteSpan tag, TimePoint now) {
  Slot* slot = nullptr;
  if (current_.mac && current_.key_id == key_id) {
    slot = &current_;
  } else if (previous_.mac && previous_.key_id == key_id) {
    if (now > previous_.expires) {
      previous_ = Slot{};  // overlap over: drop the old key for good
      return Err(GroupKeyError::kKeyExpired);
    }
    slot = &previous_;
  }
  if (slot == nullptr) return Err(GroupKeyError::kUnknownKeyId);
  if (tag.empty() || tag.size() > slot->mac->tag_size()) return Err(GroupKeyError::kBadTag);
  if (!slot->mac->verify_bits(parts, tag, tag.size() * 8)) return Err(GroupKeyError::kBadTag);
  return {};
}

void GroupKeyRing::revoke_previous() { previous_ = Slot{}; }

std::optional<std::uint32_t> GroupKeyRing::previous_key_id() const {
  if (!previous_.mac) return std::nullopt;
  return previous_.key_id;
}

std::size_t GroupKeyRing::tag_size() const { return crypto::mac_tag_size(mac_); }

// ---------------------------------------------------------------- manager

Result<std::unique_ptr<GroupKeyManager>, GroupKeyError> GroupKeyManager::create(
    const GroupKeyConfig& config, TimePoint now) {
  if (!valid_key_size(config.key_size)) return Err(GroupKeyError::kBadArgument);
  std::unique_ptr<GroupKeyManager> m(new GroupKeyManager());
  m->config_ = config;
  m->ring_ = GroupKeyRing(config.mac);
  auto first = m->new_key(RekeyEvent::Reason::kInitial, now, Duration::zero());
  if (!first.ok()) return Err(first.error());
  return m;
}

Result<RekeyEvent, GroupKeyError> GroupKeyManager::new_key(RekeyEvent::Reason reason, TimePoint now,
                                                           Duration overlap) {
  if (key_id_ == std::numeric_limits<std::uint32_t>::max()) return Err(GroupKeyError::kExhausted);
  SecretBytes key = crypto::random_key(config_.key_size);
  const std::uint32_t id = key_id_ + 1;
  if (auto s = ring_.install(id, key, now, overlap); !s.ok()) return Err(s.error());
  key_ = std::move(key);
  key_id_ = id;
  last_overlap_ = overlap;
  RekeyEvent e;
  e.reason = reason;
  e.key_id = id;
  e.reset_freshness = true;
  e.previous_expires = overlap > Duration::zero() ? now + overlap : now;
  return e;
}

bool GroupKeyManager::is_member(std::string_view member_id) const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return m.id == member_id; });
}

Result<RekeyEvent, GroupKeyError> GroupKeyManager::join(std::string member_id,
                                                        SecretBytes pairwise_key, TimePoint now) {
  if (member_id.empty() || (!pairwise_key.empty() && !valid_key_size(pairwise_key.size()))) {
    return Err(GroupKeyError::kBadArgument);
  }
  if (is_member(member_id)) return Err(GroupKeyError::kAlreadyMember);
  // Rekey first so a failure leaves the membership unchanged. The new member
  // must not read traffic from before it joined (backward secrecy).
  auto e = new_key(RekeyEvent::Reason::kJoin, now, config_.overlap);
  if (!e.ok()) return e;
  members_.push_back(Member{std::move(member_id), std::move(pairwise_key)});
  return e;
}

Result<RekeyEvent, GroupKeyError> GroupKeyManager::leave(std::string_view member_id, TimePoint now) {
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const Member& m) { return m.id == member_id; });
  if (it == members_.end()) return Err(GroupKeyError::kNotMember);
  auto e = new_key(RekeyEvent::Reason::kLeave, now,
                   config_.overlap_on_leave ? config_.overlap : Duration::zero());
  if (!e.ok()) return e;
  members_.erase(it);  // its pairwise key is wiped with it
  return e;
}

Result<RekeyEvent, GroupKeyError> GroupKeyManager::rekey(TimePoint now) {
  return new_key(RekeyEvent::Reason::kManual, now, config_.overlap);
}

Result<std::vector<std::uint8_t>, GroupKeyError> GroupKeyManager::distribution_for(
    std::string_view member_id) const {
  auto it = std::find_if(members_.begin(), members_.end(),
                         [&](const Member& m) { return m.id == member_id; });
  if (it == members_.end()) return Err(GroupKeyError::kNotMember);
  if (it->pairwise_key.empty()) return Err(GroupKeyError::kNoPairwiseKey);
  std::vector<std::uint8_t> out(kHeaderSize + 1 + key_.size() + 8);
  ByteWriter w(out);
  w.u8(kGroupKeyVersion);
  w.u8(kGroupKeyDistributionType);
  w.u16(config_.service_id);
  w.u16(config_.eventgroup_id);
  w.u32(key_id_);
  w.u32(overlap_ms(last_overlap_));
  SecretBytes kek;
  if (auto s = derive_kek(w.written(), it->pairwise_key, it->id, kek); !s.ok()) return Err(s.error());
  w.u8(static_cast<std::uint8_t>(key_.size() + 8));
  MutableByteSpan wrapped = w.reserve(key_.size() + 8);
  if (!w.ok() || !crypto::aes_key_wrap(kek.span(), key_.span(), wrapped).ok()) {
    return Err(GroupKeyError::kBackend);
  }
  return out;
}

Result<std::vector<GroupKeyManager::Distribution>, GroupKeyError> GroupKeyManager::distribute() const {
  std::vector<Distribution> out;
  out.reserve(members_.size());
  for (const auto& m : members_) {
    if (m.pairwise_key.empty()) continue;  // served by Mode B
    auto msg = distribution_for(m.id);
    if (!msg.ok()) return Err(msg.error());
    out.push_back(Distribution{m.id, std::move(msg).value()});
  }
  return out;
}

// ---------------------------------------------------------------- member

GroupMember::GroupMember(const GroupKeyConfig& config, std::string member_id, SecretBytes pairwise_key)
    : config_(config), id_(std::move(member_id)), pairwise_key_(std::move(pairwise_key)),
      ring_(config.mac) {}

Result<GroupKeyDistributionView, GroupKeyError> parse_group_key_distribution(ByteSpan msg) {
  ByteReader r(msg);
  GroupKeyDistributionView v;
  const std::uint8_t version = r.u8();
  const std::uint8_t type = r.u8();
  v.service_id = r.u16();
  v.eventgroup_id = r.u16();
  v.key_id = r.u32();
  v.overlap_ms = r.u32();
  v.header_length = r.position();
  v.wrapped_key = r.sub_u8_prefixed().rest();
  if (!r.finish() || version != kGroupKeyVersion || type != kGroupKeyDistributionType ||
      v.wrapped_key.size() < 24 || v.wrapped_key.size() % 8 != 0) {
    return Err(GroupKeyError::kMalformed);
  }
  return v;
}

Result<RekeyEvent, GroupKeyError> GroupMember::on_distribution(ByteSpan msg, TimePoint now) {
  auto parsed = parse_group_key_distribution(msg);
  if (!parsed.ok()) return Err(parsed.error());
  const auto& v = *parsed;
  if (v.service_id != config_.service_id || v.eventgroup_id != config_.eventgroup_id) {
    return Err(GroupKeyError::kWrongGroup);
  }
  if (ring_.has_key() && v.key_id <= ring_.current_key_id()) return Err(GroupKeyError::kReplay);
  if (pairwise_key_.empty()) return Err(GroupKeyError::kNoPairwiseKey);
  if (v.wrapped_key.size() != config_.key_size + 8) return Err(GroupKeyError::kMalformed);
  SecretBytes kek;
  if (auto s = derive_kek(msg.first(v.header_length), pairwise_key_, id_, kek); !s.ok()) {
    return Err(s.error());
  }
  SecretBytes key(config_.key_size);
  if (!crypto::aes_key_unwrap(kek.span(), v.wrapped_key, key.mutable_span()).ok()) {
    return Err(GroupKeyError::kUnwrapFailed);
  }
  const Duration overlap = Duration::milliseconds(v.overlap_ms);
  if (auto s = ring_.install(v.key_id, key, now, overlap); !s.ok()) return Err(s.error());
  RekeyEvent e;
  e.reason = RekeyEvent::Reason::kDistribution;
  e.key_id = v.key_id;
  e.reset_freshness = true;
  e.previous_expires = overlap > Duration::zero() ? now + overlap : now;
  return e;
}

Result<RekeyEvent, GroupKeyError> GroupMember::install(std::uint32_t key_id, const SecretBytes& key,
                                                       TimePoint now, std::optional<Duration> overlap) {
  if (key.size() != config_.key_size) return Err(GroupKeyError::kBadArgument);
  const Duration keep = overlap.value_or(config_.overlap);
  if (auto s = ring_.install(key_id, key, now, keep); !s.ok()) return Err(s.error());
  RekeyEvent e;
  e.reason = RekeyEvent::Reason::kDistribution;
  e.key_id = key_id;
  e.reset_freshness = true;
  e.previous_expires = keep > Duration::zero() ? now + keep : now;
  return e;
}

}  // namespace layersec::kex
