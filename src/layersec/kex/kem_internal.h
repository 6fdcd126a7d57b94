// Internal to the kex KEM implementations: per-family factories and small
// OpenSSL helpers shared by them.
#pragma once

#include <memory>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/kex/kem.h"

namespace layersec::kex::detail {

std::unique_ptr<Kem> make_mlkem_kem(KemScheme scheme);
std::unique_ptr<Kem> make_dh_kem(KemScheme scheme);
std::unique_ptr<Kem> make_rsa_kem(KemScheme scheme);
std::unique_ptr<Kem> make_ntru_kem(KemScheme scheme);
std::unique_ptr<Kem> make_hybrid_kem();

// Raw DH (RFC 7748 §5 for X25519; the x-coordinate for EC) between a private
// key loaded by a DH-KEM (make_dh_kem) and a peer public key; kBadCiphertext
// for an invalid peer or a low-order X25519 result.
Result<SecretBytes, KemError> dh_raw(Kem& dh_kem, const KemPrivateKey& key, ByteSpan peer_public);
// The public key of a private key loaded by a DH-KEM.
ByteSpan dh_public(const KemPrivateKey& key);

// HKDF-Extract (RFC 5869 §2.2) with HMAC over `digest` ("SHA256", "SHA512");
// prk must be the digest length. An empty salt means HashLen zero bytes.
bool hkdf_extract(std::string_view digest, ByteSpan salt, ByteSpan ikm, MutableByteSpan prk);
// HKDF-Expand (RFC 5869 §2.3) into out (at most 255 * HashLen bytes).
bool hkdf_expand(std::string_view digest, ByteSpan prk, ByteSpan info, MutableByteSpan out);

}  // namespace layersec::kex::detail
