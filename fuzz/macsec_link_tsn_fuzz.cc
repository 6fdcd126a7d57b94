// Fuzz target: the TSN file of a MACsec link (macsec/link_tsn_config.h,
// `layersec macsec up --tsn`): port speed, the taprio schedule, layout, the
// stream identification rules. Property: every input is refused with
// LinkConfigError or yields a configuration whose first-hop path and shaper
// port work: a UDP frame built from the input's bytes classifies into a
// class below num_tc, a frame a rule tagged pops back to the original on the
// receive side, and the shaper's gate schedule installs. Anything else, a
// crash or a sanitizer report, is a finding. taprio_file is refused here (no
// base directory).
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_tsn.h"
#include "layersec/net/frame.h"

using namespace layersec;

namespace {
void require(bool c) {
  if (!c) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  macsec::LinkTsnConfig c;
  try {
    c = macsec::parse_link_tsn_config_text(std::string_view(reinterpret_cast<const char*>(data), size), {});
  } catch (const macsec::LinkConfigError&) {
    return 0;
  }
  macsec::TsnFramePath path(c);
  require(path.port_config().num_classes == c.schedule.num_tc);
  (void)path.gate_schedule(0);
  // A frame to 10.0.0.2 on a port taken from the input, through egress and ingress.
  net::UdpFrameSpec spec;
  spec.dst_mac = net::MacAddress::local(2);
  spec.src_mac = net::MacAddress::local(1);
  spec.src = {net::Ipv4Address::from_octets(10, 0, 0, 1), 4000};
  const std::uint16_t port = size >= 2 ? static_cast<std::uint16_t>(data[0] << 8 | data[1]) : 5000;
  spec.dst = {net::Ipv4Address::from_octets(10, 0, 0, 2), port == 0 ? std::uint16_t{1} : port};
  std::vector<std::uint8_t> frame(200);
  auto n = net::build_udp_frame(spec, std::vector<std::uint8_t>(32, 7), frame);
  require(n.ok());
  frame.resize(*n);
  const auto original = frame;
  auto tc = path.egress(frame);
  require(tc.has_value() && *tc >= 0 && *tc < c.schedule.num_tc);
  auto back = path.ingress(MutableByteSpan(frame.data(), frame.size()));
  if (path.stats().tx_tagged == 1) {
    require(back.has_value());
    require(std::vector<std::uint8_t>(back->begin(), back->end()) == original);
  } else {
    require(back.has_value() && back->size() == original.size());
  }
  return 0;
}
