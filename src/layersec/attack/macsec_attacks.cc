// The MACsec attack runner (issue 15, first slice). See macsec_attacks.h.
//
// Every attempt is a frame the real receiving SecY (macsec::SecY::validate)
// parses and judges: `accepted` counts frames it delivered, `rejected` the
// In* MIB counter (SecYStats::for_each names) that the frame incremented.
// A legitimate frame protected by the real transmitting SecY follows every
// attack frame (or, for replays, precedes it), so a defence that dropped
// legitimate traffic would show as legit_lost.
#include "layersec/attack/macsec_attacks.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layersec/attack/secy_counter_moved.h"
#include "layersec/base/bytes.h"
#include "layersec/macsec/cipher_suite.h"
#include "layersec/macsec/sectag.h"
#include "layersec/macsec/secy.h"

namespace layersec::attack {
namespace {

using macsec::CipherSuite;
using macsec::SaKeys;
using macsec::Sci;
using macsec::SecY;
using macsec::SecYConfig;
using macsec::SecYStats;

// replayWindow of the receiving SecY: small, so "delayed" replays are cheap
// to get beyond it and in-window reordering is a real constraint.
constexpr std::uint32_t kReplayWindow = 8;
// A recognisable plaintext marker inside every legitimate UDP payload (A1).
constexpr std::string_view kMarker = "LAYERSEC-MACSEC-PLAINTXT";

constexpr std::uint8_t kTxMac[6] = {0x02, 0x4C, 0x53, 0x00, 0x00, 0x01};
constexpr std::uint8_t kRxMac[6] = {0x02, 0x4C, 0x53, 0x00, 0x00, 0x02};
constexpr std::uint8_t kRogueMac[6] = {0x02, 0x4C, 0x53, 0x00, 0x00, 0xEE};
constexpr Sci kTxSci = Sci::from_parts(kTxMac, 1);
constexpr Sci kRxSci = Sci::from_parts(kRxMac, 1);
constexpr Sci kRogueSci = Sci::from_parts(kRogueMac, 1);

// Secure frame layout with an explicit SCI in standard VLAN mode (sectag.h).
constexpr std::size_t kOffTciAn = 14;
constexpr std::size_t kOffSl = 15;
constexpr std::size_t kOffPn = 16;
constexpr std::size_t kOffSci = 20;
constexpr std::size_t kOffData = 28;

struct Configuration {
  const char* name;
  CipherSuite suite;
  bool confidentiality;
  bool clear_tag;    // VlanMode::kClearTag: up to two 802.1Q tags in clear before the SecTAG
  bool tags_in_icv;  // clear_tags_in_icv
};

constexpr std::array<Configuration, 5> kConfigurations = {{
    {"macsec-gcm-aes-128", CipherSuite::kGcmAes128, true, false, false},
    {"macsec-gcm-aes-256", CipherSuite::kGcmAes256, true, false, false},
    {"macsec-gcm-aes-xpn-128", CipherSuite::kGcmAesXpn128, true, false, false},
    {"macsec-gcm-aes-xpn-256", CipherSuite::kGcmAesXpn256, true, false, false},
    {"macsec-integrity-only", CipherSuite::kGcmAes128, false, false, false},
}};

// The VLAN configurations: every legitimate frame carries one 802.1Q tag
// (PCP 5, VID 100), in the Secure Data (standard mode) or in clear before
// the SecTAG (clear-tag mode, with and without the tag in the ICV).
constexpr std::array<Configuration, 3> kVlanConfigurations = {{
    {"macsec-gcm-aes-128-vlan-in-data", CipherSuite::kGcmAes128, true, false, false},
    {"macsec-gcm-aes-128-clear-tag", CipherSuite::kGcmAes128, true, true, false},
    {"macsec-gcm-aes-128-clear-tag-icv", CipherSuite::kGcmAes128, true, true, true},
}};
constexpr std::uint16_t kLegitVid = 100;
constexpr std::uint16_t kLegitTci = (5u << 13) | kLegitVid;  // PCP 5, DEI 0, VID 100

using Frame = std::vector<std::uint8_t>;

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Key material that owns its bytes (SaKeys only views the SAK).
struct KeyMaterial {
  std::vector<std::uint8_t> sak;
  macsec::Ssci ssci = 0;
  macsec::Salt salt{};
  [[nodiscard]] SaKeys keys() const {
    SaKeys k;
    k.sak = sak;
    k.ssci = ssci;
    k.salt = salt;
    return k;
  }
};

KeyMaterial make_keys(CipherSuite suite, std::mt19937_64& rng) {
  KeyMaterial m;
  m.sak.resize(macsec::sak_size(suite));
  for (auto& b : m.sak) b = static_cast<std::uint8_t>(rng());
  m.ssci = static_cast<macsec::Ssci>(rng()) | 1u;
  for (auto& b : m.salt) b = static_cast<std::uint8_t>(rng());
  return m;
}

SecYConfig secy_config(const Configuration& c, Sci sci) {
  SecYConfig y;
  y.sci = sci;
  y.suite = c.suite;
  y.confidentiality = c.confidentiality;
  y.include_sci = true;
  y.validate_frames = macsec::ValidateFrames::kStrict;
  y.replay_protect = true;
  y.replay_window = kReplayWindow;
  y.vlan_mode = c.clear_tag ? macsec::VlanMode::kClearTag : macsec::VlanMode::kStandard;
  y.clear_tags_in_icv = c.tags_in_icv;
  return y;
}

// First PN of the legitimate SA: XPN suites start just below 2^32 so the run
// crosses the 32-bit boundary of the transmitted PN field (10.6.2 recovery).
std::uint64_t first_pn(CipherSuite suite) { return macsec::is_xpn(suite) ? 0xFFFFFFFFULL - 64 : 1; }

// A transmitting SecY with one SA (AN 0) as the encoding SA. Throws on a
// set-up failure (configuration time).
SecY make_transmitter(const Configuration& c, Sci sci, const KeyMaterial& km, std::uint64_t next_pn) {
  SecY tx(secy_config(c, sci));
  if (!tx.install_tx_sa(0, km.keys(), next_pn).ok() || !tx.set_encoding_sa(0).ok()) {
    throw std::runtime_error("macsec attack: cannot install the transmit SA");
  }
  return tx;
}

// IPv4/UDP datagram in an Ethernet frame, the marker and a sequence number in
// its payload, `extra` further payload octets.
Frame legit_plain(std::uint64_t seq, std::size_t extra, const std::uint8_t* src_mac) {
  const std::size_t udp_payload = kMarker.size() + 8 + extra;
  const std::size_t ip_total = 20 + 8 + udp_payload;
  Frame f(14 + ip_total, 0);
  std::memcpy(f.data(), kRxMac, 6);
  std::memcpy(f.data() + 6, src_mac, 6);
  store_be16(f.data() + 12, 0x0800);
  std::uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  store_be16(ip + 2, static_cast<std::uint16_t>(ip_total));
  store_be16(ip + 4, static_cast<std::uint16_t>(seq));
  ip[8] = 64;
  ip[9] = 17;  // UDP
  const std::uint8_t src_ip[4] = {192, 168, 50, 1};
  const std::uint8_t dst_ip[4] = {192, 168, 50, 2};
  std::memcpy(ip + 12, src_ip, 4);
  std::memcpy(ip + 16, dst_ip, 4);
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < 20; i += 2) sum += load_be16(ip + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  store_be16(ip + 10, static_cast<std::uint16_t>(~sum));
  std::uint8_t* udp = ip + 20;
  store_be16(udp, 30490);
  store_be16(udp + 2, 30490);
  store_be16(udp + 4, static_cast<std::uint16_t>(8 + udp_payload));
  std::uint8_t* payload = udp + 8;
  std::memcpy(payload, kMarker.data(), kMarker.size());
  store_be64(payload + kMarker.size(), seq);
  for (std::size_t i = 0; i < extra; ++i) payload[kMarker.size() + 8 + i] = static_cast<std::uint8_t>(seq + i);
  return f;
}

bool marker_visible(const Frame& wire) {
  const auto* m = reinterpret_cast<const std::uint8_t*>(kMarker.data());
  return std::search(wire.begin(), wire.end(), m, m + kMarker.size()) != wire.end();
}

// Protects `plain` with `y`; empty when the SecY refused.
Frame protect_with(SecY& y, const Frame& plain) {
  Frame out(plain.size() + macsec::kSecTagSizeWithSci + macsec::kIcvSize);
  auto n = y.protect(plain, out);
  if (!n.ok()) return {};
  out.resize(*n);
  return out;
}

struct Verdict {
  bool delivered = false;
  std::string counter;  // the In* counter the frame incremented
  Frame frame;          // the delivered frame (when delivered)
};

// One configuration's sender/receiver pair and its legitimate traffic.
class Lab {
 public:
  Lab(const Configuration& c, std::mt19937_64& rng)
      : config_(c),
        keys_(make_keys(c.suite, rng)),
        tx_(make_transmitter(c, kTxSci, keys_, first_pn(c.suite))),
        rx_(secy_config(c, kRxSci)) {
    if (!rx_.add_rx_sc(kTxSci).ok() || !rx_.install_rx_sa(kTxSci, 0, keys_.keys(), first_pn(c.suite)).ok()) {
      throw std::runtime_error("macsec attack: cannot install the receive SA");
    }
  }

