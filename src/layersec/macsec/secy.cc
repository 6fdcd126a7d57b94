#include "layersec/macsec/secy.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace layersec::macsec {
namespace {

// The AAD of one frame as at most three parts (no allocation):
//   [DA SA] [clear tags, if covered] [SecTAG, clear User Data]
// In the buffer these are contiguous except when clear tags sit between the
// addresses and the SecTAG but are not covered.
struct AadParts {
  std::array<ByteSpan, 2> parts;
  std::size_t count = 0;
  [[nodiscard]] std::span<const ByteSpan> span() const { return {parts.data(), count}; }
};

// Builds the AAD and the confidential part for a frame laid out as
//   buf[0..12) addresses, buf[12..12+tags) clear tags, then SecTAG of
//   sectag_size, then Secure Data of data_size.
// 802.1AE-2018 14.5 (and 10.5.2 for the confidentiality offset): with
// confidentiality the AAD is DA, SA and SecTAG (plus the first `offset`
// octets of User Data) and the rest is encrypted; integrity only puts the
// whole User Data into the AAD.
struct Layout {
  std::size_t tags = 0;
  std::size_t sectag_size = 0;
  std::size_t data_size = 0;
  std::size_t clear_data = 0;  // octets of User Data in the AAD
};

AadParts make_aad(std::uint8_t* buf, const Layout& l, bool tags_in_icv) {
  AadParts a;
  const std::size_t header = kMacAddressesSize + l.tags;
  if (l.tags == 0 || tags_in_icv) {
    a.parts[0] = ByteSpan(buf, header + l.sectag_size + l.clear_data);
    a.count = 1;
  } else {
    a.parts[0] = ByteSpan(buf, kMacAddressesSize);
    a.parts[1] = ByteSpan(buf + header, l.sectag_size + l.clear_data);
    a.count = 2;
  }
  return a;
}

std::size_t clear_octets(bool confidential, std::size_t offset, std::size_t data_size) {
  if (!confidential) return data_size;
  return std::min(offset, data_size);
}

}  // namespace

std::string_view to_string(ValidateFrames v) {
  switch (v) {
    case ValidateFrames::kDisabled: return "Disabled";
    case ValidateFrames::kCheck: return "Check";
    case ValidateFrames::kStrict: return "Strict";
  }
  return "unknown";
}

std::string_view to_string(SaError e) {
  switch (e) {
    case SaError::kBadAn: return "AN must be 0..3";
    case SaError::kBadKey: return "SAK size does not match the Cipher Suite";
    case SaError::kBackend: return "cipher context could not be built";
    case SaError::kNoSuchSa: return "no SA installed at that AN";
    case SaError::kNoSuchSc: return "no receive SC with that SCI";
    case SaError::kScExists: return "receive SC already exists";
    case SaError::kEncodingSaBusy: return "the encoding SA cannot be replaced or removed";
    case SaError::kBadPn: return "PN out of range for the Cipher Suite";
    case SaError::kPnBackwards: return "the lowest acceptable PN can only be raised";
    case SaError::kPnStateMissing: return "no PN state for this key (a key used before would repeat PNs)";
    case SaError::kPnStateUsedUp: return "the PN state says every PN of this key is used: a new key is needed";
    case SaError::kPnStore: return "the PN state store failed";
    case SaError::kKeyShared: return "another SA of this SC uses the same key (one nonce space: PNs would repeat)";
  }
  return "unknown SA error";
}

std::string_view to_string(ProtectError e) {
  switch (e) {
    case ProtectError::kFrameTooShort: return "frame shorter than DA + SA + EtherType";
    case ProtectError::kBufferTooSmall: return "output buffer too small";
    case ProtectError::kTooLong: return "secure frame longer than the maximum frame size";
    case ProtectError::kNoTransmitSa: return "no enabled encoding SA";
    case ProtectError::kPnExhausted: return "PN exhausted: a new SA is needed";
    case ProtectError::kSourceNotSci: return "source address does not match the implicit SCI";
    case ProtectError::kCipher: return "cipher failure";
    case ProtectError::kPnNotPersisted: return "the next PN block could not be persisted";
  }
  return "unknown protect error";
}

std::string_view to_string(ReceiveDrop d) {
  switch (d) {
    case ReceiveDrop::kNoTag: return "InPktsNoTag";
    case ReceiveDrop::kBadTag: return "InPktsBadTag";
    case ReceiveDrop::kNoSci: return "InPktsNoSCI";
    case ReceiveDrop::kNotUsingSa: return "InPktsNotUsingSA";
    case ReceiveDrop::kLate: return "InPktsLate";
    case ReceiveDrop::kNotValid: return "InPktsNotValid";
    case ReceiveDrop::kPnNotPersisted: return "InPktsPnNotPersisted";
  }
  return "unknown";
}

