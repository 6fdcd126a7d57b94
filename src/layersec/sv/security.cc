// SV authentication. Layout and coverage are described in security.h.
#include "layersec/sv/security.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace layersec::sv {

namespace {
namespace ext_tag {
constexpr std::uint8_t kExtension = 0xAD;
constexpr std::uint8_t kKeyId = 0x80;
constexpr std::uint8_t kTimeOfCurrentKey = 0x81;
constexpr std::uint8_t kTimeToNextKey = 0x82;
constexpr std::uint8_t kAlgorithm = 0x83;
constexpr std::uint8_t kFreshness = 0x84;
constexpr std::uint8_t kTag = 0x85;
}  // namespace ext_tag
}  // namespace

std::string_view to_string(Scheme s) {
  switch (s) {
    case Scheme::kNone: return "none";
    case Scheme::kHmacSha256: return "hmac-sha256";
    case Scheme::kAesGmac: return "aes-gmac";
    case Scheme::kBlake2s: return "blake2s";
    case Scheme::kChaskey12Full: return "chaskey12-full";
    case Scheme::kChaskey12Selective: return "chaskey12-selective";
  }
  return "unknown";
}

std::string_view to_string(SecurityError e) {
  switch (e) {
    case SecurityError::kBadConfig: return "bad-config";
    case SecurityError::kNoExtension: return "no-extension";
    case SecurityError::kBadExtension: return "bad-extension";
    case SecurityError::kWrongAlgorithm: return "wrong-algorithm";
    case SecurityError::kUnknownKey: return "unknown-key";
    case SecurityError::kBadTag: return "bad-tag";
    case SecurityError::kReplayedCounter: return "replayed-counter";
    case SecurityError::kCounterExhausted: return "counter-exhausted";
    case SecurityError::kCrypto: return "crypto";
  }
  return "unknown";
}

std::optional<SecurityConfig> parse_scheme(std::string_view n) {
  SecurityConfig c;
  auto with_bits = [&](std::string_view prefix, Scheme s) -> bool {
    if (n == prefix) {
      c.scheme = s;
      return true;
    }
    if (n.size() > prefix.size() + 1 && n.substr(0, prefix.size()) == prefix && n[prefix.size()] == '-') {
      std::size_t bits = 0;
      for (char ch : n.substr(prefix.size() + 1)) {
        if (ch < '0' || ch > '9') return false;
        bits = bits * 10 + static_cast<std::size_t>(ch - '0');
        if (bits > 4096) return false;
      }
      c.scheme = s;
      c.tag_bits = bits;
      return true;
    }
    return false;
  };
  if (n == "none") return c;
  if (with_bits("hmac-sha256", Scheme::kHmacSha256) || with_bits("aes-gmac", Scheme::kAesGmac) ||
      with_bits("blake2s", Scheme::kBlake2s) || with_bits("chaskey12-full", Scheme::kChaskey12Full) ||
      with_bits("chaskey12-selective", Scheme::kChaskey12Selective)) {
    if (tag_bytes_for(c) == 0) return std::nullopt;
    return c;
  }
  return std::nullopt;
}

std::string scheme_name(const SecurityConfig& c) {
  switch (c.scheme) {
    case Scheme::kNone: return "none";
    case Scheme::kHmacSha256:
      return tag_bytes_for(c) == 32 ? "hmac-sha256" : "hmac-sha256-" + std::to_string(8 * tag_bytes_for(c));
    case Scheme::kAesGmac: return "aes-gmac-" + std::to_string(8 * tag_bytes_for(c));
    default: break;
  }
  const std::string base(to_string(c.scheme));
  return tag_bytes_for(c) == 16 ? base : base + "-" + std::to_string(8 * tag_bytes_for(c));
}

std::size_t tag_bytes_for(const SecurityConfig& c) {
  const std::size_t bits = c.tag_bits;
  switch (c.scheme) {
    case Scheme::kNone: return 0;
    case Scheme::kHmacSha256:  // IEC 62351-6:2020: HMAC-SHA256-80/128/256
      if (bits == 0 || bits == 256) return 32;
      return (bits == 80 || bits == 128) ? bits / 8 : 0;
    case Scheme::kAesGmac:  // IEC 62351-6:2020: AES-GMAC-64/128
      if (bits == 0 || bits == 128) return 16;
      return bits == 64 ? 8 : 0;
    case Scheme::kBlake2s:
      if (bits == 0) return 16;
      return (bits % 8 == 0 && bits >= 64 && bits <= 256) ? bits / 8 : 0;
    case Scheme::kChaskey12Full:
    case Scheme::kChaskey12Selective:
      if (bits == 0) return 16;
      return (bits % 8 == 0 && bits >= 64 && bits <= 128) ? bits / 8 : 0;
  }
  return 0;
}

