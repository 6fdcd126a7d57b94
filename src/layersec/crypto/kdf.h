// Key derivation, key wrap, hashing and randomness on OpenSSL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/secret.h"
#include "layersec/crypto/mac.h"

namespace layersec::crypto {

// HKDF-SHA256 (RFC 5869): extract-then-expand into out (1..255*32 bytes).
Status<CryptoError> hkdf_sha256(ByteSpan salt, ByteSpan ikm, ByteSpan info, MutableByteSpan out);

// AES key wrap (RFC 3394) with the default IV. kek: 16, 24 or 32 bytes.
// plaintext: a multiple of 8 bytes, at least 16; out: plaintext.size() + 8.
Status<CryptoError> aes_key_wrap(ByteSpan kek, ByteSpan plaintext, MutableByteSpan out);
// Unwraps and checks the integrity value; out: wrapped.size() - 8 bytes.
// On failure out is zeroed.
Status<CryptoError> aes_key_unwrap(ByteSpan kek, ByteSpan wrapped, MutableByteSpan out);

// SHA-256 of the concatenation of parts; out must be 32 bytes.
Status<CryptoError> sha256(std::span<const ByteSpan> parts, MutableByteSpan out);

// Cryptographically strong random bytes from OpenSSL's DRBG.
Status<CryptoError> random_bytes(MutableByteSpan out);
// A fresh random key of n bytes.
SecretBytes random_key(std::size_t n);

}  // namespace layersec::crypto
