// load_rsa_private_key_pem (declared in kem.h): the RSA key file reader, in
// the kex_io library.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "layersec/base/keyfile.h"
#include "layersec/kex/kem.h"

namespace layersec::kex {

Result<SecretBytes, KeyFileError> load_rsa_private_key_pem(const std::string& path, int expected_bits) {
  // The shared key-file checks (base/keyfile.h): no symlink, regular file,
  // owner-only mode, owned by us or root, checked on the opened descriptor.
  auto pem = ::layersec::read_secret_file(path);
  if (!pem) {
    return Err(pem.error() == ::layersec::KeyFileError::kInsecureMode ? KeyFileError::kLooseMode
                                                                     : KeyFileError::kUnreadable);
  }
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  if (bio == nullptr) return Err(KeyFileError::kUnreadable);
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (pkey == nullptr) return Err(KeyFileError::kNotRsaPrivateKey);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> guard(pkey, EVP_PKEY_free);
  if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) return Err(KeyFileError::kNotRsaPrivateKey);
  if (expected_bits > 0 && EVP_PKEY_get_bits(pkey) != expected_bits) return Err(KeyFileError::kWrongSize);
  unsigned char* der = nullptr;
  const int len = i2d_PrivateKey(pkey, &der);
  if (len <= 0) return Err(KeyFileError::kNotRsaPrivateKey);
  SecretBytes out(ByteSpan(der, static_cast<std::size_t>(len)));
  OPENSSL_clear_free(der, static_cast<std::size_t>(len));
  return out;
}

}  // namespace layersec::kex
