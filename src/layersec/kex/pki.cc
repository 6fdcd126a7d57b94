#include "layersec/kex/pki.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>

#include "layersec/base/hex.h"

namespace layersec::kex {

namespace detail {
void PkeyDeleter::operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
void X509Deleter::operator()(X509* p) const { X509_free(p); }
void StoreDeleter::operator()(X509_STORE* p) const { X509_STORE_free(p); }
}  // namespace detail

namespace {

constexpr const char* kServicesOid = "2.25.145382631665759642463395375729528597442.1";
constexpr std::size_t kMaxCertificateSize = 32 * 1024;

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using NamePtr = std::unique_ptr<X509_NAME, Deleter<X509_NAME, X509_NAME_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using ObjPtr = std::unique_ptr<ASN1_OBJECT, Deleter<ASN1_OBJECT, ASN1_OBJECT_free>>;
using OctPtr = std::unique_ptr<ASN1_OCTET_STRING, Deleter<ASN1_OCTET_STRING, ASN1_OCTET_STRING_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;

ObjPtr services_oid() { return ObjPtr(OBJ_txt2obj(kServicesOid, 1)); }

std::string bio_string(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

bool is_p256(EVP_PKEY* k) {
  char group[64] = {0};
  std::size_t len = 0;
  if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len) != 1)
    return false;
  return std::strcmp(group, "prime256v1") == 0 || std::strcmp(group, "P-256") == 0;
}

std::optional<KeyAlgorithm> algorithm_of(EVP_PKEY* k) {
  if (k == nullptr) return std::nullopt;
  switch (EVP_PKEY_get_base_id(k)) {
    case EVP_PKEY_EC:
      if (is_p256(k)) return KeyAlgorithm::kEcdsaP256;
      return std::nullopt;
    case EVP_PKEY_ED25519:
      return KeyAlgorithm::kEd25519;
    case EVP_PKEY_RSA:
      switch (EVP_PKEY_get_bits(k)) {
        case 2048:
          return KeyAlgorithm::kRsa2048;
        case 3072:
          return KeyAlgorithm::kRsa3072;
        case 4096:
          return KeyAlgorithm::kRsa4096;
        default:
          return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

std::string describe_key(EVP_PKEY* k) {
  if (k == nullptr) return "none";
  switch (EVP_PKEY_get_base_id(k)) {
    case EVP_PKEY_EC:
      return is_p256(k) ? "EC P-256" : "EC (other curve)";
    case EVP_PKEY_ED25519:
      return "Ed25519";
    case EVP_PKEY_RSA:
      return "RSA-" + std::to_string(EVP_PKEY_get_bits(k));
    default:
      return "other";
  }
}

std::int64_t asn1_time_to_unix(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string name_string(const X509_NAME* n) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), n, 0, XN_FLAG_RFC2253) < 0) return {};
  return bio_string(bio.get());
}

std::string common_name(const X509_NAME* n) {
  const int idx = X509_NAME_get_index_by_NID(n, NID_commonName, -1);
  if (idx < 0) return {};
  const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, idx));
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, s);
  if (len < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(len));
  OPENSSL_free(utf8);
  return out;
}

std::string organisation(const X509_NAME* n) {
  const int idx = X509_NAME_get_index_by_NID(n, NID_organizationName, -1);
  if (idx < 0) return {};
  const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, idx));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<std::size_t>(ASN1_STRING_length(s)));
}

bool add_conf_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

const EVP_MD* signing_md(EVP_PKEY* k) {
  return EVP_PKEY_get_base_id(k) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
}

bool is_signing_key(EVP_PKEY* k) {
  const int id = EVP_PKEY_get_base_id(k);
  return (id == EVP_PKEY_EC && is_p256(k)) || id == EVP_PKEY_ED25519 || id == EVP_PKEY_RSA;
}

