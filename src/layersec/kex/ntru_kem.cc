// NTRUEncrypt key transport through libntru 0.5 (the NTRU paper's scheme):
// a random 32-byte secret encrypted with ntru_encrypt (SVES padding of
// EESS #1 v3.1, as implemented by libntru).
//
// Debian's libntru is built with NTRU_AVOID_HAMMING_WT_PATENT, which removes
// the product-form sets the paper used (EES443EP1, EES743EP1) and changes the
// key-pair layout; the layersec_ntru target compiles with the same define.
// Supported here: EES613EP1 (128-bit) and EES1171EP1 (256-bit), the library's
// own defaults at those levels. Every scheme name carries the set.
//
// Random operations use one libntru default RNG context per Kem (CTR_DRBG
// seeded from /dev/urandom once); the deterministic variants use libntru's
// CTR_DRBG seeded with the caller's bytes (ntru_rand_init_det).
#include <cstring>
#include <memory>
#include <stdexcept>

#include <libntru/ntru.h>

#include "layersec/crypto/kdf.h"
#include "layersec/kex/kem_internal.h"

namespace layersec::kex::detail {

namespace {

constexpr std::size_t kSecret = 32;

// A libntru RNG context released on scope exit.
class NtruRng {
 public:
  NtruRng() = default;
  ~NtruRng() {
    if (ok_) (void)ntru_rand_release(&ctx_);
  }
  NtruRng(const NtruRng&) = delete;
  NtruRng& operator=(const NtruRng&) = delete;
  bool init_default() {
    gen_ = NTRU_RNG_DEFAULT;
    ok_ = ntru_rand_init(&ctx_, &gen_) == NTRU_SUCCESS;
    return ok_;
  }
  bool init_det(ByteSpan seed) {
    if (seed.empty() || seed.size() > 1024) return false;
    seed_.assign(seed.begin(), seed.end());
    gen_ = NTRU_RNG_CTR_DRBG;
    ok_ = ntru_rand_init_det(&ctx_, &gen_, seed_.data(), static_cast<std::uint16_t>(seed_.size())) == NTRU_SUCCESS;
    return ok_;
  }
  NtruRandContext* ctx() { return &ctx_; }

 private:
  NtruRandGen gen_{};
  NtruRandContext ctx_{};
  std::vector<std::uint8_t> seed_;
  bool ok_ = false;
};

class NtruPrivateKey final : public KemPrivateKey {
 public:
  explicit NtruPrivateKey(KemScheme s) : scheme_(s), kp_(std::make_unique<NtruEncKeyPair>()) {}
  ~NtruPrivateKey() override { secure_zero(kp_.get(), sizeof(NtruEncKeyPair)); }
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] NtruEncKeyPair* kp() const { return kp_.get(); }

 private:
  KemScheme scheme_;
  std::unique_ptr<NtruEncKeyPair> kp_;
};

class NtruKem final : public Kem {
 public:
  NtruKem(KemScheme s, const NtruEncParams& p) : scheme_(s), params_(p) {
    if (!rng_.init_default()) throw std::runtime_error("libntru: RNG initialisation failed");
    if (ntru_max_msg_len(&params_) < kSecret) throw std::runtime_error("libntru: set too small for the secret");
  }
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] std::size_t public_key_size() const override { return ntru_pub_len(&params_); }
  [[nodiscard]] std::size_t ciphertext_size() const override { return ntru_enc_len(&params_); }
  [[nodiscard]] std::size_t shared_secret_size() const override { return kSecret; }
  [[nodiscard]] std::string_view seed_help() const override {
    return "keygen: a seed for libntru's CTR_DRBG (1..1024 bytes); encaps: secret (32) || CTR_DRBG seed (>= 1 "
           "byte)";
  }
  [[nodiscard]] const char* set_name() const { return params_.name; }

  Result<KemKeyPair, KemError> generate() override { return generate_with(rng_); }

