// X.509 provisioning and validation for layersec nodes (ECUs in a vehicle,
// IEDs in a substation), on OpenSSL 3.
//
// A CA (vehicle or substation; EC P-256 or Ed25519 key) issues node
// certificates that say which services the node is authorised for. The
// authorisation travels in a private, non-critical X.509v3 extension
//
//   id-layersec            OBJECT IDENTIFIER ::= { 2 25 145382631665759642463395375729528597442 }
//                          -- UUID arc (ITU-T X.667 / RFC 4122 §4: 2.25.<UUID as integer>),
//                          -- UUID 6d5fad26-b54e-425e-81fc-f1646178ebc2; needs no registration
//   id-layersec-services   OBJECT IDENTIFIER ::= { id-layersec 1 }
//   LayersecServices       ::= SEQUENCE SIZE (1..MAX) OF INTEGER (0..65535)
//                          -- strictly ascending, DER
//
// (SOME/IP service IDs for ECUs; SV APPIDs / group ids for IEDs.) It is
// non-critical so generic tools (openssl verify, Wireshark) still process the
// certificate; layersec refuses a node certificate without it. A
// subjectAltName otherName was the alternative; a dedicated extension keeps
// the name forms untouched and is a one-line OID check. See docs/pki.md.
//
// Node certificates carry basicConstraints CA:FALSE, keyUsage
// digitalSignature (+ keyEncipherment for RSA keys, whose key is the Mode B
// KEM key), extendedKeyUsage clientAuth+serverAuth, SKI/AKI. CA certificates
// carry CA:TRUE pathlen:0, keyUsage keyCertSign+cRLSign.
//
// Validation (TrustStore::verify) runs X509_verify_cert (RFC 5280 §6) with an
// injected time, X509_V_FLAG_X509_STRICT and purpose SSL client (which checks
// the EKU and keyUsage), then refuses CA certificates as leaves and checks the
// service extension. Private keys are PKCS#8 PEM files written with mode 0600
// through base/keyfile and loaded only through its 0600 check.
//
// Times are Unix seconds (certificate validity is wall-clock time); protocol
// code passes in its own notion of now.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/keyfile.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"

typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_store_st X509_STORE;

namespace layersec::kex {

enum class PkiError : std::uint8_t {
  kMalformedCertificate,  // not DER/PEM X.509, trailing bytes, bad extension encoding
  kMalformedKey,          // a private or public key that does not parse
  kKeyFile,               // the key file was refused (see the KeyFileError detail)
  kExpired,               // notAfter is before now (leaf or CA)
  kNotYetValid,           // notBefore is after now
  kWrongCa,               // the chain does not lead to a trusted CA (unknown issuer, bad chain signature)
  kInvalidChain,          // other RFC 5280 failures (issuer not a CA, path length, ...)
  kWrongPurpose,          // wrong keyUsage / extendedKeyUsage, or a CA certificate used as a node
  kNoServiceExtension,    // node certificate without the layersec services extension
  kUnauthorisedService,   // the certificate does not list the requested service
  kBadSignature,          // a handshake signature did not verify
  kUnsupportedAlgorithm,  // key type not supported for this use
  kBadArgument,           // caller error (empty name, no services, bad validity)
  kIo,                    // a non-key file could not be read or written (missing, not a regular file, I/O)
  kBackend,               // OpenSSL failed internally
  kBadName,               // subject CN empty, longer than kMaxCommonNameLength characters, or not UTF-8
  kValidityOutOfRange,    // notBefore/notAfter before 1970 or after kMaxCertificateTime
};
std::string_view to_string(PkiError e);

// The latest time a certificate can carry: 9999-12-31T23:59:59Z, the largest
// GeneralizedTime with a four-digit year (RFC 5280 §4.1.2.5: times from 2050
// are GeneralizedTime YYYYMMDDHHMMSSZ; 99991231235959Z also means "no
// well-defined expiration date"). Later times used to produce certificates
// OpenSSL then called malformed.
inline constexpr std::int64_t kMaxCertificateTime = 253'402'300'799;
// ub-common-name (RFC 5280 Appendix A.1): a CN has at most 64 characters.
inline constexpr std::size_t kMaxCommonNameLength = 64;
// Empty string if `cn` can be a subject CN; otherwise the rule it breaks.
std::string check_common_name(std::string_view cn);

// Key algorithms for CA and node keys. CAs use kEcdsaP256 or kEd25519.
enum class KeyAlgorithm : std::uint8_t {
  kEcdsaP256,  // ECDSA with SHA-256 (RFC 5758) on P-256
  kEd25519,    // PureEdDSA (RFC 8032, RFC 8410)
  kRsa2048,    // RSA; signatures RSASSA-PSS-SHA256, key transport RSA-OAEP-SHA256
  kRsa3072,
  kRsa4096,
};
std::string_view to_string(KeyAlgorithm a);
std::optional<KeyAlgorithm> key_algorithm_from_string(std::string_view name);
bool is_rsa(KeyAlgorithm a);

namespace detail {
struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const;
};
struct X509Deleter {
  void operator()(X509* p) const;
};
struct StoreDeleter {
  void operator()(X509_STORE* p) const;
};
}  // namespace detail

