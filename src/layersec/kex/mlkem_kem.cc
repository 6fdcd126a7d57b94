// ML-KEM-512/768/1024 (crypto::MlKem, FIPS 203) and the hybrid
// x25519+ml-kem-768 behind the kex::Kem interface.
#include <cstring>

#include "layersec/crypto/kdf.h"
#include "layersec/crypto/mlkem.h"
#include "layersec/kex/kem_internal.h"

namespace layersec::kex::detail {

namespace {

using crypto::MlKem;
using crypto::MlKemError;
using crypto::MlKemParameterSet;

KemError map_error(MlKemError e) {
  switch (e) {
    case MlKemError::kBadSeedLength: return KemError::kBadSeed;
    case MlKemError::kBadEncapsKeyLength:
    case MlKemError::kEncapsKeyNotReduced: return KemError::kBadPublicKey;
    case MlKemError::kBadDecapsKeyLength:
    case MlKemError::kDecapsKeyHashMismatch: return KemError::kBadPrivateKey;
    case MlKemError::kBadCiphertextLength: return KemError::kBadCiphertextLength;
    case MlKemError::kBadOutputLength:
    case MlKemError::kBackend: return KemError::kBackend;
  }
  return KemError::kBackend;
}

class MlKemPrivateKey final : public KemPrivateKey {
 public:
  MlKemPrivateKey(KemScheme s, SecretBytes dk) : scheme_(s), dk_(std::move(dk)) {}
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] const SecretBytes& dk() const { return dk_; }

 private:
  KemScheme scheme_;
  SecretBytes dk_;
};

MlKemParameterSet to_set(KemScheme s) {
  switch (s) {
    case KemScheme::kMlKem512: return MlKemParameterSet::kMlKem512;
    case KemScheme::kMlKem1024: return MlKemParameterSet::kMlKem1024;
    default: return MlKemParameterSet::kMlKem768;
  }
}

class MlKemKem final : public Kem {
 public:
  explicit MlKemKem(KemScheme s) : scheme_(s), kem_(to_set(s)) {}
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] std::size_t public_key_size() const override { return kem_.params().encaps_key_size; }
  [[nodiscard]] std::size_t ciphertext_size() const override { return kem_.params().ciphertext_size; }
  [[nodiscard]] std::size_t shared_secret_size() const override { return MlKem::kSharedSecretSize; }
  [[nodiscard]] std::string_view seed_help() const override {
    return "keygen: d || z (64 bytes, FIPS 203 KeyGen_internal); encaps: m (32 bytes, Encaps_internal)";
  }

  Result<KemKeyPair, KemError> generate() override {
    SecretBytes dz = crypto::random_key(64);
    if (dz.size() != 64) return Err(KemError::kBackend);
    return generate_from_seed(dz.span());
  }

  Result<KemKeyPair, KemError> generate_from_seed(ByteSpan seed) override {
    if (seed.size() != 64) return Err(KemError::kBadSeed);
    KemKeyPair kp;
    kp.public_key.resize(kem_.params().encaps_key_size);
    kp.private_key = SecretBytes(kem_.params().decaps_key_size);
    auto st = kem_.keygen_internal(seed.first(32), seed.subspan(32), kp.public_key, kp.private_key.mutable_span());
    if (!st) return Err(map_error(st.error()));
    return kp;
  }

  Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) override {
    SecretBytes m = crypto::random_key(32);
    if (m.size() != 32) return Err(KemError::kBackend);
    return encapsulate_with_seed(public_key, m.span());
  }

  Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) override {
    Encapsulation e;
    e.ciphertext.resize(kem_.params().ciphertext_size);
    e.shared_secret = SecretBytes(MlKem::kSharedSecretSize);
    auto st = kem_.encaps_internal(public_key, seed, e.ciphertext, e.shared_secret.mutable_span());
    if (!st) return Err(map_error(st.error()));
    return e;
  }

  Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) override {
    auto st = kem_.check_decaps_key(private_key);
    if (!st) return Err(map_error(st.error()));
    return std::unique_ptr<KemPrivateKey>(std::make_unique<MlKemPrivateKey>(scheme_, SecretBytes(private_key)));
  }

  Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) override {
    if (key.scheme() != scheme_) return Err(KemError::kWrongScheme);
    const auto& dk = static_cast<const MlKemPrivateKey&>(key).dk();
    SecretBytes k(MlKem::kSharedSecretSize);
    // The key passed check_decaps_key() in load_private_key().
    auto st = kem_.decaps_checked_key(dk.span(), ciphertext, k.mutable_span());
    if (!st) return Err(map_error(st.error()));
    return k;
  }
  using Kem::decapsulate;

  MlKem& raw() { return kem_; }

 private:
  KemScheme scheme_;
  MlKem kem_;
};

