#include "layersec/net/io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace layersec::net {

const char* to_string(IoError e) {
  switch (e) {
    case IoError::kWouldBlock: return "would block";
    case IoError::kSystem: return "system call failed";
    case IoError::kBadArgument: return "bad argument";
    case IoError::kTruncated: return "truncated";
    case IoError::kClosed: return "closed";
  }
  return "unknown";
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (maybe not buf).
  return strerror_r(err, buf, sizeof(buf));
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace layersec::net
