// Fuzz target: the gPTP codec (ptp/message.h) and the time-aware system's
// receive path (ptp/time_aware_system.h).
//  - parse_message: a parsed message re-encodes to the exact input bytes
//    (reserved octets are kept), and parses again to the same encoding.
//  - parse_frame: a parsed frame re-encodes to the input without its pad.
//  - the input as a message on every port of a gptp relay and of an
//    automotive slave: every receive counts exactly one rx, a refused message
//    counts at least one drop reason, nothing crashes; a malformed message is
//    counted as malformed.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layersec/ptp/message.h"
#include "layersec/ptp/time_aware_system.h"

namespace {

using namespace layersec;
using namespace layersec::ptp;

void require(bool c) {
  if (!c) std::abort();
}

TimeAwareSystem make(Profile profile, Role role, std::size_t ports) {
  SystemConfig c;
  c.profile = profile;
  c.role = role;
  c.clock_identity = 0x0200000000000001ULL;
  c.port_count = ports;
  return TimeAwareSystem(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  std::vector<std::uint8_t> out(kMaxFrameSize + 64);
  auto m = parse_message(in);
  if (m) {
    const std::size_t n = encode_message(*m, out);
    require(n == size && std::memcmp(out.data(), data, size) == 0);
    auto again = parse_message(ByteSpan(out.data(), n));
    require(again.ok());
    std::vector<std::uint8_t> out2(kMaxFrameSize);
    require(encode_message(*again, out2) == n && std::memcmp(out2.data(), out.data(), n) == 0);
  }
  auto f = parse_frame(in);
  if (f) {
    const std::size_t n = encode_frame(f->message, f->src, out);
    require(n >= 14 + kHeaderSize && n <= size && std::memcmp(out.data() + 6, data + 6, n - 6) == 0);
  }
  static TimeAwareSystem relay = make(Profile::kGptp, Role::kAuto, 2);
  static TimeAwareSystem slave = make(Profile::kAutomotive, Role::kSlave, 1);
  static std::int64_t now = 1'000'000'000;
  now += 1'000'000;
  for (TimeAwareSystem* s : {&relay, &slave}) {
    s->on_timer(TimePoint::from_ns(now));
    for (std::size_t p = 0; p < s->config().port_count; ++p) {
      const PortCounters before = s->counters(p);
      s->receive(p, in, TimePoint::from_ns(now));
      const PortCounters& after = s->counters(p);
      require(after.rx == before.rx + 1);
      if (!m) require(after.drops[DropReason::kMalformed] == before.drops[DropReason::kMalformed] + 1);
      require(after.drops.total() >= before.drops.total());
    }
    // Answer every event message with a TX timestamp, as a link would.
    const auto sent = s->output();
    s->clear_output();
    for (const auto& t : sent) {
      if (t.event) s->tx_timestamp(t.port, t.message.header.type, t.message.header.sequence_id, TimePoint::from_ns(now));
    }
    s->clear_output();
  }
  return 0;
}
