#include "layersec/net/tap.h"

#include "layersec/net/frame.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace layersec::net {

Result<TapDevice, IoError> TapDevice::open(const std::string& name, bool nonblocking, int* error_number) {
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
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  if (::ioctl(t.fd_.get(), TUNSETIFF, &ifr) != 0) return fail(IoError::kSystem);
  t.name_.assign(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
  return t;
}

Result<std::size_t, IoError> TapDevice::read(MutableByteSpan buffer) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  if (buffer.size() < kEthernetMaxFrameSize) return Err(IoError::kBadArgument);
  const ssize_t n = ::read(fd_.get(), buffer.data(), buffer.size());
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

Result<std::size_t, IoError> TapDevice::write(ByteSpan frame) {
  if (!fd_.valid()) return Err(IoError::kClosed);
  const ssize_t n = ::write(fd_.get(), frame.data(), frame.size());
  if (n < 0) {
    errno_ = errno;
    return Err(errno_ == EAGAIN || errno_ == EWOULDBLOCK ? IoError::kWouldBlock : IoError::kSystem);
  }
  return static_cast<std::size_t>(n);
}

}  // namespace layersec::net
