// Which public key check failed. The KEMs of kem.h refuse a bad public key
// with one reason, KemError::kBadPublicKey; check_public_key() runs the
// checks again one by one so that a caller (the `layersec kem` CLI) can name
// the one that failed: the length, the FIPS 203 §7.2 modulus check, or the
// X25519 low-order check. Pure computation, no I/O, nothing secret involved
// (public keys only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "layersec/base/bytes.h"
#include "layersec/kex/kem.h"

namespace layersec::kex {

enum class PublicKeyCheck : std::uint8_t {
  kPassed,    // passes the checks below (the scheme's own decoding may still refuse it)
  kLength,    // wrong length for a fixed-size scheme (RSA DER keys have no fixed size)
  kModulus,   // FIPS 203 §7.2 encapsulation key check: a coefficient is not reduced mod q = 3329
  kLowOrder,  // X25519: a small-order point, the DH result is all zero (RFC 7748 §6.1)
};

// The outcome of check_public_key().
struct PublicKeyFinding {
  PublicKeyCheck check = PublicKeyCheck::kPassed;
  std::size_t size = 0;           // bytes given
  std::size_t expected_size = 0;  // bytes the scheme wants (0: varies, RSA)
  bool hybrid_part = false;       // x25519+ml-kem-768: the check failed in one part
};

// Runs, for `scheme`, the length check, then for ML-KEM (and the hybrid's
// ML-KEM-768 part) the §7.2 modulus check, then for X25519 (and the hybrid's
// X25519 part) the low-order check, and returns the first that fails, or
// kPassed. Throws only as make_kem() does (a backend lacking the scheme).
PublicKeyFinding check_public_key(KemScheme scheme, ByteSpan public_key);

// One line naming the failed check, written to follow the option name, e.g.
// "has 4 bytes; ml-kem-768 public keys have 1184 (length check)" or
// "fails the FIPS 203 §7.2 encapsulation key modulus check (...)".
std::string describe(KemScheme scheme, const PublicKeyFinding& finding);

}  // namespace layersec::kex
