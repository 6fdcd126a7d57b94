// The SOME/IP and SecOC layout every scenario node uses, on the simulated
// segment (testbed.cc) and as a process in a namespace (netns_node.cc), so
// both topologies measure the same messages:
//
//   service 0x1234 instance 1 on UDP 30509, event 0x8001 in eventgroup 1
//   (optionally multicast 239.0.0.1:30510); subscriber i (0-based) has client
//   id 0x0100 + i, receives events on UDP 30502 and answers on method
//   0x0010 + i. SecOC (vendor profile: CMAC-AES-256, 64-bit MAC, 16 of 64 FV
//   bits): the event is DataId 0x0100 from sender 1, subscriber i's answer
//   DataId 0x0200 + i; one key group ("session") covers both directions.
//   Sync channels: 0xFF00 for the publisher's, 0xFF01 + i per answer PDU.
#pragma once

#include <cstdint>

#include "layersec/secoc/config.h"
#include "layersec/someip/runtime.h"

namespace layersec::harness::layout {

inline constexpr std::uint16_t kService = 0x1234;
inline constexpr std::uint16_t kInstance = 0x0001;
inline constexpr std::uint16_t kEvent = 0x8001;
inline constexpr std::uint16_t kEventgroup = 0x0001;
inline constexpr std::uint16_t kAnswerBase = 0x0010;  // subscriber i answers on method kAnswerBase + i
inline constexpr std::uint16_t kServicePort = 30509;
inline constexpr std::uint16_t kClientPort = 30501;
inline constexpr std::uint16_t kSubscriberPort = 30502;
inline constexpr std::uint16_t kMulticastPort = 30510;
inline constexpr std::uint16_t kEventDataId = 0x0100;
inline constexpr std::uint16_t kAnswerDataIdBase = 0x0200;
inline constexpr std::uint16_t kPublisherSenderId = 0x0001;
inline constexpr std::uint16_t kSyncDataIdBase = 0xFF00;

[[nodiscard]] constexpr std::uint16_t subscriber_client_id(int i) { return static_cast<std::uint16_t>(0x0100 + i); }
[[nodiscard]] constexpr std::uint16_t answer_method(int i) { return static_cast<std::uint16_t>(kAnswerBase + i); }

// The publisher's engine: the event as Tx PDU 0, subscriber i's answer as
// Rx PDU i (each with its own sync channel i). No sync transmission.
[[nodiscard]] secoc::EngineConfig publisher_engine_config(int subscribers);
// Subscriber i's engine: its answer as Tx PDU 0, the event as Rx PDU 0 (sync
// channel 0).
[[nodiscard]] secoc::EngineConfig subscriber_engine_config(int i);
// The runtime bindings matching those engines.
[[nodiscard]] someip::SecocBindings publisher_bindings(int subscribers);
[[nodiscard]] someip::SecocBindings subscriber_bindings(int i);

}  // namespace layersec::harness::layout