std::string_view to_string(Disposition d) {
  switch (d) {
    case Disposition::kOk: return "InPktsOK";
    case Disposition::kDelayed: return "InPktsDelayed";
    case Disposition::kInvalid: return "InPktsInvalid";
    case Disposition::kUnchecked: return "InPktsUnchecked";
    case Disposition::kUntagged: return "InPktsUntagged";
    case Disposition::kUnknownSci: return "InPktsUnknownSCI";
    case Disposition::kUnusedSa: return "InPktsUnusedSA";
  }
  return "unknown";
}

void SecYStats::for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  fn("InPktsOK", InPktsOK);
  fn("InPktsInvalid", InPktsInvalid);
  fn("InPktsNotValid", InPktsNotValid);
  fn("InPktsLate", InPktsLate);
  fn("InPktsNoSCI", InPktsNoSCI);
  fn("InPktsUnknownSCI", InPktsUnknownSCI);
  fn("InPktsNoSA", InPktsNoSA);
  fn("InPktsNotUsingSA", InPktsNotUsingSA);
  fn("InPktsUnusedSA", InPktsUnusedSA);
  fn("InPktsUnchecked", InPktsUnchecked);
  fn("InPktsDelayed", InPktsDelayed);
  fn("InPktsNoTag", InPktsNoTag);
  fn("InPktsBadTag", InPktsBadTag);
  fn("InPktsUntagged", InPktsUntagged);
  fn("InOctetsValidated", InOctetsValidated);
  fn("InOctetsDecrypted", InOctetsDecrypted);
  fn("OutPktsProtected", OutPktsProtected);
  fn("OutPktsEncrypted", OutPktsEncrypted);
  fn("OutPktsUntagged", OutPktsUntagged);
  fn("OutPktsTooLong", OutPktsTooLong);
  fn("OutOctetsProtected", OutOctetsProtected);
  fn("OutOctetsEncrypted", OutOctetsEncrypted);
  fn("InPktsPnNotPersisted", InPktsPnNotPersisted);
  fn("OutPktsPnNotPersisted", OutPktsPnNotPersisted);
}

void RxScStats::for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  fn("InPktsOK", InPktsOK);
  fn("InPktsInvalid", InPktsInvalid);
  fn("InPktsNotValid", InPktsNotValid);
  fn("InPktsLate", InPktsLate);
  fn("InPktsUnchecked", InPktsUnchecked);
  fn("InPktsDelayed", InPktsDelayed);
  fn("InPktsNotUsingSA", InPktsNotUsingSA);
  fn("InPktsUnusedSA", InPktsUnusedSA);
  fn("InOctetsValidated", InOctetsValidated);
  fn("InOctetsDecrypted", InOctetsDecrypted);
}

void RxSaStats::for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  fn("InPktsOK", InPktsOK);
  fn("InPktsInvalid", InPktsInvalid);
  fn("InPktsNotValid", InPktsNotValid);
  fn("InPktsNotUsingSA", InPktsNotUsingSA);
  fn("InPktsUnusedSA", InPktsUnusedSA);
}

void TxScStats::for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  fn("OutPktsProtected", OutPktsProtected);
  fn("OutPktsEncrypted", OutPktsEncrypted);
  fn("OutOctetsProtected", OutOctetsProtected);
  fn("OutOctetsEncrypted", OutOctetsEncrypted);
}

void TxSaStats::for_each(const std::function<void(std::string_view, std::uint64_t)>& fn) const {
  fn("OutPktsProtected", OutPktsProtected);
  fn("OutPktsEncrypted", OutPktsEncrypted);
}

SecY::SecY(SecYConfig config) : config_(config) {
  if (config_.confidentiality_offset != 0 && config_.confidentiality_offset != 30 &&
      config_.confidentiality_offset != 50)
    throw std::invalid_argument("confidentiality offset must be 0, 30 or 50");
  if (!config_.include_sci && config_.use_es && config_.sci.port() != kEndStationPort)
    throw std::invalid_argument("useES without SCI needs an SCI with port identifier 1");
  rekey_threshold_ = config_.pn_rekey_threshold != 0
                         ? config_.pn_rekey_threshold
                         : max_pn(config_.suite) - max_pn(config_.suite) / 4;
}

SecY::SecY(SecY&&) noexcept = default;
SecY& SecY::operator=(SecY&&) noexcept = default;
SecY::~SecY() = default;