  [[nodiscard]] const Configuration& config() const { return config_; }
  [[nodiscard]] const KeyMaterial& keys() const { return keys_; }
  SecY& tx() { return tx_; }
  [[nodiscard]] std::uint64_t next_tx_pn() const { return tx_.tx_sa_status(0).next_pn; }

  // The next legitimate plaintext frame (sequence-numbered, varying size),
  // with an 802.1Q tag after SA when set_tag() gave one.
  Frame next_plain(std::mt19937_64& rng) {
    Frame f = legit_plain(seq_++, static_cast<std::size_t>(rng() % 48), kTxMac);
    if (tci_) {
      const std::uint8_t tag[4] = {0x81, 0x00, static_cast<std::uint8_t>(*tci_ >> 8),
                                   static_cast<std::uint8_t>(*tci_)};
      f.insert(f.begin() + 12, tag, tag + 4);
    }
    return f;
  }
  void set_tag(std::optional<std::uint16_t> tci) { tci_ = tci; }

  // Hands a copy of `wire` to the receiving SecY.
  Verdict deliver(const Frame& wire) {
    Frame buf = wire;
    const SecYStats before = rx_.stats();
    auto r = rx_.validate(buf);
    Verdict v;
    v.counter = counter_moved(before, rx_.stats());
    if (r.ok()) {
      v.delivered = true;
      v.frame.assign(r->frame.begin(), r->frame.end());
    }
    return v;
  }

