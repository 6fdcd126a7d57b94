#include "layersec/sv_io/frame_port.h"

#include <linux/if_packet.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <utility>

namespace layersec::sv_io {

net::PacketSocket open_packet_socket(const std::string& iface, std::uint16_t ether_type, bool nonblocking) {
  if (iface.empty()) throw std::runtime_error("--iface is required");
  int err = 0;
  auto sock = net::PacketSocket::open(iface, ether_type, nonblocking, &err);
  if (!sock) {
    throw std::runtime_error("cannot open an AF_PACKET socket on " + iface + ": " + to_string(sock.error()) +
                             (err != 0 ? " (" + net::errno_text(err) + ")" : std::string()) +
                             (err == EPERM ? "; raw sockets need root or CAP_NET_RAW" : ""));
  }
  return std::move(sock).value();
}

std::uint64_t PacketPort::take_kernel_drops() {
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (getsockopt(socket_->fd(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) return st.tp_drops;
  return 0;
}

}  // namespace layersec::sv_io