// A public key (shared, immutable). Copying shares the OpenSSL object.
class PublicKey {
 public:
  PublicKey() = default;
  // Parses a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7); trailing bytes rejected.
  static Result<PublicKey, PkiError> from_der(ByteSpan spki);
  // Takes a reference to `pkey` (the caller keeps its own).
  static PublicKey from_evp(EVP_PKEY* pkey);
  [[nodiscard]] std::vector<std::uint8_t> der() const;
  [[nodiscard]] std::optional<KeyAlgorithm> algorithm() const;
  [[nodiscard]] EVP_PKEY* get() const { return key_.get(); }
  [[nodiscard]] bool valid() const { return key_ != nullptr; }

 private:
  std::shared_ptr<EVP_PKEY> key_;
};

// A private key, move-only. Never printed; serialised only to zeroizing buffers.
class PrivateKey {
 public:
  PrivateKey() = default;
  static Result<PrivateKey, PkiError> generate(KeyAlgorithm a);
  // Parses PKCS#8 / traditional PEM (unencrypted).
  static Result<PrivateKey, PkiError> from_pem(ByteSpan pem);
  // Parses PKCS#8 DER.
  static Result<PrivateKey, PkiError> from_der(ByteSpan der);
  // Loads a PEM key file after the 0600 check; `detail` receives the key file
  // reason when the result is kKeyFile.
  static Result<PrivateKey, PkiError> load(const std::string& path, ::layersec::KeyFileError* detail = nullptr);
  // PKCS#8 PEM / DER in zeroizing buffers.
  [[nodiscard]] Result<SecretBytes, PkiError> to_pem() const;
  [[nodiscard]] Result<SecretBytes, PkiError> to_der() const;
  // Writes a PEM key file with mode 0600 (atomic, no overwrite unless asked).
  [[nodiscard]] Status<PkiError> save(const std::string& path, ::layersec::KeyFileError* detail = nullptr,
                                      bool overwrite = false) const;
  [[nodiscard]] PublicKey public_key() const;
  [[nodiscard]] std::optional<KeyAlgorithm> algorithm() const;
  [[nodiscard]] EVP_PKEY* get() const { return key_.get(); }
  [[nodiscard]] bool valid() const { return key_ != nullptr; }

 private:
  std::unique_ptr<EVP_PKEY, detail::PkeyDeleter> key_;
};

// Summary of a certificate for display (no key material).
struct CertificateInfo {
  std::string subject;     // one-line RFC 2253 form
  std::string issuer;
  std::string common_name;
  std::string serial_hex;
  std::int64_t not_before = 0;  // Unix seconds
  std::int64_t not_after = 0;
  bool is_ca = false;
  std::string key_algorithm;
  std::vector<std::string> key_usage;        // "digitalSignature", ...
  std::vector<std::uint16_t> services;       // empty if no extension
  bool has_service_extension = false;
  std::string sha256_fingerprint;            // hex of SHA-256 over the DER
};

// An X.509 certificate (shared, immutable).
class Certificate {
 public:
  Certificate() = default;
  // Exactly one DER certificate; trailing bytes and extensions OpenSSL marks
  // invalid are rejected (kMalformedCertificate).
  static Result<Certificate, PkiError> from_der(ByteSpan der);
  // The first PEM "CERTIFICATE" block.
  static Result<Certificate, PkiError> from_pem(ByteSpan pem);
  // Reads a PEM file (regular files only, at most 64 KiB). kIo when it cannot
  // be read; `detail` then gets "PATH: <reason>" (e.g. "not a regular file").
  static Result<Certificate, PkiError> load(const std::string& path, std::string* detail = nullptr);
  static Certificate adopt(X509* x);  // takes ownership
  [[nodiscard]] Status<PkiError> save(const std::string& path, bool overwrite = false) const;

  [[nodiscard]] std::vector<std::uint8_t> der() const;
  [[nodiscard]] std::string pem() const;
  [[nodiscard]] PublicKey public_key() const;
  [[nodiscard]] CertificateInfo info() const;
  // The authorised services (strictly ascending). kNoServiceExtension if the
  // extension is absent, kMalformedCertificate if it is badly encoded.
  [[nodiscard]] Result<std::vector<std::uint16_t>, PkiError> services() const;
  [[nodiscard]] X509* get() const { return cert_.get(); }
  [[nodiscard]] bool valid() const { return cert_ != nullptr; }