std::size_t key_bytes_for(Scheme s) {
  switch (s) {
    case Scheme::kNone: return 0;
    case Scheme::kHmacSha256: return 32;
    case Scheme::kAesGmac: return 16;
    case Scheme::kBlake2s: return 32;
    case Scheme::kChaskey12Full:
    case Scheme::kChaskey12Selective: return 16;
  }
  return 0;
}

namespace {
MacAlgorithmId algorithm_id(const SecurityConfig& c) {
  const std::size_t t = tag_bytes_for(c);
  switch (c.scheme) {
    case Scheme::kHmacSha256:
      return t == 10 ? MacAlgorithmId::kHmacSha256_80
                     : (t == 16 ? MacAlgorithmId::kHmacSha256_128 : MacAlgorithmId::kHmacSha256_256);
    case Scheme::kAesGmac: return t == 8 ? MacAlgorithmId::kAesGmac64 : MacAlgorithmId::kAesGmac128;
    case Scheme::kBlake2s: return MacAlgorithmId::kBlake2s;
    case Scheme::kChaskey12Full: return MacAlgorithmId::kChaskey12Full;
    default: return MacAlgorithmId::kChaskey12Selective;
  }
}
}  // namespace

ExtensionLayout extension_layout(const SecurityConfig& c) {
  ExtensionLayout l;
  if (c.scheme == Scheme::kNone || tag_bytes_for(c) == 0) return l;
  // 0xAD L, then TLVs with one-byte lengths (the whole extension stays < 128).
  std::size_t p = 2;
  l.key_id = p + 2;
  p += 2 + 4;
  l.time_of_current_key = p + 2;
  p += 2 + 4;
  l.time_to_next_key = p + 2;
  p += 2 + 2;
  l.algorithm = p + 2;
  p += 2 + 1;
  l.freshness = p + 2;
  p += 2 + kFreshnessBytes;
  l.tag_len = tag_bytes_for(c);
  l.tag = p + 2;
  p += 2 + l.tag_len;
  l.size = p;
  return l;
}

std::size_t extension_size(const SecurityConfig& c) { return extension_layout(c).size; }

Result<Extension, SecurityError> parse_extension(ByteSpan ext) {
  Extension e;
  ByteReader r(ext);
  ByteReader body;
  if (!r.ber_expect(ext_tag::kExtension, body) || !r.finish()) return Err(SecurityError::kBadExtension);
  ByteReader v;
  auto fixed = [&](std::uint8_t t, std::size_t n) { return body.ber_expect(t, v) && v.remaining() == n; };
  if (!fixed(ext_tag::kKeyId, 4)) return Err(SecurityError::kBadExtension);
  e.key_id = v.u32();
  if (!fixed(ext_tag::kTimeOfCurrentKey, 4)) return Err(SecurityError::kBadExtension);
  e.time_of_current_key = v.u32();
  if (!fixed(ext_tag::kTimeToNextKey, 2)) return Err(SecurityError::kBadExtension);
  e.time_to_next_key_min = v.u16();
  if (!fixed(ext_tag::kAlgorithm, 1)) return Err(SecurityError::kBadExtension);
  e.algorithm = v.u8();
  if (!fixed(ext_tag::kFreshness, kFreshnessBytes)) return Err(SecurityError::kBadExtension);
  e.freshness = v.rest();
  e.sender_id = v.u32();
  e.counter = v.u64();
  if (!body.ber_expect(ext_tag::kTag, v) || v.remaining() == 0 || !body.finish()) {
    return Err(SecurityError::kBadExtension);
  }
  e.tag = v.rest();
  e.tag_offset = static_cast<std::size_t>(e.tag.data() - ext.data());
  return e;
}