// Hybrid X25519 + ML-KEM-768. Public key pk_X (32) || ek (1184); private key
// sk_X (32) || dk (2400); ciphertext ct_X (32, ephemeral X25519 public key) ||
// c (1088). The X25519 part is the raw RFC 7748 DH (not the RFC 9180 DHKEM,
// whose binding the transcript below already gives). Shared secret:
//   HKDF-SHA256(salt = "", IKM = K_mlkem || DH,
//               info = "layersec hybrid x25519+ml-kem-768 v1" || ct_X || pk_X || c || ek, 32)
// so the result depends on both secrets and on the whole transcript; it stays
// secret while either component is unbroken.
class HybridKem final : public Kem {
 public:
  HybridKem() : x_(make_dh_kem(KemScheme::kX25519)), m_(KemScheme::kMlKem768) {}
  [[nodiscard]] KemScheme scheme() const override { return KemScheme::kHybridX25519MlKem768; }
  [[nodiscard]] std::size_t public_key_size() const override { return 32 + m_.public_key_size(); }
  [[nodiscard]] std::size_t ciphertext_size() const override { return 32 + m_.ciphertext_size(); }
  [[nodiscard]] std::size_t shared_secret_size() const override { return 32; }
  [[nodiscard]] std::string_view seed_help() const override {
    return "keygen: x25519 scalar (32) || d || z (64); encaps: ephemeral x25519 scalar (32) || m (32)";
  }

  Result<KemKeyPair, KemError> generate() override {
    SecretBytes seed = crypto::random_key(96);
    if (seed.size() != 96) return Err(KemError::kBackend);
    return generate_from_seed(seed.span());
  }

