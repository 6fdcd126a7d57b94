// Handshake signature vector decoders (signature_vectors.h).
#include "layersec/selftest/signature_vectors.h"

namespace layersec::selftest {

namespace {

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// DER INTEGER of a big-endian unsigned value (X.690 §8.3: minimal, with a
// leading zero when the top bit is set).
Bytes der_integer(Bytes v) {
  std::size_t skip = 0;
  while (skip + 1 < v.size() && v[skip] == 0 && (v[skip + 1] & 0x80) == 0) ++skip;
  v.erase(v.begin(), v.begin() + static_cast<long>(skip));
  if (!v.empty() && (v[0] & 0x80) != 0) v.insert(v.begin(), 0x00);
  Bytes out{0x02, static_cast<std::uint8_t>(v.size())};
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// RFC 8410 §7 OneAsymmetricKey and §4 SubjectPublicKeyInfo for id-Ed25519.
const Bytes kEd25519Pkcs8Prefix = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                   0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
const Bytes kEd25519SpkiPrefix = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
// RFC 5480 SubjectPublicKeyInfo for id-ecPublicKey / secp256r1, uncompressed point.
const Bytes kP256SpkiPrefix = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                               0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04};

}  // namespace

std::vector<SignatureCase> ed25519_cases(const VectorDirs& dirs) {
  std::vector<SignatureCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/ed25519_rfc8032.json");
  for (const auto& v : f.root().list("vectors")) {
    const Bytes sk = v.bytes("secret_key"), pk = v.bytes("public_key");
    if (sk.size() != 32 || pk.size() != 32) throw VectorFileError(v.where() + ": Ed25519 keys are 32 bytes");
    out.push_back({v.text("name"), concat({kEd25519Pkcs8Prefix, sk}), concat({kEd25519SpkiPrefix, pk}),
                   v.bytes("message"), v.bytes("signature"), /*deterministic=*/true});
  }
  return out;
}

std::vector<SignatureCase> ecdsa_p256_cases(const VectorDirs& dirs) {
  std::vector<SignatureCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/ecdsa_p256_rfc6979.json");
  const VectorCase root = f.root();
  const Bytes x = root.bytes("public_x"), y = root.bytes("public_y");
  if (x.size() != 32 || y.size() != 32) throw VectorFileError(root.where() + ": P-256 coordinates are 32 bytes");
  const Bytes spki = concat({kP256SpkiPrefix, x, y});
  for (const auto& v : root.list("vectors")) {
    const Bytes ints = concat({der_integer(v.bytes("r")), der_integer(v.bytes("s"))});
    Bytes sig{0x30, static_cast<std::uint8_t>(ints.size())};
    sig.insert(sig.end(), ints.begin(), ints.end());
    out.push_back({v.text("name"), {}, spki, v.bytes("message"), std::move(sig), /*deterministic=*/false});
  }
  return out;
}

}  // namespace layersec::selftest
