// DH-KEMs per RFC 9180 §4.1: DHKEM(X25519, HKDF-SHA256) (kem_id 0x0020),
// DHKEM(P-256, HKDF-SHA256) (0x0010) and DHKEM(P-521, HKDF-SHA512) (0x0012),
// on OpenSSL EVP_PKEY.
//
//   Encap(pkR):  skE, pkE fresh; dh = DH(skE, pkR); enc = SerializePublicKey(pkE)
//                shared_secret = ExtractAndExpand(dh, enc || pkR)
//   Decap(enc, skR): dh = DH(skR, Deserialize(enc)); same derivation
//   ExtractAndExpand: eae_prk = LabeledExtract("", "eae_prk", dh)
//                     LabeledExpand(eae_prk, "shared_secret", kem_context, Nsecret)
//   suite_id = "KEM" || I2OSP(kem_id, 2); labels prefixed by "HPKE-v1" (§4).
//
// Peer points are validated when they are imported (EC_POINT_oct2point checks
// that the point is on the curve; P-256 and P-521 have cofactor 1, so that is
// the whole check and the derive step skips OpenSSL's repeated full check).
// An all-zero X25519 output (low-order point) is rejected by OpenSSL.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include "layersec/kex/kem_internal.h"

namespace layersec::kex::detail {

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
struct BnFree {
  void operator()(BIGNUM* p) const { BN_clear_free(p); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

struct CurveInfo {
  KemScheme scheme;
  std::uint16_t kem_id;
  const char* digest;
  std::size_t n_secret;
  std::size_t n_pk;
  std::size_t n_sk;
  const char* group;  // nullptr for X25519
  int nid;
};

constexpr CurveInfo kX25519{KemScheme::kX25519, 0x0020, "SHA256", 32, 32, 32, nullptr, NID_X25519};
constexpr CurveInfo kP256{KemScheme::kEcdhP256, 0x0010, "SHA256", 32, 65, 32, "P-256", NID_X9_62_prime256v1};
constexpr CurveInfo kP521{KemScheme::kEcdhP521, 0x0012, "SHA512", 64, 133, 66, "P-521", NID_secp521r1};

class DhPrivateKey final : public KemPrivateKey {
 public:
  DhPrivateKey(KemScheme s, PkeyPtr key, std::vector<std::uint8_t> pub)
      : scheme_(s), key_(std::move(key)), pub_(std::move(pub)) {}
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] EVP_PKEY* pkey() const { return key_.get(); }
  [[nodiscard]] const std::vector<std::uint8_t>& pub() const { return pub_; }

 private:
  KemScheme scheme_;
  PkeyPtr key_;
  std::vector<std::uint8_t> pub_;
};

// DH(sk, pk) into a SecretBytes of the field size.
Result<SecretBytes, KemError> derive(EVP_PKEY* priv, EVP_PKEY* peer) {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, priv, nullptr));
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1) return Err(KemError::kBackend);
  // validate = 0: the peer was checked on import (see the file comment).
  if (EVP_PKEY_derive_set_peer_ex(ctx.get(), peer, 0) != 1) return Err(KemError::kBadCiphertext);
  std::size_t len = 0;
  if (EVP_PKEY_derive(ctx.get(), nullptr, &len) != 1) return Err(KemError::kBackend);
  SecretBytes out(len);
  if (EVP_PKEY_derive(ctx.get(), out.data(), &len) != 1) return Err(KemError::kBadCiphertext);
  if (len != out.size()) return Err(KemError::kBackend);
  return out;
}

