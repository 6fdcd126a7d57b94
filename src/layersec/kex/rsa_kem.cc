// RSA-OAEP key transport as a KEM (the paper's Mode B, §4.1.1 of the hybrid
// paper; the NTRU paper's RSA baseline): a random 32-byte secret encrypted
// with RSAES-OAEP (RFC 8017 §7.1; SHA-256, MGF1-SHA-256, empty label).
//
// Random encapsulation uses OpenSSL's OAEP. The deterministic variant encodes
// EME-OAEP here (RFC 8017 §7.1.1 step 2) with the given OAEP seed and applies
// the raw RSA permutation (RSA_NO_PADDING), so a known answer can be checked;
// decapsulation always uses OpenSSL's OAEP decoding, which cross-checks our
// encoder in the tests. A ciphertext that fails OAEP decoding is an explicit
// kBadCiphertext (key transport has no implicit rejection).
//
// RSA-15360 key generation takes minutes: tests never do it; benchmarks load a
// pre-generated key (load_rsa_private_key_pem) and say so.
#include <cstring>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "layersec/crypto/kdf.h"
#include "layersec/kex/kem_internal.h"

namespace layersec::kex::detail {

namespace {

constexpr std::size_t kSecret = 32;
constexpr std::size_t kHashLen = 32;

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;

bool set_oaep(EVP_PKEY_CTX* ctx) {
  return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1;
}

// MGF1 with SHA-256 (RFC 8017 Appendix B.2.1): out ^= MGF1(seed, out.size()).
bool mgf1_xor(ByteSpan seed, MutableByteSpan out) {
  std::uint8_t block[kHashLen];
  std::size_t done = 0;
  for (std::uint32_t counter = 0; done < out.size(); ++counter) {
    std::uint8_t c[4];
    store_be32(c, counter);
    const ByteSpan parts[] = {seed, ByteSpan(c, 4)};
    if (!crypto::sha256(parts, block).ok()) return false;
    for (std::size_t i = 0; i < kHashLen && done < out.size(); ++i) out[done++] ^= block[i];
  }
  secure_zero(block, sizeof(block));
  return true;
}

class RsaPrivateKey final : public KemPrivateKey {
 public:
  RsaPrivateKey(KemScheme s, PkeyPtr key, PkeyCtxPtr ctx) : scheme_(s), key_(std::move(key)), ctx_(std::move(ctx)) {}
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] EVP_PKEY_CTX* ctx() const { return ctx_.get(); }

 private:
  KemScheme scheme_;
  PkeyPtr key_;
  PkeyCtxPtr ctx_;  // decrypt context with OAEP parameters, built once
};

class RsaKem final : public Kem {
 public:
  RsaKem(KemScheme s, int bits) : scheme_(s), bits_(bits) {}
  [[nodiscard]] KemScheme scheme() const override { return scheme_; }
  [[nodiscard]] std::size_t public_key_size() const override { return 0; }  // DER, varies
  [[nodiscard]] std::size_t ciphertext_size() const override { return static_cast<std::size_t>(bits_) / 8; }
  [[nodiscard]] std::size_t shared_secret_size() const override { return kSecret; }
  [[nodiscard]] std::string_view seed_help() const override {
    return "keygen: a DER (PKCS#8 or PKCS#1) RSA private key of the right size, since RSA keys are not derived "
           "from seeds; encaps: secret (32) || OAEP seed (32)";
  }

  Result<KemKeyPair, KemError> generate() override {
    EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(bits_));
    if (raw == nullptr) return Err(KemError::kBackend);
    return export_pair(PkeyPtr(raw));
  }

  Result<KemKeyPair, KemError> generate_from_seed(ByteSpan der_private_key) override {
    auto key = parse_private(der_private_key);
    if (!key) return Err(KemError::kBadSeed);
    return export_pair(std::move(*key));
  }

