#include "layersec/net/socket_filter.h"

#include <linux/filter.h>

#include <cstddef>
#include <stdexcept>

namespace layersec::net {

static_assert(sizeof(BpfInstruction) == sizeof(sock_filter));
static_assert(offsetof(BpfInstruction, k) == offsetof(sock_filter, k));

namespace {

// A tiny assembler: jumps name labels, resolved to the forward offsets
// classic BPF uses (a jump may only go forward).
enum Label : int { kNone = -1, kDstOk, kTagged, kHeader, kWhole, kLabels };

struct Insn {
  std::uint16_t code;
  std::uint32_t k;
  int jt = kNone, jf = kNone;  // labels (kNone: the next instruction)
  int label = kNone;           // this instruction carries a label
};

std::vector<BpfInstruction> assemble(const std::vector<Insn>& in) {
  int at[kLabels];
  for (int& a : at) a = -1;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].label != kNone) at[in[i].label] = static_cast<int>(i);
  }
  const auto offset = [&](std::size_t i, int label) -> std::uint8_t {
    if (label == kNone) return 0;
    const int d = at[label] - static_cast<int>(i) - 1;
    if (at[label] < 0 || d < 0 || d > 255) throw std::logic_error("lower_link_filter: bad jump");
    return static_cast<std::uint8_t>(d);
  };
  std::vector<BpfInstruction> out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Insn& x = in[i];
    BpfInstruction b;
    b.code = x.code;
    b.k = x.k;
    if (BPF_CLASS(x.code) == BPF_JMP && BPF_OP(x.code) == BPF_JA) {
      // An unconditional jump carries its offset in k.
      b.k = offset(i, x.jt);
    } else if (BPF_CLASS(x.code) == BPF_JMP) {
      b.jt = offset(i, x.jt);
      b.jf = offset(i, x.jf);
    }
    out.push_back(b);
  }
  return out;
}

constexpr std::uint16_t kLdLen = BPF_LD | BPF_W | BPF_LEN;
constexpr std::uint16_t kLdB = BPF_LD | BPF_B | BPF_ABS;
constexpr std::uint16_t kLdH = BPF_LD | BPF_H | BPF_ABS;
constexpr std::uint16_t kLdW = BPF_LD | BPF_W | BPF_ABS;
constexpr std::uint16_t kJeq = BPF_JMP | BPF_JEQ | BPF_K;
constexpr std::uint16_t kJge = BPF_JMP | BPF_JGE | BPF_K;
constexpr std::uint16_t kJset = BPF_JMP | BPF_JSET | BPF_K;
constexpr std::uint16_t kJa = BPF_JMP | BPF_JA;
constexpr std::uint16_t kRet = BPF_RET | BPF_K;

}  // namespace

std::vector<BpfInstruction> lower_link_filter(const LowerLinkFilterSpec& spec) {
  if (spec.full_types.size() > 16) throw std::invalid_argument("lower_link_filter: more than 16 EtherTypes");
  std::vector<Insn> p;
  p.push_back({kLdLen, 0});
  p.push_back({kJge, 14, kNone, kHeader});
  if (spec.unicast) {
    const auto& m = spec.unicast->bytes;
    p.push_back({kLdB, 0});
    p.push_back({kJset, 0x01, kDstOk, kNone});  // a group address
    p.push_back({kLdW, 2});
    p.push_back({kJeq, (std::uint32_t{m[2]} << 24) | (std::uint32_t{m[3]} << 16) | (std::uint32_t{m[4]} << 8) | m[5],
                 kNone, kHeader});
    p.push_back({kLdH, 0});
    p.push_back({kJeq, (std::uint32_t{m[0]} << 8) | m[1], kNone, kHeader});
  }
  p.push_back({kLdH, 12, kNone, kNone, kDstOk});
  for (std::uint16_t t : spec.full_types) p.push_back({kJeq, t, kWhole, kNone});
  p.push_back({kJeq, kEtherTypeCTag, kTagged, kNone});
  p.push_back({kJeq, kEtherTypeSTag, kTagged, kNone});
  p.push_back({kJa, 0, kHeader});
  p.push_back({kLdLen, 0, kNone, kNone, kTagged});
  p.push_back({kJge, 18, kNone, kHeader});
  p.push_back({kLdH, 16});
  for (std::uint16_t t : spec.full_types) p.push_back({kJeq, t, kWhole, kNone});
  p.push_back({kRet, spec.header_octets, kNone, kNone, kHeader});
  p.push_back({kRet, kFilterWholeFrame, kNone, kNone, kWhole});
  return assemble(p);
}

}  // namespace layersec::net
