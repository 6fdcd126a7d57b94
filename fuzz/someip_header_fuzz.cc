// Fuzz target: SOME/IP datagram framing, header codec and the request error
// policy. Properties: no crash; every framed message re-serialises to the same
// bytes and parses back to the same header; verdicts never answer non-requests.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/tp.h"

namespace {
using namespace layersec;
using namespace layersec::someip;

class Table final : public ServiceTable {
 public:
  bool has_service(std::uint16_t s) const override { return s < 0x8000; }
  std::uint8_t interface_version(std::uint16_t s) const override { return static_cast<std::uint8_t>(s); }
  MethodKind method(std::uint16_t, std::uint16_t m) const override {
    if (m % 3 == 0) return MethodKind::kNone;
    return m % 3 == 1 ? MethodKind::kRequestResponse : MethodKind::kFireAndForget;
  }
};

void check(bool c) {
  if (!c) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteSpan in(data, size);
  const Table table;
  DatagramIterator it(in);
  std::size_t consumed = 0;
  while (!it.done()) {
    auto m = it.next();
    if (!m) {
      const RxVerdict v = check_malformed(in.subspan(consumed), m.error());
      if (v.action == RxAction::kReplyError) {
        auto h = read_raw_header(in.subspan(consumed));
        check(h.ok() && h->message_type == MessageType::kRequest);
      }
      break;
    }
    consumed += m->bytes.size();
    // Round trip: serialise header + payload, compare bytes and fields.
    std::vector<std::uint8_t> buf(m->bytes.size());
    ByteWriter w(buf);
    check(write_message(w, m->header, m->payload));
    check(w.size() == buf.size());
    for (std::size_t i = 0; i < buf.size(); ++i) check(buf[i] == m->bytes[i]);
    auto again = parse_message(buf);
    check(again.ok());
    check(again->header == m->header);
    const RxVerdict v = check_server_message(m->header, table);
    if (v.action == RxAction::kReplyError) {
      check(m->header.message_type == MessageType::kRequest);
      std::uint8_t err[16];
      ByteWriter ew(err);
      check(write_error_response(ew, m->header, v.code));
      auto e = parse_message(ByteSpan(err, sizeof err));
      check(e.ok() && e->header.message_type == MessageType::kError);
      // An error is never answered.
      check(check_server_message(e->header, table).action == RxAction::kDrop);
    }
    if (is_tp(m->header.message_type)) {
      auto s = parse_tp_segment(*m);
      check(s.ok());
      std::vector<std::uint8_t> tb(4);
      ByteWriter tw(tb);
      check(write_tp_header(tw, s->offset, s->more_segments));
    }
  }
  return 0;
}