bool encode_extension(const Extension& e, MutableByteSpan out) {
  // One-byte BER lengths only (parse_extension accepts longer forms, but
  // every field here is short; a tag above 127 bytes is not encodable here).
  const std::size_t body = 6 + 6 + 4 + 3 + (2 + kFreshnessBytes) + 2 + e.tag.size();
  if (e.tag.size() > 127 || body > 127 || out.size() != 2 + body) return false;
  ByteWriter w(out);
  w.ber_header(ext_tag::kExtension, body);
  w.ber_header(ext_tag::kKeyId, 4);
  w.u32(e.key_id);
  w.ber_header(ext_tag::kTimeOfCurrentKey, 4);
  w.u32(e.time_of_current_key);
  w.ber_header(ext_tag::kTimeToNextKey, 2);
  w.u16(e.time_to_next_key_min);
  w.ber_header(ext_tag::kAlgorithm, 1);
  w.u8(e.algorithm);
  w.ber_header(ext_tag::kFreshness, kFreshnessBytes);
  w.u32(e.sender_id);
  w.u64(e.counter);
  w.ber_header(ext_tag::kTag, e.tag.size());
  w.bytes(e.tag);
  return w.ok() && w.size() == out.size();
}

AuthRegions regions_of(const Frame& f) {
  AuthRegions r;
  r.ethertype_offset = f.ethertype_offset;
  r.extension_offset = f.savpdu_end;
  r.asdu_count = f.no_asdu;
  for (std::size_t i = 0; i < f.no_asdu; ++i) {
    r.smp_cnt_offset[i] = f.asdus[i].smp_cnt_offset;
    r.seq_data_offset[i] = f.asdus[i].seq_data_offset;
  }
  r.seq_data_len = f.no_asdu ? f.asdus[0].seq_data.size() : 0;
  return r;
}

// ---------------------------------------------------------------------------

MacEngine::~MacEngine() { secure_zero(scratch_.data(), scratch_.size()); }

Result<std::unique_ptr<MacEngine>, SecurityError> MacEngine::create(const SecurityConfig& c, ByteSpan key) {
  const std::size_t tag = tag_bytes_for(c);
  if (c.scheme == Scheme::kNone || tag == 0) return Err(SecurityError::kBadConfig);
  std::unique_ptr<MacEngine> e(new MacEngine());
  e->scheme_ = c.scheme;
  e->tag_len_ = tag;
  switch (c.scheme) {
    case Scheme::kHmacSha256:
    case Scheme::kBlake2s: {
      if (key.size() != key_bytes_for(c.scheme)) return Err(SecurityError::kBadConfig);
      auto m = crypto::make_mac(c.scheme == Scheme::kHmacSha256 ? crypto::MacAlgorithm::kHmacSha256
                                                                : crypto::MacAlgorithm::kBlake2s256,
                                key);
      if (!m) return Err(m.error() == crypto::CryptoError::kBadKeyLength ? SecurityError::kBadConfig
                                                                         : SecurityError::kCrypto);
      e->mac_ = std::move(m).value();
      break;
    }
    case Scheme::kAesGmac: {
      if (key.size() != 16 && key.size() != 32) return Err(SecurityError::kBadConfig);
      auto g = crypto::AesGmac::create(key);
      if (!g) return Err(SecurityError::kCrypto);
      e->gmac_.emplace(std::move(g).value());
      break;
    }
    case Scheme::kChaskey12Full:
    case Scheme::kChaskey12Selective: {
      auto ch = crypto::Chaskey::create(key, 12);
      if (!ch) return Err(SecurityError::kBadConfig);
      e->chaskey_ = std::move(ch).value();
      break;
    }
    case Scheme::kNone: break;
  }
  return e;
}

Status<SecurityError> MacEngine::compute(ByteSpan message, ByteSpan iv, MutableByteSpan tag) {
  if (tag.size() != tag_len_) return Err(SecurityError::kBadConfig);
  switch (scheme_) {
    case Scheme::kHmacSha256:
    case Scheme::kBlake2s: {
      const ByteSpan parts[] = {message};
      auto st = mac_->compute_bits(parts, 8 * tag_len_, tag);
      if (!st) return Err(SecurityError::kCrypto);
      return {};
    }
    case Scheme::kAesGmac: {
      if (iv.size() != kFreshnessBytes) return Err(SecurityError::kBadExtension);
      auto st = gmac_->compute(iv, message, tag);
      if (!st) return Err(SecurityError::kCrypto);
      return {};
    }
    case Scheme::kChaskey12Full:
    case Scheme::kChaskey12Selective:
      chaskey_->mac(message, tag);
      return {};
    case Scheme::kNone: break;
  }
  return Err(SecurityError::kBadConfig);
}