void SecY::set_replay_protect(bool on, std::uint32_t window) {
  config_.replay_protect = on;
  config_.replay_window = window;
  for (auto& sc : rx_scs_)
    for (auto& sa : sc.sas)
      if (sa) sa->window.set_window(window);
}

// ------------------------------------------------------------ PN persistence

void SecY::set_pn_store(PnStore* store, std::uint64_t reserve_block) {
  pn_store_ = store;
  pn_block_ = reserve_block == 0 ? 1 : reserve_block;
}

Result<std::optional<std::uint64_t>, SaError> SecY::pn_record(PnDirection direction, Sci sci,
                                                              const SaKeys& keys) const {
  if (pn_store_ == nullptr) return std::optional<std::uint64_t>{};
  auto r = pn_store_->load(PnKey{direction, sci, pn_fingerprint(config_.suite, keys)});
  if (!r) return Err(SaError::kPnStore);
  return *r;
}

Result<detail::PnPersisted, SaError> SecY::open_pn_record(PnDirection direction, Sci sci, const SaKeys& keys,
                                                          std::uint8_t an, std::uint64_t& first_pn,
                                                          PnStart start) {
  detail::PnPersisted p;
  p.key = PnKey{direction, sci, pn_fingerprint(config_.suite, keys)};
  auto record = pn_store_->load(p.key);
  if (!record) return Err(SaError::kPnStore);
  if (!*record) {
    if (start != PnStart::kNewKey) return Err(SaError::kPnStateMissing);
    // A new key: the record exists from now on, so the next start resumes.
    p.highest = first_pn == 0 ? 0 : first_pn - 1;  // a receive SA's lowest PN 0 means 1
    if (!pn_store_->save(p.key, an, p.highest)) return Err(SaError::kPnStore);
    return p;
  }
  // The key was used before (10.5.2: a PN never repeats within an SA, and a
  // static SAK's SA outlives the process): resume after the record.
  p.highest = **record;
  p.resumed = true;
  if (p.highest >= max_pn(config_.suite)) return Err(SaError::kPnStateUsedUp);
  first_pn = std::max(first_pn, p.highest + 1);
  return p;
}

bool SecY::reserve_pn(detail::PnPersisted& p, std::uint8_t an, std::uint64_t pn) {
  // One block from `pn` on, never past the last PN of the suite. Blocks
  // double up to pn_block_: a quiet SA reserves little (so a crash costs a
  // receiver few of the peer's frames), a busy one rarely saves.
  const std::uint64_t block = std::min(p.next_block, pn_block_);
  const std::uint64_t last = max_pn(config_.suite);
  const std::uint64_t highest = block - 1 > last - pn ? last : pn + (block - 1);
  if (!pn_store_->save(p.key, an, highest)) return false;
  p.highest = highest;
  p.next_block = block > pn_block_ / 2 ? pn_block_ : 2 * block;
  return true;
}

template <typename Fn>
void SecY::for_each_persisted(Fn&& fn) {
  const std::uint64_t last = max_pn(config_.suite);
  for (std::uint8_t an = 0; an < 4; ++an) {
    if (auto& sa = tx_sas_[an]) fn(sa->persisted, an, sa->exhausted ? last : sa->next_pn - 1);
  }
  for (auto& sc : rx_scs_) {
    for (std::uint8_t an = 0; an < 4; ++an) {
      if (auto& sa = sc.sas[an]) fn(sa->persisted, an, sa->window.exhausted() ? last : sa->window.next_pn() - 1);
    }
  }
}

Status<SaError> SecY::persist_pn_state() {
  // With shared PN state this SecY's own PNs are stale: never save them.
  if (pn_store_ == nullptr || shared_pn_ != nullptr) return {};
  bool ok = true;
  for_each_persisted([&](detail::PnPersisted& p, std::uint8_t an, std::uint64_t exact) {
    // Exact values only ever tighten the reservation: exact <= highest.
    if (exact >= p.highest) return;
    if (pn_store_->save(p.key, an, exact)) {
      p.highest = exact;
      p.next_block = 1;
    } else {
      ok = false;
    }
  });
  if (!ok) return Err(SaError::kPnStore);
  return {};
}

Status<SaError> SecY::tick_pn_state() {
  if (pn_store_ == nullptr || shared_pn_ != nullptr) return {};
  bool ok = true;
  for_each_persisted([&](detail::PnPersisted& p, std::uint8_t an, std::uint64_t exact) {
    const std::uint64_t used = exact > p.tick_exact ? exact - p.tick_exact : 0;
    p.tick_exact = exact;
    p.next_block = std::clamp<std::uint64_t>(used, 1, pn_block_);
    if (p.highest <= exact || p.highest - exact <= used) return;
    if (pn_store_->save(p.key, an, exact)) {
      p.highest = exact;
    } else {
      ok = false;
    }
  });
  if (!ok) return Err(SaError::kPnStore);
  return {};
}

