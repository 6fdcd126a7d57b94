#include "layersec/net/tap.h"

#include "layersec/net/frame.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layersec::net {

Result<TapDevice, IoError> TapDevice::open(const std::string& name, bool nonblocking, int* error_number,
                                           bool vnet_header, bool multi_queue) {
  auto fail = [error_number](IoError e) {
    if (error_number) *error_number = errno;
    return Err(e);
  };
  if (name.size() >= IFNAMSIZ) {
    errno = EINVAL;
    return fail(IoError::kBadArgument);
  }
  TapDevice t;
  t.fd_.reset(::open("/dev/net/tun", O_RDWR | O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)));
  if (!t.fd_.valid()) return fail(IoError::kSystem);
  ifreq ifr{};
  ifr.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | (vnet_header ? IFF_VNET_HDR : 0) |
                                     (multi_queue ? IFF_MULTI_QUEUE : 0));
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  if (::ioctl(t.fd_.get(), TUNSETIFF, &ifr) != 0) return fail(IoError::kSystem);
  t.name_.assign(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
  t.vnet_ = vnet_header;
  if (vnet_header) {
    int size = sizeof(VnetHeader);
    if (::ioctl(t.fd_.get(), TUNSETVNETHDRSZ, &size) != 0) return fail(IoError::kSystem);
  }
  return t;
}

Result<std::size_t, IoError> TapDevice::read(MutableByteSpan buffer) { return read(buffer, nullptr); }

Status<IoError> TapDevice::enable_tcp_offload() {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (!vnet_) return Err(IoError::kBadArgument);
  if (::ioctl(fd_.get(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) != 0) {
    errno_ = errno;
    return Err(IoError::kSystem);
  }
  return {};
}

Result<std::size_t, IoError> TapDevice::read(MutableByteSpan buffer, VnetHeader* vnet) {
  if (vnet) *vnet = VnetHeader{};
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (buffer.size() < kEthernetMaxFrameSize) return Err(IoError::kBadArgument);
  if (vnet_) {
    if (buffer.size() < 65536 + 14) return Err(IoError::kBadArgument);
    VnetHeader h;
    iovec iov[2] = {{&h, sizeof h}, {buffer.data(), buffer.size()}};
    const ssize_t n = ::readv(fd_.get(), iov, 2);
    if (n < 0) {
      errno_ = errno;
      return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
    }
    if (static_cast<std::size_t>(n) < sizeof h) return Err(IoError::kTruncated);
    if (vnet) *vnet = h;
    return static_cast<std::size_t>(n) - sizeof h;
  }
  const ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

Result<std::size_t, IoError> TapDevice::write(ByteSpan frame) {
  if (vnet_) return write(frame, VnetHeader{});
  if (!fd_.valid()) return Err(IoError::kClosed);
  const ssize_t n = ::write(fd_.get(), frame.data(), frame.size());
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

Result<std::size_t, IoError> TapDevice::write(ByteSpan frame, const VnetHeader& vnet) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (!vnet_) return Err(IoError::kBadArgument);
  VnetHeader h = vnet;
  iovec iov[2] = {{&h, sizeof h}, {const_cast<std::uint8_t*>(frame.data()), frame.size()}};
  const ssize_t n = ::writev(fd_.get(), iov, 2);
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  if (static_cast<std::size_t>(n) < sizeof h) return Err(IoError::kTruncated);
  return static_cast<std::size_t>(n) - sizeof h;
}

}  // namespace layersec::net
