#include "layersec/kex/kem.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "layersec/kex/kem_internal.h"

namespace layersec::kex {

namespace {
struct SchemeInfo {
  KemScheme scheme;
  std::string_view name;
  int bits;
};
// Security levels as the NTRU paper's Table 4 and NIST SP 800-57 state them;
// ML-KEM by NIST category (1, 3, 5 ~ 128, 192, 256).
constexpr SchemeInfo kSchemes[] = {
    {KemScheme::kMlKem512, "ml-kem-512", 128},
    {KemScheme::kMlKem768, "ml-kem-768", 192},
    {KemScheme::kMlKem1024, "ml-kem-1024", 256},
    {KemScheme::kX25519, "x25519", 128},
    {KemScheme::kEcdhP256, "ecdh-p256", 128},
    {KemScheme::kEcdhP521, "ecdh-p521", 256},
    {KemScheme::kRsa2048, "rsa-2048", 112},
    {KemScheme::kRsa3072, "rsa-3072", 128},
    {KemScheme::kRsa15360, "rsa-15360", 256},
    {KemScheme::kNtruEes613ep1, "ntru-ees613ep1", 128},
    {KemScheme::kNtruEes1171ep1, "ntru-ees1171ep1", 256},
    {KemScheme::kHybridX25519MlKem768, "x25519+ml-kem-768", 192},
};
}  // namespace

std::string_view scheme_name(KemScheme s) {
  for (const auto& i : kSchemes)
    if (i.scheme == s) return i.name;
  return "?";
}

std::optional<KemScheme> parse_scheme(std::string_view name) {
  for (const auto& i : kSchemes)
    if (i.name == name) return i.scheme;
  return std::nullopt;
}

int security_bits(KemScheme s) {
  for (const auto& i : kSchemes)
    if (i.scheme == s) return i.bits;
  return 0;
}

std::string_view to_string(KemError e) {
  switch (e) {
    case KemError::kBadPublicKey: return "bad public key";
    case KemError::kBadPrivateKey: return "bad private key";
    case KemError::kBadCiphertextLength: return "ciphertext has the wrong length";
    case KemError::kBadCiphertext: return "ciphertext rejected";
    case KemError::kBadSeed: return "deterministic input has the wrong length or form";
    case KemError::kWrongScheme: return "private key belongs to another scheme";
    case KemError::kBackend: return "crypto backend failure";
  }
  return "unknown KEM error";
}

std::string_view to_string(KeyFileError e) {
  switch (e) {
    case KeyFileError::kUnreadable: return "key file unreadable";
    case KeyFileError::kLooseMode: return "key file readable by group or others (needs mode 0600)";
    case KeyFileError::kNotRsaPrivateKey: return "not an RSA private key in PEM";
    case KeyFileError::kWrongSize: return "RSA key has the wrong size";
  }
  return "unknown key file error";
}

Result<SecretBytes, KemError> Kem::decapsulate(ByteSpan private_key, ByteSpan ciphertext) {
  auto key = load_private_key(private_key);
  if (!key) return Err(key.error());
  return decapsulate(**key, ciphertext);
}

std::unique_ptr<Kem> make_kem(KemScheme scheme) {
  switch (scheme) {
    case KemScheme::kMlKem512:
    case KemScheme::kMlKem768:
    case KemScheme::kMlKem1024: return detail::make_mlkem_kem(scheme);
    case KemScheme::kX25519:
    case KemScheme::kEcdhP256:
    case KemScheme::kEcdhP521: return detail::make_dh_kem(scheme);
    case KemScheme::kRsa2048:
    case KemScheme::kRsa3072:
    case KemScheme::kRsa15360: return detail::make_rsa_kem(scheme);
    case KemScheme::kNtruEes613ep1:
    case KemScheme::kNtruEes1171ep1: return detail::make_ntru_kem(scheme);
    case KemScheme::kHybridX25519MlKem768: return detail::make_hybrid_kem();
  }
  throw std::runtime_error("unknown KEM scheme");
}

namespace detail {

namespace {
bool hmac(std::string_view digest, ByteSpan key, std::span<const ByteSpan> parts, std::uint8_t* out,
          std::size_t out_len) {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac == nullptr) return false;
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  if (ctx == nullptr) return false;
  std::string d(digest);
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, d.data(), 0),
                         OSSL_PARAM_construct_end()};
  std::size_t written = 0;
  bool ok = EVP_MAC_init(ctx, key.data(), key.size(), params) == 1;
  for (const auto& p : parts) ok = ok && (p.empty() || EVP_MAC_update(ctx, p.data(), p.size()) == 1);
  ok = ok && EVP_MAC_final(ctx, out, &written, out_len) == 1 && written == out_len;
  EVP_MAC_CTX_free(ctx);
  return ok;
}
std::size_t digest_len(std::string_view digest) { return digest == "SHA512" ? 64 : 32; }
}  // namespace

bool hkdf_extract(std::string_view digest, ByteSpan salt, ByteSpan ikm, MutableByteSpan prk) {
  const std::size_t n = digest_len(digest);
  if (prk.size() != n) return false;
  std::array<std::uint8_t, 64> zero{};
  const ByteSpan key = salt.empty() ? ByteSpan(zero.data(), n) : salt;
  const ByteSpan parts[] = {ikm};
  return hmac(digest, key, parts, prk.data(), n);
}

bool hkdf_expand(std::string_view digest, ByteSpan prk, ByteSpan info, MutableByteSpan out) {
  const std::size_t n = digest_len(digest);
  if (out.size() > 255 * n) return false;
  std::array<std::uint8_t, 64> t{};
  std::size_t t_len = 0;
  std::size_t done = 0;
  for (std::uint8_t i = 1; done < out.size(); ++i) {
    const ByteSpan parts[] = {ByteSpan(t.data(), t_len), info, ByteSpan(&i, 1)};
    if (!hmac(digest, prk, parts, t.data(), n)) return false;
    t_len = n;
    const std::size_t take = std::min(n, out.size() - done);
    std::copy_n(t.begin(), take, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += take;
  }
  secure_zero(t.data(), t.size());
  return true;
}

}  // namespace detail
}  // namespace layersec::kex