// ---------------------------------------------------------------- transmit

Status<SaError> SecY::install_tx_sa(std::uint8_t an, const SaKeys& keys, std::uint64_t next_pn, PnStart start) {
  if (an > 3) return Err(SaError::kBadAn);
  if (next_pn == 0 || next_pn > max_pn(config_.suite)) return Err(SaError::kBadPn);
  if (an == encoding_an_ && tx_sas_[an] && tx_sas_[an]->enabled && !tx_sas_[an]->exhausted)
    return Err(SaError::kEncodingSaBusy);
  auto cipher = SaCipher::create(config_.suite, keys, config_.sci);
  if (!cipher) {
    return Err(cipher.error() == CipherError::kBadKeyLength ? SaError::kBadKey
                                                            : SaError::kBackend);
  }
  detail::PnPersisted persisted;
  if (pn_store_ != nullptr) {
    const PnFingerprint fp = pn_fingerprint(config_.suite, keys);
    for (std::uint8_t o = 0; o < 4; ++o) {
      if (o != an && tx_sas_[o] && tx_sas_[o]->persisted.key.fingerprint == fp) return Err(SaError::kKeyShared);
    }
    auto p = open_pn_record(PnDirection::kTransmit, config_.sci, keys, an, next_pn, start);
    if (!p) return Err(p.error());
    persisted = *p;
    persisted.tick_exact = next_pn - 1;
  }
  tx_sas_[an].emplace(detail::TxSa{std::move(cipher).value(), true, false, next_pn, TxSaStats{}, persisted});
  return {};
}

Status<SaError> SecY::set_encoding_sa(std::uint8_t an) {
  if (an > 3) return Err(SaError::kBadAn);
  if (!tx_sas_[an]) return Err(SaError::kNoSuchSa);
  encoding_an_ = an;
  return {};
}

Status<SaError> SecY::remove_tx_sa(std::uint8_t an) {
  if (an > 3) return Err(SaError::kBadAn);
  if (!tx_sas_[an]) return Err(SaError::kNoSuchSa);
  tx_sas_[an].reset();
  return {};
}

Status<SaError> SecY::enable_tx_sa(std::uint8_t an, bool enabled) {
  if (an > 3) return Err(SaError::kBadAn);
  if (!tx_sas_[an]) return Err(SaError::kNoSuchSa);
  tx_sas_[an]->enabled = enabled;
  return {};
}

TxSaStatus SecY::tx_sa_status(std::uint8_t an) const {
  TxSaStatus s;
  if (an > 3 || !tx_sas_[an]) return s;
  s.installed = true;
  s.enabled = tx_sas_[an]->enabled;
  s.exhausted = tx_sas_[an]->exhausted;
  s.next_pn = tx_sas_[an]->next_pn;
  s.pn_persisted = tx_sas_[an]->persisted.highest;
  s.pn_resumed = tx_sas_[an]->persisted.resumed;
  s.pn_key = tx_sas_[an]->persisted.key;
  s.stats = tx_sas_[an]->stats;
  return s;
}

bool SecY::new_sa_needed() const {
  const auto& sa = tx_sas_[encoding_an_];
  if (!sa || !sa->enabled) return true;
  return sa->exhausted || sa->next_pn >= rekey_threshold_;
}

