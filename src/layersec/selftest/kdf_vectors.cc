// Key derivation and key wrap vector decoders (kdf_vectors.h).
#include "layersec/selftest/kdf_vectors.h"

namespace layersec::selftest {

std::vector<HkdfCase> hkdf_sha256_cases(const VectorDirs& dirs) {
  std::vector<HkdfCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "crypto/hkdf_rfc5869.json");
  for (const auto& v : f.root().list("vectors")) {
    HkdfCase c{v.text("name"), v.bytes("ikm"), v.bytes("salt"), v.bytes("info"), v.bytes("okm")};
    if (c.okm.size() != v.number("length")) throw VectorFileError(v.where() + ": okm is not 'length' bytes");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<KeyWrapCase> keywrap_cases(const VectorDirs& dirs) {
  std::vector<KeyWrapCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "crypto/keywrap_rfc3394.json");
  for (const auto& v : f.root().list("vectors"))
    out.push_back({v.text("name"), v.bytes("kek"), v.bytes("key_data"), v.bytes("wrapped")});
  const VectorFile m = VectorFile::load(dirs.shared / "mka/mka_vectors.json");
  for (const auto& v : m.root().list("vectors")) {
    if (v.text("kind").rfind("AES Key Wrap", 0) == 0) {
      const VectorCase in = v.child("inputs");
      out.push_back({"MKA " + v.text("id"), in.bytes("kek"), in.bytes("plaintext"), v.bytes("expected")});
    }
    if (!v.has("mkpdus")) continue;
    const Bytes kek = v.child("inputs").bytes("derived_kek");
    for (const auto& p : v.list("mkpdus")) {
      if (!p.has("distributed_sak")) continue;
      const VectorCase s = p.child("distributed_sak");
      out.push_back({"MKPDU frame " + std::to_string(p.number("frame_no")) + " SAK", kek, s.bytes("unwrapped_sak"),
                     s.bytes("wrapped_sak")});
    }
  }
  for (const auto& c : out)
    if (c.wrapped.size() != c.key_data.size() + 8 || c.key_data.size() < 16 || c.key_data.size() % 8 != 0)
      throw VectorFileError(c.name + ": wrapped data is not key data + 8 bytes in 64-bit blocks");
  return out;
}

}  // namespace layersec::selftest
