#include "layersec/node/signal_watch.h"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <stdexcept>

namespace layersec::node {

SignalWatch::SignalWatch() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
  fd_ = ::signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) {
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    throw std::runtime_error("signalfd failed");
  }
}

SignalWatch::~SignalWatch() {
  drain();
  ::close(fd_);
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

int SignalWatch::drain() {
  int last = 0;
  signalfd_siginfo info{};
  while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) last = static_cast<int>(info.ssi_signo);
  return last;
}

}  // namespace layersec::node