class DhKem final : public Kem {
 public:
  explicit DhKem(const CurveInfo& c) : c_(c) {
    if (c_.group != nullptr) {
      group_.reset(EC_GROUP_new_by_curve_name(c_.nid));
      if (!group_) throw std::runtime_error("DH-KEM: OpenSSL lacks the curve");
    }
    suite_id_ = {'K', 'E', 'M', static_cast<std::uint8_t>(c_.kem_id >> 8), static_cast<std::uint8_t>(c_.kem_id)};
  }
  [[nodiscard]] KemScheme scheme() const override { return c_.scheme; }
  [[nodiscard]] std::size_t public_key_size() const override { return c_.n_pk; }
  [[nodiscard]] std::size_t ciphertext_size() const override { return c_.n_pk; }
  [[nodiscard]] std::size_t shared_secret_size() const override { return c_.n_secret; }
  [[nodiscard]] std::string_view seed_help() const override {
    return c_.group == nullptr
               ? "keygen: the 32-byte X25519 private key; encaps: the ephemeral private key skE (32 bytes)"
               : "keygen: the private scalar, big-endian, Nsk bytes (32 for P-256, 66 for P-521); "
                 "encaps: the ephemeral scalar skE (same size)";
  }

  Result<KemKeyPair, KemError> generate() override {
    EVP_PKEY* raw = c_.group == nullptr ? EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")
                                        : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", c_.group);
    if (raw == nullptr) return Err(KemError::kBackend);
    PkeyPtr key(raw);
    KemKeyPair kp;
    kp.private_key = SecretBytes(c_.n_sk);
    if (!export_private(key.get(), kp.private_key.mutable_span())) return Err(KemError::kBackend);
    auto pub = export_public(key.get());
    if (!pub) return Err(pub.error());
    kp.public_key = std::move(*pub);
    return kp;
  }