// Builds and signs a certificate; `issuer` null means self-signed.
Result<Certificate, PkiError> build_certificate(EVP_PKEY* subject_key, const X509_NAME* subject,
                                                X509* issuer_cert, EVP_PKEY* issuer_key,
                                                const Validity& validity, bool is_ca,
                                                std::span<const std::uint16_t> services) {
  if (validity.not_after <= validity.not_before) return Err(PkiError::kBadArgument);
  if (validity.not_before < 0 || validity.not_after > kMaxCertificateTime) {
    return Err(PkiError::kValidityOutOfRange);
  }
  if (!is_signing_key(issuer_key) || EVP_PKEY_get_base_id(issuer_key) == EVP_PKEY_RSA) {
    return Err(PkiError::kUnsupportedAlgorithm);  // CAs sign with P-256 or Ed25519
  }
  X509Ptr x(X509_new());
  if (!x || X509_set_version(x.get(), X509_VERSION_3) != 1) return Err(PkiError::kBackend);
  // Serial: 127 random bits, positive (RFC 5280 §4.1.2.2 allows up to 20 octets).
  BnPtr serial(BN_new());
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(x.get())) == nullptr) {
    return Err(PkiError::kBackend);
  }
  if (ASN1_TIME_set(X509_getm_notBefore(x.get()), static_cast<time_t>(validity.not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(x.get()), static_cast<time_t>(validity.not_after)) == nullptr) {
    return Err(PkiError::kBackend);
  }
  if (X509_set_subject_name(x.get(), subject) != 1 ||
      X509_set_issuer_name(x.get(), issuer_cert ? X509_get_subject_name(issuer_cert) : subject) != 1 ||
      X509_set_pubkey(x.get(), subject_key) != 1) {
    return Err(PkiError::kBackend);
  }
  X509* issuer = issuer_cert ? issuer_cert : x.get();
  bool ok = true;
  if (is_ca) {
    ok = ok && add_conf_ext(x.get(), issuer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    ok = ok && add_conf_ext(x.get(), issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && add_conf_ext(x.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
    const bool rsa = EVP_PKEY_get_base_id(subject_key) == EVP_PKEY_RSA;
    ok = ok && add_conf_ext(x.get(), issuer, NID_key_usage,
                            rsa ? "critical,digitalSignature,keyEncipherment"
                                : "critical,digitalSignature");
    ok = ok && add_conf_ext(x.get(), issuer, NID_ext_key_usage, "clientAuth,serverAuth");
  }
  ok = ok && add_conf_ext(x.get(), issuer, NID_subject_key_identifier, "hash");
  ok = ok && add_conf_ext(x.get(), issuer, NID_authority_key_identifier, "keyid:always");
  if (!ok) return Err(PkiError::kBackend);
  if (!is_ca) {
    auto value = encode_services(services);
    if (!value.ok()) return Err(value.error());
    OctPtr oct(ASN1_OCTET_STRING_new());
    ObjPtr oid = services_oid();
    if (!oct || !oid ||
        ASN1_OCTET_STRING_set(oct.get(), value->data(), static_cast<int>(value->size())) != 1) {
      return Err(PkiError::kBackend);
    }
    ExtPtr ext(X509_EXTENSION_create_by_OBJ(nullptr, oid.get(), /*crit=*/0, oct.get()));
    if (!ext || X509_add_ext(x.get(), ext.get(), -1) != 1) return Err(PkiError::kBackend);
  }
  if (X509_sign(x.get(), issuer_key, signing_md(issuer_key)) <= 0) return Err(PkiError::kBackend);
  return Certificate::adopt(x.release());
}

NamePtr make_name(const std::string& cn, const std::string& o, const std::string& ou) {
  NamePtr n(X509_NAME_new());
  if (!n) return n;
  auto add = [&](const char* field, const std::string& v) {
    return X509_NAME_add_entry_by_txt(n.get(), field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(v.data()),
                                      static_cast<int>(v.size()), -1, 0) == 1;
  };
  if (!add("O", o) || !add("OU", ou) || !add("CN", cn)) n.reset();
  return n;
}

PkiError map_verify_error(int err) {
  switch (err) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return PkiError::kExpired;
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return PkiError::kNotYetValid;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_REJECTED:
    case X509_V_ERR_AKID_SKID_MISMATCH:
    case X509_V_ERR_AKID_ISSUER_SERIAL_MISMATCH:
      return PkiError::kWrongCa;
    case X509_V_ERR_INVALID_PURPOSE:
    case X509_V_ERR_KEYUSAGE_NO_DIGITAL_SIGNATURE:
      return PkiError::kWrongPurpose;
    case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD:
    case X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
    case X509_V_ERR_INVALID_EXTENSION:
    case X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY:
      return PkiError::kMalformedCertificate;
    default:
      return PkiError::kInvalidChain;
  }
}

// Concatenation of parts (Ed25519 is one-shot only).
std::vector<std::uint8_t> concat(std::span<const ByteSpan> parts) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::vector<std::uint8_t> out;
  out.reserve(n);
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

bool configure_pss(EVP_PKEY_CTX* pctx) {
  return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 32) > 0 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) > 0;
}



}  // namespace

