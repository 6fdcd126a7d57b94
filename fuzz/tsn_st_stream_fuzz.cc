// Fuzz target: the ST generator's listener and release plan (tsn/st_stream.h).
//  - The input after an 8-byte prologue is cut into datagrams (a length
//    byte, then that many bytes, plus an arrival-time step) and fed to an
//    StReceiver: every datagram is either refused (by one reason) or
//    accepted; received == latency samples; received + lost == the sequence
//    numbers below the highest seen; a datagram encoded from the same
//    fields round-trips (accepted unless its sequence number or time is out
//    of range, then refused for exactly that).
//  - The prologue also drives plan_st_releases on a two-entry list: a plan
//    has spacing >= wire time, its last frame off the wire before the window
//    closes, nothing ahead, and no cycle with more frames than its maximum.
#include <cstdint>
#include <vector>

#include "fuzz_support.h"
#include "layersec/base/bytes.h"
#include "layersec/tsn/st_stream.h"

namespace {

using namespace layersec;
using namespace layersec::tsn;
using fuzz::require;

void check_plan(const std::uint8_t* d) {
  GateControlList g;
  const std::int64_t open = (1 + d[0]) * 4'000;
  const std::int64_t closed = (1 + d[1]) * 4'000;
  g.entries = {{0x02, open}, {0x01, closed}};
  StPlanInputs in;
  in.payload_bytes = 24 + d[2] * 6;
  in.frame_bytes = in.payload_bytes + 46;
  in.expansion_bytes = d[3] & 1 ? 32 : 0;
  in.link_bps = (d[3] & 2) ? 1'000'000'000 : 100'000'000;
  in.offered_bits_per_cycle = static_cast<std::uint64_t>(d[4]) * 1'000;
  StPlanError e{};
  auto p = plan_st_releases(g, in, &e);
  if (!p) {
    require(to_string(e)[0] != 'u');
    return;
  }
  require(p->spacing_ns >= p->wire_ns);
  require(static_cast<std::int64_t>(p->max_frames_per_cycle - 1) * p->spacing_ns + p->wire_ns <= p->window_len_ns);
  require(p->planned_max_ahead == 0 && p->planned_max_wait_ns == 0 && p->tail_slack_ns >= 0);
  std::uint64_t sum = 0;
  for (std::uint64_t c = 0; c < 64; ++c) {
    const std::uint64_t n = frames_in_cycle(*p, c);
    require(n <= p->max_frames_per_cycle);
    for (std::uint64_t k = 0; k < n; ++k) {
      const std::int64_t off = release_ns(*p, 0, c, k) - static_cast<std::int64_t>(c) * p->cycle_ns;
      require(off >= p->window_open_ns && off + p->wire_ns <= p->window_open_ns + p->window_len_ns);
    }
    sum += n;
  }
  require(sum == frames_before_cycle(*p, 64));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  check_plan(data);
  const std::size_t payload = kStHeaderBytes + (data[5] & 0x3F);
  const std::uint32_t run = data[6];
  const std::uint64_t max_seq = data[7];
  StReceiver r(payload, run, max_seq);
  std::int64_t now = 1'000'000;
  std::uint64_t calls = 0, accepted = 0;
  std::size_t i = 8;
  while (i + 2 <= size) {
    const std::size_t len = data[i];
    now += data[i + 1] * 100;
    i += 2;
    const std::size_t n = std::min(len, size - i);
    const auto refused = r.on_datagram(ByteSpan(data + i, n), now);
    ++calls;
    if (!refused) ++accepted;
    // The same fields, encoded by us: accepted unless out of range.
    if (n >= kStHeaderBytes) {
      const std::uint64_t seq = load_be64(data + i + 8);
      const auto sent = static_cast<std::int64_t>(load_be64(data + i + 16));
      std::vector<std::uint8_t> own(payload);
      require(encode_st_datagram({run, seq, sent}, MutableByteSpan(own.data(), own.size())));
      const auto again = r.on_datagram(own, now);
      ++calls;
      if (seq >= max_seq) {
        require(again && *again == StRefusal::kSeqRange);
      } else if (sent < 0 || sent > now) {
        require(again && *again == StRefusal::kBadTime);
      } else {
        require(!again);
        ++accepted;
      }
    }
    i += n;
  }
  const auto& c = r.counters();
  require(r.refused_total() + accepted == calls);
  require(c.received + c.duplicates == accepted);
  require(r.latency_us().size() == c.received && r.sample_seqs().size() == c.received);
  require(c.received <= max_seq && c.highest_seq_plus1 <= max_seq);
  require(r.lost(c.highest_seq_plus1) + c.received == c.highest_seq_plus1);
  for (double l : r.latency_us()) require(l >= 0);
  return 0;
}
