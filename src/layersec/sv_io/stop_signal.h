// SIGINT/SIGTERM as a request to end a run cleanly (the final report is
// still printed), for the SV publisher, subscriber and KDC loops.
#pragma once

namespace layersec::sv_io {

// Clears any earlier request and installs handlers for SIGINT and SIGTERM
// that set it. No SA_RESTART, so a sleeping publisher or a polling
// subscriber wakes up at once (EINTR).
void install_stop_handlers();

// True once SIGINT or SIGTERM arrived (or request_stop() was called) since
// the last install_stop_handlers(). Async-signal-safe to set, cheap to read.
[[nodiscard]] bool stop_requested();

// Sets the request as the signals do (tests; a caller that wants to end a run).
void request_stop();
// Clears the request without touching the handlers (tests).
void clear_stop();

}  // namespace layersec::sv_io