std::string_view to_string(PkiError e) {
  switch (e) {
    case PkiError::kMalformedCertificate:
      return "malformed certificate";
    case PkiError::kMalformedKey:
      return "malformed key";
    case PkiError::kKeyFile:
      return "key file refused";
    case PkiError::kExpired:
      return "certificate expired";
    case PkiError::kNotYetValid:
      return "certificate not yet valid";
    case PkiError::kWrongCa:
      return "certificate not issued by a trusted CA";
    case PkiError::kInvalidChain:
      return "certificate chain invalid";
    case PkiError::kWrongPurpose:
      return "certificate not valid for this purpose (key usage / CA used as node)";
    case PkiError::kNoServiceExtension:
      return "certificate has no layersec services extension";
    case PkiError::kUnauthorisedService:
      return "certificate not authorised for the service";
    case PkiError::kBadSignature:
      return "bad signature";
    case PkiError::kUnsupportedAlgorithm:
      return "unsupported key algorithm";
    case PkiError::kBadArgument:
      return "bad argument";
    case PkiError::kIo:
      return "file could not be read or written";
    case PkiError::kBackend:
      return "OpenSSL internal failure";
    case PkiError::kBadName:
      return "subject common name refused (1..64 characters of UTF-8, RFC 5280 ub-common-name)";
    case PkiError::kValidityOutOfRange:
      return "validity outside what X.509 can encode (1970-01-01 .. 9999-12-31T23:59:59Z)";
  }
  return "unknown PKI error";
}

std::string_view to_string(KeyAlgorithm a) {
  switch (a) {
    case KeyAlgorithm::kEcdsaP256:
      return "p256";
    case KeyAlgorithm::kEd25519:
      return "ed25519";
    case KeyAlgorithm::kRsa2048:
      return "rsa2048";
    case KeyAlgorithm::kRsa3072:
      return "rsa3072";
    case KeyAlgorithm::kRsa4096:
      return "rsa4096";
  }
  return "?";
}

std::optional<KeyAlgorithm> key_algorithm_from_string(std::string_view name) {
  for (auto a : {KeyAlgorithm::kEcdsaP256, KeyAlgorithm::kEd25519, KeyAlgorithm::kRsa2048,
                 KeyAlgorithm::kRsa3072, KeyAlgorithm::kRsa4096}) {
    if (name == to_string(a)) return a;
  }
  if (name == "rsa-2048") return KeyAlgorithm::kRsa2048;
  if (name == "rsa-3072") return KeyAlgorithm::kRsa3072;
  if (name == "rsa-4096") return KeyAlgorithm::kRsa4096;
  if (name == "p-256" || name == "ecdsa-p256") return KeyAlgorithm::kEcdsaP256;
  return std::nullopt;
}

bool is_rsa(KeyAlgorithm a) {
  return a == KeyAlgorithm::kRsa2048 || a == KeyAlgorithm::kRsa3072 || a == KeyAlgorithm::kRsa4096;
}

std::string_view to_string(CaKind k) { return k == CaKind::kVehicle ? "vehicle" : "substation"; }