Result<std::size_t, ProtectError> SecY::protect(ByteSpan frame, MutableByteSpan out) {
  if (frame.size() < kMacAddressesSize + 2) return Err(ProtectError::kFrameTooShort);
  if (!config_.protect_frames) {
    // 10.5: protectFrames false transmits the frame unchanged.
    if (out.size() < frame.size()) return Err(ProtectError::kBufferTooSmall);
    std::memcpy(out.data(), frame.data(), frame.size());
    ++stats_.OutPktsUntagged;
    return frame.size();
  }
  auto& slot = tx_sas_[encoding_an_];
  if (!slot || !slot->enabled) return Err(ProtectError::kNoTransmitSa);
  detail::TxSa& sa = *slot;
  if (sa.exhausted) return Err(ProtectError::kPnExhausted);

  Layout l;
  l.tags = config_.vlan_mode == VlanMode::kClearTag ? leading_vlan_tags_size(frame, kMaxClearTags)
                                                    : 0;
  const std::size_t header = kMacAddressesSize + l.tags;
  if (frame.size() < header + 2) return Err(ProtectError::kFrameTooShort);
  const ByteSpan msdu = frame.subspan(header);
  l.sectag_size = config_.include_sci ? kSecTagSizeWithSci : kSecTagSizeNoSci;
  l.data_size = msdu.size();
  l.clear_data = clear_octets(config_.confidentiality, config_.confidentiality_offset, l.data_size);
  const std::size_t total = header + l.sectag_size + l.data_size + kIcvSize;
  if (config_.max_frame_size != 0 && total > config_.max_frame_size) {
    ++stats_.OutPktsTooLong;
    return Err(ProtectError::kTooLong);
  }
  if (out.size() < total) return Err(ProtectError::kBufferTooSmall);
  if (!config_.include_sci && config_.use_es) {
    // 9.9: ES tells the receiver the SCI is SA || 0x0001.
    const auto mac = config_.sci.mac();
    if (std::memcmp(frame.data() + 6, mac.data(), 6) != 0) return Err(ProtectError::kSourceNotSci);
  }

  // 10.5.2: take the PN and advance; the last PN exhausts the SA (no wrap).
  // With a PnStore the PN is persisted (a block at a time) before it is used.
  std::uint64_t pn = 0;
  if (shared_pn_ != nullptr) {
    // Several SecYs share this SA: one allocation for all of them.
    auto taken = shared_pn_->take_tx_pn(encoding_an_);
    if (!taken) {
      if (taken.error() == ProtectError::kPnNotPersisted) ++stats_.OutPktsPnNotPersisted;
      return Err(taken.error());
    }
    pn = *taken;
  } else {
    pn = sa.next_pn;
    if (pn_store_ != nullptr && pn > sa.persisted.highest && !reserve_pn(sa.persisted, encoding_an_, pn)) {
      ++stats_.OutPktsPnNotPersisted;
      return Err(ProtectError::kPnNotPersisted);
    }
    if (pn >= max_pn(config_.suite)) {
      sa.exhausted = true;
    } else {
      sa.next_pn = pn + 1;
    }
  }

  SecTag tag;
  tag.es = !config_.include_sci && config_.use_es;
  tag.sc = config_.include_sci;
  tag.e = config_.confidentiality;
  tag.c = config_.confidentiality;
  tag.an = encoding_an_;
  tag.sl = short_length_for(l.data_size);
  tag.pn = static_cast<std::uint32_t>(pn);
  tag.sci = config_.sci;

  std::memcpy(out.data(), frame.data(), header);
  ByteWriter w(out.subspan(header, l.sectag_size));
  if (!encode_sectag(w, tag)) return Err(ProtectError::kBufferTooSmall);
  std::uint8_t* data = out.data() + header + l.sectag_size;
  std::memcpy(data, msdu.data(), msdu.size());

  const AadParts aad = make_aad(out.data(), l, config_.clear_tags_in_icv);
  CipherParts parts{aad.span(), MutableByteSpan(data + l.clear_data, l.data_size - l.clear_data)};
  auto st = sa.cipher.protect(pn, parts, MutableByteSpan(data + l.data_size, kIcvSize));
  if (!st) return Err(ProtectError::kCipher);

  if (config_.confidentiality) {
    ++stats_.OutPktsEncrypted;
    ++tx_sc_stats_.OutPktsEncrypted;
    ++sa.stats.OutPktsEncrypted;
  } else {
    ++stats_.OutPktsProtected;
    ++tx_sc_stats_.OutPktsProtected;
    ++sa.stats.OutPktsProtected;
  }
  stats_.OutOctetsProtected += l.clear_data;
  stats_.OutOctetsEncrypted += l.data_size - l.clear_data;
  tx_sc_stats_.OutOctetsProtected += l.clear_data;
  tx_sc_stats_.OutOctetsEncrypted += l.data_size - l.clear_data;
  return total;
}

// ----------------------------------------------------------------- receive

detail::RxSc* SecY::find_rx_sc(Sci sci) {
  auto it = std::lower_bound(rx_scs_.begin(), rx_scs_.end(), sci,
                             [](const detail::RxSc& sc, Sci s) { return sc.sci < s; });
  return (it != rx_scs_.end() && it->sci == sci) ? &*it : nullptr;
}

const detail::RxSc* SecY::find_rx_sc(Sci sci) const {
  return const_cast<SecY*>(this)->find_rx_sc(sci);
}

