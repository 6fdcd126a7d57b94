#include "layersec/kex/mlkem_ct_check.h"

#include <cstdint>
#include <vector>

#include "layersec/crypto/mlkem_ct.h"

namespace layersec::kex {

std::string_view to_string(MlKemCtStep s) {
  switch (s) {
    case MlKemCtStep::kKeygen: return "keygen";
    case MlKemCtStep::kEncaps: return "encaps";
    case MlKemCtStep::kDecaps: return "decaps";
    case MlKemCtStep::kDecapsRejection: return "decaps (rejection)";
  }
  return "?";
}

Result<MlKemCtReport, MlKemCtStep> run_mlkem_ct_check(crypto::MlKemParameterSet set, int rounds) {
  using crypto::ct_declassify;
  using crypto::ct_poison;
  crypto::MlKem kem(set);
  const auto& p = kem.params();
  MlKemCtReport report;
  for (int it = 0; it < rounds; ++it) {
    std::vector<std::uint8_t> d(32), z(32), m(32), ek(p.encaps_key_size), dk(p.decaps_key_size);
    std::vector<std::uint8_t> c(p.ciphertext_size), k_enc(32), k_dec(32), k_rej(32);
    for (int i = 0; i < 32; ++i) {
      d[i] = static_cast<std::uint8_t>(i * 3 + it);
      z[i] = static_cast<std::uint8_t>(i * 5 + 7 * it);
      m[i] = static_cast<std::uint8_t>(i * 11 + 13 * it);
    }
    ct_poison(d.data(), 32);
    ct_poison(z.data(), 32);
    ct_poison(m.data(), 32);
    if (!kem.keygen_internal(d, z, ek, dk).ok()) return Err(MlKemCtStep::kKeygen);
    // ek, and the copy of ek and H(ek) inside dk, are public.
    ct_declassify(ek.data(), ek.size());
    const std::size_t pke = 384 * static_cast<std::size_t>(p.k);
    ct_declassify(dk.data() + pke, ek.size() + 32);
    ct_poison(dk.data(), pke);                    // s
    ct_poison(dk.data() + dk.size() - 32, 32);  // z
    if (!kem.encaps_internal(ek, m, c, k_enc).ok()) return Err(MlKemCtStep::kEncaps);
    ct_declassify(c.data(), c.size());  // the ciphertext is public
    if (!kem.decaps(dk, c, k_dec).ok()) return Err(MlKemCtStep::kDecaps);
    c[c.size() / 3] ^= 0x20;  // implicit rejection path
    if (!kem.decaps(dk, c, k_rej).ok()) return Err(MlKemCtStep::kDecapsRejection);
    // Results are compared only after declassification.
    ct_declassify(k_enc.data(), 32);
    ct_declassify(k_dec.data(), 32);
    ct_declassify(k_rej.data(), 32);
    if (k_enc != k_dec) ++report.wrong_results;
    if (k_rej == k_enc) ++report.wrong_results;
    ++report.rounds;
  }
  return report;
}

int mlkem_ct_leak_control() {
  std::vector<std::uint8_t> secret(32, 0x5A);
  crypto::ct_poison(secret.data(), secret.size());
  volatile int sink = 0;
  if (secret[0] & 1) sink = 1;
  return sink;
}

}  // namespace layersec::kex