std::string check_common_name(std::string_view cn) {
  if (cn.empty()) return "is empty";
  std::size_t chars = 0;
  for (std::size_t i = 0; i < cn.size();) {
    const auto b = static_cast<unsigned char>(cn[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > cn.size()) return "is not valid UTF-8 (byte " + std::to_string(i + 1) + ")";
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(cn[i + k]) & 0xC0) != 0x80)
        return "is not valid UTF-8 (byte " + std::to_string(i + k + 1) + ")";
    if (b < 0x20 || b == 0x7F) return "contains a control character (byte " + std::to_string(i + 1) + ")";
    i += n;
    ++chars;
  }
  if (chars > kMaxCommonNameLength)
    return "has " + std::to_string(chars) + " characters; X.509 allows at most " +
           std::to_string(kMaxCommonNameLength) + " (RFC 5280 ub-common-name)";
  return {};
}

Validity Validity::days_from(std::int64_t now, int days) {
  return Validity{now - 60, now + static_cast<std::int64_t>(days) * 86400};
}

// ---------------------------------------------------------------- keys

Result<PublicKey, PkiError> PublicKey::from_der(ByteSpan spki) {
  const unsigned char* p = spki.data();
  EVP_PKEY* k = d2i_PUBKEY(nullptr, &p, static_cast<long>(spki.size()));
  if (k == nullptr) {
    ERR_clear_error();
    return Err(PkiError::kMalformedKey);
  }
  PublicKey out;
  out.key_.reset(k, detail::PkeyDeleter());
  if (p != spki.data() + spki.size()) return Err(PkiError::kMalformedKey);
  return out;
}

PublicKey PublicKey::from_evp(EVP_PKEY* pkey) {
  PublicKey out;
  if (pkey != nullptr && EVP_PKEY_up_ref(pkey) == 1) out.key_.reset(pkey, detail::PkeyDeleter());
  return out;
}

std::vector<std::uint8_t> PublicKey::der() const {
  if (!key_) return {};
  unsigned char* buf = nullptr;
  const int n = i2d_PUBKEY(key_.get(), &buf);
  if (n <= 0) return {};
  std::vector<std::uint8_t> out(buf, buf + n);
  OPENSSL_free(buf);
  return out;
}

std::optional<KeyAlgorithm> PublicKey::algorithm() const { return algorithm_of(key_.get()); }

Result<PrivateKey, PkiError> PrivateKey::generate(KeyAlgorithm a) {
  EVP_PKEY* k = nullptr;
  switch (a) {
    case KeyAlgorithm::kEcdsaP256:
      k = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
      break;
    case KeyAlgorithm::kEd25519:
      k = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
      break;
    case KeyAlgorithm::kRsa2048:
      k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048));
      break;
    case KeyAlgorithm::kRsa3072:
      k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(3072));
      break;
    case KeyAlgorithm::kRsa4096:
      k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(4096));
      break;
  }
  if (k == nullptr) return Err(PkiError::kBackend);
  PrivateKey out;
  out.key_.reset(k);
  return out;
}

Result<PrivateKey, PkiError> PrivateKey::from_pem(ByteSpan pem) {
  if (pem.size() > kMaxKeyFileSize) return Err(PkiError::kMalformedKey);
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Err(PkiError::kBackend);
  // No password callback: encrypted PEM keys are refused rather than prompting.
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio.get(), nullptr,
                                        [](char*, int, int, void*) { return 0; }, nullptr);
  if (k == nullptr) {
    ERR_clear_error();
    return Err(PkiError::kMalformedKey);
  }
  PrivateKey out;
  out.key_.reset(k);
  return out;
}

Result<PrivateKey, PkiError> PrivateKey::from_der(ByteSpan der) {
  const unsigned char* p = der.data();
  EVP_PKEY* k = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
  if (k == nullptr) {
    ERR_clear_error();
    return Err(PkiError::kMalformedKey);
  }
  PrivateKey out;
  out.key_.reset(k);
  if (p != der.data() + der.size()) return Err(PkiError::kMalformedKey);
  return out;
}


Result<SecretBytes, PkiError> PrivateKey::to_pem() const {
  if (!key_) return Err(PkiError::kBadArgument);
  // Secure-heap memory BIO: cleared when freed.
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr,
                                       nullptr) != 1) {
    return Err(PkiError::kBackend);
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  if (n <= 0) return Err(PkiError::kBackend);
  return SecretBytes(ByteSpan(reinterpret_cast<const std::uint8_t*>(data), static_cast<std::size_t>(n)));
}

