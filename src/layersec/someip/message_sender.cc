#include "layersec/someip/message_sender.h"

#include <cstring>

#include "layersec/someip/tp.h"

namespace layersec::someip {

MessageSender::MessageSender(const RuntimeConfig& config, PacketWriter& io, SecocFilter& secoc,
                             RuntimeCounters& counters)
    : cfg_(config), io_(io), secoc_(secoc), counters_(counters) {
  tx_buf_.resize(kHeaderSize + config.max_message_size + kSecocOverhead);
  seg_buf_.resize(kHeaderSize + kTpHeaderSize + kTpMaxSegment + 16);
}

Result<ByteSpan, RuntimeError> MessageSender::prepare(Header h, ByteSpan payload, std::optional<SecocRoute> route) {
  if (payload.size() > cfg_.max_message_size) return Err(RuntimeError::kTooLarge);
  std::size_t body = payload.size();
  if (route && secoc_.active()) {
    auto r = secoc_.protect(*route, h, payload, MutableByteSpan(tx_buf_).subspan(kHeaderSize));
    if (!r.ok()) return Err(r.error());
    body = *r;
  } else if (!payload.empty()) {
    std::memmove(tx_buf_.data() + kHeaderSize, payload.data(), payload.size());
  }
  ByteWriter w(MutableByteSpan(tx_buf_.data(), kHeaderSize));
  if (!write_header(w, h, body)) return Err(RuntimeError::kTooLarge);
  return ByteSpan(tx_buf_.data(), kHeaderSize + body);
}

Status<RuntimeError> MessageSender::transmit(std::uint16_t from_port, const Endpoint& to, ByteSpan message) {
  if (message.size() - kHeaderSize <= kMaxUdpPayload) {
    auto st = io_.send(from_port, to, message);
    if (!st.ok()) {
      ++counters_.transport_errors;
      return Err(RuntimeError::kTransport);
    }
    return {};
  }
  auto h = read_raw_header(message);
  if (!h.ok()) return Err(RuntimeError::kTooLarge);
  TpSegmenter seg(*h, message.subspan(kHeaderSize), cfg_.tp_segment_size);
  while (!seg.done()) {
    ByteWriter w(seg_buf_);
    if (!seg.write_next(w)) return Err(RuntimeError::kTooLarge);
    auto st = io_.send(from_port, to, w.written());
    if (!st.ok()) {
      ++counters_.transport_errors;
      return Err(RuntimeError::kTransport);
    }
    ++counters_.tp_segments_sent;
  }
  return {};
}

}  // namespace layersec::someip