  Result<KemKeyPair, KemError> generate_from_seed(ByteSpan seed) override {
    if (seed.size() != 96) return Err(KemError::kBadSeed);
    auto x = x_->generate_from_seed(seed.first(32));
    if (!x) return Err(x.error());
    auto m = m_.generate_from_seed(seed.subspan(32));
    if (!m) return Err(m.error());
    KemKeyPair kp;
    kp.public_key = x->public_key;
    kp.public_key.insert(kp.public_key.end(), m->public_key.begin(), m->public_key.end());
    kp.private_key = SecretBytes(32 + m->private_key.size());
    std::memcpy(kp.private_key.data(), x->private_key.data(), 32);
    std::memcpy(kp.private_key.data() + 32, m->private_key.data(), m->private_key.size());
    return kp;
  }

  Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) override {
    SecretBytes seed = crypto::random_key(64);
    if (seed.size() != 64) return Err(KemError::kBackend);
    return encapsulate_with_seed(public_key, seed.span());
  }

  Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) override {
    if (public_key.size() != public_key_size()) return Err(KemError::kBadPublicKey);
    if (seed.size() != 64) return Err(KemError::kBadSeed);
    const ByteSpan pk_x = public_key.first(32);
    const ByteSpan ek = public_key.subspan(32);
    // Ephemeral X25519 key pair from the seed, then the raw DH.
    auto eph = x_->load_private_key(seed.first(32));
    if (!eph) return Err(KemError::kBadSeed);
    auto dh = dh_raw(*x_, **eph, pk_x);
    if (!dh) return Err(KemError::kBadPublicKey);
    auto m = m_.encapsulate_with_seed(ek, seed.subspan(32));
    if (!m) return Err(m.error());
    Encapsulation e;
    const ByteSpan eph_pub = dh_public(**eph);
    e.ciphertext.assign(eph_pub.begin(), eph_pub.end());
    e.ciphertext.insert(e.ciphertext.end(), m->ciphertext.begin(), m->ciphertext.end());
    auto ss = combine(m->shared_secret.span(), dh->span(), e.ciphertext, public_key);
    if (!ss) return Err(ss.error());
    e.shared_secret = std::move(*ss);
    return e;
  }

  class Key final : public KemPrivateKey {
   public:
    [[nodiscard]] KemScheme scheme() const override { return KemScheme::kHybridX25519MlKem768; }
    std::unique_ptr<KemPrivateKey> x;   // loaded X25519 key
    std::vector<std::uint8_t> pk;       // pk_X || ek
    std::unique_ptr<KemPrivateKey> dk;  // loaded ML-KEM-768 key
  };

  Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) override {
    if (private_key.size() != 32 + mlkem_params().decaps_key_size) return Err(KemError::kBadPrivateKey);
    auto key = std::make_unique<Key>();
    auto x = x_->load_private_key(private_key.first(32));  // recomputes pk_X
    if (!x) return Err(KemError::kBadPrivateKey);
    auto dk = m_.load_private_key(private_key.subspan(32));
    if (!dk) return Err(dk.error());
    const ByteSpan pk_x = dh_public(**x);
    key->pk.assign(pk_x.begin(), pk_x.end());
    key->x = std::move(*x);
    const auto p = mlkem_params();
    const ByteSpan ek = private_key.subspan(32 + 384 * static_cast<std::size_t>(p.k), p.encaps_key_size);
    key->pk.insert(key->pk.end(), ek.begin(), ek.end());
    key->dk = std::move(*dk);
    return std::unique_ptr<KemPrivateKey>(std::move(key));
  }

  Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) override {
    if (key.scheme() != scheme()) return Err(KemError::kWrongScheme);
    if (ciphertext.size() != ciphertext_size()) return Err(KemError::kBadCiphertextLength);
    const auto& k = static_cast<const Key&>(key);
    auto dh = dh_raw(*x_, *k.x, ciphertext.first(32));
    if (!dh) return Err(KemError::kBadCiphertext);
    auto m = m_.decapsulate(*k.dk, ciphertext.subspan(32));
    if (!m) return Err(m.error());
    return combine(m->span(), dh->span(), ciphertext, k.pk);
  }
  using Kem::decapsulate;

 private:
  static const crypto::MlKemParams& mlkem_params() {
    return crypto::mlkem_params(MlKemParameterSet::kMlKem768);
  }

  static Result<SecretBytes, KemError> combine(ByteSpan k_mlkem, ByteSpan dh, ByteSpan ciphertext,
                                               ByteSpan public_key) {
    static constexpr std::string_view kLabel = "layersec hybrid x25519+ml-kem-768 v1";
    SecretBytes ikm(k_mlkem.size() + dh.size());
    std::memcpy(ikm.data(), k_mlkem.data(), k_mlkem.size());
    std::memcpy(ikm.data() + k_mlkem.size(), dh.data(), dh.size());
    // info = label || ct_X || pk_X || c || ek (sizes checked by the callers)
    std::vector<std::uint8_t> info(kLabel.size() + ciphertext.size() + public_key.size());
    std::uint8_t* p = info.data();
    std::memcpy(p, kLabel.data(), kLabel.size());
    p += kLabel.size();
    std::memcpy(p, ciphertext.data(), 32);
    p += 32;
    std::memcpy(p, public_key.data(), 32);
    p += 32;
    std::memcpy(p, ciphertext.data() + 32, ciphertext.size() - 32);
    p += ciphertext.size() - 32;
    std::memcpy(p, public_key.data() + 32, public_key.size() - 32);
    SecretBytes out(32);
    if (!crypto::hkdf_sha256({}, ikm.span(), info, out.mutable_span()).ok()) return Err(KemError::kBackend);
    return out;
  }

  std::unique_ptr<Kem> x_;
  MlKemKem m_;
};

}  // namespace

std::unique_ptr<Kem> make_mlkem_kem(KemScheme scheme) { return std::make_unique<MlKemKem>(scheme); }
std::unique_ptr<Kem> make_hybrid_kem() { return std::make_unique<HybridKem>(); }

}  // namespace layersec::kex::detail