Result<SecretBytes, PkiError> PrivateKey::to_der() const {
  if (!key_) return Err(PkiError::kBadArgument);
  unsigned char* buf = nullptr;
  const int n = i2d_PrivateKey(key_.get(), &buf);
  if (n <= 0) return Err(PkiError::kBackend);
  SecretBytes out(ByteSpan(buf, static_cast<std::size_t>(n)));
  OPENSSL_clear_free(buf, static_cast<std::size_t>(n));
  return out;
}


PublicKey PrivateKey::public_key() const { return PublicKey::from_evp(key_.get()); }

std::optional<KeyAlgorithm> PrivateKey::algorithm() const { return algorithm_of(key_.get()); }

// ---------------------------------------------------------------- certificates

Certificate Certificate::adopt(X509* x) {
  Certificate c;
  c.cert_.reset(x, detail::X509Deleter());
  return c;
}

Result<Certificate, PkiError> Certificate::from_der(ByteSpan der) {
  if (der.empty() || der.size() > kMaxCertificateSize) return Err(PkiError::kMalformedCertificate);
  const unsigned char* p = der.data();
  X509* x = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  if (x == nullptr) {
    ERR_clear_error();
    return Err(PkiError::kMalformedCertificate);
  }
  Certificate c = adopt(x);
  if (p != der.data() + der.size()) return Err(PkiError::kMalformedCertificate);
  if ((X509_get_extension_flags(x) & EXFLAG_INVALID) != 0) {
    return Err(PkiError::kMalformedCertificate);
  }
  return c;
}

Result<Certificate, PkiError> Certificate::from_pem(ByteSpan pem) {
  if (pem.empty() || pem.size() > 2 * kMaxCertificateSize) return Err(PkiError::kMalformedCertificate);
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return Err(PkiError::kBackend);
  X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  if (x == nullptr) {
    ERR_clear_error();
    return Err(PkiError::kMalformedCertificate);
  }
  // Re-parse through the DER path so PEM and DER get the same checks.
  Certificate tmp = adopt(x);
  return from_der(tmp.der());
}



std::vector<std::uint8_t> Certificate::der() const {
  if (!cert_) return {};
  unsigned char* buf = nullptr;
  const int n = i2d_X509(cert_.get(), &buf);
  if (n <= 0) return {};
  std::vector<std::uint8_t> out(buf, buf + n);
  OPENSSL_free(buf);
  return out;
}

std::string Certificate::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!cert_ || !bio || PEM_write_bio_X509(bio.get(), cert_.get()) != 1) return {};
  return bio_string(bio.get());
}

PublicKey Certificate::public_key() const {
  return cert_ ? PublicKey::from_evp(X509_get0_pubkey(cert_.get())) : PublicKey();
}

Result<std::vector<std::uint16_t>, PkiError> Certificate::services() const {
  if (!cert_) return Err(PkiError::kBadArgument);
  ObjPtr oid = services_oid();
  if (!oid) return Err(PkiError::kBackend);
  const int idx = X509_get_ext_by_OBJ(cert_.get(), oid.get(), -1);
  if (idx < 0) return Err(PkiError::kNoServiceExtension);
  if (X509_get_ext_by_OBJ(cert_.get(), oid.get(), idx) >= 0) {
    return Err(PkiError::kMalformedCertificate);  // RFC 5280 §4.2: at most one instance
  }
  const ASN1_OCTET_STRING* v = X509_EXTENSION_get_data(X509_get_ext(cert_.get(), idx));
  return parse_services(ByteSpan(ASN1_STRING_get0_data(v), static_cast<std::size_t>(ASN1_STRING_length(v))));
}

