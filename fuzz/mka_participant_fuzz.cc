// Fuzz target: the MKA participant's receive path behind the ICV, as an
// insider holding the CAK drives it. The input is a script of records; each
// builds an MKPDU from a small pool of members (so that sequences can make a
// peer live, elect it, and have it distribute SAKs), encodes it with the
// right ICK and feeds it to a started participant over a recording SecY
// double; other records hand over raw bytes, reflect the participant's own
// MKPDUs, move fake time, run the timer or report a transmit PN.
// Properties, after every step:
//  - every on_mkpdu either accepts the frame or drops it with exactly one
//    DropReason counter moved;
//  - the SecY double saw no violation (never an SA installed over the
//    encoding SA), its encoding SA is the SAK the participant says it
//    transmits with, and every receive SA belongs to a live peer;
//  - the peer table stays within max_peers.
// fuzz-iterations: 3000
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "layersec/mka/fake_secy_test_support.h"
#include "layersec/mka/participant.h"

namespace {

using namespace layersec;
using namespace layersec::mka;

void require(bool c) {
  if (!c) std::abort();
}

constexpr std::uint64_t kOwnSci = 0x0200000000010001ULL;
const std::vector<std::uint8_t> kCkn = {0xC0, 0xFF, 0xEE, 0x01};

SecretBytes cak() { return SecretBytes(std::vector<std::uint8_t>(16, 0x42)); }

struct Script {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t u8() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::uint16_t u16() { return static_cast<std::uint16_t>((u8() << 8) | u8()); }
  std::uint32_t u32() { return (std::uint32_t{u16()} << 16) | u16(); }
};

MemberId pool_mi(std::uint8_t i) {
  MemberId m{};
  m.fill(static_cast<std::uint8_t>(0x10 + i));
  return m;
}
std::uint64_t pool_sci(std::uint8_t i) { return 0x0200000000020001ULL + (std::uint64_t{i} << 16); }

std::uint64_t drops(const ParticipantStats& s) { return std::accumulate(s.drops.begin(), s.drops.end(), std::uint64_t{0}); }

Mkpdu member_mkpdu(Script& s, const Participant& p, const SecretBytes& kek) {
  const std::uint8_t who = s.u8() % 4;
  const std::uint8_t flags = s.u8();
  Mkpdu m;
  m.source = {0x02, 0, 0, 0, 0x02, who};
  m.basic.mka_version = static_cast<std::uint8_t>(1 + s.u8() % 3);
  m.basic.key_server_priority = s.u8();
  m.basic.key_server = (flags & 0x01) != 0;
  m.basic.macsec_desired = true;
  m.basic.macsec_capability = MacsecCapability::kConfidentialityWithOffset;
  m.basic.sci = (flags & 0x80) != 0 ? pool_sci(static_cast<std::uint8_t>((who + 1) % 4)) : pool_sci(who);
  m.basic.actor_mi = (flags & 0x40) != 0 && (flags & 0x80) != 0 ? p.mi() : pool_mi(who);
  m.basic.actor_mn = s.u16();
  m.basic.ckn = kCkn;
  const std::uint32_t listed = p.mn() - std::min<std::uint32_t>(p.mn(), s.u8() % 4);
  if ((flags & 0x02) != 0) m.live_peers = PeerList{0, {PeerEntry{p.mi(), listed}}};
  if ((flags & 0x04) != 0) m.potential_peers = PeerList{0, {PeerEntry{pool_mi(static_cast<std::uint8_t>(s.u8() % 4)), s.u16()}}};
  if ((flags & 0x08) != 0) {
    SakUse su;
    const std::uint8_t b = s.u8();
    su.latest_an = b & 3;
    su.latest_tx = (b & 0x04) != 0;
    su.latest_rx = (b & 0x08) != 0;
    su.old_an = (b >> 4) & 3;
    su.old_tx = (b & 0x40) != 0;
    su.old_rx = (b & 0x80) != 0;
    const std::uint8_t k = s.u8();
    su.latest.key_server_mi = (k & 1) != 0 ? p.mi() : pool_mi(static_cast<std::uint8_t>((k >> 1) % 4));
    su.latest.kn = (k >> 3) % 5;
    su.latest.lowest_acceptable_pn = s.u32();
    su.old.key_server_mi = pool_mi(static_cast<std::uint8_t>((k >> 5) % 4));
    su.old.kn = s.u8() % 5;
    su.old.lowest_acceptable_pn = s.u32();
    m.sak_use = su;
  }
  if ((flags & 0x10) != 0) {
    DistributedSak d;
    const std::uint8_t b = s.u8();
    d.has_key = (b & 0x80) == 0;
    if (d.has_key) {
      d.distributed_an = b & 3;
      d.confidentiality_offset = (b >> 2) & 3;
      d.kn = s.u8() % 6;
      const bool big = (b & 0x20) != 0;
      if (big) d.cipher_suite = macsec::cipher_suite_id(CipherSuite::kGcmAes256);
      auto w = wrap_key(kek, SecretBytes(std::vector<std::uint8_t>(big ? 32 : 16, s.u8())));
      require(w.ok());
      d.wrapped_sak = *w;
      if ((b & 0x40) != 0) d.wrapped_sak[s.u8() % d.wrapped_sak.size()] ^= 0x01;
    }
    m.distributed_sak = d;
  }
  return m;
}

void check(const Participant& p, const testing::FakeSecY& secy) {
  require(secy.violations.empty());
  require(p.peers().size() <= p.config().max_peers);
  const InstalledSak* tx = p.sak().transmitting();
  require((tx != nullptr) == secy.encoding.has_value());
  if (tx != nullptr) require(*secy.encoding == tx->an && secy.tx.at(tx->an).fingerprint == tx->fingerprint);
  for (const auto& [key, sa] : secy.rx) {
    bool live = false;
    for (const auto& pi : p.peers()) live = live || (pi.live && pi.sci == key.first);
    require(live);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint64_t seq = 0;
  testing::FakeSecY secy(kOwnSci, &seq);
  testing::DeterministicRandom rng(size);
  ParticipantConfig c;
  c.sci = kOwnSci;
  c.ckn = kCkn;
  c.key_server_priority = 0x80;
  c.max_peers = 3;
  Participant p(c, cak(), secy, rng);
  auto ick = derive_ick(cak(), kCkn);
  auto kek = derive_kek(cak(), kCkn);
  const bool derived = ick.ok();
  require(kek.ok() && derived);
  TimePoint now{};
  std::vector<std::vector<std::uint8_t>> sent;
  auto keep = [&](Output o) {
    for (auto& f : o.frames) sent.push_back(std::move(f));
  };
  keep(p.start(now));
  Script s{data, size};
  for (int step = 0; step < 64 && s.n > 0; ++step) {
    const std::uint8_t op = s.u8() % 6;
    std::vector<std::uint8_t> frame;
    if (op == 0) {
      const std::size_t len = s.u8();
      for (std::size_t i = 0; i < len && s.n > 0; ++i) frame.push_back(s.u8());
    } else if (op == 1) {
      auto f = encode_mkpdu(member_mkpdu(s, p, *kek), *ick);
      if (f) frame = std::move(*f);
    } else if (op == 2) {
      now += Duration::milliseconds(s.u16() % 8000);
      keep(p.on_timer(now));
    } else if (op == 3) {
      keep(p.on_tx_pn(s.u32(), now));
    } else if (op == 4) {
      if (p.next_deadline() != TimePoint::max()) now = std::max(now, p.next_deadline());
      keep(p.on_timer(now));
    } else if (!sent.empty()) {
      frame = sent[s.u8() % sent.size()];
    }
    if (!frame.empty()) {
      const ParticipantStats before = p.stats();
      const Output o = p.on_mkpdu(frame, now);
      const ParticipantStats& after = p.stats();
      require(after.mkpdus_received == before.mkpdus_received + 1);
      if (o.dropped) {
        require(drops(after) == drops(before) + 1 && after.mkpdus_accepted == before.mkpdus_accepted);
        require(after.drop(*o.dropped) == before.drop(*o.dropped) + 1);
      } else {
        require(drops(after) == drops(before) && after.mkpdus_accepted == before.mkpdus_accepted + 1);
      }
      keep(o);
    }
    check(p, secy);
  }
  return 0;
}