  Result<KemKeyPair, KemError> generate_from_seed(ByteSpan seed) override {
    NtruRng rng;
    if (!rng.init_det(seed)) return Err(KemError::kBadSeed);
    return generate_with(rng);
  }

  Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) override {
    SecretBytes secret = crypto::random_key(kSecret);
    if (secret.size() != kSecret) return Err(KemError::kBackend);
    return encrypt(public_key, std::move(secret), rng_);
  }

  Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) override {
    if (seed.size() <= kSecret) return Err(KemError::kBadSeed);
    NtruRng rng;
    if (!rng.init_det(seed.subspan(kSecret))) return Err(KemError::kBadSeed);
    return encrypt(public_key, SecretBytes(seed.first(kSecret)), rng);
  }

  Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) override {
    // u16 length || ntru_export_priv || ntru_export_pub
    ByteReader r(private_key);
    ByteReader priv = r.sub_u16_prefixed();
    const ByteSpan pub = r.rest();
    if (!r.ok() || priv.remaining() == 0 || priv.remaining() > ntru_priv_len(&params_) ||
        pub.size() != ntru_pub_len(&params_))
      return Err(KemError::kBadPrivateKey);
    auto key = std::make_unique<NtruPrivateKey>(scheme_);
    std::vector<std::uint8_t> buf(priv.rest().begin(), priv.rest().end());
    buf.resize(ntru_priv_len(&params_) + 16, 0);  // import reads at most priv_len bytes
    ntru_import_priv(buf.data(), &key->kp()->priv);
    secure_zero(buf.data(), buf.size());
    NtruEncParams from_key{};
    if (ntru_params_from_priv_key(&key->kp()->priv, &from_key) != NTRU_SUCCESS ||
        std::memcmp(from_key.oid, params_.oid, 3) != 0)
      return Err(KemError::kBadPrivateKey);
    if (!import_pub(pub, key->kp()->pub)) return Err(KemError::kBadPrivateKey);
    return std::unique_ptr<KemPrivateKey>(std::move(key));
  }

  Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) override {
    if (key.scheme() != scheme_) return Err(KemError::kWrongScheme);
    if (ciphertext.size() != ciphertext_size()) return Err(KemError::kBadCiphertextLength);
    const auto& k = static_cast<const NtruPrivateKey&>(key);
    std::vector<std::uint8_t> enc(ciphertext.begin(), ciphertext.end());
    SecretBytes dec(ntru_max_msg_len(&params_) + 1u);
    std::uint16_t dec_len = 0;
    if (ntru_decrypt(enc.data(), k.kp(), &params_, dec.data(), &dec_len) != NTRU_SUCCESS || dec_len != kSecret)
      return Err(KemError::kBadCiphertext);
    return SecretBytes(dec.span().first(kSecret));
  }
  using Kem::decapsulate;

 private:
  bool import_pub(ByteSpan bytes, NtruEncPubKey& pub) const {
    if (bytes.size() != ntru_pub_len(&params_)) return false;
    std::vector<std::uint8_t> buf(bytes.begin(), bytes.end());
    if (ntru_import_pub(buf.data(), &pub) != bytes.size()) return false;
    if (pub.q != params_.q || pub.h.N != params_.N) return false;
    // Canonical encoding only: re-export must reproduce the bytes.
    std::vector<std::uint8_t> again(bytes.size());
    ntru_export_pub(&pub, again.data());
    return again == buf;
  }

  Result<KemKeyPair, KemError> generate_with(NtruRng& rng) {
    auto kp = std::make_unique<NtruEncKeyPair>();
    if (ntru_gen_key_pair(&params_, kp.get(), rng.ctx()) != NTRU_SUCCESS) return Err(KemError::kBackend);
    KemKeyPair out;
    out.public_key.resize(ntru_pub_len(&params_));
    ntru_export_pub(&kp->pub, out.public_key.data());
    SecretBytes priv(ntru_priv_len(&params_) + 16u);
    const std::uint16_t priv_len = ntru_export_priv(&kp->priv, priv.data());
    secure_zero(kp.get(), sizeof(NtruEncKeyPair));
    out.private_key = SecretBytes(2u + priv_len + out.public_key.size());
    store_be16(out.private_key.data(), priv_len);
    std::memcpy(out.private_key.data() + 2, priv.data(), priv_len);
    std::memcpy(out.private_key.data() + 2 + priv_len, out.public_key.data(), out.public_key.size());
    return out;
  }

  Result<Encapsulation, KemError> encrypt(ByteSpan public_key, SecretBytes secret, NtruRng& rng) {
    NtruEncPubKey pub{};
    if (!import_pub(public_key, pub)) return Err(KemError::kBadPublicKey);
    Encapsulation e;
    e.ciphertext.resize(ciphertext_size());
    SecretBytes msg = secret.clone();
    if (ntru_encrypt(msg.data(), static_cast<std::uint16_t>(kSecret), &pub, &params_, rng.ctx(),
                     e.ciphertext.data()) != NTRU_SUCCESS)
      return Err(KemError::kBackend);
    e.shared_secret = std::move(secret);
    return e;
  }

  KemScheme scheme_;
  NtruEncParams params_;
  NtruRng rng_;
};

}  // namespace

std::unique_ptr<Kem> make_ntru_kem(KemScheme scheme) {
  switch (scheme) {
    case KemScheme::kNtruEes613ep1: return std::make_unique<NtruKem>(scheme, EES613EP1);
    case KemScheme::kNtruEes1171ep1: return std::make_unique<NtruKem>(scheme, EES1171EP1);
    default: throw std::runtime_error("not an NTRU scheme");
  }
}

}  // namespace layersec::kex::detail