CertificateInfo Certificate::info() const {
  CertificateInfo info;
  if (!cert_) return info;
  X509* x = cert_.get();
  info.subject = name_string(X509_get_subject_name(x));
  info.issuer = name_string(X509_get_issuer_name(x));
  info.common_name = common_name(X509_get_subject_name(x));
  if (BnPtr bn{ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), nullptr)}) {
    char* h = BN_bn2hex(bn.get());
    if (h) {
      info.serial_hex = h;
      OPENSSL_free(h);
    }
  }
  info.not_before = asn1_time_to_unix(X509_get0_notBefore(x));
  info.not_after = asn1_time_to_unix(X509_get0_notAfter(x));
  info.is_ca = X509_check_ca(x) != 0;
  info.key_algorithm = describe_key(X509_get0_pubkey(x));
  const std::uint32_t ku = X509_get_key_usage(x);
  if (ku != UINT32_MAX) {
    static const std::pair<std::uint32_t, const char*> kNames[] = {
        {KU_DIGITAL_SIGNATURE, "digitalSignature"}, {KU_NON_REPUDIATION, "nonRepudiation"},
        {KU_KEY_ENCIPHERMENT, "keyEncipherment"},   {KU_DATA_ENCIPHERMENT, "dataEncipherment"},
        {KU_KEY_AGREEMENT, "keyAgreement"},         {KU_KEY_CERT_SIGN, "keyCertSign"},
        {KU_CRL_SIGN, "cRLSign"}};
    for (const auto& [bit, name] : kNames) {
      if (ku & bit) info.key_usage.emplace_back(name);
    }
  }
  auto s = services();
  if (s.ok()) {
    info.has_service_extension = true;
    info.services = std::move(s).value();
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(x, EVP_sha256(), md, &md_len) == 1) {
    info.sha256_fingerprint = to_hex(ByteSpan(md, md_len));
  }
  return info;
}

// ---------------------------------------------------------------- services extension

Result<std::vector<std::uint8_t>, PkiError> encode_services(std::span<const std::uint16_t> services) {
  if (services.empty()) return Err(PkiError::kBadArgument);
  for (std::size_t i = 1; i < services.size(); ++i) {
    if (services[i] <= services[i - 1]) return Err(PkiError::kBadArgument);  // ascending, unique
  }
  std::vector<std::uint8_t> buf(8 + 5 * services.size());
  ByteWriter w(buf);
  const auto seq = w.begin_ber(0x30);  // SEQUENCE
  for (const std::uint16_t s : services) {
    // Minimal non-negative INTEGER (X.690 §8.3): one octet below 0x80, a
    // leading zero octet whenever the top bit of the first octet would be set.
    std::uint8_t v[3];
    std::size_t n = 0;
    if (s < 0x80) {
      v[n++] = static_cast<std::uint8_t>(s);
    } else if (s < 0x8000) {
      v[n++] = static_cast<std::uint8_t>(s >> 8);
      v[n++] = static_cast<std::uint8_t>(s);
    } else {
      v[n++] = 0x00;
      v[n++] = static_cast<std::uint8_t>(s >> 8);
      v[n++] = static_cast<std::uint8_t>(s);
    }
    w.ber_tlv(0x02, ByteSpan(v, n));  // INTEGER
  }
  if (!w.end_ber(seq) || !w.ok()) return Err(PkiError::kBackend);
  return std::vector<std::uint8_t>(w.written().begin(), w.written().end());
}

Result<std::vector<std::uint16_t>, PkiError> parse_services(ByteSpan der) {
  ByteReader r(der);
  ByteReader seq;
  if (!r.ber_expect(0x30, seq) || !r.finish()) return Err(PkiError::kMalformedCertificate);
  std::vector<std::uint16_t> out;
  while (!seq.empty()) {
    ByteReader integer;
    if (!seq.ber_expect(0x02, integer)) return Err(PkiError::kMalformedCertificate);
    const ByteSpan v = integer.rest();
    if (v.empty() || v.size() > 3 || (v[0] & 0x80) != 0) return Err(PkiError::kMalformedCertificate);
    std::uint32_t value = 0;
    for (const std::uint8_t b : v) value = (value << 8) | b;
    if (value > 0xFFFF) return Err(PkiError::kMalformedCertificate);
    if (!out.empty() && value <= out.back()) return Err(PkiError::kMalformedCertificate);
    out.push_back(static_cast<std::uint16_t>(value));
  }
  if (out.empty()) return Err(PkiError::kMalformedCertificate);
  // DER: only the minimal encoding is accepted (re-encode and compare).
  auto again = encode_services(out);
  if (!again.ok() || again->size() != der.size() ||
      !std::equal(again->begin(), again->end(), der.begin())) {
    return Err(PkiError::kMalformedCertificate);
  }
  return out;
}

