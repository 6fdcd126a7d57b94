// Fuzz target: net::complete_offload (what the MACsec link does with a frame
// a TAP with IFF_VNET_HDR and TCP offload hands over) on arbitrary virtio-net
// headers and frames. Input: 10 octets of header (native order), the frame.
// Properties besides "no crash": on success the sink got exactly the count
// returned, every frame fits max_frame; TCP segments carry a valid IPv4
// header checksum and a valid TCP checksum, and their payloads joined are
// the input's payload; on error nothing was emitted.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/offload.h"

using namespace layersec;
using namespace layersec::net;

namespace {

void check(bool cond) {
  if (!cond) std::abort();
}

constexpr std::size_t kMaxFrame = 1514;

struct Sink final : FrameSink {
  std::vector<std::vector<std::uint8_t>> frames;
  void frame(ByteSpan f) override { frames.emplace_back(f.begin(), f.end()); }
};

std::uint32_t folded(ByteSpan d) { return static_cast<std::uint16_t>(~internet_checksum(d)); }

bool tcp_ok(const std::vector<std::uint8_t>& f, std::size_t ip_len, bool v6) {
  const std::uint8_t* ip = f.data() + 14;
  const ByteSpan tcp(ip + ip_len, f.size() - 14 - ip_len);
  std::uint8_t pseudo[40] = {};
  std::size_t n = 12;
  if (!v6) {
    std::memcpy(pseudo, ip + 12, 8);
    pseudo[9] = 6;
    store_be16(pseudo + 10, static_cast<std::uint16_t>(tcp.size()));
  } else {
    std::memcpy(pseudo, ip + 8, 32);
    store_be32(pseudo + 32, static_cast<std::uint32_t>(tcp.size()));
    pseudo[39] = 6;
    n = 40;
  }
  return internet_checksum(tcp, folded(ByteSpan(pseudo, n))) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < sizeof(VnetHeader) || size > sizeof(VnetHeader) + 65549) return 0;
  VnetHeader h;
  std::memcpy(&h, data, sizeof h);
  std::vector<std::uint8_t> frame(data + sizeof h, data + size);
  const std::vector<std::uint8_t> input = frame;
  std::vector<std::uint8_t> scratch(kMaxFrame);
  Sink sink;
  auto r = complete_offload(h, frame, scratch, kMaxFrame, sink);
  if (!r) {
    check(sink.frames.empty());
    return 0;
  }
  check(*r == sink.frames.size() && *r >= 1);
  for (const auto& f : sink.frames) check(f.size() <= kMaxFrame);
  const bool tso = h.gso_type == kVnetGsoTcpV4 || h.gso_type == kVnetGsoTcpV6;
  if (!tso) {
    check(*r == 1 && sink.frames[0].size() == input.size());
    return 0;
  }
  const bool v6 = h.gso_type == kVnetGsoTcpV6;
  const std::size_t ip_len = v6 ? 40 : static_cast<std::size_t>(input[14] & 0x0F) * 4;
  const std::size_t headers = 14 + ip_len + static_cast<std::size_t>(input[14 + ip_len + 12] >> 4) * 4;
  std::vector<std::uint8_t> joined;
  for (const auto& f : sink.frames) {
    check(f.size() >= headers);
    if (!v6) check(internet_checksum(ByteSpan(f.data() + 14, ip_len)) == 0);
    check(tcp_ok(f, ip_len, v6));
    joined.insert(joined.end(), f.begin() + static_cast<long>(headers), f.end());
  }
  check(joined == std::vector<std::uint8_t>(input.begin() + static_cast<long>(headers), input.end()));
  return 0;
}
