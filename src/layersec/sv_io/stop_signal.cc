#include "layersec/sv_io/stop_signal.h"

#include <signal.h>

#include <csignal>

namespace layersec::sv_io {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

}  // namespace

void install_stop_handlers() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_stop != 0; }
void request_stop() { g_stop = 1; }
void clear_stop() { g_stop = 0; }

}  // namespace layersec::sv_io
