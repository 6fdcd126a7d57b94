// The baseline of the SecOC benchmarks: a bare OpenSSL EVP_MAC context keyed
// once and reused per message with EVP_MAC_init(ctx, NULL, 0, NULL), as
// crypto/mac.cc does, over a DataToAuthenticator built by hand:
// DataId(2) || Authentic I-PDU || complete FV.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include <openssl/evp.h>
#include <openssl/params.h>

#include "layersec/base/secret.h"
#include "layersec/secoc/profile.h"

namespace layersec::benchrun {

class BareMac {
 public:
  BareMac(secoc::AuthAlgorithm a, const SecretBytes& key) {
    const bool hmac = a == secoc::AuthAlgorithm::kHmacSha256;
    mac_ = EVP_MAC_fetch(nullptr, hmac ? "HMAC" : "CMAC", nullptr);
    ctx_ = mac_ ? EVP_MAC_CTX_new(mac_) : nullptr;
    char cipher128[] = "AES-128-CBC", cipher256[] = "AES-256-CBC", digest[] = "SHA256";
    OSSL_PARAM params[2] = {
        hmac ? OSSL_PARAM_construct_utf8_string("digest", digest, 0)
             : OSSL_PARAM_construct_utf8_string(
                   "cipher", a == secoc::AuthAlgorithm::kCmacAes128 ? cipher128 : cipher256, 0),
        OSSL_PARAM_END};
    if (ctx_ == nullptr || EVP_MAC_init(ctx_, key.data(), key.size(), params) != 1) {
      EVP_MAC_CTX_free(ctx_);
      EVP_MAC_free(mac_);
      throw std::runtime_error("EVP_MAC_init");
    }
  }
  ~BareMac() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }
  BareMac(const BareMac&) = delete;
  BareMac& operator=(const BareMac&) = delete;

  // One MAC over `dta` into tag (at least 32 bytes).
  void run(const std::vector<std::uint8_t>& dta, std::uint8_t* tag) {
    std::size_t len = 0;
    EVP_MAC_init(ctx_, nullptr, 0, nullptr);
    EVP_MAC_update(ctx_, dta.data(), dta.size());
    EVP_MAC_final(ctx_, tag, &len, 32);
  }

 private:
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;
};

// DataId 0x0100 || payload || complete FV bytes (0x5a): what the engine
// authenticates for `payload` under `profile`, up to the FV's value.
inline std::vector<std::uint8_t> bare_dta(const secoc::PduProfile& profile,
                                          const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> dta = {0x01, 0x00};
  dta.insert(dta.end(), payload.begin(), payload.end());
  dta.resize(dta.size() + profile.fv_bytes(), 0x5a);
  return dta;
}

}  // namespace layersec::benchrun
