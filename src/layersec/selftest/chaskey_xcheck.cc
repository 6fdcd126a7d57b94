// Chaskey cross-check runner (chaskey_xcheck.h).
#include "layersec/selftest/chaskey_xcheck.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "layersec/crypto/chaskey.h"
#include "layersec/crypto/mac.h"

namespace layersec::selftest {

XcheckResult chaskey_xcheck(std::string_view text, std::ostream& diagnostics) {
  XcheckResult res;
  std::istringstream in{std::string(text)};
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int rounds = 0;
    std::string key_hex, msg_hex, tag_hex;
    ls >> rounds >> key_hex >> msg_hex >> tag_hex;
    if (msg_hex == "-") msg_hex.clear();  // empty message
    const auto key = from_hex(key_hex), msg = from_hex(msg_hex), tag = from_hex(tag_hex);
    if (!ls || !key || !msg || !tag || tag->empty() || tag->size() > 16) {
      diagnostics << "line " << lineno << ": malformed\n";
      ++res.mismatches;
      continue;
    }
    auto c = crypto::Chaskey::create(*key, rounds);
    auto m = crypto::make_mac(rounds == 12 ? crypto::MacAlgorithm::kChaskey12 : crypto::MacAlgorithm::kChaskey8, *key);
    if (!c.ok() || !m.ok()) {
      diagnostics << "line " << lineno << ": cannot key Chaskey\n";
      ++res.mismatches;
      continue;
    }
    std::vector<std::uint8_t> a(tag->size()), b(16), d(16);
    c.value()->mac(*msg, a);
    bool ok = m.value()->compute(*msg, b).ok();
    // Incremental in pieces of 1, 2, 3, ... bytes.
    auto& inc = *c.value();
    inc.begin();
    std::size_t pos = 0;
    for (std::size_t piece = 1; pos < msg->size(); ++piece) {
      const std::size_t n = std::min(piece, msg->size() - pos);
      inc.update(ByteSpan(*msg).subspan(pos, n));
      pos += n;
    }
    ok = ok && inc.finish(d).ok();
    ok = ok && a == *tag && std::equal(tag->begin(), tag->end(), b.begin()) &&
         std::equal(tag->begin(), tag->end(), d.begin());
    ++res.checked;
    if (!ok) {
      ++res.mismatches;
      diagnostics << "line " << lineno << ": Chaskey-" << rounds << " tag mismatch (message " << msg->size()
                  << " bytes)\n";
    }
  }
  return res;
}

}  // namespace layersec::selftest
