#include "layersec/mka/keys.h"

#include <algorithm>
#include <memory>

#include "layersec/base/hex.h"
#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mac.h"

namespace layersec::mka {
namespace {

using crypto::MacAlgorithm;

bool key_length_ok(std::size_t n) { return n == 16 || n == 32; }

MacAlgorithm cmac_for(std::size_t key_len) {
  return key_len == 16 ? MacAlgorithm::kCmacAes128 : MacAlgorithm::kCmacAes256;
}

// mac1 || mac2 with the numerically lower address first (§6.2.2).
std::array<std::uint8_t, 12> ordered_macs(const MacAddress& a, const MacAddress& b) {
  const bool a_first = std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  const MacAddress& lo = a_first ? a : b;
  const MacAddress& hi = a_first ? b : a;
  std::array<std::uint8_t, 12> out{};
  std::copy(lo.begin(), lo.end(), out.begin());
  std::copy(hi.begin(), hi.end(), out.begin() + 6);
  return out;
}

Result<SecretBytes, KeyError> derive_secret(ByteSpan key, std::string_view label, ByteSpan context,
                                            std::size_t out_len) {
  SecretBytes out(out_len);
  if (auto s = kdf(key, label, context, out.mutable_span()); !s) return Err(s.error());
  return out;
}

// §9.3.3 Key Identifier: the first 16 octets of the CKN, zero-padded.
Result<SecretBytes, KeyError> derive_from_cak(const SecretBytes& cak, ByteSpan ckn, std::string_view label) {
  if (!key_length_ok(cak.size())) return Err(KeyError::kBadKeyLength);
  if (ckn.empty() || ckn.size() > 32) return Err(KeyError::kBadCknLength);
  std::array<std::uint8_t, 16> key_id{};
  std::copy_n(ckn.begin(), std::min<std::size_t>(ckn.size(), key_id.size()), key_id.begin());
  return derive_secret(cak.span(), label, key_id, cak.size());
}

}  // namespace

std::string_view to_string(KeyError e) {
  switch (e) {
    case KeyError::kBadKeyLength: return "key length is not 16 or 32 octets";
    case KeyError::kBadOutputLength: return "derived key length not allowed";
    case KeyError::kBadMskLength: return "MSK shorter than the CAK length";
    case KeyError::kBadCknLength: return "CKN empty or longer than 32 octets";
    case KeyError::kBadNonceLength: return "key server nonce length differs from the SAK length";
    case KeyError::kBadWrappedLength: return "wrapped key is not 24 or 40 octets";
    case KeyError::kUnwrapFailed: return "AES key unwrap integrity check failed";
    case KeyError::kBackend: return "crypto backend failure";
  }
  return "unknown key error";
}

Status<KeyError> kdf(ByteSpan key, std::string_view label, ByteSpan context, MutableByteSpan out) {
  if (!key_length_ok(key.size())) return Err(KeyError::kBadKeyLength);
  const std::size_t bits = out.size() * 8;
  // At most 8191 bits (well inside the 255 blocks a one-octet counter can number).
  if (out.empty() || bits > 8191) return Err(KeyError::kBadOutputLength);
  auto mac = crypto::make_mac(cmac_for(key.size()), key);
  if (!mac) return Err(KeyError::kBackend);
  const std::array<std::uint8_t, 2> length = {static_cast<std::uint8_t>(bits >> 8),
                                              static_cast<std::uint8_t>(bits)};
  const std::uint8_t zero = 0;
  const ByteSpan label_bytes(reinterpret_cast<const std::uint8_t*>(label.data()), label.size());
  std::array<std::uint8_t, 16> block{};
  std::size_t done = 0;
  // i is one octet; 8191 bits need at most 64 blocks.
  for (unsigned i = 1; done < out.size(); ++i) {
    const std::uint8_t counter = static_cast<std::uint8_t>(i);
    const ByteSpan parts[] = {ByteSpan(&counter, 1), label_bytes, ByteSpan(&zero, 1), context, length};
    if (!(*mac)->compute(parts, block)) return Err(KeyError::kBackend);
    const std::size_t n = std::min(block.size(), out.size() - done);
    std::copy_n(block.begin(), n, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += n;
  }
  std::fill(block.begin(), block.end(), std::uint8_t{0});
  return {};
}

Result<SecretBytes, KeyError> derive_cak(ByteSpan msk, const MacAddress& a, const MacAddress& b,
                                         std::size_t cak_len) {
  if (!key_length_ok(cak_len)) return Err(KeyError::kBadOutputLength);
  if (msk.size() < cak_len) return Err(KeyError::kBadMskLength);
  const auto macs = ordered_macs(a, b);
  return derive_secret(msk.first(cak_len), "IEEE8021 EAP CAK", macs, cak_len);
}

Result<std::vector<std::uint8_t>, KeyError> derive_ckn(ByteSpan msk, ByteSpan eap_session_id,
                                                       const MacAddress& a, const MacAddress& b,
                                                       std::size_t key_len, std::size_t ckn_len) {
  if (!key_length_ok(key_len)) return Err(KeyError::kBadKeyLength);
  if (ckn_len == 0 || ckn_len > 32) return Err(KeyError::kBadCknLength);
  if (msk.size() < key_len) return Err(KeyError::kBadMskLength);
  const auto macs = ordered_macs(a, b);
  std::vector<std::uint8_t> context(eap_session_id.begin(), eap_session_id.end());
  context.insert(context.end(), macs.begin(), macs.end());
  std::vector<std::uint8_t> ckn(ckn_len);
  if (auto s = kdf(msk.first(key_len), "IEEE8021 EAP CKN", context, ckn); !s) return Err(s.error());
  return ckn;
}

Result<SecretBytes, KeyError> derive_kek(const SecretBytes& cak, ByteSpan ckn) {
  return derive_from_cak(cak, ckn, "IEEE8021 KEK");
}

Result<SecretBytes, KeyError> derive_ick(const SecretBytes& cak, ByteSpan ckn) {
  return derive_from_cak(cak, ckn, "IEEE8021 ICK");
}

Result<SecretBytes, KeyError> derive_sak(const SecretBytes& cak, ByteSpan ks_nonce, ByteSpan mi_value_list,
                                         std::uint32_t kn, std::size_t sak_len) {
  if (!key_length_ok(cak.size())) return Err(KeyError::kBadKeyLength);
  if (!key_length_ok(sak_len)) return Err(KeyError::kBadOutputLength);
  if (ks_nonce.size() != sak_len) return Err(KeyError::kBadNonceLength);
  std::vector<std::uint8_t> context(ks_nonce.begin(), ks_nonce.end());
  context.insert(context.end(), mi_value_list.begin(), mi_value_list.end());
  for (int shift = 24; shift >= 0; shift -= 8) context.push_back(static_cast<std::uint8_t>(kn >> shift));
  auto sak = derive_secret(cak.span(), "IEEE8021 SAK", context, sak_len);
  std::fill(context.begin(), context.end(), std::uint8_t{0});  // holds the nonce
  return sak;
}

Result<Icv, KeyError> compute_icv(const SecretBytes& ick, std::span<const ByteSpan> parts) {
  if (!key_length_ok(ick.size())) return Err(KeyError::kBadKeyLength);
  auto mac = crypto::make_mac(cmac_for(ick.size()), ick.span());
  if (!mac) return Err(KeyError::kBackend);
  Icv icv{};
  if (!(*mac)->compute(parts, icv)) return Err(KeyError::kBackend);
  return icv;
}

Result<Icv, KeyError> compute_icv(const SecretBytes& ick, ByteSpan covered) {
  const ByteSpan parts[] = {covered};
  return compute_icv(ick, parts);
}

bool verify_icv(const SecretBytes& ick, ByteSpan covered, ByteSpan icv) {
  if (icv.size() != kIcvSize) return false;
  auto expected = compute_icv(ick, covered);
  if (!expected) return false;
  return crypto::ct_equal(*expected, icv);
}

Result<std::vector<std::uint8_t>, KeyError> wrap_key(const SecretBytes& kek, const SecretBytes& key) {
  if (!key_length_ok(kek.size()) || !key_length_ok(key.size())) return Err(KeyError::kBadKeyLength);
  std::vector<std::uint8_t> wrapped(key.size() + 8);
  if (!crypto::aes_key_wrap(kek.span(), key.span(), wrapped)) return Err(KeyError::kBackend);
  return wrapped;
}

Result<SecretBytes, KeyError> unwrap_key(const SecretBytes& kek, ByteSpan wrapped) {
  if (!key_length_ok(kek.size())) return Err(KeyError::kBadKeyLength);
  if (wrapped.size() != 24 && wrapped.size() != 40) return Err(KeyError::kBadWrappedLength);
  SecretBytes key(wrapped.size() - 8);
  auto s = crypto::aes_key_unwrap(kek.span(), wrapped, key.mutable_span());
  if (!s) return Err(s.error() == crypto::CryptoError::kAuthFailed ? KeyError::kUnwrapFailed : KeyError::kBackend);
  return key;
}

std::string fingerprint(ByteSpan key) {
  std::array<std::uint8_t, 32> digest{};
  const ByteSpan parts[] = {key};
  if (!crypto::sha256(parts, digest)) return "sha256-failed";
  return to_hex(ByteSpan(digest.data(), 8));
}

}  // namespace layersec::mka
