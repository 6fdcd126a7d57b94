// ML-KEM vector decoder (mlkem_vectors.h).
#include "layersec/selftest/mlkem_vectors.h"

namespace layersec::selftest {

MlKemCases mlkem_cases(const VectorDirs& dirs, std::string_view set) {
  const VectorFile f = VectorFile::load(dirs.shared / "mlkem/mlkem_acvp_subset.json");
  const VectorCase s = f.root().child("sets").child(set);
  auto name = [&](const VectorCase& tc) { return "ACVP tcId " + std::to_string(tc.number("tcId")); };
  MlKemCases out;
  for (const auto& tc : s.list("keyGen"))
    out.keygen.push_back({name(tc), tc.bytes("d"), tc.bytes("z"), tc.bytes("ek"), tc.bytes("dk")});
  for (const auto& tc : s.list("encapsulation"))
    out.encaps.push_back({name(tc), tc.bytes("ek"), tc.bytes("dk"), tc.bytes("m"), tc.bytes("c"), tc.bytes("k")});
  for (const auto& tc : s.list("decapsulation")) {
    const bool rejection = tc.text("reason") == "modified ciphertext";
    out.decaps.push_back({name(tc) + (rejection ? " (implicit rejection)" : ""), tc.bytes("dk"), tc.bytes("c"),
                          tc.bytes("k"), rejection});
  }
  return out;
}

}  // namespace layersec::selftest