  // Delivers a legitimate secure frame and counts it delivered (the receiver
  // handed back exactly `plain`) or lost. Returns the verdict.
  Verdict deliver_legit(const Frame& plain, const Frame& wire, AttackRow& row) {
    Verdict v = wire.empty() ? Verdict{} : deliver(wire);
    if (v.delivered && v.frame == plain) {
      ++row.legit_delivered;
    } else {
      ++row.legit_lost;
    }
    return v;
  }

  // Protects and delivers one legitimate frame; returns its secure form.
  Frame legit_step(std::mt19937_64& rng, AttackRow& row) {
    const Frame plain = next_plain(rng);
    Frame wire = protect_with(tx_, plain);
    deliver_legit(plain, wire, row);
    return wire;
  }

 private:
  Configuration config_;
  KeyMaterial keys_;
  SecY tx_;
  SecY rx_;
  std::uint64_t seq_ = 1;
  std::optional<std::uint16_t> tci_;
};

// Counts one attack frame's verdict in the row.
void count_attack(const Verdict& v, AttackRow& row) {
  if (v.delivered) {
    ++row.accepted;
  } else {
    ++row.rejected[v.counter];
  }
}

void flip_random_bit(Frame& f, std::size_t offset, std::size_t length, std::mt19937_64& rng) {
  const std::size_t byte = offset + static_cast<std::size_t>(rng() % length);
  f[byte] = static_cast<std::uint8_t>(f[byte] ^ (1u << (rng() % 8)));
}

// ---- the classes -----------------------------------------------------------

void run_passive(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame plain = lab.next_plain(rng);
    const Frame wire = protect_with(lab.tx(), plain);
    ++row.attempts;
    if (marker_visible(wire)) {
      ++row.accepted;
    } else {
      ++row.rejected[lab.config().confidentiality ? "OutPktsEncrypted" : "OutPktsProtected"];
    }
    lab.deliver_legit(plain, wire, row);
  }
  row.acceptance_expected = !lab.config().confidentiality;
  row.note = lab.config().confidentiality
                 ? "capture every protected frame; accepted = frames with the plaintext marker readable"
                 : "capture every protected frame; integrity only (E=C=0): the plaintext is readable by design";
}

void run_replay_immediate(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame wire = lab.legit_step(rng, row);
    ++row.attempts;
    count_attack(lab.deliver(wire), row);
  }
  // 802.1AE-2018 10.6.5 bounds replays from below only; layersec's SecY
  // also refuses a PN it accepted already (duplicate bitmap, replay_window.h).
  row.note = "replay each legitimate frame right after delivery; its PN is inside replayWindow=" +
             std::to_string(kReplayWindow) + ": 802.1AE's lower bound alone would take it, the duplicate bitmap refuses it";
}

