// Two SOME/IP-SD nodes in simulated time, for captures the interop tests
// decode with tshark (`layersec someip sd-sim`, tests/cli/someip_tshark.sh):
// a server (10.0.0.1, service 0x1234/0x0001, eventgroup 0x0010 on
// 239.1.1.1:30600) and a client (10.0.0.2) on the SD group 224.224.224.245.
// The server starts 100-200 ms after the client, so the capture shows finds;
// at the end the client stops subscribing, then the server stops offering.
// Pure: time is simulated, no I/O; the same seed gives the same run.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/someip/address.h"

namespace layersec::someip {

// One UDP datagram as sent (SD port 30490 on both ends).
struct CapturedDatagram {
  TimePoint at;
  IpAddress src, dst;
  std::uint16_t src_port = 0, dst_port = 0;
  std::vector<std::uint8_t> payload;
};

// Every datagram either node sent, in order, and every SD event either
// reported: [{"t_ms","node","event","service","instance","eventgroup"}].
struct SdPairRun {
  std::vector<CapturedDatagram> datagrams;
  nlohmann::json events = nlohmann::json::array();
};

// Runs the pair from t = 0 to `duration` (timers due after it do not fire),
// then shuts both down at `duration`. `seed` drives the initial delays.
[[nodiscard]] SdPairRun simulate_sd_pair(Duration duration, std::uint64_t seed);

}  // namespace layersec::someip
