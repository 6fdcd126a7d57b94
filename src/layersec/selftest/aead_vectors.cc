// AES-GCM / GMAC vector decoders (aead_vectors.h).
#include "layersec/selftest/aead_vectors.h"

#include <algorithm>

namespace layersec::selftest {

std::vector<GcmCase> gcm_spec_cases(const VectorDirs& dirs) {
  std::vector<GcmCase> out;
  const VectorFile f = VectorFile::load(dirs.testdata / "crypto/gcm_vectors.json");
  for (const auto& v : f.root().list("vectors"))
    out.push_back({v.text("name"), v.bytes("key"), v.bytes("iv"), v.bytes("aad"), v.bytes("plaintext"),
                   v.bytes("ciphertext"), v.bytes("tag")});
  return out;
}

std::vector<GcmCase> macsec_gcm_cases(const VectorDirs& dirs) {
  std::vector<GcmCase> out;
  const VectorFile f = VectorFile::load(dirs.shared / "macsec/macsec_vectors.json");
  for (const char* list : {"annex_c", "supplementary", "negative"}) {
    for (const auto& v : f.root().list(list)) {
      if (!v.has("protection") || !v.has("secure_frame_parts")) continue;  // not a MACsec frame
      GcmCase c;
      c.name = v.text("id");
      c.positive = std::string(list) != "negative";
      c.integrity_only = v.text("protection") == "integrity";
      c.key = v.bytes("sak");
      if (v.text("cipher_suite").find("XPN") != std::string::npos) {
        Bytes ssci_pn = v.bytes("ssci");
        const Bytes pn = v.bytes("xpn_pn64"), salt = v.bytes("salt");
        ssci_pn.insert(ssci_pn.end(), pn.begin(), pn.end());
        if (ssci_pn.size() != 12 || salt.size() != 12) throw VectorFileError(v.where() + ": bad XPN fields");
        c.iv.resize(12);
        for (std::size_t i = 0; i < 12; ++i) c.iv[i] = ssci_pn[i] ^ salt[i];
      } else {
        c.iv = v.bytes("sci");
        const Bytes pn = v.bytes("pn_hex");
        c.iv.insert(c.iv.end(), pn.begin(), pn.end());
      }
      const Bytes frame = v.bytes("secure_frame");
      const VectorCase parts = v.child("secure_frame_parts");
      c.tag = parts.bytes("icv");
      const Bytes secure_data = parts.bytes("secure_data");
      if (frame.size() < secure_data.size() + c.tag.size() + 12)
        throw VectorFileError(v.where() + ": inconsistent MACsec frame");
      const std::size_t header = frame.size() - secure_data.size() - c.tag.size();
      Bytes clear_tags;
      if (v.has("clear_tags_before_sectag") && v.json().at("clear_tags_before_sectag").is_string())
        clear_tags = v.bytes("clear_tags_before_sectag");
      if (c.integrity_only) {
        c.aad.assign(frame.begin(), frame.end() - static_cast<long>(c.tag.size()));
      } else {
        c.aad.assign(frame.begin(), frame.begin() + static_cast<long>(header));
        c.ciphertext = secure_data;
        c.plaintext = v.child("unprotected_frame").bytes("msdu");
        if (!clear_tags.empty() && c.plaintext.size() >= clear_tags.size() &&
            std::equal(clear_tags.begin(), clear_tags.end(), c.plaintext.begin()))
          c.plaintext.erase(c.plaintext.begin(), c.plaintext.begin() + static_cast<long>(clear_tags.size()));
      }
      if (c.aad.size() < 12 + clear_tags.size()) throw VectorFileError(v.where() + ": inconsistent clear tags");
      c.aad.erase(c.aad.begin() + 12, c.aad.begin() + 12 + static_cast<long>(clear_tags.size()));
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace layersec::selftest
