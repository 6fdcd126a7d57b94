// Fuzz target: the text fields every configuration and command line reads
// through one parser each: MAC addresses and IPv4 addresses (net/frame.h),
// SOME/IP IPv4/IPv6 addresses (someip/address.h), hex octets (base/hex.h,
// macsec parse_hex_option) and SCIs (macsec sci_option). The input is the
// text; every parser sees it.
// Properties: a parsed value prints to text that parses back to the same
// value (parse(print(parse(x))) == parse(x)); hex decodes to half as many
// octets and re-encodes to the same octets; the throwing option parsers
// throw only std::runtime_error, and sci_option only accepts a non-zero port.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "layersec/base/hex.h"
#include "layersec/macsec/static_sa_config.h"
#include "layersec/net/frame.h"
#include "layersec/someip/address.h"

using namespace layersec;
using layersec::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  if (const auto mac = net::MacAddress::parse(text)) {
    const auto again = net::MacAddress::parse(mac->to_string());
    require(again && *again == *mac);
  }
  if (const auto ip = net::Ipv4Address::parse(text)) {
    const auto again = net::Ipv4Address::parse(ip->to_string());
    require(again && *again == *ip);
  }
  someip::IpAddress addr;
  if (someip::parse_ip_address(text, addr)) {
    someip::IpAddress again;
    require(someip::parse_ip_address(addr.to_string(), again) && again == addr);
  }
  if (const auto bytes = from_hex(text)) {
    const std::string hex = to_hex(*bytes);
    const auto again = from_hex(hex);
    require(again && *again == *bytes);
    std::vector<std::uint8_t> opt;
    try {
      opt = macsec::parse_hex_option("--key", text);
    } catch (const std::runtime_error&) {
      std::abort();  // from_hex accepted it
    }
    require(opt == *bytes);
  } else {
    try {
      (void)macsec::parse_hex_option("--key", text);
      std::abort();  // from_hex refused it
    } catch (const std::runtime_error&) {
    }
  }
  try {
    const macsec::Sci sci = macsec::sci_option("--sci", text);
    require(sci.port() != 0);
    const auto b = sci.bytes();
    require(macsec::sci_option("--sci", to_hex(ByteSpan(b.data(), b.size()))) == sci);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