std::size_t MacEngine::mac_input_size(const AuthRegions& r, const ExtensionLayout& l) const {
  if (scheme_ == Scheme::kChaskey12Selective) return kFreshnessBytes + r.asdu_count * (2 + r.seq_data_len);
  return r.extension_offset + l.tag - r.ethertype_offset;
}

Status<SecurityError> MacEngine::compute_frame(ByteSpan frame, const AuthRegions& r, const ExtensionLayout& l,
                                               MutableByteSpan tag) {
  if (l.freshness == 0 || r.extension_offset + l.freshness + kFreshnessBytes > frame.size()) {
    return Err(SecurityError::kBadExtension);
  }
  const ByteSpan freshness = frame.subspan(r.extension_offset + l.freshness, kFreshnessBytes);
  if (scheme_ != Scheme::kChaskey12Selective) {
    const std::size_t end = r.extension_offset + l.tag;
    if (end > frame.size() || end < r.ethertype_offset) return Err(SecurityError::kBadExtension);
    return compute(frame.subspan(r.ethertype_offset, end - r.ethertype_offset), freshness, tag);
  }
  // Paper §III.B: smpCnt ‖ seqData of each ASDU, gathered in frame order,
  // after senderId ‖ frameCounter (ours, see security.h).
  const std::size_t per = 2 + r.seq_data_len;
  if (r.asdu_count > kMaxAsdus || kFreshnessBytes + per * r.asdu_count > scratch_.size()) {
    return Err(SecurityError::kBadExtension);
  }
  std::memcpy(scratch_.data(), freshness.data(), kFreshnessBytes);
  std::uint8_t* p = scratch_.data() + kFreshnessBytes;
  for (std::size_t i = 0; i < r.asdu_count; ++i) {
    if (r.smp_cnt_offset[i] + 2 > frame.size() || r.seq_data_offset[i] + r.seq_data_len > frame.size()) {
      return Err(SecurityError::kBadExtension);
    }
    std::memcpy(p, frame.data() + r.smp_cnt_offset[i], 2);
    std::memcpy(p + 2, frame.data() + r.seq_data_offset[i], r.seq_data_len);
    p += per;
  }
  return compute(ByteSpan(scratch_.data(), kFreshnessBytes + per * r.asdu_count), freshness, tag);
}

// ---------------------------------------------------------------------------

Result<FrameSigner, SecurityError> FrameSigner::create(const SecurityConfig& c, KeyMaterial key) {
  FrameSigner s;
  s.config_ = c;
  s.layout_ = extension_layout(c);
  if (s.layout_.size == 0) return Err(SecurityError::kBadConfig);
  auto st = s.rekey(std::move(key));
  if (!st) return Err(st.error());
  return s;
}

Status<SecurityError> FrameSigner::rekey(KeyMaterial key) {
  auto e = MacEngine::create(config_, key.key.span());
  if (!e) return Err(e.error());
  engine_ = std::move(e).value();
  key_id_ = key.key_id;
  time_of_current_key_ = key.time_of_current_key;
  time_to_next_key_ = key.time_to_next_key_min;
  // The frame counter continues across keys and never goes back: a key's
  // initial_counter can only move it forward.
  counter_ = std::max(counter_, key.initial_counter);
  fields_dirty_ = true;
  return {};
}

bool FrameSigner::write_extension(MutableByteSpan out) const {
  if (out.size() != layout_.size) return false;
  const std::array<std::uint8_t, 32> zero_tag{};
  Extension e;
  e.key_id = key_id_;
  e.time_of_current_key = time_of_current_key_;
  e.time_to_next_key_min = time_to_next_key_;
  e.algorithm = static_cast<std::uint8_t>(algorithm_id(config_));
  e.sender_id = config_.sender_id;
  e.counter = counter_;
  e.tag = ByteSpan(zero_tag.data(), layout_.tag_len);
  return encode_extension(e, out);
}

Status<SecurityError> FrameSigner::sign(MutableByteSpan frame, const AuthRegions& r) {
  if (r.extension_offset + layout_.size > frame.size()) return Err(SecurityError::kBadExtension);
  std::uint8_t* ext = frame.data() + r.extension_offset;
  if (fields_dirty_) {
    store_be32(ext + layout_.key_id, key_id_);
    store_be32(ext + layout_.time_of_current_key, time_of_current_key_);
    store_be16(ext + layout_.time_to_next_key, time_to_next_key_);
    fields_dirty_ = false;
  }
  if (counter_ == UINT64_MAX) return Err(SecurityError::kCounterExhausted);
  store_be32(ext + layout_.freshness, config_.sender_id);
  store_be64(ext + layout_.freshness + 4, counter_);
  auto st = engine_->compute_frame(frame, r, layout_, frame.subspan(r.extension_offset + layout_.tag, layout_.tag_len));
  if (!st) return st;
  ++counter_;  // never reuse a counter (or a GMAC IV) under this key
  return {};
}