  Result<Encapsulation, KemError> encapsulate(ByteSpan public_key) override {
    auto pub = parse_public(public_key);
    if (!pub) return Err(pub.error());
    PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pub->get(), nullptr));
    if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) != 1 || !set_oaep(ctx.get())) return Err(KemError::kBackend);
    Encapsulation e;
    e.shared_secret = crypto::random_key(kSecret);
    if (e.shared_secret.size() != kSecret) return Err(KemError::kBackend);
    e.ciphertext.resize(ciphertext_size());
    std::size_t len = e.ciphertext.size();
    if (EVP_PKEY_encrypt(ctx.get(), e.ciphertext.data(), &len, e.shared_secret.data(), kSecret) != 1 ||
        len != e.ciphertext.size())
      return Err(KemError::kBackend);
    return e;
  }

  Result<Encapsulation, KemError> encapsulate_with_seed(ByteSpan public_key, ByteSpan seed) override {
    if (seed.size() != kSecret + kHashLen) return Err(KemError::kBadSeed);
    auto pub = parse_public(public_key);
    if (!pub) return Err(pub.error());
    // EME-OAEP encoding, RFC 8017 §7.1.1 step 2 (L = "", hLen = 32).
    const std::size_t k = ciphertext_size();
    SecretBytes em(k);
    std::uint8_t* masked_seed = em.data() + 1;
    std::uint8_t* db = em.data() + 1 + kHashLen;
    const std::size_t db_len = k - kHashLen - 1;
    const ByteSpan empty_label[] = {ByteSpan{}};
    if (!crypto::sha256(empty_label, MutableByteSpan(db, kHashLen)).ok()) return Err(KemError::kBackend);  // lHash
    db[db_len - kSecret - 1] = 0x01;  // PS (zeros) || 0x01 || M
    std::memcpy(db + db_len - kSecret, seed.data(), kSecret);
    std::memcpy(masked_seed, seed.data() + kSecret, kHashLen);
    if (!mgf1_xor(ByteSpan(masked_seed, kHashLen), MutableByteSpan(db, db_len)) ||
        !mgf1_xor(ByteSpan(db, db_len), MutableByteSpan(masked_seed, kHashLen)))
      return Err(KemError::kBackend);
    // c = RSAEP(n, e, OS2IP(EM)).
    PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pub->get(), nullptr));
    if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_NO_PADDING) != 1)
      return Err(KemError::kBackend);
    Encapsulation e;
    e.ciphertext.resize(k);
    std::size_t len = k;
    if (EVP_PKEY_encrypt(ctx.get(), e.ciphertext.data(), &len, em.data(), k) != 1 || len != k)
      return Err(KemError::kBackend);
    e.shared_secret = SecretBytes(seed.first(kSecret));
    return e;
  }

  Result<std::unique_ptr<KemPrivateKey>, KemError> load_private_key(ByteSpan private_key) override {
    auto key = parse_private(private_key);
    if (!key) return Err(key.error());
    PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key->get(), nullptr));
    if (!ctx || EVP_PKEY_decrypt_init(ctx.get()) != 1 || !set_oaep(ctx.get())) return Err(KemError::kBackend);
    return std::unique_ptr<KemPrivateKey>(std::make_unique<RsaPrivateKey>(scheme_, std::move(*key), std::move(ctx)));
  }

  Result<SecretBytes, KemError> decapsulate(const KemPrivateKey& key, ByteSpan ciphertext) override {
    if (key.scheme() != scheme_) return Err(KemError::kWrongScheme);
    if (ciphertext.size() != ciphertext_size()) return Err(KemError::kBadCiphertextLength);
    const auto& k = static_cast<const RsaPrivateKey&>(key);
    SecretBytes out(ciphertext.size());
    std::size_t len = out.size();
    if (EVP_PKEY_decrypt(k.ctx(), out.data(), &len, ciphertext.data(), ciphertext.size()) != 1 || len != kSecret)
      return Err(KemError::kBadCiphertext);
    return SecretBytes(out.span().first(kSecret));
  }
  using Kem::decapsulate;

 private:
  Result<PkeyPtr, KemError> parse_private(ByteSpan der) const {
    const unsigned char* p = der.data();
    PkeyPtr key(d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size())));
    if (!key || p != der.data() + der.size()) return Err(KemError::kBadPrivateKey);
    if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA || EVP_PKEY_get_bits(key.get()) != bits_)
      return Err(KemError::kBadPrivateKey);
    return key;
  }

  Result<PkeyPtr, KemError> parse_public(ByteSpan der) const {
    const unsigned char* p = der.data();
    PkeyPtr key(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
    if (!key || p != der.data() + der.size()) return Err(KemError::kBadPublicKey);
    if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA || EVP_PKEY_get_bits(key.get()) != bits_)
      return Err(KemError::kBadPublicKey);
    return key;
  }

  Result<KemKeyPair, KemError> export_pair(PkeyPtr key) const {
    KemKeyPair kp;
    unsigned char* der = nullptr;
    int len = i2d_PUBKEY(key.get(), &der);
    if (len <= 0) return Err(KemError::kBackend);
    kp.public_key.assign(der, der + len);
    OPENSSL_free(der);
    der = nullptr;
    len = i2d_PrivateKey(key.get(), &der);
    if (len <= 0) return Err(KemError::kBackend);
    kp.private_key = SecretBytes(ByteSpan(der, static_cast<std::size_t>(len)));
    OPENSSL_clear_free(der, static_cast<std::size_t>(len));
    return kp;
  }

  KemScheme scheme_;
  int bits_;
};

}  // namespace

std::unique_ptr<Kem> make_rsa_kem(KemScheme scheme) {
  switch (scheme) {
    case KemScheme::kRsa2048: return std::make_unique<RsaKem>(scheme, 2048);
    case KemScheme::kRsa3072: return std::make_unique<RsaKem>(scheme, 3072);
    case KemScheme::kRsa15360: return std::make_unique<RsaKem>(scheme, 15360);
    default: throw std::runtime_error("not an RSA scheme");
  }
}

}  // namespace layersec::kex::detail