void run_replay_delayed(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  constexpr std::size_t kDepth = kReplayWindow + 32;
  std::deque<Frame> history;  // front: most recent
  while (history.size() < kDepth) history.push_front(lab.legit_step(rng, row));
  for (std::uint64_t i = 0; i < attempts; ++i) {
    history.push_front(lab.legit_step(rng, row));
    history.pop_back();
    // Depth d: sent d frames before the newest; d >= replayWindow is late.
    const std::size_t d = kReplayWindow + 1 + static_cast<std::size_t>(rng() % (kDepth - kReplayWindow - 1));
    ++row.attempts;
    count_attack(lab.deliver(history[d]), row);
  }
  row.note = "replay a frame recorded " + std::to_string(kReplayWindow + 1) + ".." + std::to_string(kDepth - 1) +
             " frames earlier (beyond replayWindow=" + std::to_string(kReplayWindow) + ")";
}

void run_reorder(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const std::size_t block = 2 + static_cast<std::size_t>(rng() % (kReplayWindow - 1));  // 2..window
    std::vector<std::pair<Frame, Frame>> frames;  // plain, wire, in PN order
    for (std::size_t k = 0; k < block; ++k) {
      Frame plain = lab.next_plain(rng);
      Frame wire = protect_with(lab.tx(), plain);
      frames.emplace_back(std::move(plain), std::move(wire));
    }
    std::vector<std::size_t> order(block);
    for (std::size_t k = 0; k < block; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    if (std::is_sorted(order.begin(), order.end())) std::swap(order.front(), order.back());
    ++row.attempts;
    for (std::size_t k : order) {
      const auto& [plain, wire] = frames[k];
      const Verdict v = lab.deliver_legit(plain, wire, row);
      if (!v.delivered) ++row.rejected[v.counter];  // a false rejection (also counted legit_lost)
    }
  }
  row.note = "deliver blocks of 2.." + std::to_string(kReplayWindow) +
             " legitimate frames shuffled inside replayWindow: all must be accepted (rejections are legit_lost)";
}

enum class Field { kDstMac, kSrcMac, kTciAn, kSl, kPn, kSci, kPayload, kIcv };

void run_bitflip(Lab& lab, Field field, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame plain = lab.next_plain(rng);
    const Frame wire = protect_with(lab.tx(), plain);
    Frame bad = wire;
    if (!bad.empty()) {
      const std::size_t data_end = bad.size() - macsec::kIcvSize;
      switch (field) {
        case Field::kDstMac: flip_random_bit(bad, 0, 6, rng); break;
        case Field::kSrcMac: flip_random_bit(bad, 6, 6, rng); break;
        case Field::kTciAn: flip_random_bit(bad, kOffTciAn, 1, rng); break;
        case Field::kSl: flip_random_bit(bad, kOffSl, 1, rng); break;
        case Field::kPn: flip_random_bit(bad, kOffPn, 4, rng); break;
        case Field::kSci: flip_random_bit(bad, kOffSci, 8, rng); break;
        case Field::kPayload: flip_random_bit(bad, kOffData, data_end - kOffData, rng); break;
        case Field::kIcv: flip_random_bit(bad, data_end, macsec::kIcvSize, rng); break;
      }
    }
    ++row.attempts;
    count_attack(lab.deliver(bad), row);  // the tampered copy first, so it is never a replay
    lab.deliver_legit(plain, wire, row);
  }
}

