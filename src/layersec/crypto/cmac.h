// AES-CMAC (NIST SP 800-38B, RFC 4493) over one OpenSSL AES-CBC cipher
// context that is keyed once and never re-initialised.
//
// Why not OpenSSL's own CMAC (EVP_MAC "CMAC")? Per message it re-initialises
// its cipher context with EVP_EncryptInit_ex(NULL key, zero IV), which in
// OpenSSL 3.0 looks the IV length up through OSSL_PARAMs, and its final looks
// the MAC size up the same way: about 1,600 instructions of fixed cost per
// message, more than the five AES-256 blocks of a 64-byte SecOC PDU
// (callgrind, docs/secoc.md). Here the CBC context keeps running from one
// message to the next; the previous message's last cipher block C (which
// is the CBC state) is XORed into the new message's first block, so the CBC
// encryption of M1 ^ C under chaining value C is E(M1), exactly CMAC's first
// step from the zero IV. Every block still goes through OpenSSL's AES
// (AES-NI where the CPU has it); the subkeys K1/K2 are derived as SP 800-38B
// §6.1 says, from E(0^128), at construction.
//
// Validated by the RFC 4493 / SP 800-38B vectors and the wpa_supplicant MKPDU
// ICVs (crypto_test), and cross-checked against OpenSSL's EVP_MAC CMAC
// (make_openssl_cmac) on random keys, lengths and update splits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/crypto/mac.h"

struct evp_cipher_ctx_st;

namespace layersec::crypto {

class CbcCmac final : public Mac {
 public:
  // alg: one of the three CMAC algorithms; key of its length.
  static Result<std::unique_ptr<CbcCmac>, CryptoError> create(MacAlgorithm alg, ByteSpan key);
  ~CbcCmac() override;
  CbcCmac(const CbcCmac&) = delete;
  CbcCmac& operator=(const CbcCmac&) = delete;

  [[nodiscard]] MacAlgorithm algorithm() const override { return alg_; }
  [[nodiscard]] std::size_t tag_size() const override { return kBlock; }

  void begin() override;
  void update(ByteSpan data) override;
  Status<CryptoError> finish(MutableByteSpan out) override;
  using Mac::compute;
  Status<CryptoError> compute(ByteSpan message, MutableByteSpan out) override;

 private:
  static constexpr std::size_t kBlock = 16;
  CbcCmac(MacAlgorithm alg, evp_cipher_ctx_st* ctx) : alg_(alg), ctx_(ctx) {}
  // Runs `n` (a multiple of 16) bytes through the CBC context; the last
  // output block becomes chain_. False on a backend failure.
  bool cbc(const std::uint8_t* in, std::size_t n);
  // Absorbs pending_ (a whole block) as a non-final block.
  bool absorb_pending();
  // Resets the context to the zero IV after a backend failure.
  void recover();

  MacAlgorithm alg_;
  evp_cipher_ctx_st* ctx_;
  std::array<std::uint8_t, kBlock> k1_{}, k2_{};
  std::array<std::uint8_t, kBlock> chain_{};    // the CBC context's current IV
  std::array<std::uint8_t, kBlock> pending_{};  // the message's last bytes, not yet absorbed
  std::size_t pending_len_ = 0;
  bool first_ = true;  // no block of this message absorbed yet
  bool ok_ = true;
};

// OpenSSL's own EVP_MAC CMAC, keyed once and re-initialised per message: the
// independent implementation CbcCmac is checked against, and the baseline of
// the benchmarks.
Result<std::unique_ptr<Mac>, CryptoError> make_openssl_cmac(MacAlgorithm alg, ByteSpan key);

}  // namespace layersec::crypto
