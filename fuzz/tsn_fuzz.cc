// Fuzz target: the tsn module's parsers and what they feed.
//  - parse_taprio on arbitrary text: an accepted schedule validates, prints
//    back with to_taprio, and that text parses to the same schedule and prints
//    to the same text (round trip).
//  - An accepted schedule drives GateSchedule and EgressPort for a few cycles:
//    close_time/next_open agree with open(), no frame starts that cannot
//    finish before its gate closes, counters add up.
//  - classify_egress on the input as a frame: a frame it tags here gains
//    exactly 4 bytes and parses with the rule's tag outermost.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "layersec/tsn/egress_port.h"
#include "layersec/tsn/frame_tagger.h"
#include "layersec/tsn/taprio.h"

namespace {

using namespace layersec;
using namespace layersec::tsn;

void require(bool c) {
  if (!c) std::abort();
}

void drive(const TaprioSchedule& s) {
  GateSchedule gates;
  gates.set_admin(s.gcl, 0);
  const std::int64_t cycle = cycle_time_of(s.gcl);
  const std::int64_t start = std::max<std::int64_t>(gates.operational() ? s.gcl.base_time_ns : 0, 0);
  for (int c = 0; c < s.num_tc; ++c) {
    for (int k = 0; k < 16; ++k) {
      const std::int64_t t = start + (cycle / 8) * k + k;
      const std::int64_t close = gates.close_time(c, t);
      const std::int64_t open = gates.next_open(c, t);
      if (gates.open(c, t)) {
        require(open == t);
        require(close == kNever || (close > t && !gates.open(c, close)));
      } else {
        require(close == t);
        require(open == kNever || (open > t && gates.open(c, open)));
      }
    }
  }
  PortConfig pc;
  pc.num_classes = s.num_tc;
  pc.max_sdu = s.max_sdu;
  pc.queue_limit_frames = 8;
  EgressPort port(pc, gates);
  std::int64_t now = start;
  std::uint64_t queued = 0;
  std::uint64_t refused = 0;  // never_fits at enqueue (not queued)
  for (int i = 0; i < 64; ++i) {
    const auto r = port.enqueue(std::vector<std::uint8_t>(60 + static_cast<std::size_t>(i * 23) % 1440, 0), i % s.num_tc, now);
    if (r == EnqueueResult::kQueued) ++queued;
    if (r == EnqueueResult::kNeverFits) ++refused;
    if (auto t = port.dequeue(now)) {
      const std::int64_t close = port.gates().close_time(t->traffic_class, t->start_ns);
      require(close == kNever || t->end_ns <= close);
      now = t->end_ns;
    } else {
      const std::int64_t next = port.next_event(now);
      if (next == kNever || next - now > 4 * cycle) break;
      now = std::max(next, now + 1);
    }
  }
  std::uint64_t sent = 0;
  std::uint64_t overruns = 0;
  std::size_t waiting = 0;
  for (int c = 0; c < s.num_tc; ++c) {
    sent += port.counters(c).transmitted + port.counters(c).dropped_never_fits;
    overruns += port.counters(c).transmission_overruns;
    waiting += port.queued(c);
  }
  require(overruns == 0);
  require(sent + waiting == queued + refused);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto p = parse_taprio(text);
  if (p.ok()) {
    const auto& s = *p.schedule;
    GclLimits lim;
    lim.num_classes = s.num_tc;
    require(!validate(s.gcl, lim).has_value());
    const std::string printed = to_taprio(s);
    const auto q = parse_taprio(printed);
    require(q.ok());
    require(q.schedule->gcl == s.gcl && q.schedule->map == s.map && q.schedule->max_sdu == s.max_sdu &&
            q.schedule->num_tc == s.num_tc && q.schedule->queues == s.queues);
    require(to_taprio(*q.schedule) == printed);
    if (s.gcl.entries.size() <= 64) drive(s);
  }
  std::vector<std::uint8_t> frame(data, data + size);
  StreamIdentifier ids;
  StreamRule r;
  r.kind = StreamMatch::kIp;
  r.set_vid = 42;
  r.set_pcp = 5;
  (void)ids.add(r);
  const auto before = frame.size();
  auto c = classify_egress(frame, *TrafficClassMap::standard(8), &ids);
  if (c && c->tagged_here) {
    require(frame.size() == before + 4);
    auto eth = net::parse_ethernet(frame);
    require(eth.ok() && eth->header.tag_count >= 1 && eth->header.tags[0].vid == 42 && eth->header.tags[0].pcp == 5);
  }
  return 0;
}
