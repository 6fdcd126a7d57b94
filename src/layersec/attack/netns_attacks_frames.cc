#include "layersec/attack/netns_attacks_frames.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "layersec/net/sim_attack.h"

namespace layersec::attack::netns {
namespace {

constexpr std::size_t kEth = 14;
constexpr std::size_t kSomeipHeader = 16;
constexpr std::uint16_t kSdService = 0xFFFF;
constexpr std::uint16_t kSdMethod = 0x8100;

std::uint16_t be16(const Frame& f, std::size_t o) {
  return static_cast<std::uint16_t>((f[o] << 8) | f[o + 1]);
}
std::uint32_t be32(const Frame& f, std::size_t o) {
  return (std::uint32_t{f[o]} << 24) | (std::uint32_t{f[o + 1]} << 16) | (std::uint32_t{f[o + 2]} << 8) | f[o + 3];
}
void put16(Frame& f, std::size_t o, std::uint16_t v) {
  f[o] = static_cast<std::uint8_t>(v >> 8);
  f[o + 1] = static_cast<std::uint8_t>(v);
}
void put32(Frame& f, std::size_t o, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) f[o + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

void flip(Frame& f, std::size_t first, std::size_t count, std::mt19937_64& rng) {
  const std::uint64_t bit = rng() % (count * 8);
  f[first + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

std::string hex(const Frame& p) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : p) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

// SD: offset of the entries array and its length, within the frame.
struct SdLocation {
  std::size_t entries = 0;
  std::size_t entries_length = 0;
  std::size_t options = 0;
  std::size_t options_length = 0;
};
std::optional<SdLocation> locate_sd(const Frame& f) {
  if (!is_sd(f)) return std::nullopt;
  const auto u = locate_udp(f);
  const std::size_t end = u->payload + u->payload_length;
  SdLocation s;
  const std::size_t flags = u->payload + kSomeipHeader;
  if (flags + 8 > end) return std::nullopt;
  s.entries_length = be32(f, flags + 4);
  s.entries = flags + 8;
  if (s.entries + s.entries_length + 4 > end) return std::nullopt;
  s.options_length = be32(f, s.entries + s.entries_length);
  s.options = s.entries + s.entries_length + 4;
  if (s.options + s.options_length > end) return std::nullopt;
  return s;
}

}  // namespace

std::uint32_t ipv4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return (std::uint32_t{a} << 24) | (std::uint32_t{b} << 16) | (std::uint32_t{c} << 8) | d;
}

std::optional<UdpLocation> locate_udp(const Frame& f) {
  if (f.size() < kEth + 20 + 8 || be16(f, 12) != 0x0800) return std::nullopt;
  UdpLocation u;
  u.ip = kEth;
  if ((f[u.ip] >> 4) != 4) return std::nullopt;
  const std::size_t ihl = std::size_t{f[u.ip] & 15u} * 4;
  if (ihl < 20 || f[u.ip + 9] != 17) return std::nullopt;
  const std::size_t total = be16(f, u.ip + 2);
  if (total < ihl + 8 || u.ip + total > f.size()) return std::nullopt;
  u.udp = u.ip + ihl;
  const std::size_t udp_length = be16(f, u.udp + 4);
  if (udp_length < 8 || u.udp + udp_length > u.ip + total) return std::nullopt;
  u.payload = u.udp + 8;
  u.payload_length = udp_length - 8;
  u.src_ip = be32(f, u.ip + 12);
  u.dst_ip = be32(f, u.ip + 16);
  u.src_port = be16(f, u.udp);
  u.dst_port = be16(f, u.udp + 2);
  return u;
}

std::optional<NotificationLocation> locate_notification(const Frame& f) {
  const auto u = locate_udp(f);
  if (!u || u->payload_length < kSomeipHeader) return std::nullopt;
  NotificationLocation n;
  n.udp = *u;
  n.header = u->payload;
  n.service = be16(f, n.header);
  n.event = be16(f, n.header + 2);
  if (n.service == kSdService || f[n.header + 14] != 0x02) return std::nullopt;
  const std::size_t length = be32(f, n.header + 4);
  if (length < 8 || 8 + length > u->payload_length) return std::nullopt;
  n.payload = n.header + kSomeipHeader;
  n.payload_length = length - 8;
  return n;
}

Frame sequenced_payload(std::uint32_t seq, std::size_t size) {
  Frame p(size, 0xA5);
  const std::size_t n = std::min<std::size_t>(4, size);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(seq >> (8 * (n - 1 - i)));
  return p;
}

std::optional<std::uint32_t> notification_sequence(const Frame& f) {
  const auto n = locate_notification(f);
  if (!n || n->payload_length < 4) return std::nullopt;
  return be32(f, n->payload);
}

const char* to_string(TamperRegion r) {
  switch (r) {
    case TamperRegion::kHeader: return "someip-header";
    case TamperRegion::kPayload: return "payload";
    case TamperRegion::kAuth: return "fv-mac";
  }
  return "?";
}

void refresh(Frame& frame) { (void)net::refresh_checksums(frame); }

void flip_bit_after_header(Frame& f, std::mt19937_64& rng) {
  const std::uint64_t bit = rng() % ((f.size() - 14) * 8);
  f[14 + bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

bool tamper_notification(Frame& f, TamperRegion region, std::size_t auth_length, std::mt19937_64& rng) {
  const auto n = locate_notification(f);
  if (!n || n->payload_length <= auth_length) return false;
  const std::size_t data = n->payload_length - auth_length;
  switch (region) {
    case TamperRegion::kHeader: flip(f, n->header, kSomeipHeader, rng); break;
    case TamperRegion::kPayload: flip(f, n->payload, data, rng); break;
    case TamperRegion::kAuth:
      if (auth_length == 0) return false;
      flip(f, n->payload + data, auth_length, rng);
      break;
  }
  refresh(f);
  return true;
}

bool forge_notification(Frame& f, std::uint8_t marker, std::size_t auth_length, std::size_t mac_length,
                        std::mt19937_64& rng) {
  const auto n = locate_notification(f);
  if (!n || n->payload_length < auth_length || mac_length > auth_length) return false;
  const std::size_t data = n->payload_length - auth_length;
  std::fill_n(f.begin() + static_cast<std::ptrdiff_t>(n->payload), data, marker);
  const std::size_t mac = n->payload + n->payload_length - mac_length;
  for (std::size_t i = 0; i < mac_length; ++i) f[mac + i] = static_cast<std::uint8_t>(rng());
  refresh(f);
  return true;
}

bool bump_freshness(Frame& f, std::size_t fv_length, std::size_t mac_length, std::uint64_t delta) {
  const auto u = locate_udp(f);
  if (!u || u->payload_length < kSomeipHeader || fv_length == 0 || fv_length > 8) return false;
  const std::size_t length = be32(f, u->payload + 4);
  if (length < 8 || 8 + length > u->payload_length || length - 8 < fv_length + mac_length) return false;
  const std::size_t end = u->payload + 8 + length;
  const std::size_t fv = end - mac_length - fv_length;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < fv_length; ++i) v = (v << 8) | f[fv + i];
  v += delta;
  for (std::size_t i = 0; i < fv_length; ++i) f[fv + fv_length - 1 - i] = static_cast<std::uint8_t>(v >> (8 * i));
  refresh(f);
  return true;
}

bool relabel_notification(Frame& f, std::uint16_t event) {
  const auto n = locate_notification(f);
  if (!n) return false;
  put16(f, n->header + 2, event);
  refresh(f);
  return true;
}

bool is_sd(const Frame& f) {
  const auto u = locate_udp(f);
  return u && u->payload_length >= kSomeipHeader + 8 && be16(f, u->payload) == kSdService &&
         be16(f, u->payload + 2) == kSdMethod;
}

int sd_stop_offer(Frame& f, std::uint16_t service) {
  const auto s = locate_sd(f);
  if (!s) return 0;
  int n = 0;
  for (std::size_t e = s->entries; e + 16 <= s->entries + s->entries_length; e += 16) {
    const bool offer = f[e] == 0x01;
    const std::uint32_t ttl = be32(f, e + 8) & 0xFFFFFF;
    if (offer && be16(f, e + 4) == service && ttl != 0) {
      f[e + 9] = f[e + 10] = f[e + 11] = 0;
      ++n;
    }
  }
  if (n > 0) refresh(f);
  return n;
}

int sd_hijack_endpoint(Frame& f, std::uint32_t address) {
  const auto s = locate_sd(f);
  if (!s) return 0;
  int n = 0;
  std::size_t o = s->options;
  while (o + 3 <= s->options + s->options_length) {
    const std::size_t length = be16(f, o);
    const std::uint8_t type = f[o + 2];
    if (o + 3 + length > s->options + s->options_length) break;
    if (type == 0x04 && length == 9) {
      put32(f, o + 4, address);
      ++n;
    }
    o += 3 + length;
  }
  if (n > 0) refresh(f);
  return n;
}

Judged judge_lines(const std::string& text, std::uint16_t service, std::uint16_t event,
                   const std::set<std::pair<std::size_t, std::uint32_t>>& untouched,
                   std::set<std::pair<std::size_t, std::uint32_t>>& seen) {
  Judged j;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '{') continue;
    const nlohmann::json o = nlohmann::json::parse(line, nullptr, false);
    if (o.is_discarded() || !o.is_object()) continue;
    const std::string type = o.value("type", "");
    if (type == "rejection") {
      const bool sd = o.value("sd", false);
      ++j.rejections[std::string(sd ? "sd:" : "secoc:") + o.value("reason", "?")];
    } else if (type == "availability") {
      if (o.value("service", 0) == service && !o.value("available", true)) ++j.stop_offers;
    } else if (type == "event" && o.value("service", 0) == service) {
      const std::size_t size = o.value("size", std::size_t{0});
      const std::string payload = o.value("payload", "");
      bool legit = false;
      if (o.value("event", 0) == event && size >= 4 && payload.size() >= 8) {
        std::uint32_t seq = 0;
        const auto parsed = std::from_chars(payload.data(), payload.data() + 8, seq, 16);
        const auto key = std::make_pair(size, seq);
        if (parsed.ec == std::errc() && untouched.count(key) > 0 && seen.count(key) == 0 &&
            payload == hex(sequenced_payload(seq, std::min<std::size_t>(size, 64)))) {
          legit = true;
          seen.insert(key);
          j.delivered.insert(key);
        }
      }
      if (legit) {
        ++j.legit;
      } else {
        ++j.accepted;
      }
    }
  }
  return j;
}

}  // namespace layersec::attack::netns
