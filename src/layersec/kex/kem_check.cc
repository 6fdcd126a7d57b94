#include "layersec/kex/kem_check.h"

#include <array>

#include "layersec/crypto/mlkem.h"
#include "layersec/kex/kem_internal.h"

namespace layersec::kex {

namespace {

// True when `u` is an X25519 point of small order: with a clamped scalar
// (a multiple of the cofactor 8) the DH result is then all zero, which
// dh_raw refuses (RFC 7748 §6.1). Any fixed scalar works; it is not secret.
bool x25519_low_order(ByteSpan u) {
  auto x = make_kem(KemScheme::kX25519);
  std::array<std::uint8_t, 32> scalar{};
  scalar.fill(0x42);
  auto key = x->load_private_key(scalar);
  if (!key) return false;
  return !detail::dh_raw(*x, **key, u).ok();
}

crypto::MlKemParameterSet mlkem_set(KemScheme s) {
  if (s == KemScheme::kMlKem512) return crypto::MlKemParameterSet::kMlKem512;
  if (s == KemScheme::kMlKem1024) return crypto::MlKemParameterSet::kMlKem1024;
  return crypto::MlKemParameterSet::kMlKem768;  // ML-KEM-768 and the hybrid's part
}

}  // namespace

PublicKeyFinding check_public_key(KemScheme scheme, ByteSpan public_key) {
  PublicKeyFinding f;
  f.size = public_key.size();
  f.expected_size = make_kem(scheme)->public_key_size();
  if (f.expected_size != 0 && f.size != f.expected_size) {
    f.check = PublicKeyCheck::kLength;
    return f;
  }
  const bool hybrid = scheme == KemScheme::kHybridX25519MlKem768;
  const bool mlkem = scheme == KemScheme::kMlKem512 || scheme == KemScheme::kMlKem768 ||
                     scheme == KemScheme::kMlKem1024;
  if (mlkem || hybrid) {
    crypto::MlKem m(mlkem_set(scheme));
    if (!m.check_encaps_key(hybrid ? public_key.subspan(32) : public_key).ok()) {
      f.check = PublicKeyCheck::kModulus;
      f.hybrid_part = hybrid;
      return f;
    }
  }
  if ((scheme == KemScheme::kX25519 || hybrid) && x25519_low_order(public_key.first(32))) {
    f.check = PublicKeyCheck::kLowOrder;
    f.hybrid_part = hybrid;
  }
  return f;
}

std::string describe(KemScheme scheme, const PublicKeyFinding& f) {
  const std::string name(scheme_name(scheme));
  switch (f.check) {
    case PublicKeyCheck::kLength:
      return "has " + std::to_string(f.size) + " bytes; " + name + " public keys have " +
             std::to_string(f.expected_size) + " (length check)";
    case PublicKeyCheck::kModulus:
      return std::string("fails the FIPS 203 §7.2 encapsulation key modulus check") +
             (f.hybrid_part ? " in its ML-KEM-768 part" : "") + " (a coefficient is not reduced modulo q = 3329)";
    case PublicKeyCheck::kLowOrder:
      return std::string(f.hybrid_part ? "has an X25519 part that is" : "is") +
             " a low-order point: the X25519 shared secret would be all zero (RFC 7748 §6.1 check)";
    case PublicKeyCheck::kPassed: break;
  }
  return "is not a valid " + name + " public key (it does not decode, or fails the point/key check)";
}

}  // namespace layersec::kex