 private:
  std::shared_ptr<X509> cert_;
};

enum class CaKind : std::uint8_t { kVehicle, kSubstation };
std::string_view to_string(CaKind k);

struct Validity {
  std::int64_t not_before = 0;  // Unix seconds
  std::int64_t not_after = 0;
  // [now - 60 s, now + days]; the minute of slack tolerates small clock skew.
  // Issuing refuses the result (kValidityOutOfRange) if it ends after
  // kMaxCertificateTime; callers check days against that first.
  static Validity days_from(std::int64_t now, int days);
};

struct CaOptions {
  std::string name;  // subject CN
  CaKind kind = CaKind::kVehicle;
  KeyAlgorithm algorithm = KeyAlgorithm::kEcdsaP256;
  Validity validity;
};

struct Identity {
  Certificate certificate;
  PrivateKey key;
};

// Creates a self-signed CA certificate and its key.
[[nodiscard]] Result<Identity, PkiError> create_ca(const CaOptions& options);

struct IssueOptions {
  std::string name;                     // subject CN (the ECU / IED name)
  std::vector<std::uint16_t> services;  // authorised service ids (at least one)
  KeyAlgorithm algorithm = KeyAlgorithm::kRsa2048;
  Validity validity;
};

// Generates a node key and issues its certificate under `ca`.
[[nodiscard]] Result<Identity, PkiError> issue_certificate(const Identity& ca,
                                                           const IssueOptions& options);
// Issues a certificate for an existing public key (e.g. a pre-generated
// RSA-15360 key); options.algorithm is ignored.
[[nodiscard]] Result<Certificate, PkiError> issue_certificate_for_key(const Identity& ca,
                                                                      const PublicKey& subject_key,
                                                                      const IssueOptions& options);

// Trust anchors, built once and shared by every verification.
class TrustStore {
 public:
  TrustStore() = default;
  static Result<TrustStore, PkiError> create(std::span<const Certificate> anchors);
  // RFC 5280 path validation of a node certificate at `now` (Unix seconds),
  // plus the node checks described at the top. `detail`, when given, gets
  // OpenSSL's reason text (never secret).
  [[nodiscard]] Status<PkiError> verify(const Certificate& leaf, std::int64_t now,
                                        std::string* detail = nullptr) const;
  // verify() and then service authorisation.
  [[nodiscard]] Status<PkiError> verify_for_service(const Certificate& leaf, std::int64_t now,
                                                    std::uint16_t service,
                                                    std::string* detail = nullptr) const;

 private:
  std::shared_ptr<X509_STORE> store_;
};

// kUnauthorisedService unless `service` is in the certificate's list.
[[nodiscard]] Status<PkiError> check_service_authorised(const Certificate& cert,
                                                        std::uint16_t service);

// Encodes / parses the LayersecServices extension value (exposed for tests
// and the fuzz target). Parsing is strict DER.
[[nodiscard]] Result<std::vector<std::uint8_t>, PkiError> encode_services(
    std::span<const std::uint16_t> services);
[[nodiscard]] Result<std::vector<std::uint16_t>, PkiError> parse_services(ByteSpan der);

// Handshake signatures over the concatenation of `parts`:
//   P-256: ECDSA-SHA256, DER Ecdsa-Sig-Value; Ed25519: PureEdDSA (64 bytes);
//   RSA: RSASSA-PSS, SHA-256, MGF1-SHA256, salt length 32.
[[nodiscard]] Result<std::vector<std::uint8_t>, PkiError> sign(const PrivateKey& key,
                                                               std::span<const ByteSpan> parts);
[[nodiscard]] Status<PkiError> verify_signature(const PublicKey& key,
                                                std::span<const ByteSpan> parts,
                                                ByteSpan signature);

// CA directory layout used by `layersec keys`: DIR/ca.pem (0644), DIR/ca.key (0600).
// The file functions of this header (these four, PrivateKey::load/save,
// Certificate::load/save) are I/O adapters, defined in pki_files.cc (kex_io).
[[nodiscard]] Status<PkiError> save_ca(const std::string& dir, const Identity& ca,
                                       ::layersec::KeyFileError* detail = nullptr);
[[nodiscard]] Result<Identity, PkiError> load_ca(const std::string& dir,
                                                 ::layersec::KeyFileError* detail = nullptr);
// Node layout: DIR/NAME.pem (0644), DIR/NAME.key (0600).
[[nodiscard]] Status<PkiError> save_identity(const std::string& dir, const std::string& name,
                                             const Identity& id, ::layersec::KeyFileError* detail = nullptr);
[[nodiscard]] Result<Identity, PkiError> load_identity(const std::string& dir,
                                                       const std::string& name,
                                                       ::layersec::KeyFileError* detail = nullptr);

}  // namespace layersec::kex
