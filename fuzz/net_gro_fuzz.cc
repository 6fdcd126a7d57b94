// Fuzz target: net::TcpCoalescer (the MACsec link's receive-side join of
// verified TCP segments, net/offload.h) on streams of segments. The input
// drives a structure-aware generator so that random inputs reach the deep
// paths: a TCP stream split the way a TSO device splits it (complete_offload),
// then edits of single octets in chosen segments (optionally with the
// checksums recomputed so the edit survives the checksum checks), swaps and
// repeats. Raw mode (first octet's top bit): length-prefixed frames as they are.
// Properties besides "no crash": a frame is either held or refused, a
// refused one leaves the pending frame as it was; whatever take() hands out
// is the held segments exactly: one segment unchanged with an all-zero
// header, several as a GSO frame that complete_offload splits back into
// that many segments with the same payloads and sequence numbers, whose
// checksums verify.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/offload.h"

using namespace layersec;
using namespace layersec::net;

namespace {

using Bytes = std::vector<std::uint8_t>;

void check(bool cond) {
  if (!cond) std::abort();
}

struct Collect final : FrameSink {
  std::vector<Bytes> frames;
  void frame(ByteSpan f) override { frames.emplace_back(f.begin(), f.end()); }
};

std::size_t ip_len_of(const Bytes& f) {
  return load_be16(f.data() + 12) == 0x86DD ? 40 : static_cast<std::size_t>(f[14] & 0x0F) * 4;
}

constexpr std::size_t kMaxPayload = 30000;  // a GSO frame's payload is below this

// A GSO TCP frame of `payload` octets (IPv4 with DF or IPv6, 12 octets of options).
Bytes gso_frame(bool v6, std::size_t payload, std::uint8_t flags, std::uint8_t salt) {
  Bytes f(14, 0);
  f[0] = 0x02;
  f[5] = salt;
  f[6] = 0x02;
  store_be16(f.data() + 12, v6 ? 0x86DD : 0x0800);
  const std::size_t tcp_len = 32;
  Bytes ip(v6 ? 40 : 20, 0);
  if (!v6) {
    ip[0] = 0x45;
    store_be16(ip.data() + 2, static_cast<std::uint16_t>(20 + tcp_len + payload));
    store_be16(ip.data() + 4, static_cast<std::uint16_t>(salt * 257));
    store_be16(ip.data() + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 6;
    ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
  } else {
    ip[0] = 0x60;
    store_be16(ip.data() + 4, static_cast<std::uint16_t>(tcp_len + payload));
    ip[6] = 6;
    ip[7] = 64;
    ip[8] = 0xFD, ip[23] = 1, ip[24] = 0xFD, ip[39] = 2;
  }
  f.insert(f.end(), ip.begin(), ip.end());
  Bytes tcp(tcp_len, 1);
  store_be16(tcp.data(), 40000);
  store_be16(tcp.data() + 2, 5201);
  store_be32(tcp.data() + 4, 0xFFFFF000u + salt);
  store_be32(tcp.data() + 8, 77);
  tcp[12] = static_cast<std::uint8_t>((tcp_len / 4) << 4);
  tcp[13] = flags;
  store_be16(tcp.data() + 14, 512);
  store_be16(tcp.data() + 16, 0);
  store_be16(tcp.data() + 18, 0);
  f.insert(f.end(), tcp.begin(), tcp.end());
  // Payload octet i is (13 i + salt) mod 256. Copied out of one table built
  // once: 13 is odd, so (13 i + salt) = 13 (i + 197 salt) mod 256 (197 = 13^-1
  // mod 256), a window of (13 j) mod 256 starting at j = 197 salt mod 256. A
  // per-octet loop here was half the target's time (the build instruments
  // every loop compare).
  static const Bytes pattern = [] {
    Bytes t(kMaxPayload + 256);
    for (std::size_t j = 0; j < t.size(); ++j) t[j] = static_cast<std::uint8_t>(j * 13);
    return t;
  }();
  const std::size_t start = (197u * salt) % 256;
  f.insert(f.end(), pattern.begin() + static_cast<long>(start), pattern.begin() + static_cast<long>(start + payload));
  return f;
}

struct Model {
  TcpCoalescer gro{4096};
  std::vector<Bytes> held;

  void verify_take() {
    const TcpCoalescer::Frame out = gro.take();
    check(out.segments == held.size());
    check(gro.segments() == 0);
    if (held.empty()) return;
    if (held.size() == 1) {
      check(Bytes(out.frame.begin(), out.frame.end()) == held[0]);
      check(out.header.flags == 0 && out.header.gso_type == kVnetGsoNone);
      held.clear();
      return;
    }
    check(out.header.flags == kVnetNeedsCsum);
    check(out.header.gso_type == kVnetGsoTcpV4 || out.header.gso_type == kVnetGsoTcpV6);
    check(out.frame.size() <= 4096 && out.header.hdr_len <= out.frame.size());
    Bytes frame(out.frame.begin(), out.frame.end());
    Bytes scratch(4096);
    Collect c;
    auto r = complete_offload(out.header, frame, scratch, 4096, c);
    check(r.ok() && *r == held.size() && c.frames.size() == held.size());
    const std::size_t hdr = out.header.hdr_len;
    for (std::size_t i = 0; i < held.size(); ++i) {
      const Bytes& a = c.frames[i];
      const Bytes& b = held[i];
      check(a.size() == b.size());
      check(std::memcmp(a.data() + hdr, b.data() + hdr, a.size() - hdr) == 0);  // payload
      const std::size_t tcp = 14 + ip_len_of(b);
      check(std::memcmp(a.data() + tcp, b.data() + tcp, 12) == 0);  // ports, sequence, acknowledgement
      check(std::memcmp(a.data(), b.data(), 14) == 0);
    }
    held.clear();
  }

  void offer(const Bytes& f) {
    const std::size_t before = gro.segments();
    TcpCoalescer::Offer o = gro.offer(f);
    if (o == TcpCoalescer::Offer::kFlushFirst) {
      check(gro.segments() == before && before > 0);
      verify_take();
      o = gro.offer(f);
      check(o == TcpCoalescer::Offer::kHeld);
    }
    if (o == TcpCoalescer::Offer::kHeld) {
      held.push_back(f);
      check(gro.segments() == held.size());
      return;
    }
    check(gro.segments() == before);
    verify_take();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6 || size > 20000) return 0;
  Model m;
  if ((data[0] & 0x80) != 0) {
    // Raw: [u16 length][frame]...
    std::size_t i = 1;
    while (i + 2 <= size) {
      const std::size_t n = std::min<std::size_t>(load_be16(data + i), size - i - 2);
      m.offer(Bytes(data + i + 2, data + i + 2 + n));
      i += 2 + n;
    }
    m.verify_take();
    return 0;
  }
  const bool v6 = (data[0] & 1) != 0;
  const std::uint8_t flags = data[1];
  const std::size_t mss = 1 + load_be16(data + 2) % 1400;
  const std::size_t payload = load_be16(data + 4) % kMaxPayload;
  Bytes gso = gso_frame(v6, payload, flags, data[0]);
  VnetHeader h;
  h.flags = kVnetNeedsCsum;
  h.gso_type = v6 ? kVnetGsoTcpV6 : kVnetGsoTcpV4;
  h.gso_size = static_cast<std::uint16_t>(mss);
  Bytes scratch(1514);
  Collect c;
  if (!complete_offload(h, gso, scratch, 1514, c).ok()) return 0;
  std::vector<Bytes>& segs = c.frames;
  // Edits: [segment][offset u16][xor]; segment's top bit: refresh checksums;
  // xor 0: swap with the next segment; offset 0xFFFF: repeat the segment.
  for (std::size_t i = 6; i + 4 <= size && !segs.empty(); i += 4) {
    const std::size_t k = (data[i] & 0x7F) % segs.size();
    const std::size_t off = load_be16(data + i + 1);
    const std::uint8_t x = data[i + 3];
    if (off == 0xFFFF) {
      if (segs.size() < 200) segs.insert(segs.begin() + static_cast<long>(k), segs[k]);
      continue;
    }
    if (x == 0) {
      if (k + 1 < segs.size()) std::swap(segs[k], segs[k + 1]);
      continue;
    }
    segs[k][off % segs[k].size()] ^= x;
    if ((data[i] & 0x80) != 0) (void)refresh_tcp_checksums(segs[k]);
  }
  for (const Bytes& s : segs) m.offer(s);
  m.verify_take();
  return 0;
}
