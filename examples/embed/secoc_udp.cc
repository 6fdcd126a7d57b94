// Embedding the SecOC engine in your own UDP loop (docs/api.md, docs/install.md).
//
// The program owns its sockets and its loop (plain POSIX poll); layersec only
// protects and verifies bytes. A sender socket sends N Secured I-PDUs to a
// receiver socket on 127.0.0.1; the receiver verifies each one. Then an
// attacker's copies arrive: a replay of the first PDU and a new PDU with one
// bit flipped. Both must be rejected, with their reasons.
//
// The engine uses timestamp freshness (the freshness value is the synchronised
// clock in microseconds), which needs no sync messages: enough for one
// process. Between ECUs, counter freshness with sync messages is the AUTOSAR
// way (docs/secoc.md). The key is random per run; a real ECU loads it with
// layersec/base/keyfile.h.
//
// Build against the installed library:
//   cmake:      find_package(layersec) + target_link_libraries(... layersec::secoc)
//   pkg-config: g++ -std=c++20 secoc_udp.cc $(pkg-config --cflags --libs layersec-secoc)
// Run: ./secoc_udp [N]   (exit status 0 when every check holds)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/secoc/config.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/state_store.h"

namespace {

constexpr std::uint32_t kPdu = 0;

int udp_socket(sockaddr_in& addr) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // any free port
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("socket");
    std::exit(1);
  }
  return fd;
}

// Waits up to 1 s for one datagram.
std::vector<std::uint8_t> receive(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 1000) != 1) return {};
  std::vector<std::uint8_t> buf(2048);
  const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
  buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace layersec;
  const int n = argc > 1 ? std::atoi(argv[1]) : 100;
  // One engine configuration for both ends: vendor profile (CMAC-AES-256,
  // 64-bit MAC), timestamp freshness, sent in full.
  const auto config = secoc::config_from_json(nlohmann::json::parse(R"({
    "keyGroups": [{"name": "demo", "algorithm": "cmac-aes256"}],
    "txPdus": [{"id": 0, "profile": "vendor", "dataId": 256, "keyGroup": "demo", "freshness": "timestamp"}],
    "rxPdus": [{"id": 0, "profile": "vendor", "dataId": 256, "keyGroup": "demo", "freshness": "timestamp",
                "maxAgeMs": 1000}]
  })"));
  secoc::MemoryStateStore sender_store;
  secoc::MemoryStateStore receiver_store;
  const RealtimeClock clock;  // the freshness clock (NTP/PTP-synchronised between ECUs)
  secoc::StartOptions first;
  first.first_start = true;
  first.now = clock.now();
  auto sender = secoc::Engine::start(config, sender_store, first);
  auto receiver = secoc::Engine::start(config, receiver_store, first);
  if (!sender.ok() || !receiver.ok()) {
    std::fprintf(stderr, "engine start failed\n");
    return 1;
  }
  SecretBytes key(32);
  if (::getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) return 1;
  const std::uint32_t group = (*sender)->group_index("demo");
  if (!(*sender)->install_key(group, 1, key, clock.now()).ok() ||
      !(*receiver)->install_key(group, 1, key, clock.now()).ok())
    return 1;

  sockaddr_in tx_addr{};
  sockaddr_in rx_addr{};
  const int tx = udp_socket(tx_addr);
  const int rx = udp_socket(rx_addr);
  std::vector<std::uint8_t> first_secured;
  int accepted = 0;
  for (int i = 0; i < n; ++i) {
    std::array<std::uint8_t, 16> payload{};
    std::snprintf(reinterpret_cast<char*>(payload.data()), payload.size(), "speed %d", i);
    std::array<std::uint8_t, 64> secured{};
    const auto len = (*sender)->protect(kPdu, payload, secured, secoc::TxInput{{}, clock.now()});
    if (!len.ok()) {
      std::fprintf(stderr, "protect failed: %s\n", std::string(secoc::to_string(len.error())).c_str());
      return 1;
    }
    if (i == 0) first_secured.assign(secured.begin(), secured.begin() + static_cast<std::ptrdiff_t>(*len));
    ::sendto(tx, secured.data(), *len, 0, reinterpret_cast<const sockaddr*>(&rx_addr), sizeof rx_addr);
    const auto got = receive(rx);
    std::array<std::uint8_t, 64> out{};
    const auto v = (*receiver)->verify(kPdu, got, out, secoc::RxInput{{}, clock.now(), 0});
    if (v.ok() && *v == payload.size() && std::memcmp(out.data(), payload.data(), payload.size()) == 0) ++accepted;
  }
  // The attacker: a replay of the first PDU, then a new PDU with one payload
  // bit flipped in transit.
  std::array<std::uint8_t, 64> fresh{};
  const std::array<std::uint8_t, 16> last_payload{'b', 'r', 'a', 'k', 'e'};
  const auto fresh_len = (*sender)->protect(kPdu, last_payload, fresh, secoc::TxInput{{}, clock.now()});
  if (!fresh_len.ok()) return 1;
  std::vector<std::uint8_t> flipped(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(*fresh_len));
  flipped[3] ^= 0x01;
  std::string reasons[2];
  for (int a = 0; a < 2; ++a) {
    const auto& bytes = a == 0 ? first_secured : flipped;
    ::sendto(tx, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&rx_addr), sizeof rx_addr);
    const auto got = receive(rx);
    std::array<std::uint8_t, 64> out{};
    const auto v = (*receiver)->verify(kPdu, got, out, secoc::RxInput{{}, clock.now(), 0});
    reasons[a] = v.ok() ? "accepted" : std::string(secoc::to_string(v.error()));
  }
  ::close(tx);
  ::close(rx);
  std::printf("secoc_udp: %d/%d PDUs verified; replay: %s; bit flip: %s\n", accepted, n, reasons[0].c_str(), reasons[1].c_str());
  const bool ok = accepted == n && reasons[0] != "accepted" && reasons[1] != "accepted";
  std::printf("secoc_udp: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
