// lower_link_filter (socket_filter.h): the program run by a classic BPF
// interpreter here (the kernel's semantics for the instructions it uses: a
// load beyond the frame's end ends the program with 0, i.e. drops the frame
// unseen), and once attached to a real AF_PACKET socket between two network
// namespaces (root only; skips otherwise).
#include "layersec/net/socket_filter.h"

#include <gtest/gtest.h>
#include <linux/filter.h>
#include <poll.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Runs `p` over `frame` as the kernel would; returns the octets kept.
std::uint32_t run(const std::vector<BpfInstruction>& p, const Bytes& frame) {
  std::uint32_t a = 0;
  std::size_t pc = 0;
  for (int steps = 0; steps < 4096; ++steps) {
    if (pc >= p.size()) throw std::logic_error("ran off the program");
    const BpfInstruction& i = p[pc++];
    const auto load = [&](std::size_t off, std::size_t n) -> bool {
      if (off + n > frame.size()) return false;
      a = 0;
      for (std::size_t k = 0; k < n; ++k) a = (a << 8) | frame[off + k];
      return true;
    };
    switch (i.code) {
      case BPF_LD | BPF_W | BPF_LEN: a = static_cast<std::uint32_t>(frame.size()); break;
      case BPF_LD | BPF_B | BPF_ABS: if (!load(i.k, 1)) return 0; break;
      case BPF_LD | BPF_H | BPF_ABS: if (!load(i.k, 2)) return 0; break;
      case BPF_LD | BPF_W | BPF_ABS: if (!load(i.k, 4)) return 0; break;
      case BPF_JMP | BPF_JA: pc += i.k; break;
      case BPF_JMP | BPF_JEQ | BPF_K: pc += a == i.k ? i.jt : i.jf; break;
      case BPF_JMP | BPF_JGE | BPF_K: pc += a >= i.k ? i.jt : i.jf; break;
      case BPF_JMP | BPF_JSET | BPF_K: pc += (a & i.k) != 0 ? i.jt : i.jf; break;
      case BPF_RET | BPF_K: return std::min<std::uint32_t>(i.k, static_cast<std::uint32_t>(frame.size()));
      default: throw std::logic_error("unexpected opcode " + std::to_string(i.code));
    }
  }
  throw std::logic_error("no return");
}

const MacAddress kUs{{0x02, 0x00, 0x00, 0x11, 0x22, 0x33}};
const MacAddress kOther{{0x02, 0x00, 0x00, 0x11, 0x22, 0x34}};
const MacAddress kPeer{{0x02, 0x00, 0x00, 0x44, 0x55, 0x66}};
const MacAddress kGroup{{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E}};

Bytes frame(const MacAddress& dst, std::vector<std::uint16_t> types, std::size_t body = 100) {
  Bytes f(dst.bytes.begin(), dst.bytes.end());
  f.insert(f.end(), kPeer.bytes.begin(), kPeer.bytes.end());
  for (std::size_t i = 0; i < types.size(); ++i) {
    f.push_back(static_cast<std::uint8_t>(types[i] >> 8));
    f.push_back(static_cast<std::uint8_t>(types[i]));
    if (i + 1 < types.size()) f.insert(f.end(), {0x00, 0x0A});  // TCI of a tag
  }
  f.resize(f.size() + body, 0x5A);
  return f;
}

LowerLinkFilterSpec link_spec() {
  LowerLinkFilterSpec s;
  s.unicast = kUs;
  s.full_types = {0x88E5};
  return s;
}