// ---------------------------------------------------------------- issuing

Result<Identity, PkiError> create_ca(const CaOptions& options) {
  if (!check_common_name(options.name).empty()) return Err(PkiError::kBadName);
  if (options.algorithm != KeyAlgorithm::kEcdsaP256 && options.algorithm != KeyAlgorithm::kEd25519) {
    return Err(PkiError::kUnsupportedAlgorithm);
  }
  auto key = PrivateKey::generate(options.algorithm);
  if (!key.ok()) return Err(key.error());
  const std::string org = "layersec " + std::string(to_string(options.kind)) + " PKI";
  NamePtr name = make_name(options.name, org, "CA");
  if (!name) return Err(PkiError::kBackend);
  auto cert = build_certificate(key->get(), name.get(), nullptr, key->get(), options.validity,
                                /*is_ca=*/true, {});
  if (!cert.ok()) return Err(cert.error());
  return Identity{std::move(cert).value(), std::move(key).value()};
}

Result<Certificate, PkiError> issue_certificate_for_key(const Identity& ca,
                                                        const PublicKey& subject_key,
                                                        const IssueOptions& options) {
  if (!check_common_name(options.name).empty()) return Err(PkiError::kBadName);
  if (options.services.empty() || !subject_key.valid() || !ca.certificate.valid() || !ca.key.valid()) {
    return Err(PkiError::kBadArgument);
  }
  if (!is_signing_key(subject_key.get())) return Err(PkiError::kUnsupportedAlgorithm);
  std::vector<std::uint16_t> services = options.services;
  std::sort(services.begin(), services.end());
  services.erase(std::unique(services.begin(), services.end()), services.end());
  // The node inherits the CA's organisation; vehicles have ECUs, substations IEDs.
  const std::string org = organisation(X509_get_subject_name(ca.certificate.get()));
  const bool substation = org.find("substation") != std::string::npos;
  NamePtr name = make_name(options.name, org, substation ? "IED" : "ECU");
  if (!name) return Err(PkiError::kBackend);
  return build_certificate(subject_key.get(), name.get(), ca.certificate.get(), ca.key.get(),
                           options.validity, /*is_ca=*/false, services);
}

Result<Identity, PkiError> issue_certificate(const Identity& ca, const IssueOptions& options) {
  auto key = PrivateKey::generate(options.algorithm);
  if (!key.ok()) return Err(key.error());
  auto cert = issue_certificate_for_key(ca, key->public_key(), options);
  if (!cert.ok()) return Err(cert.error());
  return Identity{std::move(cert).value(), std::move(key).value()};
}

// ---------------------------------------------------------------- validation

Result<TrustStore, PkiError> TrustStore::create(std::span<const Certificate> anchors) {
  if (anchors.empty()) return Err(PkiError::kBadArgument);
  TrustStore t;
  t.store_.reset(X509_STORE_new(), detail::StoreDeleter());
  if (!t.store_) return Err(PkiError::kBackend);
  for (const auto& a : anchors) {
    if (!a.valid() || X509_check_ca(a.get()) == 0) return Err(PkiError::kWrongPurpose);
    if (X509_STORE_add_cert(t.store_.get(), a.get()) != 1) return Err(PkiError::kBackend);
  }
  return t;
}

