// Address text forms written by hand so the protocol module includes no
// socket header (STYLE.md habit 11). IPv6 output follows RFC 5952 §4.
#include "layersec/someip/address.h"

#include <cstdio>
#include <vector>

namespace layersec::someip {

std::string IpAddress::to_string() const {
  char buf[64];
  if (family == IpFamily::kV4) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", bytes[0], bytes[1], bytes[2], bytes[3]);
    return buf;
  }
  std::uint16_t g[8];
  for (int i = 0; i < 8; ++i) g[i] = static_cast<std::uint16_t>((bytes[2 * i] << 8) | bytes[2 * i + 1]);
  // Longest run (>= 2) of zero groups is compressed to "::" (RFC 5952 §4.2).
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) { ++i; continue; }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) { best = i; best_len = j - i; }
    i = j;
  }
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    if (!s.empty() && s.back() != ':') s += ':';
    std::snprintf(buf, sizeof buf, "%x", g[i]);
    s += buf;
  }
  return s;
}

namespace {
int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_v4(const std::string& t, std::uint8_t* out) {
  int part = 0;
  unsigned v = 0;
  int digits = 0;
  for (std::size_t i = 0; i <= t.size(); ++i) {
    if (i == t.size() || t[i] == '.') {
      if (digits == 0 || v > 255 || part > 3) return false;
      out[part++] = static_cast<std::uint8_t>(v);
      v = 0;
      digits = 0;
    } else if (t[i] >= '0' && t[i] <= '9' && digits < 3) {
      v = v * 10 + static_cast<unsigned>(t[i] - '0');
      ++digits;
    } else {
      return false;
    }
  }
  return part == 4;
}

bool parse_groups(const std::string& t, std::vector<std::uint16_t>& out) {
  if (t.empty()) return true;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = t.find(':', start);
    const std::string part = t.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part.size() > 4) return false;
    unsigned v = 0;
    for (char c : part) {
      const int h = hexval(c);
      if (h < 0) return false;
      v = v * 16 + static_cast<unsigned>(h);
    }
    out.push_back(static_cast<std::uint16_t>(v));
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}
}  // namespace

bool parse_ip_address(const std::string& text, IpAddress& out) {
  IpAddress a;
  if (text.find(':') == std::string::npos) {
    if (!parse_v4(text, a.bytes.data())) return false;
    out = a;
    return true;
  }
  a.family = IpFamily::kV6;
  std::vector<std::uint16_t> head, tail;
  const std::size_t dc = text.find("::");
  if (dc != std::string::npos) {
    if (text.find("::", dc + 1) != std::string::npos) return false;
    if (!parse_groups(text.substr(0, dc), head) || !parse_groups(text.substr(dc + 2), tail))
      return false;
    if (head.size() + tail.size() > 7) return false;
  } else {
    if (!parse_groups(text, head) || head.size() != 8) return false;
  }
  std::uint16_t g[8] = {};
  for (std::size_t i = 0; i < head.size(); ++i) g[i] = head[i];
  for (std::size_t i = 0; i < tail.size(); ++i) g[8 - tail.size() + i] = tail[i];
  for (int i = 0; i < 8; ++i) {
    a.bytes[2 * i] = static_cast<std::uint8_t>(g[i] >> 8);
    a.bytes[2 * i + 1] = static_cast<std::uint8_t>(g[i]);
  }
  out = a;
  return true;
}

std::string Endpoint::to_string() const {
  std::string s = address.family == IpFamily::kV6 ? "[" + address.to_string() + "]"
                                                  : address.to_string();
  s += ":" + std::to_string(port) + (proto == L4Proto::kTcp ? "/tcp" : "/udp");
  return s;
}

}  // namespace layersec::someip