  Result<KemKeyPair, KemError> generate_from_seed(ByteSpan seed) override {
    auto key = load(seed, KemError::kBadSeed);
    if (!key) return Err(key.error());
    KemKeyPair kp;
    kp.public_key = (*key)->pub();
    kp.private_key = SecretBytes(seed);
    return kp;
  }

  Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) override {
    auto peer = import_public(public_key);
    if (!peer) return Err(KemError::kBadPublicKey);
    // A fresh ephemeral key used as generated (no re-derivation of its public key).
    EVP_PKEY* raw = c_.group == nullptr ? EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")
                                        : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", c_.group);
    if (raw == nullptr) return Err(KemError::kBackend);
    PkeyPtr eph(raw);
    auto pub = export_public(eph.get());
    if (!pub) return Err(pub.error());
    auto dh = derive(eph.get(), peer->get());
    if (!dh) return Err(KemError::kBadPublicKey);
    Encapsulation e;
    e.ciphertext = std::move(*pub);
    auto ss = extract_and_expand(dh->span(), e.ciphertext, public_key);
    if (!ss) return Err(ss.error());
    e.shared_secret = std::move(*ss);
    return e;
  }

  Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) override {
    auto peer = import_public(public_key);
    if (!peer) return Err(KemError::kBadPublicKey);
    auto eph = load(seed, KemError::kBadSeed);
    if (!eph) return Err(eph.error());
    auto dh = derive((*eph)->pkey(), peer->get());
    if (!dh) return Err(KemError::kBadPublicKey);
    Encapsulation e;
    e.ciphertext = (*eph)->pub();
    auto ss = extract_and_expand(dh->span(), e.ciphertext, public_key);
    if (!ss) return Err(ss.error());
    e.shared_secret = std::move(*ss);
    return e;
  }

  Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) override {
    auto key = load(private_key, KemError::kBadPrivateKey);
    if (!key) return Err(key.error());
    return std::unique_ptr<KemPrivateKey>(std::move(*key));
  }

  Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) override {
    if (key.scheme() != c_.scheme) return Err(KemError::kWrongScheme);
    if (ciphertext.size() != c_.n_pk) return Err(KemError::kBadCiphertextLength);
    const auto& k = static_cast<const DhPrivateKey&>(key);
    auto peer = import_public(ciphertext);
    if (!peer) return Err(KemError::kBadCiphertext);
    auto dh = derive(k.pkey(), peer->get());
    if (!dh) return Err(dh.error());
    return extract_and_expand(dh->span(), ciphertext, k.pub());
  }
  using Kem::decapsulate;

  // Raw DH for the hybrid.
  Result<SecretBytes, KemError> raw(const KemPrivateKey& key, ByteSpan peer_public) {
    if (key.scheme() != c_.scheme) return Err(KemError::kWrongScheme);
    auto peer = import_public(peer_public);
    if (!peer) return Err(KemError::kBadCiphertext);
    return derive(static_cast<const DhPrivateKey&>(key).pkey(), peer->get());
  }

 private:
  struct GroupFree {
    void operator()(EC_GROUP* g) const { EC_GROUP_free(g); }
  };

  // RFC 9180 §4.1 ExtractAndExpand with §4 labels.
  Result<SecretBytes, KemError> extract_and_expand(ByteSpan dh, ByteSpan enc, ByteSpan pk_r) const {
    static constexpr std::string_view kV1 = "HPKE-v1";
    static constexpr std::string_view kEae = "eae_prk";
    static constexpr std::string_view kSs = "shared_secret";
    const std::size_t n_h = std::string_view(c_.digest) == "SHA512" ? 64 : 32;
    // labeled_ikm = "HPKE-v1" || suite_id || "eae_prk" || dh
    SecretBytes ikm(kV1.size() + suite_id_.size() + kEae.size() + dh.size());
    std::uint8_t* p = ikm.data();
    p = std::copy(kV1.begin(), kV1.end(), p);
    p = std::copy(suite_id_.begin(), suite_id_.end(), p);
    p = std::copy(kEae.begin(), kEae.end(), p);
    std::copy(dh.begin(), dh.end(), p);
    SecretBytes prk(n_h);
    if (!hkdf_extract(c_.digest, {}, ikm.span(), prk.mutable_span())) return Err(KemError::kBackend);
    // labeled_info = I2OSP(L, 2) || "HPKE-v1" || suite_id || "shared_secret" || enc || pkR
    std::vector<std::uint8_t> info;
    info.reserve(2 + kV1.size() + suite_id_.size() + kSs.size() + enc.size() + pk_r.size());
    info.push_back(static_cast<std::uint8_t>(c_.n_secret >> 8));
    info.push_back(static_cast<std::uint8_t>(c_.n_secret));
    info.insert(info.end(), kV1.begin(), kV1.end());
    info.insert(info.end(), suite_id_.begin(), suite_id_.end());
    info.insert(info.end(), kSs.begin(), kSs.end());
    info.insert(info.end(), enc.begin(), enc.end());
    info.insert(info.end(), pk_r.begin(), pk_r.end());
    SecretBytes out(c_.n_secret);
    if (!hkdf_expand(c_.digest, prk.span(), info, out.mutable_span())) return Err(KemError::kBackend);
    return out;
  }

  bool export_private(EVP_PKEY* key, MutableByteSpan out) const {
    if (c_.group == nullptr) {
      std::size_t len = out.size();
      return EVP_PKEY_get_raw_private_key(key, out.data(), &len) == 1 && len == out.size();
    }
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &bn) != 1) return false;
    BnPtr guard(bn);
    return BN_bn2binpad(bn, out.data(), static_cast<int>(out.size())) == static_cast<int>(out.size());
  }

  Result<std::vector<std::uint8_t>, KemError> export_public(EVP_PKEY* key) const {
    std::vector<std::uint8_t> pub(c_.n_pk);
    std::size_t len = pub.size();
    const int ok = c_.group == nullptr
                       ? EVP_PKEY_get_raw_public_key(key, pub.data(), &len)
                       : EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pub.data(), pub.size(), &len);
    if (ok != 1 || len != pub.size()) return Err(KemError::kBackend);
    return pub;
  }

  // Private key bytes (sk, or sk || pk which must match) -> loaded key.
  Result<std::unique_ptr<DhPrivateKey>, KemError> load(ByteSpan bytes, KemError bad) const {
    if (bytes.size() != c_.n_sk && bytes.size() != c_.n_sk + c_.n_pk) return Err(bad);
    const ByteSpan sk = bytes.first(c_.n_sk);
    PkeyPtr key;
    std::vector<std::uint8_t> pub(c_.n_pk);
    if (c_.group == nullptr) {
      key.reset(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, sk.data(), sk.size()));
      if (!key) return Err(bad);
      auto p = export_public(key.get());
      if (!p) return Err(p.error());
      pub = std::move(*p);
    } else {
      BnPtr bn(BN_secure_new());
      if (!bn || BN_bin2bn(sk.data(), static_cast<int>(sk.size()), bn.get()) == nullptr) return Err(KemError::kBackend);
      // 0 < sk < n (RFC 9180 §7.1.3, SEC1 §3.2.1).
      if (BN_is_zero(bn.get()) || BN_cmp(bn.get(), EC_GROUP_get0_order(group_.get())) >= 0) return Err(bad);
      std::unique_ptr<EC_POINT, decltype(&EC_POINT_free)> point(EC_POINT_new(group_.get()), EC_POINT_free);
      if (!point || EC_POINT_mul(group_.get(), point.get(), bn.get(), nullptr, nullptr, nullptr) != 1 ||
          EC_POINT_point2oct(group_.get(), point.get(), POINT_CONVERSION_UNCOMPRESSED, pub.data(), pub.size(),
                             nullptr) != pub.size())
        return Err(KemError::kBackend);
      key = build_ec(bn.get(), pub);
      if (!key) return Err(KemError::kBackend);
    }
    if (bytes.size() == c_.n_sk + c_.n_pk && !std::equal(pub.begin(), pub.end(), bytes.begin() + c_.n_sk))
      return Err(bad);
    return std::make_unique<DhPrivateKey>(c_.scheme, std::move(key), std::move(pub));
  }

  // EC EVP_PKEY from a private scalar (may be null) and an encoded public point.
  PkeyPtr build_ec(const BIGNUM* priv, ByteSpan pub) const {
    std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
    if (!bld) return nullptr;
    if (OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, c_.group, 0) != 1) return nullptr;
    if (priv != nullptr && OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv) != 1) return nullptr;
    if (OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, pub.data(), pub.size()) != 1)
      return nullptr;
    std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(bld.get()),
                                                                   OSSL_PARAM_free);
    PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1) return nullptr;
    EVP_PKEY* out = nullptr;
    if (EVP_PKEY_fromdata(ctx.get(), &out, priv != nullptr ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                          params.get()) != 1)
      return nullptr;
    return PkeyPtr(out);
  }

  // Public key / enc bytes -> EVP_PKEY, validating length, form and curve.
  Result<PkeyPtr, KemError> import_public(ByteSpan pub) const {
    if (pub.size() != c_.n_pk) return Err(KemError::kBadPublicKey);
    if (c_.group == nullptr) {
      PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, pub.data(), pub.size()));
      if (!key) return Err(KemError::kBadPublicKey);
      return key;
    }
    if (pub[0] != 0x04) return Err(KemError::kBadPublicKey);  // uncompressed only
    PkeyPtr key = build_ec(nullptr, pub);                       // oct2point checks the curve equation
    if (!key) return Err(KemError::kBadPublicKey);
    return key;
  }

  CurveInfo c_;
  std::unique_ptr<EC_GROUP, GroupFree> group_;
  std::array<std::uint8_t, 5> suite_id_{};
};

}  // namespace

std::unique_ptr<Kem> make_dh_kem(KemScheme scheme) {
  switch (scheme) {
    case KemScheme::kX25519: return std::make_unique<DhKem>(kX25519);
    case KemScheme::kEcdhP256: return std::make_unique<DhKem>(kP256);
    case KemScheme::kEcdhP521: return std::make_unique<DhKem>(kP521);
    default: throw std::runtime_error("not a DH-KEM scheme");
  }
}

Result<SecretBytes, KemError> dh_raw(Kem& dh_kem, const KemPrivateKey& key, ByteSpan peer_public) {
  return static_cast<DhKem&>(dh_kem).raw(key, peer_public);
}

ByteSpan dh_public(const KemPrivateKey& key) { return static_cast<const DhPrivateKey&>(key).pub(); }

}  // namespace layersec::kex::detail
