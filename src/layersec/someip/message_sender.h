// MessageSender: the runtime's send path. prepare() serialises one SOME/IP
// message (header + payload) into the sender's transmit buffer, the payload
// protected by the SecOC filter when a route is given (a notification to
// several subscribers is protected once); transmit() sends a prepared message
// as one datagram, or as SOME/IP-TP segments of tp_segment_size bytes when
// its payload is above 1400 bytes. Nothing on this path allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/someip/message.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/runtime_types.h"
#include "layersec/someip/secoc_filter.h"
#include "layersec/someip/transport.h"

namespace layersec::someip {

class MessageSender {
 public:
  // None is owned; all must outlive the sender. Buffers are sized from
  // config.max_message_size.
  MessageSender(const RuntimeConfig& config, PacketWriter& io, SecocFilter& secoc, RuntimeCounters& counters);

  // Serialises `h` and `payload` (protected with `route` when set). Returns
  // the whole message, valid until the next prepare(). kTooLarge above
  // max_message_size; kSecoc when protection failed (counted by the filter).
  [[nodiscard]] Result<ByteSpan, RuntimeError> prepare(Header h, ByteSpan payload, std::optional<SecocRoute> route);
  // Sends a prepared message from `from_port` to `to`. kTransport when the
  // writer refused a datagram (counted as transport_errors).
  [[nodiscard]] Status<RuntimeError> transmit(std::uint16_t from_port, const Endpoint& to, ByteSpan message);

 private:
  const RuntimeConfig& cfg_;
  PacketWriter& io_;
  SecocFilter& secoc_;
  RuntimeCounters& counters_;
  std::vector<std::uint8_t> tx_buf_;
  std::vector<std::uint8_t> seg_buf_;
};

}  // namespace layersec::someip
