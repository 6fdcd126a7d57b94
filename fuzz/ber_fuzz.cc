// Fuzz target for the BER (X.690 §8.1) TLV reader and writer in bytes.h.
//
// The input is read as a sequence of TLVs with ByteReader; constructed TLVs
// (bit 6 of the identifier, 0x20) are read recursively when their contents
// are themselves a complete TLV sequence, otherwise kept as opaque bytes.
// The tree is re-encoded with ByteWriter (begin_ber/end_ber for constructed
// TLVs, ber_tlv for the rest) and:
//   * if every length in the input used the minimal form (DER-style), the
//     re-encoding must equal the input byte for byte;
//   * otherwise the re-encoding must be shorter and must parse back into the
//     same tree, and re-encoding that tree must give the same bytes.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/base/bytes.h"

namespace {

using layersec::ByteReader;
using layersec::ByteSpan;
using layersec::ByteWriter;

constexpr int kMaxDepth = 32;

struct Node {
  std::uint8_t tag = 0;
  bool nested = false;  // constructed, with contents parsed into kids
  ByteSpan value;       // the contents (for opaque nodes: what to copy)
  std::vector<Node> kids;
};

// Parses a complete TLV sequence. `minimal` is cleared when a length was not
// in its minimal form. Returns false if the bytes are not a TLV sequence.
bool parse_sequence(ByteSpan data, int depth, std::vector<Node>& out, bool& minimal) {
  ByteReader r(data);
  while (!r.empty()) {
    const std::size_t start = r.position();
    std::uint8_t tag = 0;
    std::size_t length = 0;
    if (!r.ber_header(tag, length)) return false;
    const std::size_t header_len = r.position() - start;
    ByteReader value = r.sub(length);
    if (!r.ok() || !value.ok()) return false;
    Node n;
    n.tag = tag;
    n.value = value.data();
    bool inner_minimal = true;
    if ((tag & 0x20) != 0 && depth < kMaxDepth && !n.value.empty() &&
        parse_sequence(n.value, depth + 1, n.kids, inner_minimal)) {
      n.nested = true;
      if (!inner_minimal) minimal = false;
    } else {
      n.kids.clear();
    }
    if (header_len != 1 + layersec::ber_length_size(length)) minimal = false;
    out.push_back(std::move(n));
  }
  return r.finish();
}

bool encode(const std::vector<Node>& nodes, ByteWriter& w) {
  for (const auto& n : nodes) {
    if (n.nested) {
      const auto mark = w.begin_ber(n.tag);
      if (!encode(n.kids, w) || !w.end_ber(mark)) return false;
    } else if (!w.ber_tlv(n.tag, n.value)) {
      return false;
    }
  }
  return w.ok();
}

bool same_tree(const std::vector<Node>& a, const std::vector<Node>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].tag != b[i].tag || a[i].nested != b[i].nested) return false;
    if (a[i].nested) {
      if (!same_tree(a[i].kids, b[i].kids)) return false;
    } else if (a[i].value.size() != b[i].value.size() ||
               !std::equal(a[i].value.begin(), a[i].value.end(), b[i].value.begin())) {
      return false;
    }
  }
  return true;
}

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan input(data, size);
  std::vector<Node> tree;
  bool minimal = true;
  if (!parse_sequence(input, 0, tree, minimal)) return 0;

  // begin_ber reserves the longest length form (5 octets) while a TLV is
  // open, so leave room for that at every open level.
  std::vector<std::uint8_t> out(size + 6 * (kMaxDepth + 2));
  ByteWriter w(out);
  check(encode(tree, w));
  const ByteSpan re = w.written();
  if (minimal) {
    check(re.size() == size && std::equal(re.begin(), re.end(), input.begin()));
    return 0;
  }
  check(re.size() < size);
  std::vector<Node> tree2;
  bool minimal2 = true;
  check(parse_sequence(re, 0, tree2, minimal2));
  check(minimal2);
  check(same_tree(tree, tree2));
  std::vector<std::uint8_t> out2(re.size() + 6 * (kMaxDepth + 2));
  ByteWriter w2(out2);
  check(encode(tree2, w2));
  check(w2.written().size() == re.size() && std::equal(re.begin(), re.end(), w2.written().begin()));
  return 0;
}