void run_truncate(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame plain = lab.next_plain(rng);
    const Frame wire = protect_with(lab.tx(), plain);
    Frame bad = wire;
    if (!bad.empty()) bad.resize(bad.size() - 1 - static_cast<std::size_t>(rng() % (bad.size() - 1)));
    ++row.attempts;
    count_attack(lab.deliver(bad), row);
    lab.deliver_legit(plain, wire, row);
  }
  row.note = "cut 1..n-1 octets off the end of a protected frame";
}

void run_extend(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame plain = lab.next_plain(rng);
    const Frame wire = protect_with(lab.tx(), plain);
    Frame bad = wire;
    const std::size_t extra = 1 + static_cast<std::size_t>(rng() % 64);
    for (std::size_t k = 0; k < extra; ++k) bad.push_back(static_cast<std::uint8_t>(rng()));
    ++row.attempts;
    count_attack(lab.deliver(bad), row);
    lab.deliver_legit(plain, wire, row);
  }
  row.note = "append 1..64 random octets to a protected frame";
}

void run_forge_wrong_key(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  // The forger uses the legitimate SCI and the PN the sender uses next, so
  // the frame passes the SC lookup and the replay check and meets the ICV.
  KeyMaterial other = make_keys(lab.config().suite, rng);
  other.ssci = lab.keys().ssci;
  other.salt = lab.keys().salt;
  SecY forger = make_transmitter(lab.config(), kTxSci, other, lab.next_tx_pn());
  for (std::uint64_t i = 0; i < attempts; ++i) {
    const Frame plain = lab.next_plain(rng);
    ++row.attempts;
    count_attack(lab.deliver(protect_with(forger, plain)), row);
    const Frame wire = protect_with(lab.tx(), plain);
    lab.deliver_legit(plain, wire, row);
  }
  row.note = "frames protected by a SecY with the legitimate SCI and PN but another SAK";
}

void run_inject_plain(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  for (std::uint64_t i = 0; i < attempts; ++i) {
    ++row.attempts;
    count_attack(lab.deliver(legit_plain(1000000 + i, static_cast<std::size_t>(rng() % 48), kTxMac)), row);
    lab.legit_step(rng, row);
  }
  row.note = "unprotected IPv4/UDP frames from the sender's MAC under validateFrames Strict";
}

void run_inject_unknown_sci(Lab& lab, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  const KeyMaterial rogue_keys = make_keys(lab.config().suite, rng);
  SecY rogue = make_transmitter(lab.config(), kRogueSci, rogue_keys, 1);
  for (std::uint64_t i = 0; i < attempts; ++i) {
    ++row.attempts;
    const Frame plain = legit_plain(2000000 + i, static_cast<std::size_t>(rng() % 48), kRogueMac);
    count_attack(lab.deliver(protect_with(rogue, plain)), row);
    lab.legit_step(rng, row);
  }
  row.note = "well-formed secure frames from a SecY whose SCI has no receive SC";
}

const char* field_class(Field f) {
  switch (f) {
    case Field::kDstMac: return "A2.bitflip.dst-mac";
    case Field::kSrcMac: return "A2.bitflip.src-mac";
    case Field::kTciAn: return "A2.bitflip.sectag-tci-an";
    case Field::kSl: return "A2.bitflip.sectag-sl";
    case Field::kPn: return "A2.bitflip.pn";
    case Field::kSci: return "A2.bitflip.sci";
    case Field::kPayload: return "A2.bitflip.payload";
    case Field::kIcv: return "A2.bitflip.icv";
  }
  return "A2.bitflip";
}

