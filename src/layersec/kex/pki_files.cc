// The file half of pki.h (library kex_io): private keys through
// base/keyfile.h (0600, no symlinks, owner checks), certificates as bounded
// regular files, and the CA / identity folders. The rest of pki.h (keys,
// certificates, trust stores, signatures in memory) is in pki.cc (kex_core).
#include <openssl/err.h>
#include <openssl/x509.h>

#include <string>

#include "layersec/base/file.h"
#include "layersec/base/keyfile.h"
#include "layersec/kex/pki.h"

namespace layersec::kex {
namespace {

constexpr std::size_t kMaxCertificateSize = 32 * 1024;

ByteSpan as_bytes(const std::string& s) {
  return ByteSpan(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

// A certificate file: regular files only (a FIFO cannot block the read),
// at most twice kMaxCertificateSize (PEM is base64 of the DER).
Result<std::string, PkiError> read_public_file(const std::string& path, std::string* detail) {
  try {
    return read_regular_file(path, kMaxCertificateSize * 2);
  } catch (const FileError& e) {
    if (detail) *detail = e.what();
    return Err(e.kind() == FileErrorKind::kTooLarge ? PkiError::kMalformedCertificate : PkiError::kIo);
  }
}

std::string join(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

}  // namespace

Result<PrivateKey, PkiError> PrivateKey::load(const std::string& path, ::layersec::KeyFileError* detail) {
  auto bytes = read_secret_file(path);
  if (!bytes.ok()) {
    if (detail) *detail = bytes.error();
    return Err(PkiError::kKeyFile);
  }
  return from_pem(bytes->span());
}

Status<PkiError> PrivateKey::save(const std::string& path, ::layersec::KeyFileError* detail,
                                  bool overwrite) const {
  auto pem = to_pem();
  if (!pem.ok()) return Err(pem.error());
  auto s = write_key_file(path, pem->span(), overwrite);
  if (!s.ok()) {
    if (detail) *detail = s.error();
    return Err(PkiError::kKeyFile);
  }
  return {};
}

Result<Certificate, PkiError> Certificate::load(const std::string& path, std::string* detail) {
  auto text = read_public_file(path, detail);
  if (!text.ok()) return Err(text.error());
  return from_pem(as_bytes(*text));
}

Status<PkiError> Certificate::save(const std::string& path, bool overwrite) const {
  const std::string text = pem();
  if (text.empty()) return Err(PkiError::kBackend);
  auto s = write_public_file(path, as_bytes(text), overwrite);
  if (!s.ok()) return Err(PkiError::kIo);
  return {};
}

// ---------------------------------------------------------------- files

Status<PkiError> save_ca(const std::string& dir, const Identity& ca, ::layersec::KeyFileError* detail) {
  if (auto s = ca.key.save(join(dir, "ca.key"), detail); !s.ok()) return s;
  return ca.certificate.save(join(dir, "ca.pem"));
}

Result<Identity, PkiError> load_ca(const std::string& dir, ::layersec::KeyFileError* detail) {
  auto key = PrivateKey::load(join(dir, "ca.key"), detail);
  if (!key.ok()) return Err(key.error());
  auto cert = Certificate::load(join(dir, "ca.pem"));
  if (!cert.ok()) return Err(cert.error());
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return Err(PkiError::kMalformedKey);  // key does not belong to the certificate
  }
  return Identity{std::move(cert).value(), std::move(key).value()};
}

Status<PkiError> save_identity(const std::string& dir, const std::string& name, const Identity& id,
                               ::layersec::KeyFileError* detail) {
  if (auto s = id.key.save(join(dir, name + ".key"), detail); !s.ok()) return s;
  return id.certificate.save(join(dir, name + ".pem"));
}

Result<Identity, PkiError> load_identity(const std::string& dir, const std::string& name,
                                         ::layersec::KeyFileError* detail) {
  auto key = PrivateKey::load(join(dir, name + ".key"), detail);
  if (!key.ok()) return Err(key.error());
  auto cert = Certificate::load(join(dir, name + ".pem"));
  if (!cert.ok()) return Err(cert.error());
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return Err(PkiError::kMalformedKey);
  }
  return Identity{std::move(cert).value(), std::move(key).value()};
}

}  // namespace layersec::kex