Status<SaError> SecY::add_rx_sc(Sci sci) {
  if (find_rx_sc(sci) != nullptr) return Err(SaError::kScExists);
  auto it = std::lower_bound(rx_scs_.begin(), rx_scs_.end(), sci,
                             [](const detail::RxSc& sc, Sci s) { return sc.sci < s; });
  detail::RxSc sc;
  sc.sci = sci;
  rx_scs_.insert(it, std::move(sc));
  return {};
}

Status<SaError> SecY::remove_rx_sc(Sci sci) {
  auto it = std::find_if(rx_scs_.begin(), rx_scs_.end(),
                         [&](const detail::RxSc& sc) { return sc.sci == sci; });
  if (it == rx_scs_.end()) return Err(SaError::kNoSuchSc);
  rx_scs_.erase(it);
  return {};
}

Status<SaError> SecY::install_rx_sa(Sci sci, std::uint8_t an, const SaKeys& keys,
                                    std::uint64_t lowest_pn, PnStart start) {
  if (an > 3) return Err(SaError::kBadAn);
  if (lowest_pn > max_pn(config_.suite)) return Err(SaError::kBadPn);
  detail::RxSc* sc = find_rx_sc(sci);
  if (sc == nullptr) return Err(SaError::kNoSuchSc);
  // The IV of a receive SA uses the transmitter's SCI (or its SSCI for XPN).
  auto cipher = SaCipher::create(config_.suite, keys, sci);
  if (!cipher) {
    return Err(cipher.error() == CipherError::kBadKeyLength ? SaError::kBadKey
                                                            : SaError::kBackend);
  }
  detail::PnPersisted persisted;
  if (pn_store_ != nullptr) {
    // A restarted receiver accepts nothing at or below what it may have
    // accepted before (docs/macsec.md, "PN state across restarts").
    const PnFingerprint fp = pn_fingerprint(config_.suite, keys);
    for (std::uint8_t o = 0; o < 4; ++o) {
      if (o != an && sc->sas[o] && sc->sas[o]->persisted.key.fingerprint == fp) return Err(SaError::kKeyShared);
    }
    auto p = open_pn_record(PnDirection::kReceive, sci, keys, an, lowest_pn, start);
    if (!p) return Err(p.error());
    persisted = *p;
    persisted.tick_exact = lowest_pn == 0 ? 0 : lowest_pn - 1;
  }
  sc->sas[an].emplace(detail::RxSa{std::move(cipher).value(),
                                   ReplayWindow(is_xpn(config_.suite), lowest_pn,
                                                config_.replay_window),
                                   true, 0, RxSaStats{}, persisted});
  return {};
}

Status<SaError> SecY::enable_rx_sa(Sci sci, std::uint8_t an, bool enabled) {
  if (an > 3) return Err(SaError::kBadAn);
  detail::RxSc* sc = find_rx_sc(sci);
  if (sc == nullptr) return Err(SaError::kNoSuchSc);
  if (!sc->sas[an]) return Err(SaError::kNoSuchSa);
  sc->sas[an]->enabled = enabled;
  return {};
}

Status<SaError> SecY::raise_rx_sa_lowest_pn(Sci sci, std::uint8_t an, std::uint64_t lowest_pn) {
  if (an > 3) return Err(SaError::kBadAn);
  if (lowest_pn == 0 || lowest_pn > max_pn(config_.suite)) return Err(SaError::kBadPn);
  detail::RxSc* sc = find_rx_sc(sci);
  if (sc == nullptr) return Err(SaError::kNoSuchSc);
  if (!sc->sas[an]) return Err(SaError::kNoSuchSa);
  if (lowest_pn < sc->sas[an]->window.lowest_pn()) return Err(SaError::kPnBackwards);
  sc->sas[an]->window.raise_lowest(lowest_pn);
  return {};
}

std::optional<RxScStats> SecY::rx_sc_stats(Sci sci) const {
  const detail::RxSc* sc = find_rx_sc(sci);
  if (sc == nullptr) return std::nullopt;
  return sc->stats;
}

std::vector<Sci> SecY::rx_scis() const {
  std::vector<Sci> out;
  out.reserve(rx_scs_.size());
  for (const auto& sc : rx_scs_) out.push_back(sc.sci);
  return out;
}

Status<SaError> SecY::remove_rx_sa(Sci sci, std::uint8_t an) {
  if (an > 3) return Err(SaError::kBadAn);
  detail::RxSc* sc = find_rx_sc(sci);
  if (sc == nullptr) return Err(SaError::kNoSuchSc);
  if (!sc->sas[an]) return Err(SaError::kNoSuchSa);
  sc->sas[an].reset();
  return {};
}

