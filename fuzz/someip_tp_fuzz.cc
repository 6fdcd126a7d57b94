// Fuzz target: SOME/IP-TP segment parser and reassembler.
// The input is read as a sequence of records [u8 time step][u16 length]
// [datagram]; each datagram is framed, its TP segments fed to a reassembler
// with small limits. Properties: no crash; buffered bytes stay within the
// limits; a completed message is well framed with the TP flag cleared; and
// segmenting the raw input as a payload reassembles to the same bytes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/someip/tp.h"

namespace {
using namespace layersec;
using namespace layersec::someip;

void check(bool c) {
  if (!c) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  TpLimits limits;
  limits.max_message_size = 4096;
  limits.max_concurrent = 3;
  limits.timeout = Duration::milliseconds(100);
  TpReassembler r(limits);
  TimePoint now = TimePoint::from_ns(0);
  const Endpoint peers[2] = {{IpAddress::v4(10, 0, 0, 2), 1000, L4Proto::kUdp},
                             {IpAddress::v4(10, 0, 0, 3), 1000, L4Proto::kUdp}};
  ByteReader rd(ByteSpan(data, size));
  while (rd.remaining() >= 3) {
    const std::uint8_t step = rd.u8();
    const std::uint16_t len = rd.u16();
    ByteSpan dgram = rd.bytes(std::min<std::size_t>(len, rd.remaining()));
    now += Duration::milliseconds(step & 0x7F);
    DatagramIterator it(dgram);
    while (!it.done()) {
      auto m = it.next();
      if (!m) break;
      auto seg = parse_tp_segment(*m);
      if (!seg) continue;
      auto o = r.on_segment(now, peers[step >> 7], *seg);
      if (o && o->status == TpReassembler::Status::kComplete) {
        auto full = parse_message(o->message);
        check(full.ok());
        check(!is_tp(full->header.message_type));
        check(full->payload.size() <= limits.max_message_size);
      }
      check(r.buffered_bytes() <= limits.max_concurrent * (kHeaderSize + limits.max_message_size));
      check(r.in_progress() <= limits.max_concurrent);
    }
  }
  r.on_timer(now + limits.timeout);
  check(r.in_progress() == 0);

  // Round trip: segment the input (as a payload) and reassemble it.
  if (size > 0 && size <= 4096) {
    Header h;
    h.service_id = 0x4444;
    h.method_id = 0x8001;
    h.session_id = 1;
    h.message_type = MessageType::kNotification;
    const std::size_t seg_size = 16 * (1 + data[0] % 87);
    TpSegmenter s(h, ByteSpan(data, size), seg_size);
    TpReassembler r2(limits);
    std::vector<std::uint8_t> buf(s.max_segment_message_size());
    bool complete = false;
    while (!s.done()) {
      ByteWriter w(buf);
      check(s.write_next(w));
      auto m = parse_message(w.written());
      check(m.ok());
      auto seg = parse_tp_segment(*m);
      check(seg.ok());
      auto o = r2.on_segment(now, peers[0], *seg);
      check(o.ok());
      if (o->status == TpReassembler::Status::kComplete) {
        complete = true;
        auto full = parse_message(o->message);
        check(full.ok());
        check(full->payload.size() == size);
        check(std::equal(full->payload.begin(), full->payload.end(), data));
        check(full->header.message_type == MessageType::kNotification);
      }
    }
    check(complete);
  }
  return 0;
}