Status<PkiError> TrustStore::verify(const Certificate& leaf, std::int64_t now,
                                    std::string* detail) const {
  if (!store_ || !leaf.valid()) return Err(PkiError::kBadArgument);
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store_.get(), leaf.get(), nullptr) != 1) {
    return Err(PkiError::kBackend);
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_time(param, static_cast<time_t>(now));
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT);
  if (X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT) != 1) {
    return Err(PkiError::kBackend);
  }
  const int rc = X509_verify_cert(ctx.get());
  if (rc != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    if (detail) *detail = X509_verify_cert_error_string(err);
    ERR_clear_error();
    return Err(map_verify_error(err));
  }
  if (X509_check_ca(leaf.get()) != 0) {
    if (detail) *detail = "a CA certificate cannot act as a node";
    return Err(PkiError::kWrongPurpose);
  }
  if ((X509_get_key_usage(leaf.get()) & KU_DIGITAL_SIGNATURE) == 0) {
    if (detail) *detail = "keyUsage lacks digitalSignature";
    return Err(PkiError::kWrongPurpose);
  }
  return {};
}

Status<PkiError> TrustStore::verify_for_service(const Certificate& leaf, std::int64_t now,
                                                std::uint16_t service, std::string* detail) const {
  if (auto s = verify(leaf, now, detail); !s.ok()) return s;
  return check_service_authorised(leaf, service);
}

Status<PkiError> check_service_authorised(const Certificate& cert, std::uint16_t service) {
  auto list = cert.services();
  if (!list.ok()) return Err(list.error());
  if (!std::binary_search(list->begin(), list->end(), service)) {
    return Err(PkiError::kUnauthorisedService);
  }
  return {};
}

// ---------------------------------------------------------------- signatures

Result<std::vector<std::uint8_t>, PkiError> sign(const PrivateKey& key,
                                                 std::span<const ByteSpan> parts) {
  if (!key.valid()) return Err(PkiError::kBadArgument);
  if (!is_signing_key(key.get())) return Err(PkiError::kUnsupportedAlgorithm);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!ctx || EVP_DigestSignInit(ctx.get(), &pctx, signing_md(key.get()), nullptr, key.get()) != 1) {
    return Err(PkiError::kBackend);
  }
  if (EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_RSA && !configure_pss(pctx)) {
    return Err(PkiError::kBackend);
  }
  std::vector<std::uint8_t> sig(static_cast<std::size_t>(EVP_PKEY_get_size(key.get())));
  std::size_t len = sig.size();
  if (EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_ED25519) {
    const auto msg = concat(parts);
    if (EVP_DigestSign(ctx.get(), sig.data(), &len, msg.data(), msg.size()) != 1) {
      return Err(PkiError::kBackend);
    }
  } else {
    for (const auto& p : parts) {
      if (EVP_DigestSignUpdate(ctx.get(), p.data(), p.size()) != 1) return Err(PkiError::kBackend);
    }
    if (EVP_DigestSignFinal(ctx.get(), sig.data(), &len) != 1) return Err(PkiError::kBackend);
  }
  sig.resize(len);
  return sig;
}

Status<PkiError> verify_signature(const PublicKey& key, std::span<const ByteSpan> parts,
                                  ByteSpan signature) {
  if (!key.valid()) return Err(PkiError::kBadArgument);
  if (!is_signing_key(key.get())) return Err(PkiError::kUnsupportedAlgorithm);
  if (signature.empty() || signature.size() > static_cast<std::size_t>(EVP_PKEY_get_size(key.get()))) {
    return Err(PkiError::kBadSignature);
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!ctx ||
      EVP_DigestVerifyInit(ctx.get(), &pctx, signing_md(key.get()), nullptr, key.get()) != 1) {
    return Err(PkiError::kBackend);
  }
  if (EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_RSA && !configure_pss(pctx)) {
    return Err(PkiError::kBackend);
  }
  int rc = 0;
  if (EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_ED25519) {
    const auto msg = concat(parts);
    rc = EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), msg.data(), msg.size());
  } else {
    for (const auto& p : parts) {
      if (EVP_DigestVerifyUpdate(ctx.get(), p.data(), p.size()) != 1) return Err(PkiError::kBackend);
    }
    rc = EVP_DigestVerifyFinal(ctx.get(), signature.data(), signature.size());
  }
  ERR_clear_error();
  if (rc != 1) return Err(PkiError::kBadSignature);
  return {};
}

}  // namespace layersec::kex