RxSaStatus SecY::rx_sa_status(Sci sci, std::uint8_t an) const {
  RxSaStatus s;
  const detail::RxSc* sc = find_rx_sc(sci);
  if (an > 3 || sc == nullptr || !sc->sas[an]) return s;
  s.installed = true;
  s.enabled = sc->sas[an]->enabled;
  s.next_pn = sc->sas[an]->window.next_pn();
  s.lowest_pn = sc->sas[an]->window.lowest_pn();
  s.verified_frames = sc->sas[an]->verified;
  s.pn_persisted = sc->sas[an]->persisted.highest;
  s.pn_resumed = sc->sas[an]->persisted.resumed;
  s.pn_key = sc->sas[an]->persisted.key;
  s.stats = sc->sas[an]->stats;
  return s;
}

Received SecY::deliver_stripped(MutableByteSpan frame, const SecureFrameView& v, Disposition d) {
  // Remove SecTAG and ICV: the addresses and clear tags move up over the
  // SecTAG; the MSDU (now plaintext) stays where it is.
  const std::size_t header = kMacAddressesSize + v.clear_tags.size();
  const std::size_t shift = v.sectag.size();
  std::memmove(frame.data() + shift, frame.data(), header);
  Received r;
  r.frame = ByteSpan(frame.data() + shift, header + v.secure_data.size());
  r.disposition = d;
  r.an = v.tag.an;
  return r;
}

// A frame whose ICV verified and whose PN was accepted: its octets, and OK or
// (replayProtect off, PN late) Delayed.
Disposition SecY::count_verified(detail::RxSc& sc, detail::RxSa& sa, bool encrypted, std::size_t octets,
                                 bool late) {
  if (encrypted) {
    stats_.InOctetsDecrypted += octets;
    sc.stats.InOctetsDecrypted += octets;
  } else {
    stats_.InOctetsValidated += octets;
    sc.stats.InOctetsValidated += octets;
  }
  ++sa.verified;
  if (late) {
    ++stats_.InPktsDelayed;
    ++sc.stats.InPktsDelayed;
    return Disposition::kDelayed;
  }
  ++stats_.InPktsOK;
  ++sc.stats.InPktsOK;
  ++sa.stats.InPktsOK;
  return Disposition::kOk;
}