// ---------------------------------------------------------------------------

Result<FrameVerifier, SecurityError> FrameVerifier::create(const SecurityConfig& c, KeyMaterial current) {
  FrameVerifier v;
  v.config_ = c;
  v.layout_ = extension_layout(c);
  if (v.layout_.size == 0) return Err(SecurityError::kBadConfig);
  auto e = MacEngine::create(c, current.key.span());
  if (!e) return Err(e.error());
  v.current_.key_id = current.key_id;
  v.current_.engine = std::move(e).value();
  return v;
}

Status<SecurityError> FrameVerifier::set_next_key(KeyMaterial key) {
  if (key.key_id == current_.key_id) return Err(SecurityError::kBadConfig);
  auto e = MacEngine::create(config_, key.key.span());
  if (!e) return Err(e.error());
  Epoch next;
  next.key_id = key.key_id;
  next.engine = std::move(e).value();
  for (auto& a : announced_) {
    if (a.key_id == key.key_id) {
      a = std::move(next);
      return {};
    }
  }
  if (announced_.size() == kMaxAnnouncedKeys) announced_.erase(announced_.begin());
  announced_.push_back(std::move(next));
  return {};
}

Result<VerifiedFrame, SecurityError> FrameVerifier::verify(ByteSpan frame, const Frame& f) {
  if (f.extension.empty()) return Err(SecurityError::kNoExtension);
  if (f.extension.size() != layout_.size) return Err(SecurityError::kWrongAlgorithm);
  auto ext = parse_extension(f.extension);
  if (!ext) return Err(ext.error());
  if (ext->algorithm != static_cast<std::uint8_t>(algorithm_id(config_)) || ext->tag.size() != layout_.tag_len ||
      ext->tag_offset != layout_.tag) {
    return Err(SecurityError::kWrongAlgorithm);
  }
  Epoch* epoch = nullptr;
  VerifiedFrame out;
  if (ext->key_id == current_.key_id) {
    epoch = &current_;
  } else {
    for (std::size_t i = 0; i < announced_.size(); ++i) {
      if (announced_[i].key_id == ext->key_id) {
        epoch = &announced_[i];
        out.next_key = true;
        out.announced = i;
        break;
      }
    }
    if (epoch == nullptr) return Err(SecurityError::kUnknownKey);
  }
  out.key_id = ext->key_id;
  std::array<std::uint8_t, 32> expected{};
  const auto r = regions_of(f);
  auto st = epoch->engine->compute_frame(frame, r, layout_, MutableByteSpan(expected.data(), layout_.tag_len));
  if (!st) return Err(st.error());
  const bool same = crypto::ct_equal(ByteSpan(expected.data(), layout_.tag_len), ext->tag);
  secure_zero(expected.data(), expected.size());
  if (!same) return Err(SecurityError::kBadTag);
  // Freshness: the counter must be above every counter accepted on this
  // stream, under any key (a recorded frame is refused whatever its smpCnt).
  out.counter = ext->counter;
  if (have_counter_ && out.counter <= last_counter_) return Err(SecurityError::kReplayedCounter);
  return out;
}

void FrameVerifier::raise_counter_floor(std::uint64_t resume) {
  if (resume == 0) return;  // every counter is >= 0: nothing to refuse
  if (have_counter_ && last_counter_ >= resume - 1) return;
  have_counter_ = true;
  last_counter_ = resume - 1;
}

void FrameVerifier::commit(const VerifiedFrame& v) {
  if (v.next_key && v.announced < announced_.size()) {
    // The publisher moved to an announced key: the current key's epoch ends,
    // and so do the epochs of keys announced before this one.
    current_ = std::move(announced_[v.announced]);
    announced_.erase(announced_.begin(), announced_.begin() + static_cast<std::ptrdiff_t>(v.announced) + 1);
  }
  have_counter_ = true;
  last_counter_ = v.counter;
}

}  // namespace layersec::sv
