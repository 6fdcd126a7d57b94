#include "layersec/base/hex.h"

#include <cstdlib>

namespace layersec {

std::string to_hex(std::span<const std::uint8_t> data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.resize(data.size() * 2);
  for (std::size_t i = 0; i < data.size(); ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0x0F];
  }
  return out;
}

namespace {
int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::vector<std::uint8_t>> from_hex(std::string_view text) {
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  int hi = -1;
  for (char c : text) {
    if (c == ' ' || c == ':' || c == '-' || c == '\n' || c == '\t') {
      if (hi >= 0) return std::nullopt;  // separator inside a byte
      continue;
    }
    const int v = nibble(c);
    if (v < 0) return std::nullopt;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<std::uint8_t>((hi << 4) | v));
      hi = -1;
    }
  }
  if (hi >= 0) return std::nullopt;
  return out;
}

std::vector<std::uint8_t> hex_bytes(std::string_view text) {
  auto v = from_hex(text);
  if (!v) std::abort();
  return std::move(*v);
}

}  // namespace layersec
