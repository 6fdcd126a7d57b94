// Cross-check of Chaskey against an independent implementation
// (tests/crypto_xcheck/chaskey_ref.py writes the cases; `layersec selftest
// --chaskey-xcheck FILE` runs them).
//
// Input: lines "<rounds> <key hex> <message hex or -> <tag hex>"; blank lines
// and lines starting with '#' are skipped. Every tag must be reproduced by
// Chaskey::mac(), by the incremental interface (pieces of 1, 2, 3, ...
// bytes) and by make_mac().
#pragma once

#include <ostream>
#include <string_view>

namespace layersec::selftest {

struct XcheckResult {
  int checked = 0;     // well-formed cases run
  int mismatches = 0;  // malformed lines and wrong tags
  [[nodiscard]] bool ok() const { return checked > 0 && mismatches == 0; }
};

// Runs every case of `text`; writes one line per problem to `diagnostics`
// ("line N: ..."), naming the line and message length, never key or tag.
XcheckResult chaskey_xcheck(std::string_view text, std::ostream& diagnostics);

}  // namespace layersec::selftest
