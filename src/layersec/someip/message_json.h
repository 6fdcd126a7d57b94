// SOME/IP datagrams as JSON, the form the interop tests (`layersec someip
// decode|encode|reassemble`, tests/cli/someip_*.sh) exchange with Scapy and
// tshark. Field names follow the header (AUTOSAR PRS_SOMEIP_00030ff.), the
// SD entries and options (PRS_SOMEIPSD_00016ff.) and SOME/IP-TP.
//
// Decoding never throws: a malformed message ends the list with "error".
// Encoding reads tool input, not packets: a field of the wrong type or bad
// hex throws (nlohmann::json::exception, std::runtime_error) with a message.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/bytes.h"

namespace layersec::someip {

// {"messages":[...]} for every message of `datagram`; on a malformed
// message, the ones before it and "error" naming the ParseError. A TP
// segment shows "tp" (offset, more, data), an SD message "sd" (flags,
// entries, options), any other message "payload" (hex).
[[nodiscard]] nlohmann::json datagram_to_json(ByteSpan datagram);

// One message from its JSON form (the decode layout; missing fields are 0,
// protocol_version defaults to 1, "length_override" patches the length
// field after encoding). Throws std::runtime_error naming what is wrong.
[[nodiscard]] std::vector<std::uint8_t> message_from_json(const nlohmann::json& message);

// {"messages":[...]} -> one datagram holding every message in order, or,
// with "segment_size", the first message cut into SOME/IP-TP segments of
// at most that many payload bytes, one datagram per segment. Throws as
// message_from_json, and "cannot segment" if the message cannot be cut.
[[nodiscard]] std::vector<std::vector<std::uint8_t>> datagrams_from_json(const nlohmann::json& request);

// Feeds every message of `datagrams` to one TpReassembler (peer
// 10.0.0.2:30509, time 0): {"status":[per message: "complete",
// "incomplete", "duplicate" or the error name], "result": the decoded
// reassembled datagram (datagram_to_json) or null}.
[[nodiscard]] nlohmann::json reassemble_to_json(std::span<const std::vector<std::uint8_t>> datagrams);

// `text` as bytes; throws std::runtime_error("bad hex: " + text).
[[nodiscard]] std::vector<std::uint8_t> bytes_from_hex(std::string_view text);

}  // namespace layersec::someip
