// Key establishment vector decoders (kem_vectors.h).
#include "layersec/selftest/kem_vectors.h"

namespace layersec::selftest {

namespace {

kex::KemScheme scheme_of(const VectorCase& v, const char* key) {
  const std::string name = v.text(key);
  auto s = kex::parse_scheme(name);
  if (!s) throw VectorFileError(v.where() + ": unknown scheme '" + name + "'");
  return *s;
}

Bytes uncompressed(const Bytes& x, const Bytes& y) {
  Bytes p{0x04};
  p.insert(p.end(), x.begin(), x.end());
  p.insert(p.end(), y.begin(), y.end());
  return p;
}

}  // namespace

std::vector<DhKemCase> dhkem_cases(const VectorDirs& dirs) {
  std::vector<DhKemCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/dhkem_rfc9180.json");
  for (const auto& v : f.root().list("vectors"))
    out.push_back({v.text("source"), scheme_of(v, "scheme"), v.bytes("skEm"), v.bytes("pkEm"), v.bytes("skRm"),
                   v.bytes("pkRm"), v.bytes("shared_secret")});
  return out;
}

std::vector<RawDhCase> x25519_cases(const VectorDirs& dirs) {
  std::vector<RawDhCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/x25519_rfc7748.json");
  for (const auto& v : f.root().list("function"))
    out.push_back({v.text("name"), kex::KemScheme::kX25519, v.bytes("scalar"), v.bytes("u"), v.bytes("output"), {}});
  for (const auto& v : f.root().list("diffie_hellman")) {
    const std::string n = v.text("name");
    out.push_back({n + " Alice", kex::KemScheme::kX25519, v.bytes("alice_private"), v.bytes("bob_public"),
                   v.bytes("shared"), v.bytes("alice_public")});
    out.push_back({n + " Bob", kex::KemScheme::kX25519, v.bytes("bob_private"), v.bytes("alice_public"),
                   v.bytes("shared"), v.bytes("bob_public")});
  }
  return out;
}

std::vector<X25519IterationCase> x25519_iteration_cases(const VectorDirs& dirs) {
  std::vector<X25519IterationCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/x25519_rfc7748.json");
  for (const auto& v : f.root().list("iterated"))
    out.push_back({v.text("name"), static_cast<std::size_t>(v.number("iterations")), v.bytes("k")});
  return out;
}

std::vector<RawDhCase> ecdh_cases(const VectorDirs& dirs, kex::KemScheme scheme) {
  const char* curve = scheme == kex::KemScheme::kEcdhP256 ? "P-256" : scheme == kex::KemScheme::kEcdhP521 ? "P-521" : "";
  std::vector<RawDhCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/ecdh_rfc5903.json");
  for (const auto& g : f.root().list("groups")) {
    if (g.text("curve") != curve) continue;
    const std::string n = g.text("name");
    const Bytes gi = uncompressed(g.bytes("gix"), g.bytes("giy")), gr = uncompressed(g.bytes("grx"), g.bytes("gry"));
    out.push_back({n + " initiator", scheme, g.bytes("i"), gr, g.bytes("girx"), gi});
    out.push_back({n + " responder", scheme, g.bytes("r"), gi, g.bytes("girx"), gr});
  }
  return out;
}

std::vector<RsaOaepCase> rsa_oaep_cases(const VectorDirs& dirs) {
  std::vector<RsaOaepCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/rsa_oaep_2048_sha256_wycheproof.json");
  const VectorCase root = f.root();
  if (root.text("sha") != "SHA-256" || root.text("mgfSha") != "SHA-256" || root.number("keySize") != 2048)
    throw VectorFileError(root.where() + ": not RSA-2048 OAEP with SHA-256 and MGF1-SHA-256");
  const Bytes key = root.bytes("privateKeyPkcs8");
  for (const auto& t : root.list("tests")) {
    RsaOaepCase c;
    c.name = "Wycheproof tcId " + std::to_string(t.number("tcId"));
    if (const std::string comment = t.text("comment"); !comment.empty()) c.name += " (" + comment + ")";
    c.private_key = key;
    c.ciphertext = t.bytes("ct");
    c.expect_secret = t.text("result") == "valid" && t.bytes("label").empty();
    if (c.expect_secret) {
      c.secret = t.bytes("msg");
      if (c.secret.size() != 32) throw VectorFileError(t.where() + ": a KEM secret is 32 bytes");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<NtruCase> ntru_cases(const VectorDirs& dirs, kex::KemScheme scheme) {
  std::vector<NtruCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "kex/ntru_libntru_kat.json");
  for (const auto& s : f.root().list("sets")) {
    if (scheme_of(s, "scheme") != scheme) continue;
    out.push_back({s.text("name"), scheme, s.bytes("keygen_seed"), s.bytes("public_key"), s.bytes("private_key"),
                   s.bytes("encaps_seed"), s.bytes("ciphertext"), s.bytes("shared_secret")});
  }
  return out;
}

}  // namespace layersec::selftest
