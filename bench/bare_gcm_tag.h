// The GCM tag of the bare-OpenSSL baselines, read and set the way
// crypto/aead.cc does it (EVP_CIPHER_CTX_get_params/set_params with one
// OSSL_PARAM), not through EVP_CIPHER_CTX_ctrl, which costs more per message
// in OpenSSL 3.0: a baseline must be the cheapest bare use of the cipher, not
// one that makes ours look better.
#pragma once

#include <cstddef>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace layersec::benchrun {

inline int gcm_get_tag(EVP_CIPHER_CTX* ctx, unsigned char* tag, std::size_t size) {
  OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, size),
                     OSSL_PARAM_construct_end()};
  return EVP_CIPHER_CTX_get_params(ctx, p);
}

inline int gcm_set_tag(EVP_CIPHER_CTX* ctx, unsigned char* tag, std::size_t size) {
  OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, size),
                     OSSL_PARAM_construct_end()};
  return EVP_CIPHER_CTX_set_params(ctx, p);
}

}  // namespace layersec::benchrun