const char* field_note(Field f) {
  switch (f) {
    case Field::kDstMac: return "flip one random bit of the destination MAC (ICV-covered)";
    case Field::kSrcMac: return "flip one random bit of the source MAC (ICV-covered)";
    case Field::kTciAn: return "flip one random bit of the SecTAG TCI/AN octet";
    case Field::kSl: return "flip one random bit of the SecTAG short length octet";
    case Field::kPn: return "flip one random bit of the 32-bit PN field";
    case Field::kSci: return "flip one random bit of the explicit SCI";
    case Field::kPayload: return "flip one random bit of the Secure Data";
    case Field::kIcv: return "flip one random bit of the ICV";
  }
  return "";
}

// ---- VLAN / clear-tag classes ------------------------------------------------
//
// What our SecY does with a clear tag (secy.h, secy.cc make_aad): in
// VlanMode::kClearTag the receiver skips up to two 0x8100/0x88A8 tags after
// SA and delivers them in front of the MSDU; they are in the AAD only with
// clear_tags_in_icv. No SecY or SC setting binds a VID or PCP to an SC or
// requires a tag, so without clear_tags_in_icv any rewrite, removal or
// addition of a clear tag is delivered (802.1AE: the tag is outside the
// protected frame): those rows report acceptances as expected. In standard
// mode the tag is part of the encrypted Secure Data.

enum class VlanAttack { kPcp, kVid, kStrip, kAdd, kRetag };

const char* vlan_class(VlanAttack a) {
  switch (a) {
    case VlanAttack::kPcp: return "A2.bitflip.vlan-pcp";
    case VlanAttack::kVid: return "A2.bitflip.vlan-vid";
    case VlanAttack::kStrip: return "A2.vlan.strip";
    case VlanAttack::kAdd: return "A2.vlan.add";
    case VlanAttack::kRetag: return "A2.vlan.retag";
  }
  return "A2.vlan";
}

std::string vlan_note(const Configuration& c, VlanAttack a) {
  std::string what;
  switch (a) {
    case VlanAttack::kPcp: what = "flip one PCP bit of the 802.1Q tag"; break;
    case VlanAttack::kVid: what = "flip one VID bit of the 802.1Q tag"; break;
    case VlanAttack::kStrip: what = "remove the 802.1Q tag"; break;
    case VlanAttack::kAdd:
      what = c.clear_tag ? "add an 802.1Q tag (random VID) to an untagged frame"
                         : "add a clear 802.1Q tag (random VID) in front of the SecTAG";
      break;
    case VlanAttack::kRetag: what = "move the frame to another VID (PCP kept)"; break;
  }
  if (!c.clear_tag) {
    return what + (a == VlanAttack::kAdd ? "; standard mode: EtherType is not 88E5, Strict drops it"
                                         : " inside the encrypted Secure Data (retag: XOR of the known VID, "
                                           "CTR malleability); the ICV refuses it");
  }
  if (c.tags_in_icv) return what + "; clear tag with clear_tags_in_icv: the tag is in the AAD, the ICV refuses it";
  return what + "; clear tag NOT in the ICV (802.1AE, DPDK clear-tag vectors) and no VID/PCP bound to the SC: "
                "delivered by design";
}

