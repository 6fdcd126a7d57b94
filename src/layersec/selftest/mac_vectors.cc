// MAC vector decoders (mac_vectors.h).
#include "layersec/selftest/mac_vectors.h"

namespace layersec::selftest {

namespace {

using crypto::MacAlgorithm;

MacAlgorithm cmac_for_key(std::size_t n) {
  return n == 16 ? MacAlgorithm::kCmacAes128 : n == 24 ? MacAlgorithm::kCmacAes192 : MacAlgorithm::kCmacAes256;
}

// A bit string given MSB first with an odd number of hex digits allowed
// ("5a11dc6" = 28 bits): the last nibble is padded with zero bits.
Bytes hex_bits(std::string s, const std::string& where) {
  if (s.size() % 2) s += '0';
  return hex_bytes(s, where);
}

}  // namespace

std::vector<MacCase> cmac_cases(const VectorDirs& dirs) {
  std::vector<MacCase> out;
  const VectorFile f = VectorFile::load(dirs.shared / "secoc/cmac_secoc_vectors.json");
  const VectorCase j = f.root();
  for (const char* set : {"cmac_aes128_rfc4493", "cmac_aes192_sp800_38b", "cmac_aes256_sp800_38b"}) {
    for (const auto& v : j.list(set)) {
      const Bytes key = v.bytes("key");
      out.push_back({v.text("name"), cmac_for_key(key.size()), key, v.bytes("message"), v.bytes("expected_mac"), 128});
    }
  }
  for (const auto& v : j.list("secoc_external")) {
    const std::string n = v.text("name");
    const Bytes key = v.bytes("key"), msg = v.bytes("data_to_authenticator");
    out.push_back({n, MacAlgorithm::kCmacAes128, key, msg, v.bytes("full_cmac_openssl"), 128});
    out.push_back({n + " (24 bit)", MacAlgorithm::kCmacAes128, key, msg, v.bytes("expected_truncated_mac_24bit"), 24});
  }
  Bytes negative_key;  // the negative case uses the first derived key
  for (const auto& v : j.list("secoc_derived")) {
    const std::string n = v.text("name");
    const Bytes key = v.bytes("key"), msg = v.bytes("data_to_authenticator");
    if (negative_key.empty()) negative_key = key;
    out.push_back({n, MacAlgorithm::kCmacAes128, key, msg, v.bytes("full_cmac"), 128});
    out.push_back({n + " (truncated)", MacAlgorithm::kCmacAes128, key, msg,
                   hex_bits(v.text("truncated_mac"), v.where()), static_cast<std::size_t>(v.number("mac_trunc_bits"))});
  }
  // IEEE 802.1X-2020: the RFC 4493 examples again, and the ICVs of MKPDUs
  // captured from wpa_supplicant (ICV = AES-CMAC(ICK, frame without ICV)).
  const VectorFile m = VectorFile::load(dirs.shared / "mka/mka_vectors.json");
  for (const auto& v : m.root().list("vectors")) {
    if (v.text("kind").rfind("AES-CMAC", 0) == 0) {
      const Bytes key = v.child("inputs").bytes("key");
      out.push_back({v.text("id"), cmac_for_key(key.size()), key, v.child("inputs").bytes("msg"), v.bytes("expected"), 128});
    }
    if (!v.has("mkpdus")) continue;
    const Bytes ick = v.child("inputs").bytes("derived_ick");
    for (const auto& p : v.list("mkpdus")) {
      if (!p.flag("icv_ok", false)) continue;
      Bytes frame = p.bytes("mkpdu_hex");
      const Bytes icv = p.bytes("icv");
      if (frame.size() < icv.size()) throw VectorFileError(p.where() + ": MKPDU shorter than its ICV");
      frame.resize(frame.size() - icv.size());
      out.push_back({"MKPDU frame " + std::to_string(p.number("frame_no")), MacAlgorithm::kCmacAes128, ick, frame, icv, 128});
    }
  }
  for (const auto& v : j.list("secoc_negative"))
    out.push_back({v.text("name"), MacAlgorithm::kCmacAes128, negative_key, v.bytes("data_to_authenticator"),
                   v.bytes("expected_truncated_mac_of_original"), 24, /*positive=*/false});
  return out;
}

std::vector<MacCase> hmac_sha256_cases(const VectorDirs& dirs) {
  std::vector<MacCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "crypto/hmac_sha256_rfc4231.json");
  for (const auto& v : f.root().list("vectors"))
    out.push_back({v.text("name"), MacAlgorithm::kHmacSha256, v.bytes("key"), v.bytes("message"), v.bytes("tag"),
                   static_cast<std::size_t>(v.number("tag_bits"))});
  return out;
}

std::vector<MacCase> blake2s_cases(const VectorDirs& dirs) {
  std::vector<MacCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "crypto/blake2s_keyed_kat.json");
  const Bytes key = f.root().bytes("key");
  for (const auto& v : f.root().list("vectors")) {
    const std::size_t n = v.number("msg_len");
    Bytes msg(n);  // the reference KAT's messages are 00 01 02 ...
    for (std::size_t i = 0; i < n; ++i) msg[i] = static_cast<std::uint8_t>(i);
    out.push_back({"keyed KAT len " + std::to_string(n), MacAlgorithm::kBlake2s256, key, msg, v.bytes("tag"), 256});
  }
  return out;
}

std::vector<ChaskeyCase> chaskey_cases(const VectorDirs& dirs, std::size_t* sets) {
  std::vector<ChaskeyCase> out;
  const VectorFile f = VectorFile::load(dirs.shared / "chaskey/chaskey_vectors.json");
  const auto all = f.root().list("sets");
  if (sets != nullptr) *sets = all.size();
  for (const auto& s : all) {
    const Bytes key = s.bytes("key_hex");
    const int rounds = static_cast<int>(s.number("rounds"));
    const std::size_t tag_len = s.number("tag_len_bytes");
    for (const auto& v : s.list("vectors")) {
      ChaskeyCase c{s.text("id"), rounds, key, v.bytes("message_hex"), v.bytes("tag_hex")};
      if (c.tag.size() != tag_len || c.msg.size() != v.number("msg_len"))
        throw VectorFileError(v.where() + ": tag or message length disagrees with the set");
      c.name += " len " + std::to_string(c.msg.size());
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace layersec::selftest
