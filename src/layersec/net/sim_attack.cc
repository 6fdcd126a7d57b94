#include "layersec/net/sim_attack.h"

namespace layersec::net {

FrameFilter match_all() {
  return [](ByteSpan, PortId) { return true; };
}

FrameFilter match_ether_type(std::uint16_t ether_type) {
  return [ether_type](ByteSpan frame, PortId) {
    auto eth = parse_ethernet(frame);
    return eth.ok() && eth->header.ether_type == ether_type;
  };
}

FrameFilter match_udp_dst_port(std::uint16_t port) {
  return [port](ByteSpan frame, PortId) {
    auto v = parse_udp_frame(frame);
    return v.ok() && v->udp.header.dst_port == port;
  };
}

FrameFilter match_ingress(PortId port) {
  return [port](ByteSpan, PortId ingress) { return ingress == port; };
}

bool refresh_checksums(MutableByteSpan frame) {
  auto eth = parse_ethernet(frame);
  if (!eth) return false;
  if (eth->header.ether_type != kEtherTypeIpv4) return false;
  const std::size_t ip_off = eth->header.size();
  if (frame.size() < ip_off + kIpv4MinHeaderSize) return false;
  std::uint8_t* ip = frame.data() + ip_off;
  if ((ip[0] >> 4) != 4) return false;
  const std::size_t ihl = std::size_t{ip[0] & 0x0Fu} * 4;
  const std::size_t total = load_be16(ip + 2);
  if (ihl < kIpv4MinHeaderSize || total < ihl || ip_off + total > frame.size()) return false;
  store_be16(ip + 10, 0);
  store_be16(ip + 10, internet_checksum(ByteSpan(ip, ihl)));
  if (ip[9] != kIpProtocolUdp) return true;
  std::uint8_t* udp = ip + ihl;
  const std::size_t udp_len = total - ihl;
  if (udp_len < kUdpHeaderSize || load_be16(udp + 4) != udp_len) return true;
  if (load_be16(udp + 6) == 0) return true;  // no checksum in use
  store_be16(udp + 6, 0);
  store_be16(udp + 6, udp_checksum(Ipv4Address{load_be32(ip + 12)}, Ipv4Address{load_be32(ip + 16)},
                                   ByteSpan(udp, udp_len)));
  return true;
}

HookVerdict RecordingHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (filter_(frame, ctx.ingress)) records_.push_back({ctx.now, ctx.ingress, frame});
  return HookVerdict::forward();
}

HookVerdict DropEveryNthHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (n_ == 0 || !filter_(frame, ctx.ingress)) return HookVerdict::forward();
  if (++seen_ % n_ != 0) return HookVerdict::forward();
  ++dropped_;
  return HookVerdict::dropped();
}

HookVerdict RandomLossHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (!filter_(frame, ctx.ingress)) return HookVerdict::forward();
  if (!rng_.bernoulli(p_)) return HookVerdict::forward();
  ++dropped_;
  return HookVerdict::dropped();
}

HookVerdict DelayHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (!filter_(frame, ctx.ingress)) return HookVerdict::forward();
  ++delayed_;
  return HookVerdict::delayed(delay_ + rng_.uniform_duration(Duration::zero(), jitter_));
}

HookVerdict ReorderHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (n_ == 0 || !filter_(frame, ctx.ingress)) return HookVerdict::forward();
  if (++seen_ % n_ != 0) return HookVerdict::forward();
  ++held_;
  return HookVerdict::delayed(hold_);
}

HookVerdict DuplicateHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (n_ == 0 || !filter_(frame, ctx.ingress)) return HookVerdict::forward();
  if (++seen_ % n_ != 0) return HookVerdict::forward();
  ++duplicated_;
  return HookVerdict::duplicated(copies_);
}

HookVerdict ReplayHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl& control) {
  if (!filter_(frame, ctx.ingress)) return HookVerdict::forward();
  recorded_.emplace_back(ctx.ingress, frame);
  if (auto_delay_) {
    control.inject(ctx.ingress, frame, *auto_delay_);
    ++replayed_;
  }
  return HookVerdict::forward();
}

std::size_t ReplayHook::replay_recorded(SwitchControl& control, Duration delay, Duration spacing) {
  Duration at = delay;
  for (const auto& [port, frame] : recorded_) {
    control.inject(port, frame, at);
    at += spacing;
    ++replayed_;
  }
  return recorded_.size();
}

HookVerdict BitFlipHook::on_frame(const HookContext& ctx, std::vector<std::uint8_t>& frame, SwitchControl&) {
  if (!filter_(frame, ctx.ingress) || frame.size() <= options_.min_offset) return HookVerdict::forward();
  if (!rng_.bernoulli(options_.probability)) return HookVerdict::forward();
  const std::size_t span = frame.size() - options_.min_offset;
  for (unsigned i = 0; i < options_.bits; ++i) {
    const std::size_t at = options_.min_offset + static_cast<std::size_t>(rng_.uniform(span));
    frame[at] ^= static_cast<std::uint8_t>(1u << rng_.uniform(8));
  }
  if (options_.refresh) (void)refresh_checksums(frame);
  ++modified_;
  return HookVerdict::forward();
}

}  // namespace layersec::net