Result<Received, ReceiveDrop> SecY::validate(MutableByteSpan frame) {
  const bool strict = config_.validate_frames == ValidateFrames::kStrict;
  SecTagParseOptions opts;
  opts.allow_zero_pn = is_xpn(config_.suite);
  const std::size_t max_tags = config_.vlan_mode == VlanMode::kClearTag ? kMaxClearTags : 0;

  // 10.6.1 / 9.12: classify the frame by its SecTAG.
  auto located = locate_secure_frame(frame, max_tags, opts);
  if (!located) {
    if (located.error() == SecTagError::kNotMacsec) {
      if (strict) {
        ++stats_.InPktsNoTag;
        return Err(ReceiveDrop::kNoTag);
      }
      ++stats_.InPktsUntagged;
      Received r;
      r.frame = frame;
      r.disposition = Disposition::kUntagged;
      return r;
    }
    last_sectag_error_ = located.error();
    ++stats_.InPktsBadTag;
    return Err(ReceiveDrop::kBadTag);
  }
  const SecureFrameView& v = *located;
  const SecTag& tag = v.tag;

  // 9.9: the SCI is explicit, or SA || 0x0001 for an end station, or (neither
  // ES nor SC) that of the only peer on a point-to-point link.
  std::optional<Sci> sci;
  if (tag.sc) {
    sci = tag.sci;
  } else if (tag.es) {
    sci = Sci::from_parts(v.addresses.data() + 6, kEndStationPort);
  } else if (rx_scs_.size() == 1) {
    sci = rx_scs_.front().sci;
  }
  detail::RxSc* sc = sci ? find_rx_sc(*sci) : nullptr;
  if (sc == nullptr) {
    if (tag.c || strict) {
      ++stats_.InPktsNoSCI;
      return Err(ReceiveDrop::kNoSci);
    }
    ++stats_.InPktsUnknownSCI;
    ++stats_.InPktsNoSA;
    Received r = deliver_stripped(frame, v, Disposition::kUnknownSci);
    r.sci = sci.value_or(Sci{});
    r.pn = tag.pn;
    return r;
  }

  // 10.6.1: the receive SA named by the AN must be installed and in use.
  auto& slot = sc->sas[tag.an];
  if (!slot || !slot->enabled) {
    if (tag.c || strict) {
      ++stats_.InPktsNotUsingSA;
      ++sc->stats.InPktsNotUsingSA;
      if (slot) ++slot->stats.InPktsNotUsingSA;
      return Err(ReceiveDrop::kNotUsingSa);
    }
    ++stats_.InPktsUnusedSA;
    ++stats_.InPktsNoSA;
    ++sc->stats.InPktsUnusedSA;
    if (slot) ++slot->stats.InPktsUnusedSA;
    Received r = deliver_stripped(frame, v, Disposition::kUnusedSa);
    r.sci = sc->sci;
    r.pn = tag.pn;
    return r;
  }
  detail::RxSa& sa = *slot;

  // 10.6.2: recover the full PN and do the preliminary replay check before
  // spending work on the ICV.
  const auto recovered =
      shared_pn_ != nullptr ? shared_pn_->recover_rx_pn(sc->sci, tag.an, tag.pn) : sa.window.recover(tag.pn);
  if (!recovered) {
    // Beyond the last PN of the SA: no valid frame can carry it.
    ++stats_.InPktsNotValid;
    ++sc->stats.InPktsNotValid;
    ++sa.stats.InPktsNotValid;
    return Err(ReceiveDrop::kNotValid);
  }
  const std::uint64_t pn = *recovered;
  // Below the lowest acceptable PN (802.1AE), or a PN inside the window that
  // was accepted already (layersec's duplicate bitmap, replay_window.h).
  const bool replayed = shared_pn_ != nullptr ? shared_pn_->rx_replayed(sc->sci, tag.an, pn)
                                              : sa.window.is_late(pn) || sa.window.seen(pn);
  if (config_.replay_protect && replayed) {
    ++stats_.InPktsLate;
    ++sc->stats.InPktsLate;
    return Err(ReceiveDrop::kLate);
  }

  // 10.6.3/10.6.4: verify (and decrypt) unless validation is Disabled and the
  // frame is not encrypted.
  const bool checked = tag.c || config_.validate_frames != ValidateFrames::kDisabled;
  bool valid = false;
  if (checked) {
    Layout l;
    l.tags = v.clear_tags.size();
    l.sectag_size = v.sectag.size();
    l.data_size = v.secure_data.size();
    l.clear_data = clear_octets(tag.e, config_.confidentiality_offset, l.data_size);
    const AadParts aad = make_aad(frame.data(), l, config_.clear_tags_in_icv);
    std::uint8_t* data = frame.data() + (v.secure_data.data() - frame.data());
    CipherParts parts{aad.span(),
                      MutableByteSpan(data + l.clear_data, l.data_size - l.clear_data)};
    valid = sa.cipher.validate(pn, parts, v.icv).ok();
  }

  // 10.6.5: count and decide.
  Disposition d;
  if (!valid) {
    if (checked && (tag.c || strict)) {
      ++stats_.InPktsNotValid;
      ++sc->stats.InPktsNotValid;
      ++sa.stats.InPktsNotValid;
      return Err(ReceiveDrop::kNotValid);
    }
    if (checked) {
      ++stats_.InPktsInvalid;  // Check mode, integrity only
      ++sc->stats.InPktsInvalid;
      ++sa.stats.InPktsInvalid;
      d = Disposition::kInvalid;
    } else {
      ++stats_.InPktsUnchecked;
      ++sc->stats.InPktsUnchecked;
      d = Disposition::kUnchecked;
    }
  } else if (shared_pn_ != nullptr) {
    // Shared by several SecYs: the re-check and the update are one atomic
    // step there, so a frame replayed to another thread is accepted once.
    auto accepted = shared_pn_->accept_rx_pn(sc->sci, tag.an, pn);
    if (!accepted) {
      if (accepted.error() == ReceiveDrop::kLate) {
        ++stats_.InPktsLate;
        ++sc->stats.InPktsLate;
      } else {
        ++stats_.InPktsPnNotPersisted;
      }
      return Err(accepted.error());
    }
    d = count_verified(*sc, sa, tag.e, v.secure_data.size(), *accepted);
  } else {
    // The PN is persisted (a block at a time) before the frame is accepted,
    // so a restarted receiver never accepts it again.
    if (pn_store_ != nullptr && pn > sa.persisted.highest && !reserve_pn(sa.persisted, tag.an, pn)) {
      ++stats_.InPktsPnNotPersisted;
      return Err(ReceiveDrop::kPnNotPersisted);
    }
    // Late is only reachable with replayProtect off (Delayed).
    d = count_verified(*sc, sa, tag.e, v.secure_data.size(), sa.window.is_late(pn));
    sa.window.accept(pn);  // state advances only on verified input
  }
  Received r = deliver_stripped(frame, v, d);
  r.sci = sc->sci;
  r.pn = pn;
  return r;
}

}  // namespace layersec::macsec