void run_vlan(Lab& lab, VlanAttack a, std::uint64_t attempts, std::mt19937_64& rng, AttackRow& row) {
  const bool clear = lab.config().clear_tag;
  // Where the TPID of the frame's tag is: after SA in clear, else the first
  // octets of the Secure Data.
  const std::size_t tpid = clear ? 12 : kOffData;
  for (std::uint64_t i = 0; i < attempts; ++i) {
    // The attacked frame: replaced in flight by the altered copy.
    lab.set_tag(a == VlanAttack::kAdd && clear ? std::nullopt : std::optional<std::uint16_t>(kLegitTci));
    const Frame target = protect_with(lab.tx(), lab.next_plain(rng));
    Frame bad = target;
    if (!bad.empty()) {
      switch (a) {
        case VlanAttack::kPcp:
          bad[tpid + 2] = static_cast<std::uint8_t>(bad[tpid + 2] ^ (0x20u << (rng() % 3)));
          break;
        case VlanAttack::kVid: {
          const unsigned bit = static_cast<unsigned>(rng() % 12);
          bad[tpid + 3 - bit / 8] = static_cast<std::uint8_t>(bad[tpid + 3 - bit / 8] ^ (1u << (bit % 8)));
          break;
        }
        case VlanAttack::kStrip:
          bad.erase(bad.begin() + static_cast<std::ptrdiff_t>(tpid), bad.begin() + static_cast<std::ptrdiff_t>(tpid + 4));
          break;
        case VlanAttack::kAdd: {
          const auto vid = static_cast<std::uint16_t>(1 + rng() % 4094);
          const std::uint8_t tag[4] = {0x81, 0x00, static_cast<std::uint8_t>(vid >> 8), static_cast<std::uint8_t>(vid)};
          bad.insert(bad.begin() + 12, tag, tag + 4);
          break;
        }
        case VlanAttack::kRetag: {
          auto vid = static_cast<std::uint16_t>(1 + rng() % 4094);
          if (vid == kLegitVid) vid = kLegitVid + 1;
          const std::uint16_t delta = vid ^ kLegitVid;  // the VID is known: XOR works on ciphertext too
          bad[tpid + 2] = static_cast<std::uint8_t>(bad[tpid + 2] ^ (delta >> 8));
          bad[tpid + 3] = static_cast<std::uint8_t>(bad[tpid + 3] ^ delta);
          break;
        }
      }
    }
    ++row.attempts;
    count_attack(lab.deliver(bad), row);
    // Then an untouched legitimate frame.
    lab.set_tag(kLegitTci);
    lab.legit_step(rng, row);
  }
  row.acceptance_expected = clear && !lab.config().tags_in_icv;
  row.note = vlan_note(lab.config(), a);
}

}  // namespace

std::vector<AttackRow> run_macsec_attacks(const AttackOptions& options) {
  std::vector<AttackRow> rows;
  std::uint64_t class_index = 0;
  for (const Configuration& c : kConfigurations) {
    // One fresh sender/receiver pair per class, each seeded independently.
    auto run = [&](const std::string& attack_class, auto&& body) {
      std::mt19937_64 rng(mix(options.seed ^ mix(++class_index)));
      Lab lab(c, rng);
      AttackRow row;
      row.layer = "macsec";
      row.configuration = c.name;
      row.attack_class = attack_class;
      body(lab, rng, row);
      rows.push_back(std::move(row));
    };
    const std::uint64_t n = options.attempts;
    run("A1.passive", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_passive(l, n, r, row); });
    run("A2.replay.immediate",
        [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_replay_immediate(l, n, r, row); });
    run("A2.replay.delayed", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_replay_delayed(l, n, r, row); });
    run("A2.reorder.in-window", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_reorder(l, n, r, row); });
    for (Field f : {Field::kDstMac, Field::kSrcMac, Field::kTciAn, Field::kSl, Field::kPn, Field::kSci,
                    Field::kPayload, Field::kIcv}) {
      run(field_class(f), [&](Lab& l, std::mt19937_64& r, AttackRow& row) {
        run_bitflip(l, f, n, r, row);
        row.note = field_note(f);
      });
    }
    run("A2.truncate", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_truncate(l, n, r, row); });
    run("A2.extend", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_extend(l, n, r, row); });
    run("A2.forge.wrong-key", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_forge_wrong_key(l, n, r, row); });
    run("A2.inject.plain", [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_inject_plain(l, n, r, row); });
    run("A2.inject.unknown-sci",
        [&](Lab& l, std::mt19937_64& r, AttackRow& row) { run_inject_unknown_sci(l, n, r, row); });
  }
  for (const Configuration& c : kVlanConfigurations) {
    for (VlanAttack a : {VlanAttack::kPcp, VlanAttack::kVid, VlanAttack::kStrip, VlanAttack::kAdd, VlanAttack::kRetag}) {
      std::mt19937_64 rng(mix(options.seed ^ mix(++class_index)));
      Lab lab(c, rng);
      AttackRow row;
      row.layer = "macsec";
      row.configuration = c.name;
      row.attack_class = vlan_class(a);
      run_vlan(lab, a, options.attempts, rng, row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace layersec::attack
