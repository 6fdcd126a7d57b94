// The table of primitives (known_answers.h).
#include "layersec/selftest/known_answers.h"

namespace layersec::selftest {

std::vector<Primitive> all_primitives() {
  std::vector<Primitive> out;
  for (auto part : {mac_primitives, aead_kdf_primitives, kem_primitives, signature_primitives}) {
    auto p = part();
    out.insert(out.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
  }
  return out;
}

Bytes bench_message() {
  Bytes m(1500);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(i * 131 + 7);
  return m;
}

}  // namespace layersec::selftest
