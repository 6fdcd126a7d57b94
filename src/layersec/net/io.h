// Shared pieces of the real I/O adapters (UDP sockets, AF_PACKET, TAP).
//
// Adapters are thin: they move bytes between the kernel and caller buffers
// and report failures as IoError; the errno of the last failure is kept on the
// adapter object (last_errno()) for messages. No protocol logic lives here.
#pragma once

#include <cstdint>
#include <string>

namespace layersec::net {

enum class IoError : std::uint8_t {
  kWouldBlock,   // non-blocking descriptor has nothing to read / no room to write
  kSystem,       // a system call failed; see the adapter's last_errno()
  kBadArgument,  // e.g. an unknown interface name or an over-long name
  kTruncated,    // the datagram or frame was larger than the caller's buffer
  kClosed,       // the adapter holds no descriptor
};
const char* to_string(IoError e);

// strerror text for an errno value.
std::string errno_text(int err);

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Sets O_NONBLOCK; false on failure (errno set).
bool set_nonblocking(int fd);

}  // namespace layersec::net
