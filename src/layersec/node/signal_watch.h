// SIGINT and SIGTERM as a readable descriptor (signalfd) for an event loop.
// The signals are blocked for the watch's lifetime and the previous mask is
// restored afterwards (a signal that arrived meanwhile is consumed, not
// delivered late).
#pragma once

#include <signal.h>

namespace layersec::node {

class SignalWatch {
 public:
  // Throws std::runtime_error("signalfd failed") when the descriptor cannot
  // be created (the mask is restored first).
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Readable when a signal is pending.
  [[nodiscard]] int fd() const { return fd_; }
  // Reads pending signals; returns the last one (0 if none).
  int drain();

 private:
  sigset_t set_{};
  sigset_t old_{};
  int fd_ = -1;
};

}  // namespace layersec::node