TEST(SocketFilter, MacsecToUsOrAGroupIsWholeEverythingElseOnlyItsHeader) {
  const auto p = lower_link_filter(link_spec());
  const Bytes secure = frame(kUs, {0x88E5});
  EXPECT_EQ(run(p, secure), secure.size());
  EXPECT_EQ(run(p, frame(kGroup, {0x88E5})), frame(kGroup, {0x88E5}).size());
  EXPECT_EQ(run(p, frame({{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, {0x88E5})), 114u);
  // Foreign EtherTypes (IPv4, ARP, EAPOL, gPTP without a hook) and MACsec to
  // another station: the header only, for the counters.
  for (std::uint16_t t : {0x0800, 0x0806, 0x888E, 0x88F7, 0x86DD}) {
    EXPECT_EQ(run(p, frame(kUs, {t})), kFilterHeaderOctets) << std::hex << t;
  }
  EXPECT_EQ(run(p, frame(kOther, {0x88E5})), kFilterHeaderOctets);
  // Differs from our MAC in the first two octets only / in the last four only.
  EXPECT_EQ(run(p, frame({{0x06, 0x00, 0x00, 0x11, 0x22, 0x33}}, {0x88E5})), kFilterHeaderOctets);
  EXPECT_EQ(run(p, frame({{0x02, 0x00, 0x00, 0x11, 0x22, 0x30}}, {0x88E5})), kFilterHeaderOctets);
}

TEST(SocketFilter, OneTagLeftInTheDataIsLookedThrough) {
  const auto p = lower_link_filter(link_spec());
  // The kernel has moved the outer tag to metadata: a clear-tag frame with
  // two tags shows the inner one in the data.
  const Bytes ctag = frame(kUs, {0x8100, 0x88E5});
  EXPECT_EQ(run(p, ctag), ctag.size());
  const Bytes stag = frame(kUs, {0x88A8, 0x88E5});
  EXPECT_EQ(run(p, stag), stag.size());
  EXPECT_EQ(run(p, frame(kUs, {0x8100, 0x0800})), kFilterHeaderOctets);
  // Two tags still in the data: not a layout the link accepts (at most two
  // clear tags, the outer one offloaded): the header only.
  EXPECT_EQ(run(p, frame(kUs, {0x8100, 0x8100, 0x88E5})), kFilterHeaderOctets);
}

TEST(SocketFilter, ShortFramesAreKeptForTheCountersNotDroppedUnseen) {
  const auto p = lower_link_filter(link_spec());
  const Bytes full = frame(kUs, {0x88E5});
  for (std::size_t n : {0u, 1u, 6u, 13u}) {
    const Bytes f(full.begin(), full.begin() + static_cast<long>(n));
    EXPECT_EQ(run(p, f), n) << n;
  }
  // 14 octets: a whole MACsec "frame" without a SecTAG (the SecY counts it).
  EXPECT_EQ(run(p, frame(kUs, {0x88E5}, 0)), 14u);
  // A tag in the data, but the frame ends before the inner EtherType.
  for (std::size_t body : {0u, 1u, 3u}) {
    Bytes f = frame(kUs, {0x8100}, body);
    EXPECT_EQ(run(p, f), f.size()) << body;  // at most 18 octets: all of it is header
  }
}

TEST(SocketFilter, SpecOptions) {
  LowerLinkFilterSpec any;
  any.full_types = {0x88E5, 0x88F7};
  const auto p = lower_link_filter(any);
  EXPECT_EQ(run(p, frame(kOther, {0x88E5})), 114u);  // no unicast check
  EXPECT_EQ(run(p, frame(kUs, {0x88F7})), 114u);
  EXPECT_EQ(run(p, frame(kUs, {0x8100, 0x88F7})), 118u);
  EXPECT_EQ(run(p, frame(kUs, {0x0800})), kFilterHeaderOctets);
  LowerLinkFilterSpec drop = link_spec();
  drop.header_octets = 0;
  EXPECT_EQ(run(lower_link_filter(drop), frame(kUs, {0x0800})), 0u);
  LowerLinkFilterSpec many;
  many.full_types.assign(17, 0x88E5);
  EXPECT_THROW((void)lower_link_filter(many), std::invalid_argument);
  many.full_types.resize(16);
  EXPECT_NO_THROW((void)lower_link_filter(many));
}

// Over a real veth: a socket with the link's filter gets a foreign
// EtherType's header only (its payload never reaches user space), MACsec
// frames whole, and a tagged MACsec frame whole with its tag restored.
TEST(SocketFilter, KernelAppliesItOnAPacketSocket) {
  std::string reason;
  if (!netns_available(&reason)) GTEST_SKIP() << reason;
  auto t = NetnsTopology::pair("lssf");
  const NetnsNode& a = t.node(0);
  const NetnsNode& b = t.node(1);
  const auto open_in = [](const NetnsNode& n) {
    NetnsScope scope(n.netns);
    int err = 0;
    auto s = PacketSocket::open(n.interface, kEtherTypeAll, true, &err);
    if (!s.ok()) throw std::runtime_error("packet socket: " + errno_text(err));
    return std::move(s).value();
  };
  PacketSocket pa = open_in(a);
  PacketSocket pb = open_in(b);
  LowerLinkFilterSpec spec;
  spec.unicast = b.mac;
  spec.full_types = {0x88E5};
  ASSERT_TRUE(pb.attach_filter(lower_link_filter(spec)).ok()) << errno_text(pb.last_errno());

  const std::string marker = "FOREIGN-PAYLOAD-MUST-NOT-REACH-USER-SPACE";
  const auto build = [&](const MacAddress& dst, std::vector<std::uint16_t> types, const std::string& body) {
    Bytes f(dst.bytes.begin(), dst.bytes.end());
    f.insert(f.end(), a.mac.bytes.begin(), a.mac.bytes.end());
    for (std::size_t i = 0; i < types.size(); ++i) {
      f.push_back(static_cast<std::uint8_t>(types[i] >> 8));
      f.push_back(static_cast<std::uint8_t>(types[i]));
      if (i + 1 < types.size()) f.insert(f.end(), {0xA0, 0x64});
    }
    f.insert(f.end(), body.begin(), body.end());
    f.resize(std::max<std::size_t>(f.size(), 80), 0);
    return f;
  };
  const Bytes foreign = build(b.mac, {0x88B5}, marker);
  const Bytes other_station = build(kOther, {0x88E5}, marker);
  const Bytes secure = build(b.mac, {0x88E5}, "secure frame body");
  const Bytes tagged = build(b.mac, {0x8100, 0x88E5}, "tagged secure frame body");
  for (const Bytes* f : {&foreign, &other_station, &secure, &tagged}) {
    ASSERT_TRUE(pa.send(*f).ok()) << errno_text(pa.last_errno());
  }
  std::vector<Bytes> got;
  Bytes buf(2048);
  while (got.size() < 4) {
    pollfd pfd{pb.fd(), POLLIN, 0};
    if (::poll(&pfd, 1, 5000) != 1) break;
    auto n = pb.receive(buf);
    if (!n.ok()) continue;
    got.emplace_back(buf.begin(), buf.begin() + static_cast<long>(*n));
  }
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], Bytes(foreign.begin(), foreign.begin() + kFilterHeaderOctets));
  EXPECT_EQ(got[1], Bytes(other_station.begin(), other_station.begin() + kFilterHeaderOctets));
  EXPECT_EQ(got[2], secure);
  EXPECT_EQ(got[3], tagged);
  for (const Bytes& f : got) {
    EXPECT_EQ(std::search(f.begin(), f.end(), marker.begin(), marker.end()), f.end());
  }
}

}  // namespace
}  // namespace layersec::net
